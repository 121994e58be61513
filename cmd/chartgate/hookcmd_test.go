package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/internal/core"
	"github.com/chartgate/chartgate/mcpbind/sqlitestore"
)

// hookProject makes a project folder with the Statewright coding workflow.
func hookProject(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, ".chartgate"), 0o755))
	wf, err := os.ReadFile("../../workflow/testdata/coding.json")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".chartgate", "workflow.json"), wf, 0o644))
	return dir
}

// fixture reads a hook input of package hook's testdata, with its cwd (and
// session) set.
func fixture(t testing.TB, host, name, cwd, session string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("../../hook/testdata/hosts", host, name))
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	for _, k := range []string{"cwd"} {
		if _, ok := m[k]; ok || host != "cursor" {
			m[k] = cwd
		}
	}
	if host == "cursor" {
		m["workspace_roots"] = []string{cwd}
	}
	for _, k := range []string{"session_id", "conversation_id", "sessionId"} {
		if _, ok := m[k]; ok {
			m[k] = session
		}
	}
	out, err := json.Marshal(m)
	require.NoError(t, err)
	return string(out)
}

var (
	binOnce sync.Once
	binDir  string // the temporary folder binPath is in
	binPath string
	binErr  error
)

// removeChartgateBinary removes what chartgateBinary built, once the
// package's tests are over (TestMain).
func removeChartgateBinary() {
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
}

// chartgateBinary builds the chartgate command once per test run.
func chartgateBinary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "chartgate-bin-")
		if err != nil {
			binErr = err
			return
		}
		binDir = dir
		binPath = filepath.Join(dir, "chartgate")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = err
			binPath = string(out)
		}
	})
	if binErr != nil {
		t.Fatalf("building chartgate: %v\n%s", binErr, binPath)
	}
	return binPath
}

// TestHookBinary runs the real `chartgate hook claude-code` process with
// Claude Code's documented inputs: the hook reads its project from the
// input's cwd, and its answers are Claude Code's.
func TestHookBinary(t *testing.T) {
	bin := chartgateBinary(t)
	project := hookProject(t)
	sub := filepath.Join(project, "src", "pkg")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	run := func(stdin string, env ...string) (string, string, int) {
		// Not in the project: the input's cwd says where it is.
		r := runHook(t, bin, t.TempDir(), stdin, env, "claude-code")
		return r.out, r.errOut, r.code
	}

	out, errOut, code := run(fixture(t, "claude-code", "session-start.json", sub, "s1"))
	require.Equal(t, 0, code, errOut)
	var start struct {
		HookSpecificOutput struct{ HookEventName, AdditionalContext string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &start), out)
	assert.Equal(t, "SessionStart", start.HookSpecificOutput.HookEventName)
	assert.Contains(t, start.HookSpecificOutput.AdditionalContext, "Phase: plan.")

	out, errOut, code = run(fixture(t, "claude-code", "pre-tool-use-write.json", sub, "s1"))
	require.Equal(t, 0, code, errOut)
	var deny struct {
		HookSpecificOutput struct{ HookEventName, PermissionDecision, PermissionDecisionReason string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &deny), out)
	assert.Equal(t, "PreToolUse", deny.HookSpecificOutput.HookEventName)
	assert.Equal(t, "deny", deny.HookSpecificOutput.PermissionDecision)
	assert.Contains(t, deny.HookSpecificOutput.PermissionDecisionReason, `Tool "Write" is not available in the current workflow state ("plan")`)

	// The store is the project's, found from a subfolder.
	_, err := os.Stat(filepath.Join(project, ".chartgate", "state.db"))
	assert.NoError(t, err)

	// A folder that is not a chartgate project: nothing is gated.
	elsewhere := t.TempDir()
	out, errOut, code = run(fixture(t, "claude-code", "pre-tool-use-write.json", elsewhere, "s1"))
	assert.Equal(t, 0, code, errOut)
	assert.Empty(t, out)
	// Unless the host says the project is elsewhere: an agent whose shell
	// left the project is still gated.
	out, errOut, code = run(fixture(t, "claude-code", "pre-tool-use-write.json", elsewhere, "s1"), "CLAUDE_PROJECT_DIR="+project)
	assert.Equal(t, 0, code, errOut)
	assert.Contains(t, out, `"permissionDecision":"deny"`)

	// A workflow that does not load: a pre tool event is refused with the
	// reason, others exit 1 with it on stderr.
	broken := hookProject(t)
	require.NoError(t, os.WriteFile(filepath.Join(broken, ".chartgate", "workflow.json"), []byte(`{"id": "x", "initial": "nope", "states": {"a": {"allowed_tools": ["Read"]}}}`), 0o644))
	out, _, code = run(fixture(t, "claude-code", "pre-tool-use-bash.json", broken, "s1"))
	assert.Equal(t, 0, code)
	assert.Contains(t, out, `"permissionDecision":"deny"`)
	assert.Contains(t, out, "chartgate could not decide whether this tool may run")
	assert.Contains(t, out, `initial`)
	_, errOut, code = run(fixture(t, "claude-code", "session-start.json", broken, "s1"))
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "chartgate hook:")

	// Input that is not JSON: exit 1, the reason on stderr.
	_, errOut, code = run("garbage")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "hook input: not valid JSON")
}

