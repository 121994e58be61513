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
