package hook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/workflow"
)

// install plans and applies an installation, and returns the changes.
func install(t *testing.T, host Host, dir string, o *InstallOptions) []FileChange {
	t.Helper()
	changes, err := Plan(host, dir, o)
	require.NoError(t, err)
	require.NoError(t, Apply(dir, changes))
	return changes
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

// TestInstallIsIdempotent: for every host, installing into an empty
// project writes the host's files, and installing again changes nothing.
func TestInstallIsIdempotent(t *testing.T) {
	want := map[Host][]string{
		ClaudeCode: {".claude/settings.json", ".mcp.json"},
		Codex:      {".codex/hooks.json", ".codex/config.toml"},
		Cursor:     {".cursor/hooks.json", ".cursor/mcp.json"},
		Gemini:     {".gemini/settings.json"},
		Copilot:    {CopilotHooksFile, ".mcp.json"},
	}
	for _, host := range Installable {
		dir := t.TempDir()
		changes := install(t, host, dir, nil)
		var paths []string
		for _, c := range changes {
			paths = append(paths, c.Path)
			assert.Nil(t, c.Old)
			if strings.HasSuffix(c.Path, ".json") {
				assert.True(t, json.Valid(c.New), "%s %s", host, c.Path)
			}
		}
		assert.Equal(t, want[host], paths, host)
		before := map[string]string{}
		for _, p := range paths {
			before[p] = readFile(t, filepath.Join(dir, p))
		}
		again, err := Plan(host, dir, nil)
		require.NoError(t, err)
		assert.Empty(t, again, "%s: a second installation changes nothing", host)
		require.NoError(t, Apply(dir, again))
		for _, p := range paths {
			assert.Equal(t, before[p], readFile(t, filepath.Join(dir, p)))
		}
	}
}

// TestInstallClaudeCodeKeepsTheRest: unrelated settings, their order and
// indentation, and the user's own hooks stay; chartgate's hook is updated
// in place when its flags change, never duplicated.
func TestInstallClaudeCodeKeepsTheRest(t *testing.T) {
	dir := t.TempDir()
	settings := filepath.Join(dir, ".claude", "settings.json")
	writeTestFile(t, settings, `{
    "permissions": {"allow": ["Bash(npm test)"], "deny": []},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh"}]}
        ]
    },
    "model": "opus"
}
`)
	writeTestFile(t, filepath.Join(dir, ".mcp.json"), `{"mcpServers": {"github": {"command": "gh-mcp"}, "chartgate": {"command": "old", "args": [], "env": {"X": "1"}}}}`)
	writeTestFile(t, filepath.Join(dir, ".chartgate", "servers.json"), `{"mcpServers": {}}`)

	changes := install(t, ClaudeCode, dir, nil)
	require.Len(t, changes, 3)
	assert.Equal(t, []string{"github"}, changes[2].Moved, "the project's own server is moved behind the gateway")
	assert.Equal(t, "{\n  \"mcpServers\": {\n    \"github\": {\n      \"command\": \"gh-mcp\"\n    }\n  }\n}\n", readFile(t, filepath.Join(dir, ".chartgate", "servers.json")))
	got := readFile(t, settings)
	assert.True(t, strings.HasPrefix(got, "{\n    \"permissions\": {\n        \"allow\": [\n            \"Bash(npm test)\"\n"), "4-space indent and key order kept:\n%s", got)
	var s struct {
		Permissions map[string]any
		Hooks       map[string][]struct {
			Matcher string
			Hooks   []struct{ Type, Command string }
		}
		Model string
	}
	require.NoError(t, json.Unmarshal([]byte(got), &s))
	assert.Equal(t, "opus", s.Model)
	assert.Equal(t, []string{"PreToolUse", "SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "Stop"}, keysOf(t, got, "hooks"), "the user's event first, where it was")
	pre := s.Hooks["PreToolUse"]
	require.Len(t, pre, 2)
	assert.Equal(t, "./check.sh", pre[0].Hooks[0].Command, "the user's hook comes first, as before")
	assert.Equal(t, "chartgate hook claude-code", pre[1].Hooks[0].Command)
	assert.Equal(t, []string{"permissions", "hooks", "model"}, keysOf(t, got, ""))

	mcpJSON := readFile(t, filepath.Join(dir, ".mcp.json"))
	assert.Equal(t, []string{"chartgate"}, keysOf(t, mcpJSON, "mcpServers"))
	var m struct {
		MCPServers map[string]struct {
			Command string
			Args    []string
			Env     map[string]string
		} `json:"mcpServers"`
	}
	require.NoError(t, json.Unmarshal([]byte(mcpJSON), &m))
	gw := m.MCPServers["chartgate"]
	assert.Equal(t, "chartgate", gw.Command)
	assert.Equal(t, []string{"serve", "--workflow", ".chartgate/workflow.json", "--session", "auto", "--config", ".chartgate/servers.json"}, gw.Args)
	assert.Equal(t, map[string]string{"X": "1"}, gw.Env, "the entry's other keys stay")

	// Another workflow: the hooks' command changes where it is; how to
	// decide goes to the hooks and the gateway alike.
	install(t, ClaudeCode, dir, &InstallOptions{Workflow: "flows/review.json", Command: []string{"/opt/bin/chartgate"}, Checkpoint: "hard", DefaultDeny: true})
	got = readFile(t, settings)
	require.NoError(t, json.Unmarshal([]byte(got), &s))
	pre = s.Hooks["PreToolUse"]
	require.Len(t, pre, 2)
	assert.Equal(t, "/opt/bin/chartgate hook claude-code --workflow flows/review.json --checkpoint hard --default-deny", pre[1].Hooks[0].Command)
	require.NoError(t, json.Unmarshal([]byte(readFile(t, filepath.Join(dir, ".mcp.json"))), &m))
	assert.Equal(t, []string{"serve", "--workflow", "flows/review.json", "--session", "auto", "--checkpoint", "hard", "--default-deny", "--config", ".chartgate/servers.json"}, m.MCPServers["chartgate"].Args)
	assert.Equal(t, 1, strings.Count(got, "PostToolUseFailure"))
	assert.Equal(t, 6, strings.Count(got, "chartgate hook claude-code"))
}

// TestInstallRemovesDuplicates: a second copy of chartgate's hook (added
// by hand) is removed, with its group when that is left empty.
func TestInstallRemovesDuplicates(t *testing.T) {
	dir := t.TempDir()
	hooks := filepath.Join(dir, ".codex", "hooks.json")
	writeTestFile(t, hooks, `{"hooks": {"Stop": [
	  {"hooks": [{"type": "command", "command": "chartgate hook codex"}]},
	  {"hooks": [{"type": "command", "command": "chartgate hook codex --store x.db"}]},
	  {"hooks": [{"type": "command", "command": "notify.sh"}, {"type": "command", "command": "chartgate hook codex"}]}
	]}}`)
	install(t, Codex, dir, nil)
	var s struct {
		Hooks map[string][]struct{ Hooks []struct{ Command string } }
	}
	require.NoError(t, json.Unmarshal([]byte(readFile(t, hooks)), &s))
	stop := s.Hooks["Stop"]
	require.Len(t, stop, 2)
	assert.Equal(t, "chartgate hook codex", stop[0].Hooks[0].Command)
	require.Len(t, stop[1].Hooks, 1)
	assert.Equal(t, "notify.sh", stop[1].Hooks[0].Command)
}

// TestInstallCodexTOML: the gateway's table is added to config.toml, the
// rest kept byte for byte; on a later install it is replaced in place, its
// sub-tables kept. (With the project's own servers kept direct: moving them
// is TestInstallMovesServers.)
func TestInstallCodexTOML(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, ".codex", "config.toml")
	orig := "model = \"gpt-5-codex\" # the model\n\n[mcp_servers.github]\ncommand = \"gh-mcp\"\n"
	writeTestFile(t, cfg, orig)
	install(t, Codex, dir, &InstallOptions{KeepServersDirect: true})
	got := readFile(t, cfg)
	assert.Equal(t, orig+"\n[mcp_servers.chartgate]\ncommand = \"chartgate\"\nargs = [\"serve\", \"--workflow\", \".chartgate/workflow.json\", \"--session\", \"auto\", \"--list-all-tools\"]\n", got)

	// The user adds env to the table and a table after it.
	got = strings.Replace(got, "[mcp_servers.chartgate]\n", "[mcp_servers.chartgate]\nstartup_timeout_sec = 20\n", 1) +
		"\n# local servers\n[mcp_servers.chartgate.env]\nTOKEN = \"x\"\n\n[profiles.fast]\nmodel = \"o4-mini\"\n"
	writeTestFile(t, cfg, got)
	install(t, Codex, dir, &InstallOptions{Store: "/var/state.db", KeepServersDirect: true})
	want := orig + "\n[mcp_servers.chartgate]\ncommand = \"chartgate\"\nargs = [\"serve\", \"--workflow\", \".chartgate/workflow.json\", \"--session\", \"auto\", \"--list-all-tools\", \"--store\", \"/var/state.db\"]\n" +
		"\n# local servers\n[mcp_servers.chartgate.env]\nTOKEN = \"x\"\n\n[profiles.fast]\nmodel = \"o4-mini\"\n"
	assert.Equal(t, want, readFile(t, cfg))
	again, err := Plan(Codex, dir, &InstallOptions{Store: "/var/state.db", KeepServersDirect: true})
	require.NoError(t, err)
	assert.Empty(t, again)
}

// TestInstallCursorAndGemini: Cursor's flat hook entries with version 1;
// Gemini CLI's hooks and MCP server in one settings.json.
func TestInstallCursorAndGemini(t *testing.T) {
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, ".cursor", "hooks.json"), `{"hooks": {"afterFileEdit": [{"command": "./format.sh"}]}}`)
	install(t, Cursor, dir, nil)
	got := readFile(t, filepath.Join(dir, ".cursor", "hooks.json"))
	assert.Equal(t, []string{"version", "hooks"}, keysOf(t, got, ""))
	var c struct {
		Version int
		Hooks   map[string][]struct{ Command, Matcher string }
	}
	require.NoError(t, json.Unmarshal([]byte(got), &c))
	assert.Equal(t, 1, c.Version)
	assert.Equal(t, []struct{ Command, Matcher string }{{"./format.sh", ""}, {"chartgate hook cursor", ""}}, c.Hooks["afterFileEdit"])
	assert.Len(t, c.Hooks["beforeShellExecution"], 1)
	assert.Equal(t, []struct{ Command, Matcher string }{{"chartgate hook cursor", "Read"}}, c.Hooks["postToolUse"], "reads' notices come after them")

	writeTestFile(t, filepath.Join(dir, ".gemini", "settings.json"), `{"theme": "GitHub", "mcpServers": {"fs": {"command": "npx"}}}`)
	changes := install(t, Gemini, dir, &InstallOptions{ServerName: "gate"})
	require.Len(t, changes, 2, "settings.json changed once, and the servers file")
	assert.Equal(t, ".gemini/settings.json", changes[0].Path)
	assert.Equal(t, []string{"fs"}, changes[0].Moved)
	got = readFile(t, filepath.Join(dir, ".gemini", "settings.json"))
	assert.Equal(t, []string{"theme", "mcpServers", "hooks"}, keysOf(t, got, ""))
	assert.Equal(t, []string{"gate"}, keysOf(t, got, "mcpServers"))
	assert.Contains(t, got, `"command": "chartgate hook gemini --gateway gate"`)
	assert.Contains(t, got, `"name": "chartgate"`)
	assert.Equal(t, []string{"SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent"}, keysOf(t, got, "hooks"))
}

