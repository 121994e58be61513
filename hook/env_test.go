// This file tests env_overrides: the shell tool's command rewritten per
// host, run in a real shell, the policy judging the command the agent
// wrote, and the merge of the active states' variables.

package hook

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/chartgate/chartgate/shellpolicy"
)

// envWorkflow sets variables in state build, none in state plain.
// TOKEN is both set and blocked: the agent may not print it, the tools it
// runs get it.
const envWorkflow = `{
  "id": "envs", "initial": "build",
  "states": {
    "build": {
      "allowed_tools": ["Bash", "Read"],
      "allowed_commands": ["echo *", "printf *", "cat", "sh *", "go *", "npm *", "cargo *", "rm -rf build", "rm -rf dist", "sort"],
      "blocked_env": ["TOKEN"],
      "env_overrides": {"GOFLAGS": "-mod=mod", "NOTE": "it's $HOME; ` + "`id`" + ` \"q\"\nline 2", "TOKEN": "s3cret"},
      "on": {"NEXT": "plain"}
    },
    "plain": {"allowed_tools": ["Bash"], "on": {"DONE": "done"}},
    "done": {"type": "final"}
  }
}`

// envProbe is a compound line that prints what its parts see.
const envProbe = `echo "$GOFLAGS" | cat && printf '%s\n' "$NOTE"; sh -c 'echo "child: $GOFLAGS"'`

const envProbeOut = "-mod=mod\nit's $HOME; `id` \"q\"\nline 2\nchild: -mod=mod\n"

// runSh runs a line with sh -c and returns its output.
func runSh(t *testing.T, line string) string {
	t.Helper()
	out, err := exec.Command("sh", "-c", line).Output()
	require.NoError(t, err, line)
	return string(out)
}

// envHostCases are each host's shell fixture, the command's field in the
// input the fixture is given with, and where the answer carries the
// rewritten input ("" for none).
var envHostCases = []struct {
	host      Host
	file      string
	inputPath string // where the fixture's command is
	rewritten string // where the answer's input is
}{
	{ClaudeCode, "pre-tool-use-bash-full.json", "tool_input.command", "hookSpecificOutput.updatedInput"},
	{Codex, "pre-tool-use-bash.json", "tool_input.command", "hookSpecificOutput.updatedInput"},
	{Gemini, "before-tool-shell.json", "tool_input.command", "hookSpecificOutput.tool_input"},
	{Copilot, "pre-tool-use.json", "toolArgs.command", "modifiedArgs"},
	{Cursor, "before-shell-execution.json", "command", ""},
}

// TestEnvOverridesPerHost: in a state with env_overrides, an allowed shell
// command is answered with its input rewritten where the host documents a
// rewrite, every other field of the input kept; the rewritten command,
// run by a shell, gives every part of the line the variables.
func TestEnvOverridesPerHost(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the rewrite is written for POSIX shells")
	}
	for _, tc := range envHostCases {
		t.Run(string(tc.host), func(t *testing.T) {
			f := newFixture(t, envWorkflow, nil)
			ev := f.hostEvent(tc.host, tc.file, map[string]any{tc.inputPath: envProbe})
			out := f.answer(ev)
			if tc.rewritten == "" {
				assert.Equal(t, `{"permission":"allow"}`, out, "Cursor documents no rewrite")
				return
			}
			got := gjson.Get(out, tc.rewritten)
			require.True(t, got.IsObject(), "%s: no input at %s", out, tc.rewritten)
			want, err := shellpolicy.WithEnv(envProbe, map[string]string{"GOFLAGS": "-mod=mod", "NOTE": "it's $HOME; `id` \"q\"\nline 2", "TOKEN": "s3cret"})
			require.NoError(t, err)
			assert.Equal(t, want, got.Get("command").String())
			assert.Equal(t, envProbeOut, runSh(t, got.Get("command").String()))
			// Every other field, as the agent gave it, in its order.
			orig := gjson.GetBytes(ev.Input, "@this")
			var keys []string
			orig.ForEach(func(k, v gjson.Result) bool {
				keys = append(keys, k.String())
				if k.String() != "command" {
					assert.JSONEq(t, v.Raw, got.Get(k.String()).Raw, "field %s", k)
				}
				return true
			})
			var gotKeys []string
			got.ForEach(func(k, _ gjson.Result) bool { gotKeys = append(gotKeys, k.String()); return true })
			assert.Equal(t, keys, gotKeys)
		})
	}
}

