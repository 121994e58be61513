package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chartgateOnPath puts a chartgate built from this package first on the
// PATH, as an installed chartgate is: install, run from a test binary (a
// temporary build), writes that one into the hooks.
func chartgateOnPath(t *testing.T) string {
	t.Helper()
	bin := chartgateBinary(t)
	t.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	return bin
}

// TestInstallCommand: --dry-run prints the diff and writes nothing; an
// installation writes the files; a second changes nothing.
func TestInstallCommand(t *testing.T) {
	bin := chartgateOnPath(t)
	dir := t.TempDir()
	code, out, errOut := chartgate("install", "claude-code", "--dir", dir, "--dry-run")
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "--- /dev/null\n+++ b/.claude/settings.json\n")
	assert.Contains(t, out, `+            "command": "`+bin+` hook claude-code"`, "the absolute path of the chartgate on the PATH")
	assert.Contains(t, out, "dry run: 2 file(s) not written\n")
	assert.Contains(t, errOut, ".chartgate/workflow.json does not exist yet")
	_, err := os.Stat(filepath.Join(dir, ".claude"))
	assert.True(t, os.IsNotExist(err), "a dry run writes nothing")

	code, out, errOut = chartgate("install", "claude-code", "--dir", dir)
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "wrote .claude/settings.json\nwrote .mcp.json\n")
	code, out, _ = chartgate("install", "claude-code", "--dir", dir)
	assert.Equal(t, exitOK, code)
	assert.Equal(t, "chartgate is already installed for claude-code: nothing to change\n", out)

	require.NoError(t, os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte("{oops"), 0o644))
	code, _, errOut = chartgate("install", "claude-code", "--dir", dir)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, "chartgate install: .mcp.json: line 1, column 2")

	code, _, errOut = chartgate("install", "vim", "--dir", dir)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `"vim"`)
	code, _, _ = chartgate("install")
	assert.Equal(t, exitUsage, code)
}

// TestInstallCodexSaysWhatIsNotTrusted: Codex runs a project's hooks only
// when the folder and each hook are trusted in the user's configuration,
// and codex exec skips them silently otherwise: install says which is
// missing, and nothing once both are there.
func TestInstallCodexSaysWhatIsNotTrusted(t *testing.T) {
	chartgateOnPath(t)
	dir, home := t.TempDir(), t.TempDir()
	t.Setenv("CODEX_HOME", home)
	code, _, errOut := chartgate("install", "codex", "--dir", dir)
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, errOut, "warning: Codex does not trust this folder nor its hooks yet")

	config := "[projects." + strconv.Quote(dir) + "]\ntrust_level = \"trusted\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o644))
	_, _, errOut = chartgate("install", "codex", "--dir", dir)
	assert.Contains(t, errOut, "warning: Codex has not trusted chartgate's hooks yet")

	config += "\n[hooks.state." + strings.TrimSuffix(strconv.Quote(filepath.Join(dir, ".codex", "hooks.json")), `"`) + ":session_start:0:0\"]\ntrusted_hash = \"sha256:00\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o644))
	_, _, errOut = chartgate("install", "codex", "--dir", dir)
	assert.NotContains(t, errOut, "warning:")
}

// TestInstallMovesServersCommand: install lists the project's own MCP
// servers it moves behind the gateway (a dry run, which ones it would);
// --keep-servers-direct leaves them; a server the gateway could not start
// is refused with its path, and nothing is written; uninstall puts them
// back.
func TestInstallMovesServersCommand(t *testing.T) {
	chartgateOnPath(t)
	dir := t.TempDir()
	mcpJSON := `{"mcpServers": {"fs": {"command": "fs-mcp"}, "docs": {"url": "https://docs.example.com/mcp"}}}` + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(mcpJSON), 0o644))

	code, out, errOut := chartgate("install", "claude-code", "--dir", dir, "--dry-run", "--keep-servers-direct")
	assert.Equal(t, exitOK, code, errOut)
	assert.NotContains(t, out, "move")
	assert.NotContains(t, out, "servers.json")

	code, out, errOut = chartgate("install", "claude-code", "--dir", dir, "--dry-run")
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "would move the project's MCP server(s) fs, docs from .mcp.json into .chartgate/servers.json: the gateway (chartgate) serves their tools, gated by the workflow;")

	code, out, errOut = chartgate("install", "claude-code", "--dir", dir)
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "wrote .chartgate/servers.json\n")
	assert.Contains(t, out, "moved the project's MCP server(s) fs, docs from .mcp.json into .chartgate/servers.json")
	servers, err := os.ReadFile(filepath.Join(dir, ".chartgate", "servers.json"))
	require.NoError(t, err)
	assert.Contains(t, string(servers), `"fs": {`)
	code, out, _ = chartgate("install", "claude-code", "--dir", dir)
	assert.Equal(t, exitOK, code)
	assert.Equal(t, "chartgate is already installed for claude-code: nothing to change\n", out)

	code, out, errOut = chartgate("uninstall", "claude-code", "--dir", dir)
	assert.Equal(t, exitOK, code, errOut)
	got, err := os.ReadFile(filepath.Join(dir, ".mcp.json"))
	require.NoError(t, err)
	assert.Equal(t, mcpJSON, string(got))
	_, err = os.Stat(filepath.Join(dir, ".chartgate", "servers.json"))
	assert.True(t, os.IsNotExist(err), "uninstall takes the servers file out:\n%s", out)

	require.NoError(t, os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(`{"mcpServers": {"bad": {"url": "ftp://x"}}}`), 0o644))
	code, _, errOut = chartgate("install", "claude-code", "--dir", dir)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, `chartgate install: the MCP servers moved into .chartgate/servers.json would not start behind the gateway (nothing was written; chartgate install --keep-servers-direct leaves them direct): .chartgate/servers.json: mcpServers.bad.url: "ftp://x" is not an http:// or https:// URL`)
	_, err = os.Stat(filepath.Join(dir, ".claude"))
	assert.True(t, os.IsNotExist(err), "nothing written")
}

