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
	"strings"
	"time"

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
			_ = enc.Encode(map[string]any{"workflow": refText(w.Ref, w.Key), "state": w.State, "status": w.Status, "pending": w.Pending, "updated": w.Updated})
			continue
		}
		line := fmt.Sprintf("%s  %s (%s)", refText(w.Ref, w.Key), jsonx.Text(w.State), w.Status)
		if !w.Updated.IsZero() {
			line += "  last moved " + w.Updated.UTC().Format(time.RFC3339)
		}
		if a := w.Pending; a != nil {
			line += fmt.Sprintf("  waits for approval: %s -> %s on %s", a.From, a.To, a.Event)
			if a.Message != "" {
				line += ": " + a.Message
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
	line := fmt.Sprintf("%s  %s: %s -> %s (%s)", t, e.Event.Type, jsonx.Text(e.From), jsonx.Text(e.To), who)
	if in, ok := e.Event.Data["input"].(map[string]any); ok {
		if r, ok := in["rationale"].(string); ok && r != "" {
			line += fmt.Sprintf("  rationale: %q", r)
		}
	}
	return line
}

// cmdApprove approves, or with --reject rejects, the transition a workflow
// waits for.
func cmdApprove(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("approve")
	pf := addProjectFlags(fs)
	reject := fs.Bool("reject", false, "reject the transition instead: the workflow goes back to where it was")
	by := fs.String("by", os.Getenv("USER"), "who approves, for the run history (default $USER)")
	ref, code, ok := workflowArg(fs, "approve", args, stdout, stderr)
	if !ok {
		return code
	}
	if *by == "" {
		*by = "chartgate approve"
	}
	p, g, code := openGate(pf, stderr)
	if g == nil {
		return code
	}
	defer p.close()
	tr, err := g.Approve(context.Background(), ref, !*reject, *by)
	if errors.Is(err, mcpbind.ErrNoPendingApproval) {
		fmt.Fprintf(stderr, "chartgate approve: workflow %s waits for no approval\n", refText(ref, ""))
		return exitFail
	}
	if err != nil {
		fmt.Fprintf(stderr, "chartgate approve: %v\n", err)
		return exitFail
	}
	verb := "approved"
	if *reject {
		verb = "rejected"
	}
	fmt.Fprintf(stdout, "%s: %s -> %s\n", verb, jsonx.Text(tr.From), jsonx.Text(tr.To))
	return exitOK
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
	return refOf(pos[0]), exitOK, true
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
