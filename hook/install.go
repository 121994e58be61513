// This file computes what `chartgate install HOST` changes in a host's
// configuration files: the hook entries that run `chartgate hook HOST`
// and the MCP server entry that runs the gateway, merged into what is
// there, idempotently.

package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/chartgate/chartgate/workflow"
)

// InstallOptions configures [Plan]. The zero value (or nil) means the
// defaults.
type InstallOptions struct {
	// Command runs chartgate, in the hooks and the MCP server entry: the
	// program and any words before chartgate's own arguments (default
	// "chartgate", found on the PATH). `chartgate install` gives the
	// absolute path of the running chartgate, or npx's form ("npx", "--no",
	// "chartgate") when it runs from the project's npm package.
	Command []string
	// HookCommand, if set, runs the hooks in place of Command's "hook":
	// a hook runs HookCommand HOST [flags]. `chartgate install` gives the
	// hook client (cmd/chartgate-hook) when it sits beside chartgate.
	HookCommand []string
	// Workflow is the workflow file (default .chartgate/workflow.json);
	// Store the store (default .chartgate/state.db). Relative paths are
	// relative to the project folder. The hooks and the gateway get them
	// only when they differ from the defaults.
	Workflow, Store string
	// Servers is the gateway's upstream MCP servers, in the mcpServers
	// format (default [ServersFile], passed as --config when the file
	// exists or installing writes it).
	Servers string
	// KeepServersDirect leaves the project's own MCP servers in the host's
	// configuration, outside the gateway and the workflow. By default
	// they are moved into Servers (see [Plan]).
	KeepServersDirect bool
	// ServerName is the gateway's entry in the host's MCP configuration
	// (default "chartgate"; the hooks are told it with --gateway when it
	// differs).
	ServerName string
	// Checkpoint ("soft" or "hard") and DefaultDeny are passed to the
	// gateway and the hooks alike (--checkpoint, --default-deny), which
	// must decide the same way; unset, neither gets them.
	Checkpoint  string
	DefaultDeny bool
	// Compat ("statewright") is passed to the gateway and the hooks alike
	// (--compat), which compile the workflow the same way.
	Compat string
	// Format ("xstate" or "statewright") is the workflow file's format,
	// recorded and passed to the gateway and the hooks; "" (or "auto")
	// detects it, and a file both formats read differently is refused
	// ([workflow.ErrAmbiguousFormat]) until Format says which.
	Format string
}

// FileChange is one configuration file and what installing changes in it.
type FileChange struct {
	// Path is the file, relative to the project folder.
	Path string
	// Old is its content before (nil if it did not exist), New after.
	Old, New []byte
	// Moved names the project's own MCP servers moved behind the gateway:
	// out of this file (a host's), or into it (the servers file).
	Moved []string
}

// Diff returns the unified diff of the change.
func (c FileChange) Diff() string {
	oldName := "a/" + filepath.ToSlash(c.Path)
	if c.Old == nil {
		oldName = "/dev/null"
	}
	return unifiedDiff(oldName, "b/"+filepath.ToSlash(c.Path), c.Old, c.New)
}

// Installable lists the hosts [Plan] can install into.
var Installable = []Host{ClaudeCode, Codex, Cursor, Gemini, Copilot}