// TestInstallHookCommandResolves: the hooks run chartgate by its absolute
// path, so they do not depend on the PATH the hosts run them with; a
// command that does not run chartgate version is refused and nothing is
// written; go test's (or go run's) temporary build is never written, and
// without a chartgate on the PATH install says how to get one.
func TestInstallHookCommandResolves(t *testing.T) {
	bin := chartgateBinary(t)
	dir := t.TempDir()
	code, _, errOut := chartgate("install", "codex", "--dir", dir, "--command", bin)
	require.Equal(t, exitOK, code, errOut)
	hooks, err := os.ReadFile(filepath.Join(dir, ".codex", "hooks.json"))
	require.NoError(t, err)
	assert.Contains(t, string(hooks), `"command": "`+bin+` hook codex"`)
	toml, err := os.ReadFile(filepath.Join(dir, ".codex", "config.toml"))
	require.NoError(t, err)
	assert.Contains(t, string(toml), "command = "+strconv.Quote(bin)+"\n")

	// The hook as the host runs it, with a PATH that has no chartgate.
	var hook struct {
		Hooks map[string][]struct{ Hooks []struct{ Command string } }
	}
	require.NoError(t, json.Unmarshal(hooks, &hook))
	line := hook.Hooks["PreToolUse"][0].Hooks[0].Command
	run := exec.Command("/bin/sh", "-c", line)
	run.Dir = dir
	run.Env = []string{"PATH=/nonexistent"}
	run.Stdin = strings.NewReader(`{"session_id":"s1","cwd":"` + dir + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`)
	hookOut, err := run.CombinedOutput()
	assert.NoError(t, err, "%s", hookOut)

	other := t.TempDir()
	for _, command := range []string{"/no/such/chartgate", "true"} {
		code, _, errOut = chartgate("install", "claude-code", "--dir", other, "--command", command)
		assert.Equal(t, exitFail, code, command)
		assert.Contains(t, errOut, `chartgate install: the hooks' command "`+command+` version" does not run chartgate from `+other, command)
		assert.Contains(t, errOut, "nothing was written", command)
	}
	_, err = os.Stat(filepath.Join(other, ".claude"))
	assert.True(t, os.IsNotExist(err), "nothing was written")

	t.Setenv("PATH", "/nonexistent")
	code, _, errOut = chartgate("install", "claude-code", "--dir", other)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, "chartgate install: this chartgate is a temporary build (go run), gone when it exits, and there is no chartgate on the PATH")
}

// TestInstallFromTheNPMPackage: a chartgate that runs from the project's
// own npm package (node_modules/@chartgate/chartgate-OS-CPU/bin) writes
// npx's form, which resolves it from the project's node_modules; one from
// a global npm installation writes its absolute path.
func TestInstallFromTheNPMPackage(t *testing.T) {
	project := t.TempDir()
	native := filepath.Join(project, "node_modules", "@chartgate", "chartgate-linux-x64", "bin", "chartgate")
	got, err := selfCommandOf(native, project)
	require.NoError(t, err)
	assert.Equal(t, []string{"npx", "--no", "chartgate"}, got)
	got, err = selfCommandOf(native, filepath.Join(project, "sub"))
	require.NoError(t, err)
	assert.Equal(t, []string{"npx", "--no", "chartgate"}, got, "a subfolder of the package's project")
	global := "/usr/lib/node_modules/chartgate/node_modules/@chartgate/chartgate-linux-x64/bin/chartgate"
	got, err = selfCommandOf(global, project)
	require.NoError(t, err)
	assert.Equal(t, []string{global}, got)
	got, err = selfCommandOf("/home/ada/go/bin/chartgate", project)
	require.NoError(t, err)
	assert.Equal(t, []string{"/home/ada/go/bin/chartgate"}, got)
}
