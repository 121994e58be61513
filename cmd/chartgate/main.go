// Command chartgate validates, runs, draws and benchmarks XState v5
// machines with package statechart.
//
//	chartgate validate FILE... [--strict] [--tools a,b,c] [--format auto|xstate|statewright] [--subflows DIR]
//	chartgate run FILE --events A,B,{"type":"C","x":1},+250ms [--clock simulated|real] [--format auto|xstate|statewright] [--allow-missing-guards]
//	chartgate diagram FILE [--format mermaid|dot|svg]
//	chartgate bench FILE --events A,B,C [-n N] [--allow-missing-guards]
//	chartgate serve [--config FILE] [--http ADDR [--stateless]] [--workflow FILE ...] [-- COMMAND ARG...]
//	chartgate status | history WORKFLOW | approve APPROVAL|WORKFLOW [--reject] [--yes] | approve --init
//	chartgate ui [--addr ADDR]
//	chartgate hook HOST [--event NAME] < EVENT.json
//	chartgate install HOST [--dry-run]
//	chartgate uninstall HOST [--dry-run]
//	chartgate help [command]
//	chartgate --version
//
// FILE is an XState v5 machine config in JSON, or a conformance case file
// whose "machine" is run with the declarative "guards", "actions" and
// "delays" beside it (the format is described in
// docs/conformance-case-format.md); "-" reads it from standard input. A
// UTF-8 byte order mark at the start of the file is ignored. validate and
// run also read Statewright workflow JSON (see package workflow): run runs
// a workflow as serve enforces it, with its guards and data merge.
//
// serve runs the gateway of package gateway: one MCP server in front of
// the MCP servers of FILE (the "mcpServers" JSON of MCP hosts) and of the
// command after "--".
//
// ui serves the web page of package ui on the project's workflow and
// store: the workflows live, their statecharts and histories, approvals.
//
// hook answers one hook event of an agent host (Claude Code, Codex, Gemini
// CLI, Cursor, Copilot CLI) from the workflow of its agent session, which
// serve --session auto shares (package hook); install writes those hooks
// and the gateway into the host's configuration.
//
// What XState accepts but is most likely a mistake (an unknown key, an
// XState v4 key such as "cond", a negative delay, an empty action name) is
// a warning, printed as FILE: path: warning: message: by validate on stdout
// (exit 0 unless there are errors; --strict makes warnings errors), by the
// other commands on stderr. A guard without implementation is a warning for
// validate and diagram; run and bench refuse it unless
// --allow-missing-guards is given, and evaluating it is then an error.
//
// Help that was asked for (help, -h, --help) is printed on stdout and exits
// 0; a wrong command line prints the usage on stderr and exits 2; invalid
// input or a failed run exits 1.
package main

import "os"

func main() {
	os.Exit(runOpts(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, &runOptions{exiting: true}))
}