// Plan returns the changes installing chartgate for host makes to the
// configuration files in the project folder dir, without writing them:
// only the files that change, so a second installation plans none. The
// entries chartgate owns are recognised by their command (a "chartgate
// ... hook HOST" hook, an MCP server of ServerName) and replaced in
// place; everything else in the files is kept, in its order.
//
// The project's own MCP servers in the host's files (Claude Code's and
// Copilot CLI's .mcp.json, Copilot CLI's .github/mcp.json, Codex's
// config.toml, Gemini CLI's settings.json, Cursor's mcp.json) are moved
// into the gateway's servers file, so that the workflow gates their
// tools too (the changes name them in Moved), unless KeepServersDirect is
// set. An entry that runs chartgate serve stays where it is.
func Plan(host Host, dir string, opts *InstallOptions) ([]FileChange, error) {
	var o InstallOptions
	if opts != nil {
		o = *opts
	}
	if len(o.Command) == 0 {
		o.Command = []string{"chartgate"}
	}
	if o.ServerName == "" {
		o.ServerName = "chartgate"
	}
	if o.Servers == "" {
		o.Servers = ServersFile
	}
	in := installer{host: host, dir: dir, o: o}
	switch host {
	case ClaudeCode:
		return in.run(
			func() (FileChange, error) { return in.nestedHooks(".claude/settings.json", claudeEvents, nil) },
			in.moveServers,
			func() (FileChange, error) { return in.mcpJSON(".mcp.json") },
			in.installedRecord,
		)
	case Codex:
		return in.run(
			func() (FileChange, error) { return in.nestedHooks(".codex/hooks.json", codexEvents, nil) },
			in.moveServers,
			func() (FileChange, error) { return in.codexTOML(".codex/config.toml") },
			in.installedRecord,
		)
	case Gemini:
		return in.run(
			func() (FileChange, error) {
				return in.nestedHooks(".gemini/settings.json", geminiEvents, jstr("chartgate"))
			},
			in.moveServers,
			func() (FileChange, error) { return in.mcpJSON(".gemini/settings.json") },
			in.installedRecord,
		)
	case Cursor:
		return in.run(
			func() (FileChange, error) { return in.cursorHooks(".cursor/hooks.json") },
			in.moveServers,
			func() (FileChange, error) { return in.mcpJSON(".cursor/mcp.json") },
			in.installedRecord,
		)
	case Copilot:
		return in.run(
			func() (FileChange, error) { return in.copilotHooks(CopilotHooksFile) },
			in.moveServers,
			func() (FileChange, error) { return in.mcpJSON(".mcp.json") },
			func() (FileChange, error) { return in.removeMoved(".github/mcp.json") },
		)
	}
	return nil, fmt.Errorf("hook: chartgate cannot install into %q: use one of claude-code, codex, cursor, gemini, copilot", host)
}

// Apply writes the changes, each file whole (through a temporary file
// renamed over it), creating missing folders.
func Apply(dir string, changes []FileChange) error {
	for _, c := range changes {
		path := filepath.Join(dir, c.Path)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		mode := fs.FileMode(0o644)
		if fi, err := os.Stat(path); err == nil {
			mode = fi.Mode().Perm()
		}
		tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".chartgate-*")
		if err != nil {
			return err
		}
		_, werr := tmp.Write(c.New)
		cerr := tmp.Close()
		if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), mode)); err != nil {
			os.Remove(tmp.Name())
			return fmt.Errorf("writing %s: %w", c.Path, err)
		}
		if err := os.Rename(tmp.Name(), path); err != nil {
			os.Remove(tmp.Name())
			return fmt.Errorf("writing %s: %w", c.Path, err)
		}
	}
	return nil
}

// The events each host's hooks are installed on.
var (
	claudeEvents = []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop"}
	codexEvents  = []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"}
	geminiEvents = []string{"SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent"}
	cursorEvents = []string{"sessionStart", "preToolUse", "beforeShellExecution", "beforeMCPExecution", "beforeReadFile",
		"afterShellExecution", "afterMCPExecution", "afterFileEdit", "postToolUse", "stop"}
	// copilotEvents are Copilot CLI's (camelCase: their payloads do not
	// name the event, so each hook is told it with --event).
	copilotEvents = []string{"sessionStart", "userPromptSubmitted", "preToolUse", "postToolUse", "agentStop"}
	// cursorMatchers narrow Cursor's generic preToolUse to its file tools,
	// so that edits are refused before they happen; the shell, MCP calls and
	// reads have their dedicated events (a second check of them would only
	// cost time: pre tool events record nothing). The generic postToolUse,
	// whose additional_context Cursor gives the agent (its after* events'
	// answers are not read), is narrowed to reads, which have no after
	// event of their own: the other tools' calls are recorded by theirs,
	// and would be counted twice.
	cursorMatchers = map[string]string{"preToolUse": "Write|StrReplace|Edit|Delete|MultiEdit", "postToolUse": "Read"}
)

// InstalledFile is the record `chartgate install` keeps of the project's
// workflow, relative to the project folder: {"workflow": FILE, "format":
// "xstate" or "statewright"}, FILE as the hooks and the gateway are given
// it. A workflow file that loads in another format than the one recorded
// is refused ([CheckFormat]): an agent that rewrote it in the other
// format, where its keys mean something else, does not get a workflow it
// made. Re-running install after a person changed the format updates it.
const InstalledFile = ConfigDir + "/installed.json"