// hostlessEnv is the test's environment without the variables hosts set
// for their hooks.
func hostlessEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CLAUDE_PROJECT_DIR=") && !strings.HasPrefix(kv, "GEMINI_PROJECT_DIR=") {
			env = append(env, kv)
		}
	}
	return env
}

// TestHookEveryHost: each host's documented pre tool input gets its
// host's refusal from the same workflow (in-process).
func TestHookEveryHost(t *testing.T) {
	t.Setenv("CLAUDE_PROJECT_DIR", "")
	t.Setenv("GEMINI_PROJECT_DIR", "")
	project := hookProject(t)
	cases := []struct {
		host, file, event, want string
	}{
		{"claude-code", "pre-tool-use-write.json", "", `"permissionDecision":"deny"`},
		{"codex", "pre-tool-use-bash.json", "", `"permissionDecision":"deny"`},
		{"gemini", "before-tool-shell.json", "", `{"decision":"deny","reason":"Tool \"Bash\" is not available`},
		{"cursor", "before-shell-execution.json", "", `{"permission":"deny","user_message":"chartgate: Tool \"Bash\" is not available`},
		{"copilot", "pre-tool-use.json", "preToolUse", `{"permissionDecision":"deny","permissionDecisionReason":"Tool \"Bash\" is not available`},
	}
	for _, c := range cases {
		args := []string{"hook", c.host}
		if c.event != "" {
			args = append(args, "--event", c.event)
		}
		code, out, errOut := chartgateIn(fixture(t, c.host, c.file, project, "s-"+c.host), args...)
		assert.Equal(t, exitOK, code, errOut)
		assert.Contains(t, out, c.want, c.host)
	}
	// Cursor's shell may run outside the workspace: the workspace root is
	// the project.
	in := strings.Replace(fixture(t, "cursor", "before-shell-execution.json", project, "s-cursor"), `"cwd":"`+project+`"`, `"cwd":"/"`, 1)
	require.Contains(t, in, `"cwd":"/"`)
	code, out, errOut := chartgateIn(in, "hook", "cursor")
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, `"permission":"deny"`)

	// Cursor's gateway tools are the gateway's.
	code, out, errOut = chartgateIn(fixture(t, "cursor", "before-mcp-execution-gateway.json", project, "s-cursor"), "hook", "cursor")
	assert.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "{\"permission\":\"allow\"}\n", out)

	code, _, errOut = chartgate("hook")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "one HOST expected")
	code, _, errOut = chartgate("hook", "vscode")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `unknown host "vscode"`)
}