// TestInstallErrors: a file that is not what the host reads is reported
// with its name and left alone.
func TestInstallErrors(t *testing.T) {
	dir := t.TempDir()
	settings := filepath.Join(dir, ".claude", "settings.json")
	writeTestFile(t, settings, `{"hooks": {"Stop": [}`)
	_, err := Plan(ClaudeCode, dir, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), ".claude/settings.json: line 1, column 21")
	assert.Contains(t, err.Error(), "it was not changed")

	writeTestFile(t, settings, `{"hooks": []}`)
	_, err = Plan(ClaudeCode, dir, nil)
	assert.EqualError(t, err, ".claude/settings.json: hooks must be an object")
	writeTestFile(t, settings, `[]`)
	_, err = Plan(ClaudeCode, dir, nil)
	assert.EqualError(t, err, ".claude/settings.json: must hold a JSON object; it was not changed")
	_, err = Plan(Host("vim"), dir, nil)
	assert.ErrorContains(t, err, `chartgate cannot install into "vim"`)
}

// TestDiff: the diff shows what installing adds, with context.
func TestDiff(t *testing.T) {
	c := FileChange{Path: ".mcp.json", Old: []byte("{\n  \"a\": 1\n}\n"), New: []byte("{\n  \"a\": 1,\n  \"b\": 2\n}\n")}
	assert.Equal(t, "--- a/.mcp.json\n+++ b/.mcp.json\n@@ -1,3 +1,4 @@\n {\n-  \"a\": 1\n+  \"a\": 1,\n+  \"b\": 2\n }\n", c.Diff())
	c = FileChange{Path: "x", New: []byte("a\n")}
	assert.Equal(t, "--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+a\n", c.Diff())
	long := strings.Repeat("same\n", 20)
	c = FileChange{Path: "y", Old: []byte("top\n" + long + "end\n"), New: []byte("TOP\n" + long + "END\n")}
	assert.Equal(t, 2, strings.Count(c.Diff(), "@@ -"), "far apart edits make two hunks:\n%s", c.Diff())
	assert.Empty(t, FileChange{Old: []byte("a"), New: []byte("a")}.Diff())
}

