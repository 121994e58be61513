package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInstallCommand: --dry-run prints the diff and writes nothing; an
// installation writes the files; a second changes nothing.
func TestInstallCommand(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := chartgate("install", "claude-code", "--dir", dir, "--dry-run")
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "--- /dev/null\n+++ b/.claude/settings.json\n")
	assert.Contains(t, out, `+            "command": "chartgate hook claude-code"`)
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
