package main

// This file defines `chartgate install HOST`: chartgate's hooks and
// gateway merged into an agent host's configuration files (package hook's
// Plan and Apply).

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/chartgate/chartgate/hook"
)

const installUsage = `usage: chartgate install HOST [--dry-run] [--dir DIR] [--command CMD] [--workflow FILE]
                         [--store STORE] [--servers FILE] [--name NAME] [--checkpoint MODE] [--default-deny]

Adds chartgate to an agent host's project configuration: hooks that run
"chartgate hook HOST" on its events, and the MCP server entry that runs the
gateway ("chartgate serve --session auto", which keeps the workflow of the
agent session whose hooks run beside it). Entries already there are updated
in place and everything else is kept; installing twice changes nothing.
Prints the diff.

HOST is claude-code (.claude/settings.json, .mcp.json), codex
(.codex/hooks.json, .codex/config.toml), cursor (.cursor/hooks.json,
.cursor/mcp.json) or gemini (.gemini/settings.json).

  --dry-run        print the diff without writing
  --dir DIR        the project folder (default: the current directory)
  --command CMD    how the host runs chartgate (default chartgate, on the PATH)
  --workflow FILE  the workflow (default .chartgate/workflow.json)
  --store STORE    the store (default .chartgate/state.db)
  --servers FILE   the gateway's upstream MCP servers (default
                   .chartgate/servers.json, used when it exists)
  --name NAME      the gateway's MCP server name (default chartgate)
  --checkpoint MODE, --default-deny
                   passed to the gateway and the hooks alike (see chartgate help serve)
`

// installNotes are what a host needs besides its files, as its
// documentation says.
var installNotes = map[hook.Host]string{
	hook.Codex:  "Codex runs a project's hooks once they are trusted: review them with /hooks, and trust the project (.codex/ is read only in trusted projects)",
	hook.Gemini: "Gemini CLI runs hooks when its hooks system is enabled (/settings, Advanced, Enable Hooks System; tools.enableHooks in settings.json)",
	hook.Cursor: "Cursor refuses edits before they happen through its generic preToolUse hook (recent versions); older versions only report them after the fact (afterFileEdit)",
}

func cmdInstall(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("install")
	dryRun := fs.Bool("dry-run", false, "print the diff without writing")
	dir := fs.String("dir", ".", "the project folder")
	o := hook.InstallOptions{}
	fs.StringVar(&o.Command, "command", "chartgate", "how the host runs chartgate")
	fs.StringVar(&o.Workflow, "workflow", "", "the workflow file")
	fs.StringVar(&o.Store, "store", "", "the store")
	fs.StringVar(&o.Servers, "servers", "", "the gateway's upstream servers")
	fs.StringVar(&o.ServerName, "name", "chartgate", "the gateway's MCP server name")
	fs.StringVar(&o.Checkpoint, "checkpoint", "", "soft or hard, for the gateway and the hooks")
	fs.BoolVar(&o.DefaultDeny, "default-deny", false, "refuse the tools the workflow does not name, in the gateway and the hooks")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return argsError(stdout, stderr, "install", err)
	}
	if len(pos) != 1 {
		return usageError(stderr, "install", errors.New("one HOST expected: claude-code, codex, cursor or gemini"))
	}
	host, err := hook.ParseHost(pos[0])
	if err != nil {
		return usageError(stderr, "install", err)
	}
	changes, err := hook.Plan(host, *dir, &o)
	if err != nil {
		fmt.Fprintf(stderr, "chartgate install: %v\n", err)
		return exitFail
	}
	for _, c := range changes {
		fmt.Fprint(stdout, c.Diff())
	}
	wf := o.Workflow
	if wf == "" {
		wf = filepath.Join(hook.ConfigDir, "workflow.json")
	}
	if _, err := os.Stat(filepath.Join(*dir, wf)); err != nil {
		fmt.Fprintf(stderr, "chartgate install: note: %s does not exist yet; write the workflow there (XState or Statewright JSON), and check it with chartgate validate\n", wf)
	}
	if note := installNotes[host]; note != "" {
		fmt.Fprintf(stderr, "chartgate install: note: %s\n", note)
	}
	switch {
	case len(changes) == 0:
		fmt.Fprintf(stdout, "chartgate is already installed for %s: nothing to change\n", host)
	case *dryRun:
		fmt.Fprintf(stdout, "dry run: %d file(s) not written\n", len(changes))
	default:
		if err := hook.Apply(*dir, changes); err != nil {
			fmt.Fprintf(stderr, "chartgate install: %v\n", err)
			return exitFail
		}
		for _, c := range changes {
			fmt.Fprintf(stdout, "wrote %s\n", c.Path)
		}
	}
	return exitOK
}