// keysOf returns the keys of the object at key ("" for the root) in their
// order in the JSON text.
func keysOf(t *testing.T, text, key string) []string {
	t.Helper()
	v, err := parseJSON([]byte(text))
	require.NoError(t, err)
	if key != "" {
		v = v.get(key)
	}
	require.NotNil(t, v)
	return v.keys
}

// TestInstallFailClosed: every hook entry gets the host's timeout, above
// the hook's own deadline, and the pre tool entries the host's setting
// that blocks the tool when the hook fails, where the host has one; a
// second installation changes nothing.
func TestInstallFailClosed(t *testing.T) {
	type entry struct {
		Command    string
		Timeout    int
		OnFailure  string
		FailClosed bool
	}
	nested := func(t *testing.T, text string) map[string][]entry {
		var s struct {
			Hooks map[string][]struct{ Hooks []entry }
		}
		require.NoError(t, json.Unmarshal([]byte(text), &s))
		out := map[string][]entry{}
		for ev, groups := range s.Hooks {
			for _, g := range groups {
				out[ev] = append(out[ev], g.Hooks...)
			}
		}
		return out
	}
	dir := t.TempDir()
	install(t, ClaudeCode, dir, nil)
	for ev, es := range nested(t, readFile(t, filepath.Join(dir, ".claude", "settings.json"))) {
		require.Len(t, es, 1, ev)
		want := entry{Command: "chartgate hook claude-code", Timeout: 60}
		if ev == "PreToolUse" {
			want.OnFailure = "block"
		}
		assert.Equal(t, want, es[0], ev)
	}
	install(t, Codex, dir, nil)
	for ev, es := range nested(t, readFile(t, filepath.Join(dir, ".codex", "hooks.json"))) {
		assert.Equal(t, []entry{{Command: "chartgate hook codex", Timeout: 60}}, es, ev)
	}
	install(t, Gemini, dir, nil)
	for ev, es := range nested(t, readFile(t, filepath.Join(dir, ".gemini", "settings.json"))) {
		assert.Equal(t, []entry{{Command: "chartgate hook gemini", Timeout: 60000}}, es, ev, "milliseconds")
	}
	install(t, Cursor, dir, nil)
	var c struct{ Hooks map[string][]entry }
	require.NoError(t, json.Unmarshal([]byte(readFile(t, filepath.Join(dir, ".cursor", "hooks.json"))), &c))
	require.Len(t, c.Hooks, len(cursorEvents))
	for ev, es := range c.Hooks {
		want := entry{Command: "chartgate hook cursor", Timeout: 60, FailClosed: cursorPermission[ev]}
		assert.Equal(t, []entry{want}, es, ev)
	}
	assert.True(t, c.Hooks["beforeShellExecution"][0].FailClosed)
	install(t, Copilot, dir, nil)
	var cp struct {
		Hooks map[string][]struct {
			TimeoutSec int `json:"timeoutSec"`
		}
	}
	require.NoError(t, json.Unmarshal([]byte(readFile(t, filepath.Join(dir, ".github", "hooks", "chartgate.json"))), &cp))
	require.NotEmpty(t, cp.Hooks)
	for ev, es := range cp.Hooks {
		require.Len(t, es, 1, ev)
		assert.Equal(t, HostTimeout, es[0].TimeoutSec, ev)
	}
	for _, host := range Installable {
		again, err := Plan(host, dir, nil)
		require.NoError(t, err)
		assert.Empty(t, again, host)
	}
}

