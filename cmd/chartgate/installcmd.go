package main

// This file defines `chartgate install HOST`: chartgate's hooks and
// gateway merged into an agent host's configuration files (package hook's
// Plan and Apply).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chartgate/chartgate/gateway"
	"github.com/chartgate/chartgate/hook"
)

const installUsage = `usage: chartgate install HOST [--dry-run] [--dir DIR] [--command CMD] [--workflow FILE]
                         [--store STORE] [--servers FILE] [--keep-servers-direct] [--name NAME]
                         [--checkpoint MODE] [--default-deny] [--compat statewright] [--format FORMAT]

Adds chartgate to an agent host's project configuration: hooks that run
"chartgate hook HOST" on its events, and the MCP server entry that runs the
gateway ("chartgate serve --session auto", which keeps the workflow of the
agent session whose hooks run beside it; for codex also --list-all-tools,
see below). Entries already there are updated in place and everything
else is kept; installing twice changes nothing. Prints the diff.

The project's own MCP servers in the host's files are moved, their entries
as they are, into the gateway's servers file (.chartgate/servers.json), so
that the workflow gates their tools too; install lists them.
--keep-servers-direct leaves them where they are, outside the workflow.

HOST is claude-code (.claude/settings.json, .mcp.json), codex
(.codex/hooks.json, .codex/config.toml), cursor (.cursor/hooks.json,
.cursor/mcp.json), gemini (.gemini/settings.json) or copilot
(.github/hooks/chartgate.json, .mcp.json). What each file held before is
kept in .chartgate/installed-HOST.json: chartgate uninstall HOST gives it
back.

Codex reads an MCP server's tools once, when its session starts, and
ignores list_changed: its gateway runs with --list-all-tools, which lists
every tool in every state (each saying in which states it works) and
refuses a call outside them, so that a tool a later state allows can be
called once the workflow gets there. The other hosts re-read the list when
the state changes, and are listed the current state's tools.

  --dry-run        print the diff without writing
  --dir DIR        the project folder (default: the current directory)
  --command CMD    how the hosts run chartgate, words separated by spaces
                   (default: the absolute path of this chartgate, or
                   "npx --no chartgate" when it runs from the project's
                   npm package); install refuses a command that does not
                   run chartgate version from the project folder
  --workflow FILE  the workflow (default .chartgate/workflow.json)
  --store STORE    the store (default .chartgate/state.db)
  --servers FILE   the gateway's upstream MCP servers (default
                   .chartgate/servers.json, used when it exists)
  --keep-servers-direct
                   leave the project's own MCP servers in the host's files,
                   outside the gateway and the workflow
  --name NAME      the gateway's MCP server name (default chartgate)
  --checkpoint MODE, --default-deny, --compat statewright
                   passed to the gateway and the hooks alike (see chartgate help serve)
  --format FORMAT  the workflow's format, xstate or statewright, recorded and passed to
                   both; by default told by its keys, and a file both formats read
                   differently is refused until --format says which
`

// installNotes are what a host needs besides its files, as its current
// version does it (read in its bundled source).
var installNotes = map[hook.Host]string{
	hook.Codex: "Codex runs a project's hooks only in a trusted project and once each hook is trusted: start codex in the project, " +
		"trust the folder, and accept the hooks it lists for review (/hooks; it keeps each one's hash under [hooks.state] in ~/.codex/config.toml). " +
		"Until then codex exec skips them without a word, and nothing is enforced; codex exec --dangerously-bypass-hook-trust runs them once without review. " +
		"Codex reads the gateway's tools once and ignores list_changed, so its gateway runs with --list-all-tools: Codex sees every tool from the start, and one the current state does not allow is refused when called",
	hook.Gemini: "Gemini CLI runs a project's hooks (hooksConfig.enabled, on by default) once the folder is trusted; " +
		"it lists them in a warning at start (a headless run in an untrusted folder stops: trust it first, or set GEMINI_CLI_TRUST_WORKSPACE=true)",
	hook.Cursor: "Cursor refuses edits before they happen through its generic preToolUse hook (recent versions); older versions only report them after the fact (afterFileEdit)",
	hook.Copilot: "Copilot CLI loads .mcp.json once the folder is trusted, and in prompt mode (copilot -p) only with GITHUB_COPILOT_PROMPT_MODE_WORKSPACE_MCP=true; " +
		"it also runs the hooks of .claude/settings.json, where chartgate's Claude Code hooks step aside for its own",
}

