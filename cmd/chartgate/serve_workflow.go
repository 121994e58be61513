// This file puts a workflow in front of the gateway of the serve command:
// an mcpbind gate on the upstream tools, with the project's workflow and
// store, the workflow tools (Statewright's, with --compat statewright, are in
// serve_statewright.go), approvals, the audit, and the file interrupts of
// upstream tools that write.

package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/gateway"
	"github.com/chartgate/chartgate/hook"
	"github.com/chartgate/chartgate/internal/toolargs"
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
	listAll     *bool
	implicit    *bool
}

func addServeWorkflowFlags(fs *flag.FlagSet) serveWorkflowFlags {
	f := serveWorkflowFlags{project: addProjectFlags(fs)}
	*f.project.workflow = "" // serve gates nothing unless it is given a workflow
	f.compat = fs.String("compat", "", `"statewright": also serve Statewright's tools, and behave as Statewright where chartgate's default differs`)
	f.checkpoint = fs.String("checkpoint", "soft", "what a Statewright state's max_iterations does once used up: soft (warn) or hard (refuse)")
	f.defaultDeny = fs.Bool("default-deny", false, "refuse the tools the workflow does not name (unless meta.mcp.ungated lists them)")
	f.session = fs.String("session", "", `the name of the workflow the session works in (default: one of its own); "auto": the agent session whose chartgate hooks run beside this gateway`)
	f.leaseTTL = fs.Duration("lease-ttl", defaultLeaseTTL, "how long a call's hold on its workflow outlives a gateway that died during the call")
	f.implicit = fs.Bool("implicit-transitions", false, "with --compat statewright: a call of a tool the state refuses first sends the one unguarded event, without approval, that leads to a state allowing it (Statewright's implicit transition)")
	f.listAll = fs.Bool("list-all-tools", false, "list every tool in every state, whatever the client's protocol, each saying in which states it works (for clients that ignore list_changed)")
	return f
}

