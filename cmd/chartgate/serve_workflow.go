// This file puts a workflow in front of the gateway of the serve command:
// an mcpbind gate on the upstream tools, with the project's workflow and
// store, the workflow tools (and Statewright's, with --compat statewright),
// approvals, the audit, and the file interrupts of upstream tools that
// write.

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/gateway"
	"github.com/chartgate/chartgate/hook"
	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/telemetry"
	"github.com/chartgate/chartgate/workflow"
)

// serveWorkflowFlags are serve's flags for the workflow.
type serveWorkflowFlags struct {
	project     projectFlags
	compat      *string
	checkpoint  *string
	defaultDeny *bool
	session     *string
	leaseTTL    *time.Duration
}

func addServeWorkflowFlags(fs *flag.FlagSet) serveWorkflowFlags {
	f := serveWorkflowFlags{project: addProjectFlags(fs)}
	*f.project.workflow = "" // serve gates nothing unless it is given a workflow
	f.compat = fs.String("compat", "", `"statewright": also serve statewright_get_state and statewright_transition`)
	f.checkpoint = fs.String("checkpoint", "soft", "what a Statewright state's max_iterations does once used up: soft (warn) or hard (refuse)")
	f.defaultDeny = fs.Bool("default-deny", false, "refuse the tools the workflow does not name (unless meta.mcp.ungated lists them)")
	f.session = fs.String("session", "", `the name of the workflow the session works in (default: one of its own); "auto": the agent session whose chartgate hooks run beside this gateway`)
	f.leaseTTL = fs.Duration("lease-ttl", defaultLeaseTTL, "how long a call's hold on its workflow outlives a gateway that died during the call")
	return f
}

const serveWorkflowUsage = `
With --workflow, the gateway enforces a workflow on the upstream tools: a
tool is listed and runs only in the states that allow it; refused calls say
what to do instead; workflow_status and workflow_transition show and move the
workflow; transitions that need approval wait for chartgate approve (or the
user, when the client supports elicitation); every transition and gated call
is kept in the workflow's run history (chartgate history). A tool two servers
have, listed as SERVER__NAME, is gated by the workflow's NAME. A name of the
workflow that matches no tool stops serve (the tool it meant would run
ungated); once serving, a tool that appears unnamed while a name of the
workflow matches no tool any more is refused. Without servers, serve offers
the workflow tools alone.

  --workflow FILE    the workflow, XState (meta.mcp) or Statewright JSON
  --store STORE      a SQLite file (default .chartgate/state.db), redis://HOST:PORT[/DB],
                     postgres://USER@HOST[:PORT]/DB (or postgresql://), or memory
  --format FORMAT    the workflow's format: auto (default), xstate or statewright
  --subflows DIR     the directory of the Statewright workflows invoke names
  --durable          with a SQLite store: sync every write to disk (survives a power loss; slower)
  --compat NAME      statewright: also serve statewright_get_state and statewright_transition
  --checkpoint MODE  a Statewright state's max_iterations: soft (the call runs, with a notice; default) or hard (refused)
  --default-deny     refuse tools the workflow does not name (unless meta.mcp.ungated lists them)
  --session NAME     the name of the session's workflow (default: one of its own); "auto": the
                     agent session whose chartgate hooks run beside this gateway, found in the
                     store by the processes they share (see chartgate help hook)
  --lease-ttl D      how long the hold of a call on its workflow outlives a gateway that
                     died during the call (default 10s); it is renewed while the call runs
`