// Installed is the content of [InstalledFile].
type Installed struct {
	Workflow string          `json:"workflow"`
	Format   workflow.Format `json:"format"`
}

// installedRecord writes InstalledFile when the workflow file exists (its
// format: InstallOptions.Format, else as Load would detect it, a file
// both formats read being refused); without one, nothing.
func (in *installer) installedRecord() (FileChange, error) {
	wf := in.o.Workflow
	if wf == "" {
		wf = filepath.Join(ConfigDir, "workflow.json")
	}
	path := wf
	if !filepath.IsAbs(path) {
		path = filepath.Join(in.dir, path)
	}
	data, err := os.ReadFile(path)
	old, rerr := in.read(InstalledFile)
	if rerr != nil {
		return FileChange{}, rerr
	}
	if err != nil {
		return FileChange{Path: InstalledFile, Old: old, New: old}, nil
	}
	format := workflow.Format(in.o.Format)
	if format == workflow.FormatAuto || format == "auto" {
		if format, err = workflow.FormatOf(data); err != nil {
			return FileChange{}, fmt.Errorf("%s: %w", filepath.ToSlash(wf), err)
		}
	}
	rec, err := json.MarshalIndent(Installed{Workflow: filepath.ToSlash(wf), Format: format}, "", "  ")
	if err != nil {
		return FileChange{}, err
	}
	return FileChange{Path: InstalledFile, Old: old, New: append(rec, '\n')}, nil
}

// CheckFormat refuses a workflow file that loads in another format than
// the one `chartgate install` recorded for it in its project
// ([InstalledFile], in the nearest folder above the file that holds a
// .chartgate folder). A project without the record, or whose record names
// another file, is not checked.
func CheckFormat(file string, format workflow.Format) error {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil
	}
	project, ok := FindProject(filepath.Dir(abs))
	if !ok {
		return nil
	}
	data, err := os.ReadFile(filepath.Join(project, InstalledFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", InstalledFile, err)
	}
	var rec Installed
	if err := json.Unmarshal(data, &rec); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(project, InstalledFile), err)
	}
	recorded := filepath.FromSlash(rec.Workflow)
	if !filepath.IsAbs(recorded) {
		recorded = filepath.Join(project, recorded)
	}
	if filepath.Clean(recorded) != abs || rec.Format == format {
		return nil
	}
	return fmt.Errorf("%s: the workflow loads in format %q, but the project was installed with format %q (%s); if a person changed its format, they run chartgate install again", file, format, rec.Format, InstalledFile)
}

// HostTimeout is the timeout `chartgate install` gives each hook in the
// host's configuration, in seconds: above the hook's own deadline (30 s
// by default, `chartgate hook --deadline`), so that the hook answers, and
// a refusal is its answer, before the host gives up on it.
const HostTimeout = 60

// hookFields are the fields of chartgate's hook entry for event ev, beside
// its command: the host's timeout and, where the host has one, the
// setting that makes a hook's failure (it cannot start, times out, exits
// with a code the protocol does not define) block the tool instead of
// letting it run. Per host, as its documentation and source give them
// (read 2026-11-28):
//
//   - Claude Code: "timeout" in seconds; "onFailure": "block" (Claude
//     Code 2.1.295 and later) on PreToolUse, the event where failing open
//     runs a tool. Other events keep failing open: blocking a prompt or a
//     session start because the store is down would stop the user too.
//   - Codex: "timeout" in seconds; it has no fail-closed setting.
//   - Gemini CLI: "timeout" in milliseconds; no fail-closed setting (exit
//     code 2 blocks, any other failure is a warning).
//   - Cursor: "timeout" in seconds; "failClosed": true on the events that
//     answer with a permission.
//   - Copilot CLI: "timeoutSec" (written by copilotHooks); no fail-closed
//     setting.
//
// Where a host has no fail-closed setting, the hook itself never fails
// open on a pre tool event: whatever goes wrong (a panic, its deadline, a
// store that fails), it answers with the host's deny and exit code 0.
func (in *installer) hookFields(ev string) []member {
	switch in.host {
	case ClaudeCode:
		if ev == "PreToolUse" {
			return []member{{"timeout", jnum(HostTimeout)}, {"onFailure", jstr("block")}}
		}
		return []member{{"timeout", jnum(HostTimeout)}}
	case Codex:
		return []member{{"timeout", jnum(HostTimeout)}}
	case Gemini:
		return []member{{"timeout", jnum(HostTimeout * 1000)}}
	case Cursor:
		if cursorPermission[ev] {
			return []member{{"timeout", jnum(HostTimeout)}, {"failClosed", &jvalue{raw: []byte("true")}}}
		}
		return []member{{"timeout", jnum(HostTimeout)}}
	}
	return nil
}

