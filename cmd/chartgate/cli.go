package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// Exit codes.
const (
	exitOK    = 0
	exitFail  = 1 // the input is invalid, or running it failed
	exitUsage = 2 // the command line is wrong
)

const usageText = `usage: chartgate <command> [arguments]

commands:
  validate FILE... [--strict] [--tools a,b,c] [--format auto|xstate|statewright] [--subflows DIR]
        check machines and Statewright workflows; print every error as
        FILE: path: message, every warning as FILE: path: warning: message
  run FILE --events LIST [--clock simulated|real] [--format F] [--allow-missing-guards]
        run the machine; print one JSON snapshot line per step
  diagram FILE [--format mermaid|dot|svg]
        draw the machine as a Mermaid state diagram, a Graphviz digraph or
        an SVG image
  bench FILE --events LIST [-n N] [--allow-missing-guards]
        send the events of LIST round and round, N in all (default 1000000),
        and print the rate as the last line: <rate> events/s
  serve [--config FILE] [--http ADDR [--stateless]] [-- COMMAND ARG...]
        serve one MCP server in front of the MCP servers of FILE (a host's
        mcpServers JSON) and COMMAND, over stdio or Streamable HTTP
  status [--json]
        list the workflows the project's store holds: state, pending approval,
        the version of the workflow that saved each
  history WORKFLOW [--json]
        print a workflow's run history (transitions, and calls when audited)
  approve APPROVAL|WORKFLOW [--reject] [--by NAME] [--yes] [--key FILE]
        approve (or reject) a pending approval, after confirming on the
        terminal; the grant is signed with the approver key (--init creates it)
  reset WORKFLOW [--yes]
        delete a workflow's record after confirming on the terminal, such as
        one the current version of the workflow file refuses
  resume WORKFLOW [--yes]
        resume a workflow the agent paused (statewright_pause with --compat
        statewright), after confirming on the terminal
  ui [--addr ADDR]
        serve a local web page of the store's workflows: live statechart,
        run history, approvals; prints a one-time login URL
  hook HOST [--event NAME] < EVENT.json
        answer one hook event of an agent host (claude-code, codex, gemini,
        cursor, copilot) from the workflow of its agent session
  install HOST [--dry-run]
        add chartgate's hooks and gateway to the host's configuration
        (claude-code, codex, cursor, gemini, copilot) and print the diff
  uninstall HOST [--dry-run]
        take them out again: the files as they were before install
  help [command]
        show this help, or a command's
  version, --version
        print chartgate's version

FILE is an XState v5 machine config in JSON, or a case file: an object whose
"machine" is the config, with declarative "guards", "actions" and "delays"
beside it; validate also reads Statewright workflow JSON, told apart by its
keys. "-" reads it from standard input. Flags may come before or after FILE.

What XState accepts but is most likely a mistake (an unknown key, an XState
v4 key such as "cond", a negative delay, an empty action name) is a warning:
XState's behaviour, with its path. validate prints warnings and exits 0 when
there are no errors (--strict makes them errors); the other commands print
them on stderr. A guard without implementation is a warning for validate and
diagram; run and bench refuse it unless --allow-missing-guards is given.

WORKFLOW is a workflow id (workflow_start returns it) or the name of a
session's workflow (name:ID). status, history, approve, reset, resume and ui find the project's
workflow and store with --workflow FILE (default .chartgate/workflow.json) and
--store (default .chartgate/state.db; redis://HOST:PORT; postgres://...; memory).

LIST is comma-separated; each item is an event type (ADD_ITEM), a JSON event
({"type":"PAY","method":"card"}; its commas do not split), or +DURATION
(+250ms, +2s) to move the clock forward and fire the delayed events due.
`