func cmdInstall(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("install")
	dryRun := fs.Bool("dry-run", false, "print the diff without writing")
	dir := fs.String("dir", ".", "the project folder")
	o := hook.InstallOptions{}
	command := fs.String("command", "", "how the host runs chartgate")
	fs.StringVar(&o.Workflow, "workflow", "", "the workflow file")
	fs.StringVar(&o.Store, "store", "", "the store")
	fs.StringVar(&o.Servers, "servers", "", "the gateway's upstream servers")
	fs.BoolVar(&o.KeepServersDirect, "keep-servers-direct", false, "leave the project's own MCP servers outside the gateway")
	fs.StringVar(&o.ServerName, "name", "chartgate", "the gateway's MCP server name")
	fs.StringVar(&o.Checkpoint, "checkpoint", "", "soft or hard, for the gateway and the hooks")
	fs.BoolVar(&o.DefaultDeny, "default-deny", false, "refuse the tools the workflow does not name, in the gateway and the hooks")
	fs.StringVar(&o.Compat, "compat", "", `"statewright": the gateway and the hooks behave as Statewright where chartgate's default differs`)
	fs.StringVar(&o.Format, "format", "", "the workflow's format: auto (default), xstate or statewright")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return argsError(stdout, stderr, "install", err)
	}
	if len(pos) != 1 {
		return usageError(stderr, "install", errors.New("one HOST expected: claude-code, codex, cursor, gemini or copilot"))
	}
	host, err := hook.ParseHost(pos[0])
	if err != nil {
		return usageError(stderr, "install", err)
	}
	if *command != "" {
		o.Command = strings.Fields(*command)
	} else if o.Command, err = selfCommand(*dir); err != nil {
		fmt.Fprintf(stderr, "chartgate install: %v\n", err)
		return exitFail
	}
	o.HookCommand = hookClient(o.Command)
	if err := checkCommand(*dir, o.Command); err != nil {
		fmt.Fprintf(stderr, "chartgate install: %v\n", err)
		return exitFail
	}
	changes, err := hook.Plan(host, *dir, &o)
	if err != nil {
		fmt.Fprintf(stderr, "chartgate install: %v\n", err)
		return exitFail
	}
	for _, c := range changes {
		fmt.Fprint(stdout, c.Diff())
	}
	if err := checkMovedServers(changes, o.Servers); err != nil {
		fmt.Fprintf(stderr, "chartgate install: %v\n", err)
		return exitFail
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
	if host == hook.Codex {
		if warning := codexTrust(*dir); warning != "" {
			fmt.Fprintf(stderr, "chartgate install: warning: %s\n", warning)
		}
	}
	switch {
	case len(changes) == 0:
		fmt.Fprintf(stdout, "chartgate is already installed for %s: nothing to change\n", host)
	case *dryRun:
		fmt.Fprintf(stdout, "dry run: %d file(s) not written\n", len(changes))
		printMoved(stdout, changes, o, "would move")
	default:
		if err := hook.Install(*dir, host, changes); err != nil {
			fmt.Fprintf(stderr, "chartgate install: %v\n", err)
			return exitFail
		}
		for _, c := range changes {
			fmt.Fprintf(stdout, "wrote %s\n", c.Path)
		}
		printMoved(stdout, changes, o, "moved")
	}
	return exitOK
}

// selfCommand returns how the hosts run the chartgate that runs now,
// from the project folder dir: npx's form when it is the binary of the
// project's own npm package (node_modules/@chartgate/chartgate-OS-CPU,
// which node_modules/.bin/chartgate runs), else its absolute path. A
// chartgate that go run or go test built in a temporary folder is
// replaced by the one on the PATH: the temporary one is gone when it
// exits.
func selfCommand(dir string) ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding this chartgate's path: %w; name it with --command", err)
	}
	return selfCommandOf(exe, dir)
}