// BenchmarkHookProcess measures `chartgate hook claude-code` end to end, as
// a host runs it for every tool call: the process' start, the SQLite store
// opened, the coding workflow loaded, the session recorded, the decision,
// the exit. It reports the median and the 90th percentile besides the
// mean. "with-gateway" keeps the store open in this process, as the
// session's gateway does: a hook is then never the store's last
// connection, whose close checkpoints the write-ahead log into the
// database (two more fsyncs after a write); "alone" has no gateway.
func BenchmarkHookProcess(b *testing.B) {
	bin := chartgateBinary(b)
	for _, gateway := range []bool{true, false} {
		project := hookProject(b)
		if gateway {
			store, err := sqlitestore.Open(filepath.Join(project, sqlitestore.DefaultPath), nil)
			require.NoError(b, err)
			defer store.Close()
		}
		for _, c := range []struct{ name, file string }{
			{"pre-tool-use", "pre-tool-use-write.json"},
			{"post-tool-use", "post-tool-use-write.json"},
		} {
			name := c.name + "/alone"
			if gateway {
				name = c.name + "/with-gateway"
			}
			b.Run(name, func(b *testing.B) {
				in := fixture(b, "claude-code", c.file, project, "bench")
				benchProcess(b, func() *exec.Cmd {
					cmd := exec.Command(bin, "hook", "claude-code")
					cmd.Env = hostlessEnv()
					cmd.Stdin = strings.NewReader(in)
					return cmd
				})
			})
		}
	}
}

// TestHookCoreKeepsAgreedOptions checks that the hook's gate, built on
// the core without mcpbind, is given every option the project's processes
// agree on: an option added to agreedGateOptions and not to
// hookCoreOptions would make a hook decide otherwise than serve.
func TestHookCoreKeepsAgreedOptions(t *testing.T) {
	p := &project{store: gate.NewMemoryStore(nil), version: "0123abcd"}
	cfg := hookConfig{defaultDeny: true, deadline: 3 * time.Second}
	agreed := reflect.ValueOf(agreedGateOptions(p, nil, cfg.defaultDeny, defaultLeaseTTL)).Elem()
	got := reflect.ValueOf(hookCoreOptions(p, cfg)).Elem()
	for i := range agreed.NumField() {
		f := agreed.Type().Field(i)
		if agreed.Field(i).IsZero() {
			continue
		}
		g := got.FieldByName(f.Name)
		switch {
		case !g.IsValid():
			t.Errorf("agreedGateOptions sets %s, which core.Options has not", f.Name)
		case f.Name == "Logger":
			if g.IsNil() {
				t.Errorf("hookCoreOptions has no Logger")
			}
		case !reflect.DeepEqual(g.Interface(), agreed.Field(i).Interface()):
			t.Errorf("hookCoreOptions' %s = %v, agreedGateOptions' %v", f.Name, g.Interface(), agreed.Field(i).Interface())
		}
	}
	if s := got.FieldByName("StartTool").String(); s != core.DefaultStartTool {
		t.Errorf("hookCoreOptions' StartTool = %q, serve's gate uses %q", s, core.DefaultStartTool)
	}
}

// TestHookBinaryLeavesStoreToExit: the hook process leaves its SQLite
// store to the process' exit, without the close that would checkpoint and
// remove the write-ahead log; each next process still sees every write
// the previous ones made (here, the count of reads of a file), and a
// process that closes the file last checkpoints the log into it.
func TestHookBinaryLeavesStoreToExit(t *testing.T) {
	bin := chartgateBinary(t)
	project := hookProject(t)
	pre := fixture(t, "claude-code", "pre-tool-use-read.json", project, "s1")
	post := fixture(t, "claude-code", "post-tool-use-read.json", project, "s1")
	db := filepath.Join(project, ".chartgate", "state.db")
	for n, nth := range []string{"1st", "2nd", "3rd", "4th", "5th"} {
		r := runHook(t, bin, project, pre, nil, "claude-code")
		require.Equal(t, 0, r.code, r.errOut)
		assert.NotContains(t, r.out, "deny")
		if n+1 >= 3 {
			assert.Contains(t, r.out, "is read for the "+nth+" time in state plan", "read %d", n+1)
		} else {
			assert.NotContains(t, r.out, "is read for the", "read %d", n+1)
		}
		r = runHook(t, bin, project, post, nil, "claude-code")
		require.Equal(t, 0, r.code, r.errOut)
		_, err := os.Stat(db + "-wal")
		require.NoError(t, err, "the hook process closed the store: its log is gone")
	}
	s, err := sqlitestore.Open(db, nil)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	_, err = os.Stat(db + "-wal")
	require.ErrorIs(t, err, fs.ErrNotExist, "the last close checkpoints the log and removes it")
	r := runHook(t, bin, project, pre, nil, "claude-code")
	require.Equal(t, 0, r.code, r.errOut)
	assert.Contains(t, r.out, "is read for the 6th time in state plan")
}