// workflowHook returns the serve hook that attaches the gate, and the
// gateway's RefuseTools that keeps the workflow's names checked while it
// runs; nil without --workflow. closers collects what to close when serve
// ends.
func workflowHook(f serveWorkflowFlags, o *serveOptions, logger *slog.Logger, closers *[]func() error) (serveHook, func([]gateway.ToolInfo) map[string]string, error) {
	if *f.project.workflow == "" {
		for _, set := range []string{*f.compat, *f.session} {
			if set != "" {
				return nil, nil, errors.New("--compat and --session need --workflow")
			}
		}
		return nil, nil, nil
	}
	switch *f.compat {
	case "", "statewright":
	default:
		return nil, nil, fmt.Errorf("--compat %q: the one compatibility is statewright", *f.compat)
	}
	checkpoint := workflow.Checkpoint(*f.checkpoint)
	if checkpoint != workflow.CheckpointSoft && checkpoint != workflow.CheckpointHard {
		return nil, nil, fmt.Errorf("--checkpoint %q: use soft or hard", *f.checkpoint)
	}
	path := *f.project.workflow
	names := &toolNames{}
	hook := func(ctx context.Context, g *gateway.Gateway, server *mcp.Server) error {
		p, err := openProjectWith(f.project, checkpoint)
		if err != nil {
			return err
		}
		*closers = append(*closers, p.close)
		w := p.workflow
		opts := agreedGateOptions(p, logger, *f.defaultDeny, *f.leaseTTL)
		opts.ElicitApprovals = true
		opts.MaxArgumentBytes = o.maxArgs
		// A tool two upstreams have is listed as SERVER__NAME: the
		// workflow's NAME gates it.
		opts.GatedAs = g.GatedAs
		opts.AfterCall = interrupts(w, g)
		switch name := *f.session; name {
		case "":
		case "auto":
			// The agent session whose chartgate hooks run beside this
			// gateway (package hook's registry): both then keep its workflow.
			opts.SessionKey = (&hook.Resolver{Store: p.store, Logger: logger}).SessionKey()
		default:
			opts.SessionKey = func(*mcp.ServerSession) string { return name }
		}
		if *f.compat == "statewright" {
			opts.CheckpointNotice = func(l mcpbind.CallLimit) string {
				return fmt.Sprintf("[STATEWRIGHT CHECKPOINT: iteration %d/%d in state '%s'. You should transition to the next state using statewright_transition.]", l.Calls-1, l.Max, l.State)
			}
		}
		if o.otel != nil {
			if o.tel, err = telemetry.New(o.otel.Options(w.Machine.ID())); err != nil {
				return err
			}
			opts.OnTransition = o.tel.OnTransition
		}
		gate, err := mcpbind.New(w.Machine.Engine(), opts)
		if err != nil {
			return err
		}
		gate.Attach(server)
		if err := gate.AddWorkflowTools(server, nil); err != nil {
			return err
		}
		if *f.compat == "statewright" {
			if err := gate.AddWorkflowTools(server, w.StatewrightTools()); err != nil {
				return err
			}
		}
		// A name of the workflow that no tool has leaves the tool it meant
		// ungated: refuse to start.
		var listed []string
		for _, t := range g.Tools() {
			listed = append(listed, t.Name)
		}
		for name := range g.RefusedTools() {
			listed = append(listed, name) // there, though refused until accepted
		}
		if errs := gate.CheckTools(listed); len(errs) > 0 {
			return fmt.Errorf("workflow %s names tools that no upstream server lists, so the tools they mean would not be gated:%s\nfix the names, or give the servers that have these tools (--config FILE, or -- COMMAND)", path, indentLines(errs))
		}
		names.start(gate, listed)
		logger.Info("chartgate serve: workflow "+w.Machine.ID()+" enforced", "format", string(w.Format), "store", *f.project.store)
		return nil
	}
	return hook, func(tools []gateway.ToolInfo) map[string]string { return names.refuse(path, tools) }, nil
}

// indentLines writes each error on a line of its own, indented.
func indentLines(errs statechart.ErrorList) string {
	var b strings.Builder
	for _, e := range errs {
		b.WriteString("\n\t")
		b.WriteString(e.Error())
	}
	return b.String()
}

