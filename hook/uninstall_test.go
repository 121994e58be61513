package hook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// snapshotDir reads every file under dir, by path relative to it.
func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		data, err := os.ReadFile(path)
		files[filepath.ToSlash(rel)] = string(data)
		return err
	}))
	return files
}

// projectFiles are files a project has before chartgate: its own hooks and
// MCP servers, in its own formatting.
var projectFiles = map[Host]map[string]string{
	ClaudeCode: {".claude/settings.json": "{\n    \"permissions\": {\"allow\": [\"Read\"]},\n    \"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"./lint.sh\"}]}]}\n}\n",
		".mcp.json": "{\"mcpServers\": {\"github\": {\"command\": \"gh-mcp\"}}}"},
	Codex:   {".codex/config.toml": "# mine\nmodel = \"o4\"\n\n[mcp_servers.github]\ncommand = \"gh-mcp\"\n"},
	Gemini:  {".gemini/settings.json": "{\"ui\": {\"hideTips\": true}}\n"},
	Cursor:  {".cursor/mcp.json": "{}"},
	Copilot: {".mcp.json": "{\n  \"mcpServers\": {}\n}\n"},
}

// TestUninstallGivesFilesBack: for every host, install then uninstall
// gives the project's files back byte for byte, in an empty project and in
// one with files of its own, also after installing twice; the folders
// install made are gone.
func TestUninstallGivesFilesBack(t *testing.T) {
	for _, host := range Installable {
		for _, own := range []bool{false, true} {
			dir := t.TempDir()
			require.NoError(t, os.MkdirAll(filepath.Join(dir, ConfigDir), 0o755))
			if own {
				for p, content := range projectFiles[host] {
					writeTestFile(t, filepath.Join(dir, p), content)
				}
			}
			before := snapshotDir(t, dir)
			changes, err := Plan(host, dir, nil)
			require.NoError(t, err)
			require.NoError(t, Install(dir, host, changes))
			again, err := Plan(host, dir, &InstallOptions{Checkpoint: "hard"}) // a second installation that changes the files
			require.NoError(t, err)
			require.NotEmpty(t, again)
			require.NoError(t, Install(dir, host, again))

			un, err := PlanUninstall(host, dir, nil)
			require.NoError(t, err)
			require.NoError(t, ApplyUninstall(dir, host, un))
			assert.Equal(t, before, snapshotDir(t, dir), "%s (own files: %v)", host, own)
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if !own {
				assert.Equal(t, []string{ConfigDir}, names, "%s: the folders install made are gone", host)
			}
		}
	}
}

// TestUninstallKeepsLaterChanges: a file changed after install keeps the
// change; only chartgate's hooks and gateway entry go.
func TestUninstallKeepsLaterChanges(t *testing.T) {
	dir := t.TempDir()
	settings := filepath.Join(dir, ".claude/settings.json")
	writeTestFile(t, settings, projectFiles[ClaudeCode][".claude/settings.json"])
	changes, err := Plan(ClaudeCode, dir, nil)
	require.NoError(t, err)
	require.NoError(t, Install(dir, ClaudeCode, changes))
	edited := strings.Replace(readFile(t, settings), `"Read"`, `"Read", "Grep"`, 1)
	writeTestFile(t, settings, edited)

	un, err := PlanUninstall(ClaudeCode, dir, nil)
	require.NoError(t, err)
	require.NoError(t, ApplyUninstall(dir, ClaudeCode, un))
	got := readFile(t, settings)
	assert.Contains(t, got, `"Grep"`)
	assert.Contains(t, got, "./lint.sh")
	assert.NotContains(t, got, "chartgate")
	_, err = os.Stat(filepath.Join(dir, ".mcp.json"))
	assert.True(t, os.IsNotExist(err), ".mcp.json, which install made and nothing changed, is gone")
}

// TestStepsAside: the Claude Code hook run by Copilot CLI (COPILOT_CLI=1
// in its environment) steps aside in a project where chartgate is
// installed for Copilot CLI, and nowhere else; a Claude Code started from
// Copilot CLI's shell keeps its hooks.
func TestStepsAside(t *testing.T) {
	dir := t.TempDir()
	copilot := func(k string) string { return map[string]string{"COPILOT_CLI": "1"}[k] }
	none := func(string) string { return "" }
	walks := 0
	procs := func(p ...Proc) func() []Proc {
		return func() []Proc { walks++; return p }
	}
	shell := procs(Proc{PID: 3, Name: "bash"}, Proc{PID: 2, Name: "MainThread"}, Proc{PID: 1, Name: "init"})
	nested := procs(Proc{PID: 4, Name: "sh"}, Proc{PID: 3, Name: "claude"}, Proc{PID: 2, Name: "MainThread"})
	assert.False(t, StepsAside(ClaudeCode, dir, copilot, shell), "not installed for Copilot CLI")
	assert.False(t, StepsAside(ClaudeCode, dir, none, shell), "run by Claude Code")
	assert.False(t, StepsAside(Copilot, dir, copilot, shell), "Copilot CLI's own hook")
	// The process tree is read only when the answer depends on it: most
	// hook processes never walk it.
	assert.Zero(t, walks, "the ancestry read where the answer did not depend on it")
	writeTestFile(t, filepath.Join(dir, CopilotHooksFile), "{}")
	assert.True(t, StepsAside(ClaudeCode, dir, copilot, shell))
	assert.False(t, StepsAside(ClaudeCode, dir, none, shell), "run by Claude Code")
	assert.False(t, StepsAside(ClaudeCode, dir, copilot, nested), "a Claude Code that Copilot CLI's shell started")
	assert.False(t, StepsAside(Copilot, dir, copilot, shell), "Copilot CLI's own hook")
	assert.Equal(t, 2, walks)
}

// TestUninstallLastHostTakesTheFormatRecord: the record of the workflow's
// format (InstalledFile) stays while any host is installed, and goes with
// the last one, so that the project is as it was before.
func TestUninstallLastHostTakesTheFormatRecord(t *testing.T) {
	dir := t.TempDir()
	wf, err := os.ReadFile("../workflow/testdata/coding.json")
	require.NoError(t, err)
	writeTestFile(t, filepath.Join(dir, ConfigDir, "workflow.json"), string(wf))
	before := snapshotDir(t, dir)
	for _, host := range []Host{ClaudeCode, Codex} {
		changes, err := Plan(host, dir, nil)
		require.NoError(t, err)
		require.NoError(t, Install(dir, host, changes))
	}
	require.FileExists(t, filepath.Join(dir, InstalledFile))
	for i, host := range []Host{ClaudeCode, Codex} {
		un, err := PlanUninstall(host, dir, nil)
		require.NoError(t, err)
		require.NoError(t, ApplyUninstall(dir, host, un))
		if i == 0 {
			require.FileExists(t, filepath.Join(dir, InstalledFile), "codex is still installed")
		}
	}
	assert.Equal(t, before, snapshotDir(t, dir))
}
