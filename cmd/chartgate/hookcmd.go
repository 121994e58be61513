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
	"runtime/debug"
	"time"

	"github.com/chartgate/chartgate/hook"
	"github.com/chartgate/chartgate/internal/core"
	"github.com/chartgate/chartgate/mcpbind/sqlitestore"
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
  --checkpoint MODE, --default-deny, --compat statewright
                   as chartgate serve's: give the hooks what the gateway gets
  --deadline D     how long the hook may take (default 30s, below the 60 s
                   chartgate install gives the hosts); past it, the event is
                   answered as one that could not be decided
` + projectFlagsUsage + `
The project folder is the nearest folder with a .chartgate folder holding
(or above) the first of: --project, $CLAUDE_PROJECT_DIR, $GEMINI_PROJECT_DIR,
the workspace root the event names (Cursor), the event's cwd, the current
directory. Without one, nothing is gated: every event goes on. Relative
--workflow, --store and --subflows are relative to the project folder.
A pre tool event that cannot be decided (unreadable input, a workflow that
does not load, a store that fails, the deadline passed, an internal error)
is refused with the reason, in the host's format, with exit code 0; other
events report it on stderr and exit 1, which hosts show and go on. The
stack of an internal error goes to .chartgate/hook-errors.log, never to the
agent.
`

// defaultHookDeadline bounds the whole handling of one event: past it,
// the hook answers as for an event it could not decide. It is below the
// timeout `chartgate install` gives the hosts (hook.HostTimeout), so
// that the hook, not the host, decides what a slow event gets.
const defaultHookDeadline = 30 * time.Second

// hookAnswer is what the hook writes: its standard output, a line for
// standard error, and its exit code.
type hookAnswer struct {
	out  []byte
	msg  string
	code int
}

// cmdHook runs `chartgate hook`; exiting says that the process ends when
// it returns (runOptions).
func cmdHook(args []string, stdin io.Reader, stdout, stderr io.Writer, exiting bool) int {
	return hookWith(args, stdin, stdout, stderr, processHookEnv(), exiting)
}

// hookEnv is where a hook event comes from: the environment, working
// directory and ancestry of the hook process, and how it opens the
// project. `chartgate hook` has its own process' (processHookEnv); the
// hook daemon gives each event its client's.
type hookEnv struct {
	getenv   func(string) string
	wd       string
	ancestry func() []hook.Proc
	// open opens the project's workflow and store; release ends the
	// event's use of them.
	open func(pf projectFlags, opts *workflow.Options, exiting bool) (p *project, release func(), err error)
}

// processHookEnv is the environment of this process.
func processHookEnv() hookEnv {
	wd, _ := os.Getwd()
	return hookEnv{getenv: os.Getenv, wd: wd, ancestry: hook.Ancestry, open: openHookProject}
}

// openHookProject opens the project for one event, and closes it after
// (closeHookStore).
func openHookProject(pf projectFlags, opts *workflow.Options, exiting bool) (*project, func(), error) {
	p, err := openProjectOpts(pf, opts)
	if err != nil {
		return nil, nil, err
	}
	return p, func() { closeHookStore(p, exiting) }, nil
}

// hookWith runs `chartgate hook` with the arguments args, in env.
func hookWith(args []string, stdin io.Reader, stdout, stderr io.Writer, env hookEnv, exiting bool) int {
	flags := newFlagSet("hook")
	pf := addProjectFlags(flags)
	event := flags.String("event", "", "the event's name")
	gateway := flags.String("gateway", "chartgate", "the gateway's MCP server name")
	projectDir := flags.String("project", "", "the project folder")
	checkpoint := flags.String("checkpoint", "soft", "a Statewright state's max_iterations: soft or hard, as serve's")
	defaultDeny := flags.Bool("default-deny", false, "refuse the tools the workflow does not name, as serve's")
	compat := flags.String("compat", "", `"statewright": compile the workflow as serve --compat statewright does`)
	deadline := flags.Duration("deadline", defaultHookDeadline, "how long the hook may take to answer; past it, a pre tool event is refused")
	// Hidden: the hook client answers with it an event whose answer from
	// the hook daemon was lost, which must not be decided twice.
	undecided := flags.String("undecided", "", "answer the event as one that could not be decided, for this reason")
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
	if *deadline <= 0 {
		return usageError(stderr, "hook", fmt.Errorf("--deadline %s: must be positive", *deadline))
	}
	if c := workflow.Compat(*compat); c != workflow.CompatNone && c != workflow.CompatStatewright {
		return usageError(stderr, "hook", fmt.Errorf("--compat %q: the one compatibility is statewright", *compat))
	}
	cp := workflow.Checkpoint(*checkpoint)
	if cp != workflow.CheckpointSoft && cp != workflow.CheckpointHard {
		return usageError(stderr, "hook", fmt.Errorf("--checkpoint %q: use soft or hard", *checkpoint))
	}
	data, err := io.ReadAll(io.LimitReader(stdin, hook.MaxInput+1))
	if err != nil {
		fmt.Fprintf(stderr, "chartgate hook: reading stdin: %v\n", err)
		return exitFail
	}
	var ev hook.Event
	const parsed = -1
	if a := guardHook(&ev, nil, func() hookAnswer {
		ev, err = hook.Parse(host, data, *event)
		if err != nil {
			return failedAnswer(ev, err)
		}
		return hookAnswer{code: parsed}
	}); a.code != parsed {
		return a.write(stdout, stderr)
	}
	if ev.Kind == hook.KindOther {
		_, _ = stdout.Write(hook.Encode(ev, hook.Result{}))
		return exitOK
	}
	if *undecided != "" {
		return failedAnswer(ev, errors.New(*undecided)).write(stdout, stderr)
	}
	cfg := hookConfig{pf: pf, projectDir: *projectDir, gateway: *gateway, checkpoint: cp, compat: workflow.Compat(*compat), defaultDeny: *defaultDeny, deadline: *deadline, exiting: exiting, env: env}
	return awaitHook(ev, *deadline, func(project *string) hookAnswer {
		return decideHook(ev, cfg, project)
	}).write(stdout, stderr)
}

// hookConfig is what the flags of `chartgate hook` say.
type hookConfig struct {
	pf          projectFlags
	projectDir  string
	gateway     string
	checkpoint  workflow.Checkpoint
	compat      workflow.Compat
	defaultDeny bool
	deadline    time.Duration
	// exiting: the process ends once the event is answered.
	exiting bool
	env     hookEnv
}

// decideHook answers an event from its session's workflow; it sets
// *project once the project folder is known (for the log of a panic).
func decideHook(ev hook.Event, cfg hookConfig, project *string) hookAnswer {
	env := cfg.env
	// Relative folders are relative to the hook's working directory (the
	// client's, in the hook daemon).
	abs := func(d string) string {
		if d != "" && !filepath.IsAbs(d) {
			return filepath.Join(env.wd, d)
		}
		return d
	}
	ev.Cwd = abs(ev.Cwd)
	// The project: the folder the host names (Claude Code's
	// CLAUDE_PROJECT_DIR, Gemini CLI's GEMINI_PROJECT_DIR, Cursor's
	// workspace root), else the event's cwd, else the hook's own working
	// directory; the first inside a chartgate project wins, so that an agent
	// that changed its shell's directory outside the project is still gated.
	dir, ok := hook.FindProject(abs(cfg.projectDir), abs(env.getenv("CLAUDE_PROJECT_DIR")), abs(env.getenv("GEMINI_PROJECT_DIR")), abs(ev.Root), ev.Cwd, env.wd)
	if !ok {
		// Not a chartgate project: nothing is gated.
		return hookAnswer{out: hook.Encode(ev, hook.Result{})}
	}
	*project = dir
	if hook.StepsAside(ev.Host, dir, env.getenv, env.ancestry) {
		// Copilot CLI running Claude Code's hooks: its own decide.
		return hookAnswer{out: hook.Encode(ev, hook.Result{})}
	}
	if ev.Cwd == "" {
		ev.Cwd = dir
	}
	inProject(dir, cfg.pf)
	p, release, err := env.open(cfg.pf, &workflow.Options{Checkpoint: cfg.checkpoint, Compat: cfg.compat}, cfg.exiting)
	if err != nil {
		return failedAnswer(ev, err)
	}
	defer release()
	gate, err := hookCore(p, cfg)
	if err != nil {
		return failedAnswer(ev, err)
	}
	h, err := hook.NewHandler(p.workflow, gate, p.store, dir, &hook.Options{Gateway: cfg.gateway, Ancestry: env.ancestry, Getenv: env.getenv})
	if err != nil {
		return failedAnswer(ev, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.deadline)
	defer cancel()
	res, err := h.Handle(ctx, ev)
	if err != nil {
		return failedAnswer(ev, err)
	}
	return hookAnswer{out: hook.Encode(ev, res)}
}

// closeHookStore closes the project's store, unless it is a SQLite file
// and the process ends anyway (exiting): the exit then leaves the file as
// a crash right after the hook's last commit would, which SQLite's
// write-ahead log recovers from, and saves the checkpoint and the log's
// deletion the last close makes (package hook's doc, "Speed"). Postgres
// and Redis connections are closed: their servers would log a dropped
// connection.
func closeHookStore(p *project, exiting bool) {
	if _, ok := p.store.(*sqlitestore.Store); ok && exiting {
		return
	}
	_ = p.close()
}

// hookCore returns the gate a hook decides with: the core of the gate
// serve builds (package internal/core), with the options every process of
// the project agrees on, and without the MCP server a hook has no use for.
func hookCore(p *project, cfg hookConfig) (*core.Core, error) {
	return core.New(p.workflow.Machine.Engine(), hookCoreOptions(p, cfg))
}

// hookCoreOptions are the core's options of a hook's gate: the options
// every process of the project agrees on (agreedGateOptions, which serve
// gives mcpbind.New), and the hook's own bounds.
func hookCoreOptions(p *project, cfg hookConfig) *core.Options {
	o := agreedGateOptions(p, nil, cfg.defaultDeny, defaultLeaseTTL)
	return &core.Options{
		Store:           o.Store,
		Logger:          o.Logger,
		AuditCalls:      o.AuditCalls,
		HistoryLimit:    o.HistoryLimit,
		DefaultDeny:     o.DefaultDeny,
		LeaseTTL:        o.LeaseTTL,
		ExternalTools:   o.ExternalTools,
		WorkflowVersion: o.WorkflowVersion,
		// The start tool of serve's gate (mcpbind.Options.StartTool's
		// default), so that both refuse and allow it alike.
		StartTool: core.DefaultStartTool,
		// The host's own tools are not bounded by the gate's default
		// argument size: a Write of a large file is decided like a small
		// one.
		MaxArgumentBytes: hook.MaxInput,
		// An event waits for a call that holds its workflow for at most
		// two thirds of the hook's deadline, which leaves the rest to keep
		// it for later if it still cannot be applied.
		BusyWait: cfg.deadline * 2 / 3,
	}
}

// awaitHook runs decide and waits for its answer at most deadline; past
// it, the event gets the answer of one that could not be decided (a pre
// tool event is refused), and decide is left to the process' exit. A
// panic in decide is answered the same way (guardHook).
func awaitHook(ev hook.Event, deadline time.Duration, decide func(project *string) hookAnswer) hookAnswer {
	done := make(chan hookAnswer, 1)
	go func() {
		var project string
		done <- guardHook(&ev, &project, func() hookAnswer { return decide(&project) })
	}()
	t := time.NewTimer(deadline)
	defer t.Stop()
	select {
	case a := <-done:
		return a
	case <-t.C:
		return failedAnswer(ev, fmt.Errorf("the hook did not decide within its deadline of %s", deadline))
	}
}

// guardHook runs decide, recovering a panic: the event is answered as
// one that could not be decided, with a plain sentence (a pre tool event
// is refused, in its host's format), and the panic and its stack go to
// .chartgate/hook-errors.log in the project (when it is known) and to
// standard error, never to the agent.
func guardHook(ev *hook.Event, project *string, decide func() hookAnswer) (a hookAnswer) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		stack := debug.Stack()
		dir := ""
		if project != nil {
			dir = *project
		}
		where := logHookPanic(dir, r, stack)
		a = failedAnswer(*ev, errors.New("chartgate hook failed with an internal error"))
		a.msg = fmt.Sprintf("chartgate hook: internal error: %v (%s)", r, where)
	}()
	return decide()
}

// hookErrorLog is the file, in the project's .chartgate folder, that keeps
// the stacks of the hook's internal errors.
const hookErrorLog = "hook-errors.log"

// logHookPanic appends a panic and its stack to the project's hook error
// log, and says where it went.
func logHookPanic(project string, r any, stack []byte) string {
	entry := fmt.Sprintf("%s panic: %v\n%s\n", time.Now().UTC().Format(time.RFC3339), r, stack)
	if project != "" {
		path := filepath.Join(project, hook.ConfigDir, hookErrorLog)
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			_, werr := f.WriteString(entry)
			if cerr := f.Close(); werr == nil && cerr == nil {
				return "the stack is in " + path
			}
		}
	}
	_, _ = os.Stderr.WriteString(entry)
	return "the stack is on standard error"
}

// write writes the answer and returns its exit code.
func (a hookAnswer) write(stdout, stderr io.Writer) int {
	if a.msg != "" {
		fmt.Fprintln(stderr, a.msg)
	}
	if a.out != nil {
		_, _ = stdout.Write(a.out)
	}
	return a.code
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

// failedAnswer answers an event that could not be decided: a pre tool
// event is refused with the reason, in its host's format, and exit code 0
// (a gate that cannot decide does not let the tool through); any other
// reports on stderr and exits 1, which the hosts show and go on from.
func failedAnswer(ev hook.Event, err error) hookAnswer {
	msg := fmt.Sprintf("chartgate hook: %v", err)
	if ev.Kind == hook.KindPreTool {
		return hookAnswer{msg: msg, out: hook.Encode(ev, hook.Result{Deny: "chartgate could not decide whether this tool may run, so it is refused: " + err.Error()})}
	}
	return hookAnswer{msg: msg, code: exitFail}
}
