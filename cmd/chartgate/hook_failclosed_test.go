package main

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/chartgate/chartgate/hook"
)

// TestHookPanicDenies: a panic while an event is decided refuses a pre
// tool event in each host's own deny format, with a plain sentence: the
// stack goes to the project's hook error log, not to the agent. Other
// events exit 1.
func TestHookPanicDenies(t *testing.T) {
	project := hookProject(t)
	cases := []struct{ host, file, event, want string }{
		{"claude-code", "pre-tool-use-bash.json", "", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"chartgate could not decide`},
		{"codex", "pre-tool-use-bash.json", "", `"permissionDecision":"deny"`},
		{"gemini", "before-tool-shell.json", "", `{"decision":"deny","reason":"chartgate could not decide`},
		{"cursor", "before-shell-execution.json", "", `{"permission":"deny","user_message":"chartgate: chartgate could not decide`},
		{"copilot", "pre-tool-use.json", "preToolUse", `{"permissionDecision":"deny","permissionDecisionReason":"chartgate could not decide`},
	}
	for _, c := range cases {
		host, err := hook.ParseHost(c.host)
		require.NoError(t, err)
		ev, err := hook.Parse(host, []byte(fixture(t, c.host, c.file, project, "s")), c.event)
		require.NoError(t, err)
		require.Equal(t, hook.KindPreTool, ev.Kind, c.host)
		a := awaitHook(ev, 10*time.Second, func(p *string) hookAnswer {
			*p = project
			var xs []int
			_ = xs[len(*p)] // a runtime panic: index out of range
			return hookAnswer{}
		})
		assert.Equal(t, exitOK, a.code, c.host)
		out := string(a.out)
		assert.Contains(t, out, c.want, c.host)
		assert.Contains(t, out, "internal error", c.host)
		assert.NotContains(t, out, "goroutine", c.host)
		assert.NotContains(t, out, "out of range", c.host)
		assert.Contains(t, a.msg, "the stack is in "+filepath.Join(project, ".chartgate", "hook-errors.log"), c.host)
	}
	log, err := os.ReadFile(filepath.Join(project, ".chartgate", "hook-errors.log"))
	require.NoError(t, err)
	assert.Equal(t, len(cases), strings.Count(string(log), "panic: runtime error: index out of range"))
	assert.Contains(t, string(log), "goroutine ")

	ev, err := hook.Parse(hook.ClaudeCode, []byte(fixture(t, "claude-code", "post-tool-use-write.json", project, "s")), "")
	require.NoError(t, err)
	a := awaitHook(ev, 10*time.Second, func(p *string) hookAnswer { *p = project; panic("boom") })
	assert.Equal(t, exitFail, a.code)
	assert.Empty(t, a.out)
	assert.Contains(t, a.msg, "chartgate hook: internal error: boom")
}

// TestHookDeadlineDenies: an event not decided within the hook's deadline
// is answered as one that could not be decided, at the deadline.
func TestHookDeadlineDenies(t *testing.T) {
	project := hookProject(t)
	ev, err := hook.Parse(hook.ClaudeCode, []byte(fixture(t, "claude-code", "pre-tool-use-write.json", project, "s")), "")
	require.NoError(t, err)
	stuck := make(chan struct{})
	defer close(stuck)
	start := time.Now()
	a := awaitHook(ev, 100*time.Millisecond, func(*string) hookAnswer { <-stuck; return hookAnswer{} })
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Equal(t, exitOK, a.code)
	assert.Contains(t, string(a.out), `"permissionDecision":"deny"`)
	assert.Contains(t, string(a.out), "the hook did not decide within its deadline of 100ms")
}

// TestHookBinaryDeadlineOnLockedStore: the real hook process, its store
// locked by another connection for longer than its deadline, refuses the
// tool at the deadline (a Read, which the workflow's state allows).
func TestHookBinaryDeadlineOnLockedStore(t *testing.T) {
	bin := chartgateBinary(t)
	project := hookProject(t)
	// The store exists: a first event creates it.
	r := runHook(t, bin, project, fixture(t, "claude-code", "session-start.json", project, "s1"), nil, "claude-code")
	require.Equal(t, 0, r.code, r.errOut)

	holdStore(t, filepath.Join(project, ".chartgate", "state.db"))

	start := time.Now()
	// A session the store has no record of: the hook must write one.
	r = runHook(t, bin, project, fixture(t, "claude-code", "pre-tool-use-read.json", project, "s2"), nil, "claude-code", "--deadline", "1s")
	took := time.Since(start)
	assert.Equal(t, 0, r.code, r.errOut)
	assert.Contains(t, r.out, `"permissionDecision":"deny"`)
	assert.Contains(t, r.out, "did not decide within its deadline of 1s")
	assert.Less(t, took, 4*time.Second)
}

// holdStore holds the SQLite file store with an exclusive transaction,
// so that every other connection waits on it, until the test ends.
func holdStore(t *testing.T, store string) {
	t.Helper()
	db, err := sql.Open("sqlite", store)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	conn, err := db.Conn(context.Background())
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	_, err = conn.ExecContext(context.Background(), "BEGIN EXCLUSIVE")
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = conn.ExecContext(context.Background(), "ROLLBACK") })
}