var commandUsage = map[string]string{
	"validate":  "usage: chartgate validate FILE... [--strict] [--tools a,b,c] [--format auto|xstate|statewright] [--subflows DIR]\n\n  --strict    make warnings errors; also report guards, actions and delays that have no implementation\n  --tools     the server's tool names: check the names meta.mcp gives against them\n  --format    the files' format: auto (default: told by their keys), xstate or statewright\n  --subflows  the directory of the Statewright workflows invoke names (DIR/<name>.json)\n",
	"status":    "usage: chartgate status [--json] [project flags]\n\n  --json           print one JSON object per workflow\n" + projectFlagsUsage,
	"history":   "usage: chartgate history WORKFLOW [--json] [project flags]\n\n  --json           print the entries as JSON, one per line\n" + projectFlagsUsage,
	"approve":   approveUsage + projectFlagsUsage,
	"reset":     resetUsage + projectFlagsUsage,
	"resume":    resumeUsage + projectFlagsUsage,
	"hook":      hookUsage,
	"install":   installUsage,
	"uninstall": uninstallUsage,
	"run":       "usage: chartgate run FILE --events LIST [--clock simulated|eventloop|real] [--input JSON] [--format FORMAT] [--allow-missing-guards]\n\n  --events LIST  events to send, comma-separated: TYPE, {JSON event} or +DURATION\n  --clock CLOCK  simulated (default: +DURATION moves it at once, XState's SimulatedClock),\n                 eventloop (the same, delivering promise results between timers, as Node does)\n                 or real (+DURATION sleeps)\n  --input JSON   the machine's input (event.input of xstate.init; default: a case file's \"input\")\n  --format FORMAT  auto (default), xstate or statewright: a workflow runs as serve enforces it\n                 (a Statewright file with its guards and data merge); a file both formats read\n                 needs it when an event carries data\n  --subflows DIR the directory of the Statewright workflows invoke names (default: the file's)\n  --allow-missing-guards  run a machine whose guards have no implementation: evaluating one\n                 puts it in status error, as in XState\n\nA case file's declarative actors run: invoked and spawned promises, callbacks and child machines.\n",
	"diagram":   "usage: chartgate diagram FILE [--format mermaid|dot|svg]\n\n  --format FORMAT  mermaid (default), dot or svg (a self-contained image, laid out by chartgate)\n",
	"bench":     "usage: chartgate bench FILE --events LIST [-n N] [--allow-missing-guards]\n\n  --events LIST  events to send round and round: TYPE, {JSON event} or +DURATION\n  -n N           number of events to send (default 1000000)\n  --allow-missing-guards  run a machine whose guards have no implementation\n",
	"serve":     serveUsage + serveWorkflowUsage,
	"ui":        uiUsage,
}

const approveUsage = `usage: chartgate approve APPROVAL|WORKFLOW [--reject] [--by NAME] [--yes] [--key FILE] [project flags]
       chartgate approve --init [--key FILE]

Answers a pending approval, named by its id (40 hex digits, as workflow_status,
chartgate status and the agent's messages show it) or by the workflow that waits
for it. It shows the transition and asks for confirmation on the terminal
(/dev/tty, not standard input), then signs the grant with the approver key; the
gate applies only a grant that verifies with it. Without the key the grant is
refused. An approval is answered once; an expired one is rejected instead.
Answer only a confirmation you asked for yourself: a program the agent runs may
share your terminal, and the question names the workflow and the transition so
that you can tell.

  --reject         reject the transition: the workflow goes back to where it was
  --by NAME        who answers, for the run history (default: the OS user running
                   the command, recorded as authenticated; another name is
                   recorded as not authenticated)
  --yes            do not ask on the terminal (the approver key is still needed)
  --key FILE       the approver key (default $XDG_CONFIG_HOME/chartgate/approver.key,
                   else ~/.config/chartgate/approver.key)
  --init           create the approver key (mode 0600) if there is none, and exit;
                   the first use on a terminal creates it too
`

// run is the whole command: it parses args (without the program name),
// reads a FILE given as "-" from stdin, writes to stdout and stderr, and
// returns the exit code. Help that was asked for goes to stdout (exit 0);
// usage shown because the command line is wrong goes to stderr (exit 2).
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runOpts(args, stdin, stdout, stderr, nil)
}

// runOptions says how run is run; nil means the zero value.
type runOptions struct {
	// exiting: the process ends when run returns (main), so a command may
	// leave to the exit what the exit does anyway, and set what holds for
	// the whole process. The hook leaves its SQLite store open (see
	// decideHook); serve over stdio runs on one processor.
	exiting bool
}