// TestInstallRecordsFormat: install records the workflow file's format;
// a file that then loads in the other format is refused, naming both;
// installing again after a person changed the format updates the record.
func TestInstallRecordsFormat(t *testing.T) {
	dir := t.TempDir()
	wf := filepath.Join(dir, ConfigDir, "workflow.json")
	sw, err := os.ReadFile("../workflow/testdata/coding.json")
	require.NoError(t, err)
	writeTestFile(t, wf, string(sw))
	changes := install(t, ClaudeCode, dir, nil)
	require.Len(t, changes, 3)
	assert.Equal(t, InstalledFile, changes[2].Path)
	assert.JSONEq(t, `{"workflow": ".chartgate/workflow.json", "format": "statewright"}`, readFile(t, filepath.Join(dir, InstalledFile)))
	for _, host := range Installable {
		again, err := Plan(host, dir, nil)
		require.NoError(t, err)
		for _, c := range again {
			assert.NotEqual(t, InstalledFile, c.Path, host)
		}
	}
	assert.NoError(t, CheckFormat(wf, workflow.FormatStatewright))
	err = CheckFormat(wf, workflow.FormatXState)
	require.Error(t, err)
	assert.Contains(t, err.Error(), wf+": the workflow loads in format \"xstate\", but the project was installed with format \"statewright\" (.chartgate/installed.json)")
	// Another file of the project is not the one recorded.
	assert.NoError(t, CheckFormat(filepath.Join(dir, "other.json"), workflow.FormatXState))
	// A person changes the format and installs again.
	writeTestFile(t, wf, `{"id": "w", "initial": "a", "states": {"a": {}}}`)
	install(t, ClaudeCode, dir, nil)
	assert.NoError(t, CheckFormat(wf, workflow.FormatXState))
	// No workflow file at install: no record.
	empty := t.TempDir()
	install(t, Codex, empty, nil)
	_, err = os.Stat(filepath.Join(empty, InstalledFile))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
