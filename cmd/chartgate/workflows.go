package main

// This file defines the commands that act on running workflows, out of
// band: status (the workflows the store holds), history (one workflow's run
// history) and approve (a transition that waits for a person).

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/chartgate/chartgate/hook"
	"github.com/chartgate/chartgate/internal/jsonx"
	"github.com/chartgate/chartgate/mcpbind"
)

// cmdStatus lists the workflows of the project's store: id or name, state,
// status, the approval each waits for, and when it last moved.
func cmdStatus(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("status")
	pf := addProjectFlags(fs)
	asJSON := fs.Bool("json", false, "print JSON, one object per workflow")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return argsError(stdout, stderr, "status", err)
	}
	if len(pos) > 0 {
		return usageError(stderr, "status", fmt.Errorf("unexpected argument %q", pos[0]))
	}
	atProjectRoot(fs, pf)
	p, g, code := openGate(pf, stderr)
	if g == nil {
		return code
	}
	defer p.close()
	ws, err := g.Workflows(context.Background())
	if err != nil {
		fmt.Fprintf(stderr, "chartgate status: %v\n", err)
		return exitFail
	}
	enc := json.NewEncoder(stdout)
	for _, w := range ws {
		if *asJSON {
			m := map[string]any{"workflow": refText(w.Ref, w.Key), "state": w.State, "status": w.Status, "pending": w.Pending, "updated": w.Updated, "version": w.Version}
			if w.Refused != nil {
				m["refused"] = errText(w.Refused)
			}
			_ = enc.Encode(m)
			continue
		}
		if w.Refused != nil {
			fmt.Fprintf(stdout, "%s  version %s  REFUSED: %s\n", refText(w.Ref, w.Key), versionText(w.Version), errText(w.Refused))
			continue
		}
		line := fmt.Sprintf("%s  %s (%s)  version %s", refText(w.Ref, w.Key), jsonx.Text(w.State), w.Status, versionText(w.Version))
		if w.Version != p.version {
			line += " (current " + p.version + ": migrated at its next save)"
		}
		if !w.Updated.IsZero() {
			line += "  last moved " + w.Updated.UTC().Format(time.RFC3339)
		}
		if a := w.Pending; a != nil {
			line += "  waits for " + a.Text()
			if a.ID != "" && a.Expired(time.Now()) {
				line += ", EXPIRED: approving it rejects it"
			}
		}
		fmt.Fprintln(stdout, line)
	}
	if len(ws) == 0 && !*asJSON {
		fmt.Fprintln(stdout, "no workflows")
	}
	return exitOK
}

// cmdHistory prints a workflow's run history, oldest first.
func cmdHistory(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("history")
	pf := addProjectFlags(fs)
	asJSON := fs.Bool("json", false, "print the entries as JSON, one per line")
	ref, code, ok := workflowArg(fs, "history", args, stdout, stderr)
	if !ok {
		return code
	}
	atProjectRoot(fs, pf)
	p, g, code := openGate(pf, stderr)
	if g == nil {
		return code
	}
	defer p.close()
	w, err := g.WorkflowOf(context.Background(), ref)
	if err != nil {
		fmt.Fprintf(stderr, "chartgate history: %v\n", err)
		return exitFail
	}
	enc := json.NewEncoder(stdout)
	for _, e := range w.History {
		if *asJSON {
			_ = enc.Encode(e)
			continue
		}
		fmt.Fprintln(stdout, historyLine(e))
	}
	if !*asJSON {
		fmt.Fprintf(stdout, "now: %s (%s)\n", jsonx.Text(w.State.Value()), w.State.Status())
	}
	return exitOK
}

// historyLine writes one history entry for people.
func historyLine(e mcpbind.Transition) string {
	t := e.Time.UTC().Format(time.RFC3339)
	if e.Outcome != "" {
		return fmt.Sprintf("%s  call %s: %s (in %s)", t, e.Tool, strings.ToLower(e.Outcome), jsonx.Text(e.From))
	}
	who := e.Tool
	if e.By != "" {
		who = "by " + e.By
	}
	if a := e.Approval; a != nil {
		auth := "authenticated"
		if !a.Authenticated {
			auth = "not authenticated"
		}
		who = fmt.Sprintf("approval %s by %s through %s, %s", a.ID, a.By, a.Channel, auth)
	}
	line := fmt.Sprintf("%s  %s: %s -> %s (%s)", t, e.Event.Type, jsonx.Text(e.From), jsonx.Text(e.To), who)
	if in, ok := e.Event.Data["input"].(map[string]any); ok {
		if r, ok := in["rationale"].(string); ok && r != "" {
			line += fmt.Sprintf("  rationale: %q", r)
		}
	}
	return line
}