// selfCommandOf is selfCommand for the chartgate at exe.
func selfCommandOf(exe, dir string) ([]string, error) {
	project, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if modules, _, ok := strings.Cut(exe, string(filepath.Separator)+"node_modules"+string(filepath.Separator)); ok {
		if rel, err := filepath.Rel(modules, project); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return []string{"npx", "--no", "chartgate"}, nil
		}
		return []string{exe}, nil // a global npm installation
	}
	if !temporaryBuild(exe) {
		return []string{exe}, nil
	}
	onPath, err := exec.LookPath("chartgate")
	if err != nil {
		return nil, errors.New("this chartgate is a temporary build (go run), gone when it exits, and there is no chartgate on the PATH: " +
			"install chartgate first (npm install --save-dev chartgate, or go install github.com/chartgate/chartgate/cmd/chartgate@latest), or name it with --command")
	}
	if onPath, err = filepath.Abs(onPath); err != nil {
		return nil, err
	}
	return []string{onPath}, nil
}

// hookClient returns the hook client's command (cmd/chartgate-hook) when
// it sits beside the chartgate that command runs, named by its path, on
// Linux, where the client checks who its daemon is; nil otherwise, and the
// hooks run `chartgate hook`.
func hookClient(command []string) []string {
	if runtime.GOOS != "linux" || len(command) != 1 || !filepath.IsAbs(command[0]) {
		return nil
	}
	client := filepath.Join(filepath.Dir(command[0]), "chartgate-hook")
	if fi, err := os.Stat(client); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return nil
	}
	return []string{client}
}

// temporaryBuild reports whether a program is one go run or go test built
// in a temporary folder.
func temporaryBuild(exe string) bool {
	return strings.Contains(exe, string(filepath.Separator)+"go-build") || strings.HasSuffix(strings.TrimSuffix(exe, ".exe"), ".test")
}

// checkCommand runs "COMMAND version" in the project folder, as a host
// would run a hook there, and refuses a command that does not run
// chartgate: the hosts would run no hook and, by their rules, let tools
// through (Claude Code's PreToolUse blocks on a hook that cannot start;
// the others do not). It runs the version command, not the --version
// flag, which npx would take for its own.
func checkCommand(dir string, command []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), commandCheckTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, command[0], append(slices.Clone(command[1:]), "version")...)
	cmd.Dir = dir
	cmd.WaitDelay = time.Second
	out, err := cmd.CombinedOutput()
	text := strings.TrimSpace(string(out))
	if err == nil && strings.HasPrefix(text, "chartgate ") {
		return nil
	}
	what := text
	if err != nil {
		what = err.Error()
		if text != "" {
			what += ": " + text
		}
	}
	if len(what) > 500 {
		what = what[:500] + "..."
	}
	return fmt.Errorf("the hooks' command %q does not run chartgate from %s (%s): the hosts would run no hook, and let tools run; nothing was written. "+
		"Install chartgate (npm install --save-dev chartgate, or go install github.com/chartgate/chartgate/cmd/chartgate@latest), or name it with --command",
		strings.Join(command, " ")+" version", dir, what)
}

// commandCheckTimeout bounds checkCommand: npx can take seconds to start.
const commandCheckTimeout = 30 * time.Second

// printMoved lists the project's MCP servers an installation moves behind
// the gateway, per file they come from.
func printMoved(w io.Writer, changes []hook.FileChange, o hook.InstallOptions, verb string) {
	servers := o.Servers
	if servers == "" {
		servers = hook.ServersFile
	}
	for _, c := range changes {
		if len(c.Moved) == 0 || filepath.Clean(c.Path) == filepath.Clean(servers) {
			continue
		}
		fmt.Fprintf(w, "%s the project's MCP server(s) %s from %s into %s: the gateway (%s) serves their tools, gated by the workflow; "+
			"chartgate install --keep-servers-direct leaves them direct, chartgate uninstall puts them back\n",
			verb, strings.Join(c.Moved, ", "), c.Path, filepath.ToSlash(servers), o.ServerName)
	}
}

// checkMovedServers parses the servers file an installation writes as
// the gateway will (an environment variable it references counts as
// set: it is read when the gateway starts), so that a server the gateway
// cannot start is refused now rather than when the host starts it.
func checkMovedServers(changes []hook.FileChange, servers string) error {
	if servers == "" {
		servers = hook.ServersFile
	}
	for _, c := range changes {
		if len(c.Moved) == 0 || filepath.Clean(c.Path) != filepath.Clean(servers) {
			continue
		}
		if _, err := gateway.ParseConfig(c.New, &gateway.ConfigOptions{LookupEnv: func(string) (string, bool) { return "", true }}); err != nil {
			return fmt.Errorf("the MCP servers moved into %s would not start behind the gateway (nothing was written; chartgate install --keep-servers-direct leaves them direct): %s: %w", c.Path, c.Path, err)
		}
	}
	return nil
}

