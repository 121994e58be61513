// This file maps each host's tool names to the workflow's vocabulary, and
// reads what a tool call does from its arguments: the command a shell
// runs, the files an edit writes, the lines it changes.

package hook

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/chartgate/chartgate/internal/toolargs"
)

// The canonical names of the tools every host has, in the workflow's
// vocabulary: Claude Code's names, which Statewright's workflows use.
const (
	toolShell        = "Bash"
	toolRead         = "Read"
	toolEdit         = "Edit"
	toolWrite        = "Write"
	toolMultiEdit    = "MultiEdit"
	toolNotebookEdit = "NotebookEdit"
)

// CanonicalTools returns the names of the agent hosts' own tools in the
// workflow's vocabulary (Bash, Read, Edit …): names a workflow gives that
// the hooks gate, not an MCP server (a gateway need not warn that its
// upstreams lack them).
func CanonicalTools() []string { return slices.Clone(vocabulary) }

// vocabulary lists the canonical tools, for the lists of tools allowed
// now.
var vocabulary = []string{
	"Bash", "Read", "Edit", "MultiEdit", "Write", "NotebookEdit", "Glob", "Grep",
	"WebFetch", "WebSearch", "Task", "TodoWrite",
}

// hostTools maps each host's own tool names to the canonical ones. A name
// that is not listed is its own canonical name.
var hostTools = map[Host]map[string]string{
	Gemini: {
		"run_shell_command":   "Bash",
		"write_file":          "Write",
		"replace":             "Edit",
		"read_file":           "Read",
		"read_many_files":     "Read",
		"list_directory":      "Glob",
		"glob":                "Glob",
		"search_file_content": "Grep",
		"grep_search":         "Grep",
		"web_fetch":           "WebFetch",
		"google_web_search":   "WebSearch",
		"write_todos":         "TodoWrite",
	},
	Cursor: {
		"Shell":      "Bash",
		"Terminal":   "Bash",
		"StrReplace": "Edit",
		"Search":     "Grep",
	},
	Copilot: {
		"bash":       "Bash",
		"create":     "Write",
		"edit":       "Edit",
		"view":       "Read",
		"glob":       "Glob",
		"grep":       "Grep",
		"web_fetch":  "WebFetch",
		"powershell": "PowerShell",
		"task":       "Task",
	},
}

// canonical returns the name of ev's tool in the workflow's vocabulary:
// the host's name mapped to Claude Code's (run_shell_command is Bash), an
// MCP tool's own name without its server's prefix (mcpTool), and
// apply_patch (Codex's, Copilot CLI's with a GPT model) as Write when it
// only adds files, else as Edit (Codex's own hooks match apply_patch as
// either).
func canonical(ev Event) string {
	if tool, ok := mcpTool(ev); ok {
		return tool
	}
	if patch, ok := patchOf(ev); ok {
		files := patchFiles(patch)
		onlyAdds := len(files) > 0
		for _, f := range files {
			onlyAdds = onlyAdds && f.op == "A"
		}
		if onlyAdds {
			return toolWrite
		}
		return toolEdit
	}
	if m, ok := hostTools[ev.Host][ev.Tool]; ok {
		return m
	}
	return ev.Tool
}

// mcpTool returns the own name of ev's tool when it is an MCP server's
// (ev.Server set): its name without the server's prefix as the host
// writes it, mcp__<server>__<tool> (Claude Code, Codex), mcp_<server>_<tool>
// (Gemini CLI) or <server>-<tool> (Copilot CLI); Cursor's MCP events give
// the own name.
func mcpTool(ev Event) (string, bool) {
	if ev.Server == "" {
		return "", false
	}
	for _, prefix := range []string{"mcp__" + ev.Server + "__", "mcp_" + ev.Server + "_", ev.Server + "-"} {
		if t, ok := strings.CutPrefix(ev.Tool, prefix); ok && t != "" {
			return t, true
		}
	}
	return ev.Tool, true
}

// discovery reports whether ev's tool only finds the host's other tools
// (their names and schemas) and runs nothing: Claude Code's ToolSearch and
// Codex's tool_search, which an agent needs to reach the gateway's
// workflow_transition where MCP tools are deferred. They are not gated.
func discovery(ev Event) bool {
	switch ev.Host {
	case ClaudeCode:
		return ev.Tool == "ToolSearch"
	case Codex:
		return ev.Tool == "tool_search"
	}
	return false
}

// isEdit reports whether a canonical tool writes files.
func isEdit(tool string) bool {
	switch tool {
	case toolEdit, toolWrite, toolMultiEdit, toolNotebookEdit:
		return true
	}
	return false
}

// command returns the command line of a shell tool's call.
func command(ev Event) string {
	return gjson.GetBytes(ev.Input, "command").String()
}

// shellDir returns the directory a shell command runs in: the tool's own
// argument when it has one (Gemini CLI's dir_path), else the session's.
func shellDir(ev Event) string {
	in := gjson.ParseBytes(ev.Input)
	for _, k := range []string{"dir_path", "directory", "cwd"} {
		if d := in.Get(k).String(); d != "" {
			if filepath.IsAbs(d) || ev.Cwd == "" {
				return d
			}
			return filepath.Join(ev.Cwd, d)
		}
	}
	return ev.Cwd
}