// TestEnvOverridesExactAnswers pins the answers written, per host.
func TestEnvOverridesExactAnswers(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the rewrite is written for POSIX shells")
	}
	f := newFixture(t, envWorkflow, nil)
	// The fixtures as the hosts send them (their keys' order kept).
	answer := func(host Host, file string) string {
		data, err := os.ReadFile(filepath.Join("testdata", "hosts", string(host), file))
		require.NoError(t, err)
		ev, err := Parse(host, data, "")
		require.NoError(t, err)
		return f.answer(ev)
	}
	prefix := `export GOFLAGS='-mod=mod' NOTE='it'\\''s $HOME; ` + "`id`" + ` \"q\"\nline 2' TOKEN='s3cret'\n`
	// Claude Code asks the user (chartgate grants no permission), unless
	// the session bypasses permissions.
	assert.Equal(t, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"`+envAskReason+`","updatedInput":{"command":"`+prefix+`npm test","description":"Run the test suite","timeout":120000,"run_in_background":false}}}`,
		answer(ClaudeCode, "pre-tool-use-bash-full.json"))
	bypass := f.hostEvent(ClaudeCode, "pre-tool-use-bash-full.json", map[string]any{"permission_mode": "bypassPermissions"})
	assert.JSONEq(t, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"`+prefix+`npm test","description":"Run the test suite","timeout":120000,"run_in_background":false}}}`,
		f.answer(bypass))
	assert.Equal(t, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"`+prefix+`cargo test"}}}`,
		answer(Codex, "pre-tool-use-bash.json"))
	assert.Equal(t, `{"hookSpecificOutput":{"hookEventName":"BeforeTool","tool_input":{"command":"`+prefix+`rm -rf build","description":"clean the build"}}}`,
		answer(Gemini, "before-tool-shell.json"))
	assert.Equal(t, `{"modifiedArgs":{"command":"`+prefix+`rm -rf dist","description":"clean"}}`,
		answer(Copilot, "pre-tool-use.json"))
	// npm install writes node_modules (a FileWrite), which this state's
	// tools do not allow: Cursor's fixture runs npm test here.
	cursor := f.hostEvent(Cursor, "before-shell-execution.json", map[string]any{"command": "npm test"})
	assert.Equal(t, `{"permission":"allow"}`, f.answer(cursor))
}

// TestEnvOverridesJudgeTheAgentsCommand: the shell policy decides the line
// the agent wrote (the export is not one of the allowed commands, and it
// sets TOKEN, a blocked variable); a refused line is not rewritten; a
// state without env_overrides answers as before.
func TestEnvOverridesJudgeTheAgentsCommand(t *testing.T) {
	f := newFixture(t, envWorkflow, nil)
	claude := func(cmd string) string {
		return f.answer(f.hostEvent(ClaudeCode, "pre-tool-use-bash.json", map[string]any{"tool_input.command": cmd}))
	}
	out := claude("go build ./...")
	assert.Equal(t, "ask", gjson.Get(out, "hookSpecificOutput.permissionDecision").String(), out)
	assert.NotEmpty(t, gjson.Get(out, "hookSpecificOutput.updatedInput.command").String(), out)

	for _, cmd := range []string{"curl https://example.com", `echo "$TOKEN"`, "go build ./... && export X=1"} {
		out := claude(cmd)
		assert.Equal(t, "deny", gjson.Get(out, "hookSpecificOutput.permissionDecision").String(), "%s: %s", cmd, out)
		assert.False(t, gjson.Get(out, "hookSpecificOutput.updatedInput").Exists(), "%s: a refused command is not rewritten", cmd)
	}
	gemini := f.hostEvent(Gemini, "before-tool-shell.json", map[string]any{"tool_input.command": "curl x"})
	assert.Equal(t, "deny", gjson.Get(f.answer(gemini), "decision").String())

	f.send("NEXT", nil)
	assert.Empty(t, claude("go build ./..."), "no env_overrides: no answer, as before")
	assert.Equal(t, `{}`, f.answer(f.hostEvent(Gemini, "before-tool-shell.json", map[string]any{"tool_input.command": "go build"})))
	assert.Empty(t, f.answer(f.hostEvent(Copilot, "pre-tool-use.json", map[string]any{"toolArgs.command": "go build"})))
	assert.Empty(t, f.answer(f.hostEvent(Codex, "pre-tool-use-bash.json", nil)))
}

// TestEnvOverridesOnlyForTheShell: other tools are not rewritten.
func TestEnvOverridesOnlyForTheShell(t *testing.T) {
	f := newFixture(t, `{
	  "id": "e", "initial": "a",
	  "states": {"a": {"allowed_tools": ["Bash", "Read"], "env_overrides": {"A": "1"}, "on": {"GO": "z"}}, "z": {"type": "final"}}
	}`, nil)
	r := f.handle(f.ev(KindPreTool, "Read", `{"file_path":"x.go"}`))
	assert.Nil(t, r.UpdatedInput)
	r = f.handle(f.ev(KindPreTool, "Bash", `{"command":"ls"}`))
	assert.Equal(t, `{"command":"export A='1'\nls"}`, compactJSON(t, r.UpdatedInput))
}

// TestEnvOverridesMerge: the variables of the active states merge in the
// workflow's order: a nested state's value wins over its parent's, and of
// two parallel states, the later one's.
func TestEnvOverridesMerge(t *testing.T) {
	f := newFixture(t, `{
	  "id": "m", "type": "parallel",
	  "states": {
	    "docs": {"initial": "reading", "meta": {"chartgate": {"env_overrides": {"A": "parent", "X": "docs", "P": "kept"}}},
	      "states": {"reading": {"meta": {"chartgate": {"env_overrides": {"A": "child"}}, "mcp": {"tools": ["Bash"]}}}}},
	    "code": {"initial": "writing",
	      "states": {"writing": {"meta": {"chartgate": {"env_overrides": {"X": "code", "B": "b"}}, "mcp": {"tools": ["Bash"]}}}}}
	  }
	}`, nil)
	r := f.handle(f.ev(KindPreTool, "Bash", `{"command":"true"}`))
	assert.Equal(t, `{"command":"export A='child' B='b' P='kept' X='code'\ntrue"}`, compactJSON(t, r.UpdatedInput))
}

// TestEnvOverridesInThePhase: the phase names the variables set (not their
// values) where the host applies them.
func TestEnvOverridesInThePhase(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the rewrite is written for POSIX shells")
	}
	f := newFixture(t, envWorkflow, nil)
	ctx := f.handle(f.ev(KindSessionStart, "", "")).Context
	assert.Contains(t, ctx, "Shell commands run with these environment variables set by the workflow: GOFLAGS, NOTE, TOKEN.")
	assert.NotContains(t, ctx, "s3cret")
	cursor := f.ev(KindSessionStart, "", "")
	cursor.Host, cursor.Name = Cursor, "sessionStart"
	assert.NotContains(t, f.handle(cursor).Context, "GOFLAGS", "Cursor does not apply them")
}

func TestRewritesInput(t *testing.T) {
	for _, h := range Hosts {
		assert.Equal(t, h != Cursor, rewritesInput(h, "linux"), h)
	}
	assert.True(t, rewritesInput(ClaudeCode, "windows"), "Claude Code runs Bash in Git Bash")
	for _, h := range []Host{Codex, Gemini, Copilot, Cursor} {
		assert.False(t, rewritesInput(h, "windows"), h)
	}
}

func compactJSON(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var b strings.Builder
	require.NoError(t, json.NewEncoder(&b).Encode(json.RawMessage(raw)))
	return strings.TrimSpace(b.String())
}

// TestEnvOverridesRoundTrip: the post tool event carries the command as it
// ran, rewritten; the files it writes still fire the interrupts, and the
// export line writes none.
func TestEnvOverridesRoundTrip(t *testing.T) {
	f := newFixture(t, `{
	  "id": "m", "initial": "work",
	  "meta": {"chartgate": {"interrupts": {"secrets": {"file_pattern": "**/*.env*", "event": "SECRETS"}}}},
	  "states": {
	    "work": {"on": {"SECRETS": "audit"}, "meta": {"chartgate": {"env_overrides": {"OUT": "cfg/.env"}}, "mcp": {"tools": ["Bash", "Write"]}}},
	    "audit": {"meta": {"mcp": {"tools": ["Read"]}}}
	  }}`, nil)
	r := f.handle(f.ev(KindPreTool, "Bash", `{"command":"echo A=1 > cfg/.env"}`))
	require.NotNil(t, r.UpdatedInput)
	assert.Equal(t, "export OUT='cfg/.env'\necho A=1 > cfg/.env", gjson.GetBytes(r.UpdatedInput, "command").String())
	post := f.post("Bash", string(r.UpdatedInput))
	assert.Contains(t, post.Context, `file cfg/.env triggered interrupt "secrets": the workflow moved from work to audit.`)
}