const uninstallUsage = `usage: chartgate uninstall HOST [--dry-run] [--dir DIR] [--name NAME]

Takes chartgate out of an agent host's project configuration, as
chartgate install HOST put it there: a file nothing changed since is given
back byte for byte as it was before (removed if install created it), a
file changed since keeps everything but chartgate's hooks and its gateway
entry; the MCP servers install moved behind the gateway go back into the
host's file and out of .chartgate/servers.json. Prints the diff.

  --dry-run        print the diff without writing
  --dir DIR        the project folder (default: the current directory)
  --name NAME      the gateway's MCP server name (default chartgate)
`

func cmdUninstall(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("uninstall")
	dryRun := fs.Bool("dry-run", false, "print the diff without writing")
	dir := fs.String("dir", ".", "the project folder")
	o := hook.InstallOptions{}
	fs.StringVar(&o.ServerName, "name", "chartgate", "the gateway's MCP server name")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return argsError(stdout, stderr, "uninstall", err)
	}
	if len(pos) != 1 {
		return usageError(stderr, "uninstall", errors.New("one HOST expected: claude-code, codex, cursor, gemini or copilot"))
	}
	host, err := hook.ParseHost(pos[0])
	if err != nil {
		return usageError(stderr, "uninstall", err)
	}
	changes, err := hook.PlanUninstall(host, *dir, &o)
	if err != nil {
		fmt.Fprintf(stderr, "chartgate uninstall: %v\n", err)
		return exitFail
	}
	for _, c := range changes {
		fmt.Fprint(stdout, c.Diff())
	}
	switch {
	case len(changes) == 0 && !*dryRun:
		if err := hook.ApplyUninstall(*dir, host, nil); err != nil {
			fmt.Fprintf(stderr, "chartgate uninstall: %v\n", err)
			return exitFail
		}
		fmt.Fprintf(stdout, "chartgate is not installed for %s: nothing to change\n", host)
	case *dryRun:
		fmt.Fprintf(stdout, "dry run: %d file(s) not written\n", len(changes))
	default:
		if err := hook.ApplyUninstall(*dir, host, changes); err != nil {
			fmt.Fprintf(stderr, "chartgate uninstall: %v\n", err)
			return exitFail
		}
		for _, c := range changes {
			if c.New == nil {
				fmt.Fprintf(stdout, "removed %s\n", c.Path)
			} else {
				fmt.Fprintf(stdout, "wrote %s\n", c.Path)
			}
		}
	}
	return exitOK
}

// codexTrust says what Codex's user configuration ($CODEX_HOME, else
// ~/.codex, config.toml) does not trust yet of the project at dir: the
// folder ([projects."DIR"] trust_level = "trusted") and the hooks of its
// .codex/hooks.json ([hooks.state."DIR/.codex/hooks.json:EVENT:I:J"] with
// a trusted_hash). "" when both are trusted. The file is read as text:
// enough to tell the two apart, not a TOML reader.
func codexTrust(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	home := os.Getenv("CODEX_HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		home = filepath.Join(h, ".codex")
	}
	config, _ := os.ReadFile(filepath.Join(home, "config.toml"))
	text := string(config)
	project := false
	if i := strings.Index(text, "[projects."+strconv.Quote(abs)+"]"); i >= 0 {
		table := text[i:]
		if j := strings.Index(table[1:], "\n["); j >= 0 {
			table = table[:j+1]
		}
		project = strings.Contains(strings.ReplaceAll(table, " ", ""), `trust_level="trusted"`)
	}
	hooks := strings.Contains(text, "[hooks.state."+strings.TrimSuffix(strconv.Quote(filepath.Join(abs, ".codex", "hooks.json")), `"`)+":")
	switch {
	case !project && !hooks:
		return "Codex does not trust this folder nor its hooks yet (" + filepath.Join(home, "config.toml") + "): until you do, codex exec skips chartgate's hooks without a word and nothing is enforced"
	case !project:
		return "Codex does not trust this folder yet: until you do, it reads no .codex/ here and nothing is enforced"
	case !hooks:
		return "Codex has not trusted chartgate's hooks yet: start codex here and accept them (/hooks); until then codex exec skips them without a word"
	}
	return ""
}
