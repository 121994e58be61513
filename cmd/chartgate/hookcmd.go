package main

// This file defines `chartgate hook HOST`: one hook event of an agent host
// on stdin, the host's answer on stdout, decided by the workflow of the
// event's agent session (package hook).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/chartgate/chartgate/hook"
	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/workflow"
)

const hookUsage = `usage: chartgate hook HOST [--event NAME] [--gateway NAME] [project flags] < EVENT.json

Reads one hook event of an agent host on stdin and writes the host's answer
on stdout. HOST is claude-code, codex, gemini, cursor or copilot.

  --event NAME     the event's name, for inputs that do not carry it (Copilot
                   CLI's camelCase events); default: the input's hook_event_name
  --gateway NAME   the chartgate gateway's entry in the host's MCP
                   configuration, whose tools the gateway gates itself
                   (default chartgate)
  --project DIR    the project folder (default: found, see below)
  --checkpoint MODE, --default-deny
                   as chartgate serve's: give the hooks what the gateway gets
` + projectFlagsUsage + `
The project folder is the nearest folder with a .chartgate folder holding
(or above) the first of: --project, $CLAUDE_PROJECT_DIR, $GEMINI_PROJECT_DIR,
the workspace root the event names (Cursor), the event's cwd, the current
directory. Without one, nothing is gated: every event goes on. Relative
--workflow, --store and --subflows are relative to the project folder.
A pre tool event that cannot be decided (unreadable input, a workflow that
does not load, a store that fails) is refused with the reason; other
events report it on stderr and exit 1, which hosts show and go on.
`

// hookTimeout bounds the whole handling of one event.
const hookTimeout = 30 * time.Second

func cmdHook(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	flags := newFlagSet("hook")
	pf := addProjectFlags(flags)
	event := flags.String("event", "", "the event's name")
	gateway := flags.String("gateway", "chartgate", "the gateway's MCP server name")
	projectDir := flags.String("project", "", "the project folder")
	checkpoint := flags.String("checkpoint", "soft", "a Statewright state's max_iterations: soft or hard, as serve's")
	defaultDeny := flags.Bool("default-deny", false, "refuse the tools the workflow does not name, as serve's")
	pos, err := parseArgs(flags, args)
	if err != nil {
		return argsError(stdout, stderr, "hook", err)
	}
	if len(pos) != 1 {
		return usageError(stderr, "hook", errors.New("one HOST expected: claude-code, codex, gemini, cursor or copilot"))
	}
	host, err := hook.ParseHost(pos[0])
	if err != nil {
		return usageError(stderr, "hook", err)
	}
	data, err := io.ReadAll(io.LimitReader(stdin, hook.MaxInput+1))
	if err != nil {
		fmt.Fprintf(stderr, "chartgate hook: reading stdin: %v\n", err)
		return exitFail
	}
	ev, err := hook.Parse(host, data, *event)
	if err != nil {
		return hookFailed(ev, err, stdout, stderr)
	}
	if ev.Kind == hook.KindOther {
		_, _ = stdout.Write(hook.Encode(ev, hook.Result{}))
		return exitOK
	}
	wd, _ := os.Getwd()
	// The project: the folder the host names (Claude Code's
	// CLAUDE_PROJECT_DIR, Gemini CLI's GEMINI_PROJECT_DIR, Cursor's
	// workspace root), else the event's cwd, else the hook's own working
	// directory; the first inside a chartgate project wins, so that an agent
	// that changed its shell's directory outside the project is still gated.
	project, ok := hook.FindProject(*projectDir, os.Getenv("CLAUDE_PROJECT_DIR"), os.Getenv("GEMINI_PROJECT_DIR"), ev.Root, ev.Cwd, wd)
	if !ok {
		// Not a chartgate project: nothing is gated.
		_, _ = stdout.Write(hook.Encode(ev, hook.Result{}))
		return exitOK
	}
	if ev.Cwd == "" {
		ev.Cwd = project
	}
	inProject(project, pf)
	cp := workflow.Checkpoint(*checkpoint)
	if cp != workflow.CheckpointSoft && cp != workflow.CheckpointHard {
		return usageError(stderr, "hook", fmt.Errorf("--checkpoint %q: use soft or hard", *checkpoint))
	}
	p, err := openProjectOpts(pf, &workflow.Options{Checkpoint: cp})
	if err != nil {
		return hookFailed(ev, err, stdout, stderr)
	}
	defer p.close()
	opts := agreedGateOptions(p.store, nil, *defaultDeny, defaultLeaseTTL)
	// The host's own tools are not bounded by the gate's default argument
	// size: a Write of a large file is decided like a small one.
	opts.MaxArgumentBytes = hook.MaxInput
	gate, err := mcpbind.New(p.workflow.Machine.Engine(), opts)
	if err != nil {
		return hookFailed(ev, err, stdout, stderr)
	}
	h, err := hook.NewHandler(p.workflow, gate, p.store, project, &hook.Options{Gateway: *gateway})
	if err != nil {
		return hookFailed(ev, err, stdout, stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hookTimeout)
	defer cancel()
	res, err := h.Handle(ctx, ev)
	if err != nil {
		return hookFailed(ev, err, stdout, stderr)
	}
	_, _ = stdout.Write(hook.Encode(ev, res))
	return exitOK
}

// inProject makes the project flags' relative paths relative to the
// project folder.
func inProject(project string, pf projectFlags) {
	abs := func(p *string) {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(project, *p)
		}
	}
	abs(pf.workflow)
	abs(pf.subflows)
	if s := *pf.store; s != "memory" && !isURLStore(s) {
		abs(pf.store)
	}
}

// hookFailed answers an event that could not be decided: a pre tool event
// is refused with the reason (a gate that cannot decide does not let the
// tool through); any other reports on stderr and exits 1.
func hookFailed(ev hook.Event, err error, stdout, stderr io.Writer) int {
	fmt.Fprintf(stderr, "chartgate hook: %v\n", err)
	if ev.Kind == hook.KindPreTool {
		_, _ = stdout.Write(hook.Encode(ev, hook.Result{Deny: "chartgate could not decide whether this tool may run, so it is refused: " + err.Error()}))
		return exitOK
	}
	return exitFail
}