// editedFiles returns the files an edit tool's call writes, as given (not
// yet relative to the project).
func editedFiles(ev Event) []string {
	if patch, ok := patchOf(ev); ok {
		var out []string
		for _, f := range patchFiles(patch) {
			out = append(out, f.path)
		}
		return out
	}
	return toolargs.WrittenPaths(ev.Input)
}

// patchOf returns the patch of an apply_patch call, in Codex's patch
// format: Codex gives it in tool_input.command; Copilot CLI with a GPT
// model gives the freeform tool's raw text as toolArgs, which Parse puts
// in "input" (or, as a function tool, an object with "input").
func patchOf(ev Event) (string, bool) {
	if ev.Tool != "apply_patch" || ev.Host != Codex && ev.Host != Copilot {
		return "", false
	}
	in := gjson.ParseBytes(ev.Input)
	for _, k := range []string{"command", "input", "patch"} {
		if v := in.Get(k); v.Type == gjson.String {
			return v.Str, true
		}
	}
	return "", true
}

// patchFile is one file of a Codex patch: its operation (A add, U update,
// D delete, M the destination of a move) and its path.
type patchFile struct {
	op          string
	path        string
	minus, plus int
}

// patchFiles reads the files of a patch in Codex's apply_patch format:
// "*** Add File: p", "*** Update File: p" (with "*** Move to: q"),
// "*** Delete File: p", and the hunks' "+" and "-" lines.
func patchFiles(patch string) []patchFile {
	var out []patchFile
	for line := range strings.Lines(patch) {
		line = strings.TrimRight(line, "\r\n")
		switch {
		case strings.HasPrefix(line, "*** Add File: "):
			out = append(out, patchFile{op: "A", path: strings.TrimSpace(line[len("*** Add File: "):])})
		case strings.HasPrefix(line, "*** Update File: "):
			out = append(out, patchFile{op: "U", path: strings.TrimSpace(line[len("*** Update File: "):])})
		case strings.HasPrefix(line, "*** Delete File: "):
			out = append(out, patchFile{op: "D", path: strings.TrimSpace(line[len("*** Delete File: "):])})
		case strings.HasPrefix(line, "*** Move to: "):
			out = append(out, patchFile{op: "M", path: strings.TrimSpace(line[len("*** Move to: "):])})
		case strings.HasPrefix(line, "***"):
		case len(out) > 0 && strings.HasPrefix(line, "+"):
			out[len(out)-1].plus++
		case len(out) > 0 && strings.HasPrefix(line, "-"):
			out[len(out)-1].minus++
		}
	}
	return out
}

// editLines returns how many lines an edit tool's call changes: for each
// replacement the larger of the lines it removes and the lines it writes
// (Edit, MultiEdit's edits, Gemini CLI's replace, Copilot CLI's edit), the
// lines of a whole file written (Write, NotebookEdit), and for a Codex
// patch the larger of its "-" and "+" lines, file by file.
func editLines(ev Event) int {
	if patch, ok := patchOf(ev); ok {
		n := 0
		for _, f := range patchFiles(patch) {
			n += max(f.minus, f.plus)
		}
		return n
	}
	in := gjson.ParseBytes(ev.Input)
	replacement := func(v gjson.Result) int {
		old := firstOf(v, "old_string", "old_str")
		repl := firstOf(v, "new_string", "new_str")
		return max(lineCount(old), lineCount(repl))
	}
	n := 0
	if edits := in.Get("edits"); edits.IsArray() {
		for _, e := range edits.Array() {
			n += replacement(e)
		}
		return n
	}
	if firstOf(in, "old_string", "old_str", "new_string", "new_str") != "" {
		return replacement(in)
	}
	return lineCount(firstOf(in, "content", "file_text", "new_source"))
}

// firstOf returns the first of keys that v holds as a string.
func firstOf(v gjson.Result, keys ...string) string {
	for _, k := range keys {
		if s := v.Get(k); s.Type == gjson.String {
			return s.String()
		}
	}
	return ""
}

// lineCount counts the lines of s: "" has none, "a" and "a\n" one.
func lineCount(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// projectPath writes a file a tool wrote as interrupt patterns see it:
// relative to the project folder with forward slashes when it is inside
// it, else absolute. A relative p is relative to dir.
func projectPath(project, dir, p string) string {
	if !filepath.IsAbs(p) {
		if dir == "" {
			dir = project
		}
		p = filepath.Join(dir, p)
	}
	p = filepath.Clean(p)
	if project != "" {
		if rel, err := filepath.Rel(project, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.ToSlash(p)
}

// rawObject returns args as a JSON object for the gate ({} when empty).
func rawObject(args json.RawMessage) json.RawMessage {
	if len(args) == 0 {
		return json.RawMessage("{}")
	}
	return args
}