// approveEnv is what chartgate approve takes from its surroundings: the
// terminal it asks on, and the clock its grant is dated by.
type approveEnv struct {
	tty func() (terminal, error)
	now func() time.Time
}

// cmdApprove approves, or with --reject rejects, a pending approval, named
// by its id or by the workflow that waits for it. It proves that a person
// answers: the grant is signed with the approver key (which it creates
// with --init, or at the first use on a terminal), and it asks for
// confirmation on the terminal unless --yes is given.
func cmdApprove(args []string, stdout, stderr io.Writer) int {
	return approveWith(args, stdout, stderr, approveEnv{tty: openTTY, now: time.Now})
}

func approveWith(args []string, stdout, stderr io.Writer, env approveEnv) int {
	fs := newFlagSet("approve")
	pf := addProjectFlags(fs)
	reject := fs.Bool("reject", false, "")
	by := fs.String("by", "", "")
	yes := fs.Bool("yes", false, "")
	keyFlag := fs.String("key", "", "")
	initKey := fs.Bool("init", false, "")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return argsError(stdout, stderr, "approve", err)
	}
	atProjectRoot(fs, pf)
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "chartgate approve: "+format+"\n", a...)
		return exitFail
	}
	keyPath := *keyFlag
	if keyPath == "" {
		if keyPath, err = defaultKeyPath(); err != nil {
			return fail("%v", err)
		}
	}
	if *initKey {
		if len(pos) > 0 {
			return usageError(stderr, "approve", errors.New("--init takes no APPROVAL or WORKFLOW"))
		}
		if _, err := os.Stat(keyPath); err == nil {
			fmt.Fprintf(stdout, "the approver key is already at %s\n", keyPath)
			return exitOK
		}
		if err := createKey(keyPath); err != nil {
			return fail("%v", err)
		}
		fmt.Fprintf(stdout, "created the approver key at %s (mode 0600)\n", keyPath)
		return exitOK
	}
	if len(pos) != 1 {
		return usageError(stderr, "approve", errors.New("one APPROVAL id or WORKFLOW expected"))
	}
	var tty terminal
	defer func() {
		if tty != nil {
			_ = tty.Close()
		}
	}()
	key, err := readKey(keyPath)
	if errors.Is(err, errNoKey) && !*yes {
		// The first use on a terminal creates the key.
		if tty, err = env.tty(); err != nil {
			return fail("%s, and no terminal to create one on (%v): a person creates it with chartgate approve --init", keyMissing(keyPath), err)
		}
		if err = createKey(keyPath); err == nil {
			fmt.Fprintf(tty, "created the approver key at %s (mode 0600)\n", keyPath)
			key, err = readKey(keyPath)
		}
	}
	if errors.Is(err, errNoKey) {
		return fail("%s: the grant cannot be signed, so it is refused; a person creates the key with chartgate approve --init", keyMissing(keyPath))
	}
	if err != nil {
		return fail("%v", err)
	}
	p, err := openProject(pf)
	if err != nil {
		return fail("%v", err)
	}
	defer p.close()
	opts := agreedGateOptions(p, nil, false, defaultLeaseTTL)
	opts.ApproverKey = key
	g, err := mcpbind.New(p.workflow.Machine.Engine(), opts)
	if err != nil {
		return fail("%v", err)
	}
	ctx := context.Background()
	var ref mcpbind.Ref
	var pa *mcpbind.PendingApproval
	if arg := pos[0]; mcpbind.IsApprovalID(arg) {
		ref, pa, err = g.FindApproval(ctx, arg)
	} else {
		ref = refOf(arg)
		pa, err = g.Approval(ctx, ref)
	}
	if err != nil {
		return fail("%s", errText(err))
	}
	if pa.ID == "" {
		return fail("workflow %s waits for an approval that has no id yet (its record was written by an older chartgate); it gets one at the workflow's next save", refText(ref, ""))
	}
	name, authd := approver(*by)
	verb, done := "approve", "approved"
	if *reject {
		verb, done = "reject", "rejected"
	}
	if !*yes {
		if tty == nil {
			if tty, err = env.tty(); err != nil {
				return fail("cannot ask for confirmation on the terminal (%v); with the approver key, --yes answers without asking", err)
			}
		}
		fmt.Fprintf(tty, "Workflow %s waits for %s.\n", refText(ref, ""), pa.Text())
		ok, err := confirm(tty, fmt.Sprintf("%s it as %s?", strings.ToUpper(verb[:1])+verb[1:], name))
		if err != nil {
			return fail("%v", err)
		}
		if !ok {
			return fail("not confirmed: approval %s is still pending", pa.ID)
		}
	}
	at := env.now()
	tr, err := g.Approve(ctx, ref, mcpbind.Grant{ID: pa.ID, Approve: !*reject, By: name, Authenticated: authd, Time: at,
		Token: mcpbind.ApprovalToken(key, pa.ID, !*reject, name, at)})
	if err != nil {
		return fail("%s", errText(err))
	}
	who := name + ", authenticated"
	if !authd {
		who = name + ", not authenticated"
	}
	fmt.Fprintf(stdout, "%s approval %s of workflow %s: %s -> %s on %s (by %s)\n", done, pa.ID, refText(ref, ""),
		jsonx.Text(tr.From), jsonx.Text(tr.To), pa.Event, who)
	return exitOK
}