// toolNames keeps the workflow's names checked against the tools while
// the gateway runs: once the workflow names a tool that no upstream lists
// any more, a tool that appeared since serve started and that the workflow
// does not name may be the one it meant under a new name, so it is
// refused.
type toolNames struct {
	mu      sync.Mutex
	gate    *mcpbind.Gate   // nil until the workflow is attached
	initial map[string]bool // the tools at start
}

func (n *toolNames) start(gate *mcpbind.Gate, tools []string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.gate, n.initial = gate, map[string]bool{}
	for _, t := range tools {
		n.initial[t] = true
	}
}

// refuse is the gateway's RefuseTools.
func (n *toolNames) refuse(path string, tools []gateway.ToolInfo) map[string]string {
	n.mu.Lock()
	gate, initial := n.gate, n.initial
	n.mu.Unlock()
	if gate == nil {
		return nil // starting: the hook checks the names
	}
	var all, added []string
	for _, t := range tools {
		all = append(all, t.Name)
		if !initial[t.Name] {
			added = append(added, t.Name)
		}
	}
	if len(added) == 0 {
		return nil
	}
	errs := gate.CheckTools(all)
	if len(errs) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, t := range gate.Unnamed(added) {
		out[t] = fmt.Sprintf("tool %q appeared after chartgate serve started, while workflow %s names tools that no upstream server lists any more (%s): it may be one of them under a new name, so it is refused until chartgate serve is restarted and checks the workflow against it",
			t, path, errs[0].Error())
	}
	return out
}

// openProjectWith opens the project with a Statewright checkpoint mode.
func openProjectWith(f projectFlags, checkpoint workflow.Checkpoint) (*project, error) {
	if _, err := os.Stat(*f.workflow); err != nil {
		return nil, fmt.Errorf("--workflow: %w", err)
	}
	return openProjectOpts(f, &workflow.Options{Checkpoint: checkpoint})
}

// interrupts returns the AfterCall that fires the workflow's file
// interrupts: a call of an upstream tool that is not read-only (by its MCP
// annotations) and succeeded, whose arguments name a path that matches an
// interrupt's file_pattern, sends the interrupt's event.
func interrupts(w *workflow.Workflow, g *gateway.Gateway) func(context.Context, mcpbind.Call) []mcpbind.FollowUp {
	if len(w.Interrupts) == 0 {
		return nil
	}
	return func(_ context.Context, c mcpbind.Call) []mcpbind.FollowUp {
		if c.Result == nil || c.Result.IsError || readOnly(g, c.Tool) {
			return nil
		}
		for _, path := range writtenPaths(c.Arguments) {
			if in, ok := w.MatchInterrupt(path); ok {
				return []mcpbind.FollowUp{{
					Event:  statechart.Event{Type: in.Event, Data: map[string]any{"input": map[string]any{"file": path, "tool": c.Tool}}},
					Reason: fmt.Sprintf("file %s, written by %s, matches interrupt %s (%s)", path, c.Tool, in.Name, in.FilePattern),
				}}
			}
		}
		return nil
	}
}

// readOnly reports whether an upstream tool says it changes nothing.
func readOnly(g *gateway.Gateway, tool string) bool {
	for _, t := range g.Tools() {
		if t.Name == tool {
			return t.Tool.Annotations != nil && t.Tool.Annotations.ReadOnlyHint
		}
	}
	return false
}

// pathKeys are the argument names under which tools take the path of a
// file they write (MCP's reference filesystem server: path, destination;
// agent hosts: file_path).
var pathKeys = []string{"path", "file_path", "filePath", "filename", "file", "destination", "paths"}

// writtenPaths returns the paths a call's arguments name, at the top level
// under pathKeys (a string, or an array of strings).
func writtenPaths(args json.RawMessage) []string {
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		return nil
	}
	var out []string
	for _, k := range pathKeys {
		switch v := m[k].(type) {
		case string:
			out = append(out, v)
		case []any:
			for _, e := range v {
				if s, ok := e.(string); ok {
					out = append(out, s)
				}
			}
		}
	}
	return out
}