// jnum is a JSON integer.
func jnum(n int) *jvalue { return &jvalue{raw: strconv.AppendInt(nil, int64(n), 10)} }

// installer plans one host's installation. Files two steps touch (Gemini
// CLI keeps hooks and MCP servers in one settings.json) are read from the
// previous step's result.
type installer struct {
	host    Host
	dir     string
	o       InstallOptions
	pending map[string][]byte   // files changed by earlier steps
	moved   map[string][]string // servers moved out of each host file
}

func (in *installer) run(steps ...func() (FileChange, error)) ([]FileChange, error) {
	in.pending = map[string][]byte{}
	var order []string
	orig := map[string][]byte{}
	for _, step := range steps {
		c, err := step()
		if err != nil {
			return nil, err
		}
		if _, seen := orig[c.Path]; !seen {
			orig[c.Path] = c.Old
			order = append(order, c.Path)
		}
		in.pending[c.Path] = c.New
	}
	var out []FileChange
	servers, _ := in.serversRel()
	for _, p := range order {
		if !bytes.Equal(orig[p], in.pending[p]) {
			c := FileChange{Path: p, Old: orig[p], New: in.pending[p], Moved: in.moved[p]}
			if p == servers {
				for _, f := range serverFiles[in.host] {
					c.Moved = append(c.Moved, in.moved[f]...)
				}
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// read returns a file's content as the earlier steps left it, and nil if
// it does not exist.
func (in *installer) read(rel string) ([]byte, error) {
	if data, ok := in.pending[rel]; ok {
		return data, nil
	}
	data, err := os.ReadFile(filepath.Join(in.dir, rel))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// readJSON reads a JSON object file (a missing or empty one is {}).
func (in *installer) readJSON(rel string) (old []byte, doc *jvalue, indent string, err error) {
	old, err = in.read(rel)
	if err != nil {
		return nil, nil, "", err
	}
	if len(bytes.TrimSpace(old)) == 0 {
		return old, &jvalue{kind: '{'}, "  ", nil
	}
	doc, err = parseJSON(old)
	if err != nil {
		return nil, nil, "", fmt.Errorf("%s: %w; it was not changed", rel, err)
	}
	if doc.kind != '{' {
		return nil, nil, "", fmt.Errorf("%s: must hold a JSON object; it was not changed", rel)
	}
	return old, doc, indentOf(old), nil
}

// projectArgs returns the flags that give the hooks and the gateway the
// store, when it is not the default, and how to decide (checkpoint,
// default-deny).
func (in *installer) projectArgs() []string {
	var args []string
	if s := in.o.Store; s != "" && filepath.Clean(s) != filepath.Join(ConfigDir, "state.db") {
		args = append(args, "--store", filepath.ToSlash(s))
	}
	if in.o.Checkpoint != "" {
		args = append(args, "--checkpoint", in.o.Checkpoint)
	}
	if in.o.DefaultDeny {
		args = append(args, "--default-deny")
	}
	if in.o.Compat != "" {
		args = append(args, "--compat", in.o.Compat)
	}
	if f := in.o.Format; f != "" && f != "auto" {
		args = append(args, "--format", f)
	}
	return args
}

// hookCommand is the command of every hook: chartgate hook HOST [flags],
// or HookCommand HOST [flags].
func (in *installer) hookCommand() string {
	words := append(slices.Clone(in.o.Command), "hook", string(in.host))
	if len(in.o.HookCommand) > 0 {
		words = append(slices.Clone(in.o.HookCommand), string(in.host))
	}
	if w := in.o.Workflow; w != "" && filepath.Clean(w) != filepath.Join(ConfigDir, "workflow.json") {
		words = append(words, "--workflow", filepath.ToSlash(w))
	}
	words = append(words, in.projectArgs()...)
	if in.o.ServerName != "chartgate" {
		words = append(words, "--gateway", in.o.ServerName)
	}
	for i, w := range words {
		words[i] = shellQuote(w)
	}
	return strings.Join(words, " ")
}

// serveArgs are the gateway's arguments: serve --workflow FILE --session
// auto [--list-all-tools] [flags] [--config SERVERS]. --session auto makes
// it keep the workflow of the agent session whose hooks run beside it.
// Codex gets --list-all-tools: it reads an MCP server's tools once, when
// its session starts, and ignores list_changed, so a tool that only a
// later state allows must be listed from the start (the gateway still
// refuses it until then).
func (in *installer) serveArgs() []string {
	w := in.o.Workflow
	if w == "" {
		w = filepath.Join(ConfigDir, "workflow.json")
	}
	args := []string{"serve", "--workflow", filepath.ToSlash(w), "--session", "auto"}
	if in.host == Codex {
		args = append(args, "--list-all-tools")
	}
	args = append(args, in.projectArgs()...)
	servers := in.o.Servers
	if !filepath.IsAbs(servers) {
		servers = filepath.Join(in.dir, servers)
	}
	rel, _ := in.serversRel()
	if _, err := os.Stat(servers); err == nil || in.pending[rel] != nil {
		args = append(args, "--config", filepath.ToSlash(in.o.Servers))
	}
	return args
}

// ours reports whether a hook command is chartgate's hook for this host:
// "[RUNNER ...] <chartgate> hook HOST ...", chartgate named by a path or,
// after a package runner (npx --no, pnpm exec …), by its package name; or
// "<chartgate-hook> HOST ...", the hook client.
func (in *installer) ours(cmd string) bool {
	f := strings.Fields(cmd)
	if len(f) >= 2 && filepath.Base(strings.Trim(f[0], `'"`)) == "chartgate-hook" {
		return f[1] == string(in.host)
	}
	for i := 0; i+2 < len(f); i++ {
		if isChartgateWord(f[i]) && f[i+1] == "hook" {
			return f[i+2] == string(in.host)
		}
		if !runnerWord(f[i], i) {
			return false
		}
	}
	return false
}

// runnerWord reports whether the i-th word of a command can come before
// chartgate's name in a package runner's form.
func runnerWord(w string, i int) bool {
	if i == 0 {
		return slices.Contains([]string{"npx", "pnpm", "yarn", "bunx", "bun", "npm"}, filepath.Base(strings.Trim(w, `'"`)))
	}
	return strings.HasPrefix(w, "-") || slices.Contains([]string{"exec", "dlx", "x"}, w)
}

// nestedHooks merges chartgate's hooks into a file in the format Claude
// Code, Codex and Gemini CLI share: {"hooks": {EVENT: [{"matcher",
// "hooks": [{"type": "command", "command"}]}]}}. On each event, the first
// handler of ours is replaced in place and any other removed (with its
// group when that is left empty); without one, a group of ours is added
// at the end. name, if not nil, is the handler's "name" (Gemini CLI).
func (in *installer) nestedHooks(rel string, events []string, name *jvalue) (FileChange, error) {
	old, doc, indent, err := in.readJSON(rel)
	if err != nil {
		return FileChange{}, err
	}
	hooks, err := doc.child("hooks", '{', rel+": hooks")
	if err != nil {
		return FileChange{}, err
	}
	for _, ev := range events {
		handler := jobj(append([]member{{"type", jstr("command")}, {"command", jstr(in.hookCommand())}}, in.hookFields(ev)...)...)
		if name != nil {
			handler.set("name", name)
		}
		path := rel + ": hooks." + ev
		groups, err := hooks.child(ev, '[', path)
		if err != nil {
			return FileChange{}, err
		}
		placed := false
		var kept []*jvalue
		for _, g := range groups.vals {
			hs := g.get("hooks")
			if g.kind != '{' || hs == nil || hs.kind != '[' {
				kept = append(kept, g)
				continue
			}
			var hkept []*jvalue
			removed := false
			for _, hd := range hs.vals {
				if !in.ours(hd.get("command").str()) {
					hkept = append(hkept, hd)
					continue
				}
				if !placed {
					hkept = append(hkept, handler)
					placed = true
					continue
				}
				removed = true
			}
			if removed && len(hkept) == 0 {
				continue // a group that held only a duplicate of ours
			}
			hs.vals = hkept
			kept = append(kept, g)
		}
		groups.vals = kept
		if !placed {
			groups.vals = append(groups.vals, jobj(member{"hooks", jarr(handler)}))
		}
	}
	return FileChange{Path: rel, Old: old, New: doc.encode(indent)}, nil
}

// cursorHooks merges chartgate's hooks into Cursor's hooks.json:
// {"version": 1, "hooks": {EVENT: [{"command"}]}}.
func (in *installer) cursorHooks(rel string) (FileChange, error) {
	return in.flatHooks(rel, cursorEvents, "command", func(ev string) *jvalue {
		entry := jobj(member{"command", jstr(in.hookCommand())})
		if m := cursorMatchers[ev]; m != "" {
			entry.set("matcher", jstr(m))
		}
		for _, f := range in.hookFields(ev) {
			entry.set(f.k, f.v)
		}
		return entry
	})
}

// flatHooks merges chartgate's hooks into a file of the shape {"version":
// 1, "hooks": {EVENT: [ENTRY]}} (Cursor's, Copilot CLI's): for each event,
// the entry entryFor makes, whose command is in field, placed as
// [installer.place] does.
func (in *installer) flatHooks(rel string, events []string, field string, entryFor func(ev string) *jvalue) (FileChange, error) {
	old, doc, indent, err := in.readJSON(rel)
	if err != nil {
		return FileChange{}, err
	}
	if doc.get("version") == nil {
		doc.keys, doc.vals = append([]string{"version"}, doc.keys...), append([]*jvalue{{raw: []byte("1")}}, doc.vals...)
	}
	hooks, err := doc.child("hooks", '{', rel+": hooks")
	if err != nil {
		return FileChange{}, err
	}
	for _, ev := range events {
		list, err := hooks.child(ev, '[', rel+": hooks."+ev)
		if err != nil {
			return FileChange{}, err
		}
		in.place(list, entryFor(ev), field)
	}
	return FileChange{Path: rel, Old: old, New: doc.encode(indent)}, nil
}

// CopilotHooksFile is the file of chartgate's Copilot CLI hooks, in the
// project folder (Copilot CLI loads .github/hooks/*.json).
const CopilotHooksFile = ".github/hooks/chartgate.json"

// StepsAside reports whether chartgate's hook for host leaves its event to
// another of chartgate's hooks: Copilot CLI runs the hooks of
// .claude/settings.json besides its own (.github/hooks), so in a project
// where chartgate is installed for Copilot CLI, the Claude Code hook run
// by Copilot CLI answers nothing, and each event is decided once, by the
// Copilot CLI hook. Copilot CLI sets COPILOT_CLI=1 in its hooks'
// environment (getenv reads it); a Claude Code that Copilot CLI's shell
// started (a process named claude in the hook's ancestry, nearest first)
// keeps its hooks. ancestry returns that ancestry ([Ancestry]); it is
// called only when the answer depends on it, since reading it walks the
// process tree (runs ps where there is no /proc).
func StepsAside(host Host, project string, getenv func(string) string, ancestry func() []Proc) bool {
	if host != ClaudeCode || getenv("COPILOT_CLI") != "1" {
		return false
	}
	if _, err := os.Stat(filepath.Join(project, CopilotHooksFile)); err != nil {
		return false
	}
	return !slices.ContainsFunc(ancestry(), func(p Proc) bool { return filepath.Base(p.Name) == "claude" })
}

// copilotHooks merges chartgate's hooks into a Copilot CLI hooks file:
// {"version": 1, "hooks": {EVENT: [{"type": "command", "bash",
// "timeoutSec"}]}}, each hook given its event with --event.
func (in *installer) copilotHooks(rel string) (FileChange, error) {
	return in.flatHooks(rel, copilotEvents, "bash", func(ev string) *jvalue {
		return jobj(member{"type", jstr("command")}, member{"bash", jstr(in.hookCommand() + " --event " + ev)},
			member{"timeoutSec", jnum(HostTimeout)})
	})
}

// place puts chartgate's entry in a flat list of hook entries (Cursor's,
// Copilot CLI's), where the entry's command is in field: in place of the
// first of ours, the others removed, or appended when there is none.
func (in *installer) place(list, entry *jvalue, field string) {
	placed := false
	var kept []*jvalue
	for _, e := range list.vals {
		if !in.ours(e.get(field).str()) {
			kept = append(kept, e)
			continue
		}
		if !placed {
			kept = append(kept, entry)
			placed = true
		}
	}
	if !placed {
		kept = append(kept, entry)
	}
	list.vals = kept
}

// mcpJSON sets the gateway's entry in a file with {"mcpServers": {NAME:
// {"command", "args"}}} (Claude Code's .mcp.json, Cursor's mcp.json,
// Gemini CLI's settings.json): command and args are set, the entry's
// other keys (env …) kept.
func (in *installer) mcpJSON(rel string) (FileChange, error) {
	old, doc, indent, err := in.readJSON(rel)
	if err != nil {
		return FileChange{}, err
	}
	servers, err := doc.child("mcpServers", '{', rel+": mcpServers")
	if err != nil {
		return FileChange{}, err
	}
	entry, err := servers.child(in.o.ServerName, '{', rel+": mcpServers."+in.o.ServerName)
	if err != nil {
		return FileChange{}, err
	}
	entry.set("command", jstr(in.o.Command[0]))
	entry.set("args", jstrs(append(slices.Clone(in.o.Command[1:]), in.serveArgs()...)))
	in.dropServers(rel, doc)
	return FileChange{Path: rel, Old: old, New: doc.encode(indent)}, nil
}

// codexTOML sets the gateway's table in Codex's config.toml,
// [mcp_servers.NAME] with command and args: the table is replaced where it
// is (up to the next table header, so its sub-tables such as .env stay),
// or appended. The rest of the file is kept byte for byte.
func (in *installer) codexTOML(rel string) (FileChange, error) {
	orig, err := in.read(rel)
	if err != nil {
		return FileChange{}, err
	}
	old, err := removeTOMLServers(rel, orig, in.moved[rel])
	if err != nil {
		return FileChange{}, err
	}
	name := in.o.ServerName
	var table strings.Builder
	fmt.Fprintf(&table, "[mcp_servers.%s]\n", tomlKey(name))
	fmt.Fprintf(&table, "command = %s\n", tomlString(in.o.Command[0]))
	args := append(slices.Clone(in.o.Command[1:]), in.serveArgs()...)
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = tomlString(a)
	}
	fmt.Fprintf(&table, "args = [%s]\n", strings.Join(quoted, ", "))

	header := regexp.MustCompile(`^\s*\[\s*mcp_servers\s*\.\s*(` + regexp.QuoteMeta(name) + `|"` + regexp.QuoteMeta(name) + `")\s*\]\s*(#.*)?$`)
	anyHeader := regexp.MustCompile(`^\s*\[`)
	lines := splitLines(string(old))
	start := slices.IndexFunc(lines, func(l string) bool { return header.MatchString(strings.TrimRight(l, "\r\n")) })
	var out strings.Builder
	if start < 0 {
		out.Write(old)
		if len(old) > 0 {
			if !bytes.HasSuffix(old, []byte("\n")) {
				out.WriteByte('\n')
			}
			out.WriteByte('\n')
		}
		out.WriteString(table.String())
	} else {
		end := start + 1
		for end < len(lines) && !anyHeader.MatchString(lines[end]) {
			end++
		}
		// Keep the blank lines and comments that end the block: they
		// belong to what follows.
		trail := end
		for trail > start+1 {
			t := strings.TrimSpace(lines[trail-1])
			if t != "" && !strings.HasPrefix(t, "#") {
				break
			}
			trail--
		}
		out.WriteString(strings.Join(lines[:start], ""))
		out.WriteString(table.String())
		out.WriteString(strings.Join(lines[trail:], ""))
	}
	return FileChange{Path: rel, Old: orig, New: []byte(out.String())}, nil
}

// tomlString writes a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// tomlKey writes a TOML key: bare when it can be, else quoted.
func tomlKey(k string) string {
	if k != "" && strings.Trim(k, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == "" {
		return k
	}
	return tomlString(k)
}

// shellQuote quotes a word for the shell that runs a hook's command, when
// it needs it.
func shellQuote(w string) string {
	if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=@%+,") == "" {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}
