package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// Exit codes.
const (
	exitOK    = 0
	exitFail  = 1 // the input is invalid, or running it failed
	exitUsage = 2 // the command line is wrong, or help was asked for
)

const usageText = `usage: chartgate <command> [arguments]

commands:
  validate FILE... [--strict]
        check machines; print every error as FILE: path: message
  run FILE --events LIST [--clock simulated|real]
        run the machine; print one JSON snapshot line per step
  diagram FILE [--format mermaid|dot]
        draw the machine as a Mermaid state diagram or a Graphviz digraph
  bench FILE --events LIST [-n N]
        send the events of LIST round and round, N in all (default 1000000),
        and print the rate as the last line: <rate> events/s
  help [command]
        show this help

FILE is an XState v5 machine config in JSON, or a case file: an object whose
"machine" is the config, with declarative "guards", "actions" and "delays"
beside it. Flags may come before or after FILE.

LIST is comma-separated; each item is an event type (ADD_ITEM), a JSON event
({"type":"PAY","method":"card"}; its commas do not split), or +DURATION
(+250ms, +2s) to move the clock forward and fire the delayed events due.
`

var commandUsage = map[string]string{
	"validate": "usage: chartgate validate FILE... [--strict]\n\n  --strict  also report actions and delays that have no implementation\n",
	"run":      "usage: chartgate run FILE --events LIST [--clock simulated|real]\n\n  --events LIST  events to send, comma-separated: TYPE, {JSON event} or +DURATION\n  --clock CLOCK  simulated (default: +DURATION moves it at once) or real (+DURATION sleeps)\n",
	"diagram":  "usage: chartgate diagram FILE [--format mermaid|dot]\n\n  --format FORMAT  mermaid (default) or dot\n",
	"bench":    "usage: chartgate bench FILE --events LIST [-n N]\n\n  --events LIST  events to send round and round: TYPE, {JSON event} or +DURATION\n  -n N           number of events to send (default 1000000)\n",
}

// run is the whole command: it parses args (without the program name),
// writes to stdout and stderr, and returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText)
		return exitUsage
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "validate":
		return cmdValidate(rest, stdout, stderr)
	case "run":
		return cmdRun(rest, stdout, stderr)
	case "diagram":
		return cmdDiagram(rest, stdout, stderr)
	case "bench":
		return cmdBench(rest, stdout, stderr)
	case "help", "-h", "-help", "--help":
		if len(rest) > 0 {
			if u, ok := commandUsage[rest[0]]; ok {
				fmt.Fprint(stderr, u)
				return exitUsage
			}
		}
		fmt.Fprint(stderr, usageText)
		return exitUsage
	}
	fmt.Fprintf(stderr, "chartgate: unknown command %q\n\n%s", cmd, usageText)
	return exitUsage
}

// newFlagSet returns a flag set that reports nothing itself: parseArgs and
// usageError do.
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
// exitUsage. err may be flag.ErrHelp, for which only the usage is printed.
func usageError(stderr io.Writer, cmd string, err error) int {
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(stderr, "chartgate %s: %v\n", cmd, err)
	}
	fmt.Fprint(stderr, commandUsage[cmd])
	return exitUsage
}

// oneFile parses args and checks that exactly one FILE was given.
func oneFile(fs *flag.FlagSet, cmd string, args []string, stderr io.Writer) (string, int) {
	pos, err := parseArgs(fs, args)
	if err != nil {
		return "", usageError(stderr, cmd, err)
	}
	switch len(pos) {
	case 0:
		return "", usageError(stderr, cmd, errors.New("missing FILE"))
	case 1:
		return pos[0], exitOK
	}
	return "", usageError(stderr, cmd, fmt.Errorf("one FILE expected, got %d: %s", len(pos), strings.Join(pos, " ")))
}
