package hook

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostileCase is one line of shellpolicy's hostile corpus.
type hostileCase struct {
	Policy string `json:"policy"`
	Cmd    string `json:"cmd"`
	Allow  bool   `json:"allow"`
	Reason string `json:"reason"`
	Run    bool   `json:"run"`
}

// hostileStates are workflow states with the corpus' policies. The hook
// never allows unknown commands, so the corpus' unknown_ok and named
// policies (whose lines are all refused) map to stricter states.
var hostileStates = map[string]string{
	"open":       `{}`,
	"unknown_ok": `{}`,
	"write":      `{"allowed_tools": ["Bash", "Read", "Write", "Edit", "Grep", "Glob"]}`,
	"tests":      `{"allowed_commands": ["go test *", "npm test*", "pytest*", "cd *"], "allowed_tools": ["Bash", "Read", "Grep", "Glob"]}`,
	"gotest":     `{"allowed_commands": ["go test *", "go vet *", "go build *"]}`,
	"readonly":   `{"allowed_tools": ["Bash", "Read", "Grep", "Glob"]}`,
	"named":      `{"allowed_commands": ["*", "rm *", "rm -rf *", "git checkout *", "git stash*", "chartgate *", "sqlite3 *", "mv *", "cp *"]}`,
}

// payload builds a pre tool event of host for a canonical tool (Bash,
// Write, Read) in the host's own shape and names.
func payload(t *testing.T, host Host, session, cwd, tool string, input map[string]any) Event {
	t.Helper()
	m := map[string]any{"session_id": session, "cwd": cwd, "hook_event_name": "PreToolUse", "tool_input": input}
	switch host {
	case Codex:
		m["turn_id"], m["model"], m["tool_use_id"], m["transcript_path"] = "turn-1", "gpt-5-codex", "call_1", nil
		if tool == "Write" {
			tool = "apply_patch"
			m["tool_input"] = map[string]any{"command": "*** Begin Patch\n*** Add File: " + input["file_path"].(string) + "\n+{}\n*** End Patch\n"}
		}
	case Gemini:
		m["hook_event_name"], m["timestamp"] = "BeforeTool", "2026-11-23T21:00:02.000Z"
		tool = map[string]string{"Bash": "run_shell_command", "Write": "write_file", "Read": "read_file"}[tool]
	default:
		m["permission_mode"], m["tool_use_id"] = "default", "toolu_1"
	}
	m["tool_name"] = tool
	data, err := json.Marshal(m)
	require.NoError(t, err)
	ev, err := Parse(host, data, "")
	require.NoError(t, err)
	require.Equal(t, KindPreTool, ev.Kind)
	return ev
}

var hostileHosts = []Host{ClaudeCode, Codex, Gemini}