// keyMissing says that there is no approver key at path.
func keyMissing(path string) string { return "no approver key at " + path }

// errText is an error of package mcpbind for people: without the
// package's prefix, nor the text of the sentinel error it wraps.
func errText(err error) string {
	msg := strings.TrimPrefix(err.Error(), "mcpbind: ")
	if i := strings.Index(msg, ": mcpbind: "); i >= 0 {
		msg = msg[:i]
	}
	return msg
}

// workflowArg parses the flags and the one WORKFLOW argument.
func workflowArg(fs *flag.FlagSet, cmd string, args []string, stdout, stderr io.Writer) (mcpbind.Ref, int, bool) {
	pos, err := parseArgs(fs, args)
	if err != nil {
		return mcpbind.Ref{}, argsError(stdout, stderr, cmd, err), false
	}
	if len(pos) != 1 {
		return mcpbind.Ref{}, usageError(stderr, cmd, errors.New("one WORKFLOW expected: a workflow id, or a session's name")), false
	}
	ref := refOf(pos[0])
	if ref == (mcpbind.Ref{}) {
		// An empty name would match the workflows that no Ref names (a
		// stdio session's), which only their own gateway may move.
		return ref, usageError(stderr, cmd, errors.New("an empty WORKFLOW names no workflow")), false
	}
	return ref, exitOK, true
}

// atProjectRoot points the project flags that were not given (the workflow,
// the store) at the project the working directory is in: the nearest of
// it and its parents that holds a .chartgate folder, as the hooks find
// it, so that the commands work from any subfolder of the project.
func atProjectRoot(fs *flag.FlagSet, pf projectFlags) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	root := hook.ProjectDir(".")
	if !set["workflow"] && !filepath.IsAbs(*pf.workflow) {
		*pf.workflow = filepath.Join(root, *pf.workflow)
	}
	if !set["store"] && *pf.store != "memory" && !isURLStore(*pf.store) && !filepath.IsAbs(*pf.store) {
		*pf.store = filepath.Join(root, *pf.store)
	}
}

// openGate opens the project and its gate, and prints the workflow's
// warnings on stderr; on failure it reports to stderr and returns a nil
// gate and the exit code.
func openGate(pf projectFlags, stderr io.Writer) (*project, *mcpbind.Gate, int) {
	p, err := openProject(pf)
	if err != nil {
		fmt.Fprintf(stderr, "chartgate: %v\n", err)
		return nil, nil, exitFail
	}
	g, err := p.gate()
	if err != nil {
		p.close()
		fmt.Fprintf(stderr, "chartgate: %v\n", err)
		return nil, nil, exitFail
	}
	return p, g, exitOK
}