const serveWorkflowUsage = `
With --workflow, the gateway enforces a workflow on the upstream tools: a
tool runs only in the states that allow it, and refused calls say what to do
instead. A client of a protocol before 2026-07-28 is listed only the tools
allowed now (and told when that changes); a 2026-07-28 client, or any client
with --list-all-tools, is listed every tool, each description saying in which
states it works; workflow_status and workflow_transition show and move the
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
  --compat NAME      statewright: also serve Statewright's statewright_* tools, and behave as
                     Statewright where chartgate's default differs (see go doc workflow)
  --implicit-transitions
                     with --compat statewright: a call of a tool the state refuses, when
                     exactly one of the state's events leads, unguarded and without
                     approval, to a plain state that allows it, sends that event first
                     (kept in the history, as statewright_transition's) and then runs the
                     call, as Statewright does; default: refused, naming the event
  --checkpoint MODE  a Statewright state's max_iterations: soft (the call runs, with a notice; default) or hard (refused)
  --default-deny     refuse tools the workflow does not name (unless meta.mcp.ungated lists them)
  --session NAME     the name of the session's workflow (default: one of its own); "auto": the
                     agent session whose chartgate hooks run beside this gateway, found in the
                     store by the processes they share (see chartgate help hook)
  --lease-ttl D      how long the hold of a call on its workflow outlives a gateway that
                     died during the call (default 10s); it is renewed while the call runs
  --list-all-tools   list every tool in every state, whatever the client's protocol, each
                     with the states in which it works, and send no list_changed; a call
                     is still refused outside them. For clients that read the tools once
                     and ignore list_changed (Codex): by default a client of a protocol
                     before 2026-07-28 is listed the current state's tools only
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
		if *f.listAll {
			return nil, nil, errors.New("--list-all-tools needs --workflow")
		}
		if *f.implicit {
			return nil, nil, errors.New("--implicit-transitions needs --workflow and --compat statewright")
		}
		return nil, nil, nil
	}
	switch *f.compat {
	case "", "statewright":
	default:
		return nil, nil, fmt.Errorf("--compat %q: the one compatibility is statewright", *f.compat)
	}
	if *f.implicit && *f.compat != "statewright" {
		return nil, nil, errors.New("--implicit-transitions needs --compat statewright")
	}
	checkpoint := workflow.Checkpoint(*f.checkpoint)
	if checkpoint != workflow.CheckpointSoft && checkpoint != workflow.CheckpointHard {
		return nil, nil, fmt.Errorf("--checkpoint %q: use soft or hard", *f.checkpoint)
	}
	path := *f.project.workflow
	if o.config == "" && len(o.command) == 0 {
		// A Statewright gateway configuration names its upstreams.
		servers, err := workflowUpstreams(f.project)
		if err != nil {
			return nil, nil, err
		}
		o.workflowServers = servers
	}
	names := &toolNames{}
	hook := func(ctx context.Context, g *gateway.Gateway, server *mcp.Server) error {
		p, err := openProjectWith(f.project, checkpoint, workflow.Compat(*f.compat))
		if err != nil {
			return err
		}
		*closers = append(*closers, p.close)
		w := p.workflow
		opts := agreedGateOptions(p, logger, *f.defaultDeny, *f.leaseTTL)
		opts.ElicitApprovals = true
		opts.MaxArgumentBytes = o.maxArgs
		opts.ListAllTools = *f.listAll
		// A tool two upstreams have is listed as SERVER__NAME: the
		// workflow's NAME gates it.
		opts.GatedAs = g.GatedAs
		opts.AfterCall = interrupts(w, g, *f.compat == "statewright")
		var resolver *hook.Resolver
		switch name := *f.session; name {
		case "":
		case "auto":
			// The agent session whose chartgate hooks run beside this
			// gateway (package hook's registry): both then keep its workflow.
			resolver = &hook.Resolver{Store: p.store, Logger: logger}
			opts.SessionKey = func(*mcp.ServerSession) string { return resolver.Name() }
		default:
			opts.SessionKey = func(*mcp.ServerSession) string { return name }
		}
		var sw *statewrightTools
		if *f.compat == "statewright" {
			sw = &statewrightTools{w: w, gw: g, store: p.store, implicit: *f.implicit, created: map[string]bool{}, branches: map[*mcp.ServerSession]string{}, session: *f.session, resolver: resolver, logger: logger}
			opts.OwnTools = statewrightOwnTools
			// At a checkpoint Statewright lists only its own tools, and
			// every transition restarts its iteration count.
			opts.CheckpointListsOwnTools = true
			opts.ResetCallsOnTransition = true
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
		if sw != nil {
			// First, so that refusals name statewright_transition, the
			// tool a Statewright agent uses.
			if err := gate.AddWorkflowTools(server, workflowTools(w.StatewrightTools())); err != nil {
				return err
			}
			sw.gate = gate
			sw.add(server)
		}
		if err := gate.AddWorkflowTools(server, workflowTools(w.ToolOptions())); err != nil {
			return err
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
		errs := gate.CheckTools(listed)
		lenient := sw != nil && w.Format == workflow.FormatStatewright
		if lenient {
			var closed statechart.ErrorList
			errs, closed = splitFailClosed(errs)
			for _, e := range closed {
				logger.Warn("chartgate serve: " + e.Error() + ": the state refuses the tool it was meant for")
			}
		}
		if len(errs) > 0 {
			return fmt.Errorf("workflow %s names tools that no upstream server lists, so the tools they mean would not be gated:%s\nfix the names, or give the servers that have these tools (--config FILE, or -- COMMAND)", path, indentLines(errs))
		}
		names.start(gate, listed, lenient)
		logger.Info("chartgate serve: workflow "+w.Machine.ID()+" enforced", "format", string(w.Format), "store", *f.project.store)
		return nil
	}
	return hook, func(tools []gateway.ToolInfo) map[string]string { return names.refuse(path, tools) }, nil
}

// splitFailClosed splits the errors of a Statewright workflow's names,
// for --compat statewright, into the names that leave a tool ungated and
// those that fail closed: a name of a state's allowed_tools (compiled to
// its meta.mcp.tools) that matches no tool only keeps the tool it meant
// from that state, since the final states' "*" gates every tool, and
// Statewright's gateway starts with it. Any other name that matches
// nothing is still an error.
func splitFailClosed(errs statechart.ErrorList) (failOpen, failClosed statechart.ErrorList) {
	for _, e := range errs {
		if allowedToolsPath.MatchString(e.Path) {
			failClosed = append(failClosed, e)
		} else {
			failOpen = append(failOpen, e)
		}
	}
	return failOpen, failClosed
}

// allowedToolsPath matches the path of a name of a compiled Statewright
// state's allowed_tools.
var allowedToolsPath = regexp.MustCompile(`\.meta\.mcp\.tools\[\d+\]$`)

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
	compat  bool            // --compat statewright: names that fail closed are no error
}

func (n *toolNames) start(gate *mcpbind.Gate, tools []string, compat bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.gate, n.initial, n.compat = gate, map[string]bool{}, compat
	for _, t := range tools {
		n.initial[t] = true
	}
}

// refuse is the gateway's RefuseTools.
func (n *toolNames) refuse(path string, tools []gateway.ToolInfo) map[string]string {
	n.mu.Lock()
	gate, initial, compat := n.gate, n.initial, n.compat
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
	if compat {
		errs, _ = splitFailClosed(errs)
	}
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
func openProjectWith(f projectFlags, checkpoint workflow.Checkpoint, compat workflow.Compat) (*project, error) {
	if _, err := os.Stat(*f.workflow); err != nil {
		return nil, fmt.Errorf("--workflow: %w", err)
	}
	return openProjectOpts(f, &workflow.Options{Checkpoint: checkpoint, Compat: compat})
}

// interrupts returns the AfterCall that fires the workflow's file
// interrupts: a call of an upstream tool that is not read-only (by its MCP
// annotations) and succeeded, whose arguments name a path that matches an
// interrupt's file_pattern, sends the interrupt's event.
func interrupts(w *workflow.Workflow, g *gateway.Gateway, compat bool) func(context.Context, mcpbind.Call) []mcpbind.FollowUp {
	if len(w.Interrupts) == 0 {
		return nil
	}
	return func(_ context.Context, c mcpbind.Call) []mcpbind.FollowUp {
		if c.Result == nil || c.Result.IsError || readOnly(g, c.Tool) {
			return nil
		}
		for _, path := range toolargs.WrittenPaths(c.Arguments) {
			if in, ok := w.MatchInterrupt(path); ok {
				return []mcpbind.FollowUp{{
					Event:  statechart.Event{Type: in.Event, Data: map[string]any{"input": map[string]any{"file": path, "tool": c.Tool}}},
					Reason: interruptReason(path, c.Tool, in, compat),
				}}
			}
		}
		return nil
	}
}

// interruptReason says why an interrupt fired; with --compat statewright
// it starts with Statewright's marker, "[STATEWRIGHT INTERRUPT]", which
// Statewright's plugins and prompts look for.
func interruptReason(path, tool string, in workflow.Interrupt, compat bool) string {
	if compat {
		return fmt.Sprintf("[STATEWRIGHT INTERRUPT] File '%s', written by %s, triggered interrupt '%s' (%s)", path, tool, in.Name, in.FilePattern)
	}
	return fmt.Sprintf("file %s, written by %s, matches interrupt %s (%s)", path, tool, in.Name, in.FilePattern)
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

// workflowUpstreams returns the upstream_servers of a Statewright gateway
// configuration given as the workflow ({"definition": {...},
// "upstream_servers": [...]}); none for a workflow file.
func workflowUpstreams(f projectFlags) ([]*gateway.ServerConfig, error) {
	data, err := os.ReadFile(*f.workflow)
	if err != nil {
		return nil, fmt.Errorf("--workflow: %w", err)
	}
	w, err := workflow.Load(bytes.TrimPrefix(data, utf8BOM), &workflow.Options{Format: workflow.Format(*f.format), Resolve: workflow.DirResolver(subflowDir(f))})
	if err != nil {
		return nil, nil // serve reports the workflow's errors where it loads it
	}
	var out []*gateway.ServerConfig
	for _, u := range w.Upstreams {
		out = append(out, &gateway.ServerConfig{Name: u.Name, Transport: gateway.TransportStdio, Command: u.Command, Args: u.Args, Env: u.Env})
	}
	return out, nil
}