// TestHostileCorpus drives shellpolicy's hostile corpus through Parse and
// the Handler, in the Claude Code, Codex and Gemini CLI payload shapes,
// each in a workflow state with the line's policy, in a real project
// (holding the protected files) and home: every verdict is asserted for
// the three shapes.
func TestHostileCorpus(t *testing.T) {
	data, err := os.ReadFile("../shellpolicy/testdata/hostile.json")
	require.NoError(t, err)
	var corpus struct {
		Cases []hostileCase `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(data, &corpus))
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("CODEX_HOME", "")
	t.Setenv("COPILOT_HOME", "")
	fixtures := map[string]*fixture{}
	for name, state := range hostileStates {
		fixtures[name] = newFixture(t, `{"id": "hostile", "initial": "s", "states": {"s": `+strings.TrimSuffix(state, "}")+sep(state)+`"on": {"END": "done"}}, "done": {"type": "final"}}}`, nil)
	}
	n := 0
	for i, tc := range corpus.Cases {
		f := fixtures[tc.Policy]
		require.NotNil(t, f, "policy %q", tc.Policy)
		cmd := strings.ReplaceAll(strings.ReplaceAll(tc.Cmd, "/home/u/proj", f.project), "/home/u", home)
		for _, host := range hostileHosts {
			f.session = fmt.Sprintf("%s-%d", host, i)
			ev := payload(t, host, f.session, f.project, "Bash", map[string]any{"command": cmd})
			r, err := f.h.Handle(context.Background(), ev)
			require.NoError(t, err)
			if tc.Allow {
				assert.Empty(t, r.Deny, "case %d (%s, %s): %q", i, host, tc.Policy, cmd)
			} else {
				assert.NotEmpty(t, r.Deny, "case %d (%s, %s): %q is allowed", i, host, tc.Policy, cmd)
			}
			n++
		}
	}
	assert.GreaterOrEqual(t, n, 600)
}

// TestHostileFileTools: the hosts' own file tools may not write the
// protected files, through relative, absolute, "~", "..", differently
// cased or linked paths, nor read the approvals' secret; in every state,
// a final one included, and in the three payload shapes.
func TestHostileFileTools(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	f := newFixture(t, `{"id": "files", "initial": "any",
	  "states": {"any": {"on": {"END": "done"}}, "done": {"type": "final"}}}`, nil)
	require.NoError(t, os.MkdirAll(filepath.Join(f.project, ".claude"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(f.project, ".claude"), filepath.Join(f.project, "lnk")))
	require.NoError(t, os.MkdirAll(filepath.Join(f.project, "sub"), 0o755))
	refused := []string{
		".claude/settings.json", ".Claude/Settings.json", "./.claude/../.mcp.json", "sub/../.mcp.json",
		filepath.Join(f.project, ".chartgate", "workflow.json"), filepath.Join(f.project, ".codex", "config.toml"),
		"lnk/settings.json", filepath.Join(home, ".claude", "settings.json"), "~/.claude/settings.json",
		filepath.Join(home, ".gemini", "settings.json"), filepath.Join(home, ".codex", "hooks.json"),
		filepath.Join(home, ".config", "chartgate", "secret"), ".github/hooks/x.json", ".claude/new.json",
	}
	allowed := []string{"main.go", "sub/x.go", ".claude.md", "docs/.claude", filepath.Join(home, "notes.txt")}
	check := func(phase string) {
		for _, host := range hostileHosts {
			for _, file := range refused {
				if host == Codex && (filepath.IsAbs(file) || strings.HasPrefix(file, "~")) {
					continue // a Codex patch names project files
				}
				r := f.handle(payload(t, host, f.session, f.project, "Write", map[string]any{"file_path": file, "content": "{}"}))
				assert.Contains(t, r.Deny, "refused in every state", "%s %s: Write %s", phase, host, file)
			}
			for _, file := range allowed {
				if host == Codex && filepath.IsAbs(file) {
					continue
				}
				r := f.handle(payload(t, host, f.session, f.project, "Write", map[string]any{"file_path": file, "content": "{}"}))
				assert.Empty(t, r.Deny, "%s %s: Write %s", phase, host, file)
			}
			r := f.handle(payload(t, host, f.session, f.project, "Read", map[string]any{"file_path": filepath.Join(home, ".config", "chartgate", "secret")}))
			assert.Contains(t, r.Deny, "Reading", "%s %s: Read of the secret", phase, host)
			r = f.handle(payload(t, host, f.session, f.project, "Read", map[string]any{"file_path": ".chartgate/state.db"}))
			assert.Contains(t, r.Deny, "Reading", "%s %s: Read of the store", phase, host)
			r = f.handle(payload(t, host, f.session, f.project, "Read", map[string]any{"file_path": ".chartgate/workflow.json"}))
			assert.Empty(t, r.Deny, "%s %s: Read of the workflow", phase, host)
			for _, cmd := range []string{"chartgate approve name:" + f.session + " --by alice", "echo '{}' > .claude/settings.json", "sqlite3 .chartgate/state.db .dump"} {
				r := f.handle(payload(t, host, f.session, f.project, "Bash", map[string]any{"command": cmd}))
				assert.Contains(t, r.Deny, "refused in every state", "%s %s: %s", phase, host, cmd)
			}
		}
	}
	check("active state")
	f.send("END", map[string]any{"rationale": "done"})
	assert.Equal(t, "done", f.state())
	check("final state")
	// Enforcement otherwise ends in a final state.
	assert.Empty(t, f.bash("rm -rf build"))
}

// sep returns the separator before another member of a JSON object.
func sep(obj string) string {
	if strings.TrimSpace(obj) == "{}" {
		return ""
	}
	return ", "
}