// runOpts is run with options.
func runOpts(args []string, stdin io.Reader, stdout, stderr io.Writer, o *runOptions) int {
	if o == nil {
		o = &runOptions{}
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText)
		return exitUsage
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "validate":
		return cmdValidate(rest, stdin, stdout, stderr)
	case "run":
		return cmdRun(rest, stdin, stdout, stderr)
	case "diagram":
		return cmdDiagram(rest, stdin, stdout, stderr)
	case "bench":
		return cmdBench(rest, stdin, stdout, stderr)
	case "serve":
		return cmdServe(rest, stdin, stdout, stderr, o.exiting)
	case "status":
		return cmdStatus(rest, stdout, stderr)
	case "history":
		return cmdHistory(rest, stdout, stderr)
	case "approve":
		return cmdApprove(rest, stdout, stderr)
	case "reset":
		return cmdReset(rest, stdout, stderr)
	case "resume":
		return cmdResume(rest, stdout, stderr)
	case "ui":
		return cmdUI(rest, stdout, stderr)
	case "hook":
		return cmdHook(rest, stdin, stdout, stderr, o.exiting)
	case "hook-daemon":
		// Started by the hook client (cmd/chartgate-hook); not listed.
		return cmdHookDaemon(rest, stderr)
	case "install":
		return cmdInstall(rest, stdout, stderr)
	case "uninstall":
		return cmdUninstall(rest, stdout, stderr)
	case "version", "-version", "--version":
		fmt.Fprintf(stdout, "chartgate %s\n", version(debug.ReadBuildInfo()))
		return exitOK
	case "help", "-h", "-help", "--help":
		if len(rest) == 0 {
			fmt.Fprint(stdout, usageText)
			return exitOK
		}
		if u, ok := commandUsage[rest[0]]; ok {
			fmt.Fprint(stdout, u)
			return exitOK
		}
		cmd = rest[0]
	}
	fmt.Fprintf(stderr, "chartgate: unknown command %q\n\n%s", cmd, usageText)
	return exitUsage
}

// releaseVersion is the version a release build stamps with -ldflags
// "-X main.releaseVersion=1.2.0" (internal/cmd/release); --version prints
// it when it is set.
var releaseVersion string

// version is the module's version from the build information: a release
// tag such as v1.2.0 when built by go install module@version, the version
// go build derives from the VCS (v0.0.0-…+dirty and the like), else
// "(devel)". A VCS revision the build recorded follows in parentheses.
func version(info *debug.BuildInfo, ok bool) string {
	if releaseVersion != "" {
		return releaseVersion
	}
	if !ok || info.Main.Version == "" {
		return "(devel)"
	}
	v := info.Main.Version
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = ", modified"
			}
		}
	}
	if rev != "" && !strings.Contains(v, rev[:min(len(rev), 12)]) {
		v += " (" + rev + modified + ")"
	}
	return v
}

// newFlagSet returns a flag set that reports nothing itself: parseArgs,
// argsError and usageError do.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseArgs parses flags that may come before, between or after the
// positional arguments (the flag package alone stops at the first
// positional one), and returns the positional arguments. Everything after
// "--" is positional.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// usageError reports a command-line problem of command cmd and returns
// exitUsage.
func usageError(stderr io.Writer, cmd string, err error) int {
	fmt.Fprintf(stderr, "chartgate %s: %v\n", cmd, err)
	fmt.Fprint(stderr, commandUsage[cmd])
	return exitUsage
}

// argsError reports an error of parseArgs: for flag.ErrHelp (-h, --help)
// the command's usage on stdout and exitOK, for anything else a usage
// error.
func argsError(stdout, stderr io.Writer, cmd string, err error) int {
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, commandUsage[cmd])
		return exitOK
	}
	return usageError(stderr, cmd, err)
}

// oneFile parses args and checks that exactly one FILE was given. When ok
// is false the command is over (help was shown, or the command line is
// wrong) and exits with code.
func oneFile(fs *flag.FlagSet, cmd string, args []string, stdout, stderr io.Writer) (file string, code int, ok bool) {
	pos, err := parseArgs(fs, args)
	if err != nil {
		return "", argsError(stdout, stderr, cmd, err), false
	}
	switch len(pos) {
	case 0:
		return "", usageError(stderr, cmd, errors.New("missing FILE")), false
	case 1:
		return pos[0], exitOK, true
	}
	return "", usageError(stderr, cmd, fmt.Errorf("one FILE expected, got %d: %s", len(pos), strings.Join(pos, " "))), false
}
