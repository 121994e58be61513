package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/hook"
	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/mcpbind/sqlitestore"
	"github.com/chartgate/chartgate/workflow"
)

// touchWorkflow takes every interrupt of a .env file as a transition of
// its own: the file's name is merged into the context, so each interrupt
// changes the state and has an entry in the run history.
const touchWorkflow = `{
  "id": "touch", "initial": "work", "context": {},
  "meta": {"chartgate": {"interrupts": {"touch": {"file_pattern": "**/*.env"}}}},
  "states": {
    "work": {
      "on": {"chartgate.interrupt.touch": {"actions": "statewright.merge"}},
      "meta": {"mcp": {"tools": ["*"]}}
    }
  }
}`

// hookRun is one run of the chartgate binary's hook command.
type hookRun struct {
	out, errOut string
	code        int
}

// runHook runs `chartgate hook ARGS` in dir, with the test's environment
// (without the hosts' variables) and env.
func runHook(t testing.TB, bin, dir, stdin string, env []string, args ...string) hookRun {
	t.Helper()
	return runArgv(t, append([]string{bin, "hook"}, args...), dir, stdin, env)
}

// runArgv runs argv in dir with stdin and env (added to the test's
// environment without the hosts' variables).
func runArgv(t testing.TB, argv []string, dir, stdin string, env []string) hookRun {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(hostlessEnv(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Errorf("running %s: %v", argv[0], err)
	}
	return hookRun{out.String(), errOut.String(), code}
}

// postWrite is Claude Code's PostToolUse of a Write of file.
func postWrite(t testing.TB, project, session, file string) string {
	t.Helper()
	in := map[string]any{
		"session_id": session, "cwd": project, "hook_event_name": "PostToolUse", "permission_mode": "default",
		"tool_name": "Write", "tool_input": map[string]any{"file_path": filepath.Join(project, file), "content": "X=1\n"},
		"tool_response": map[string]any{"filePath": filepath.Join(project, file), "success": true}, "tool_use_id": "toolu_" + file,
	}
	b, err := json.Marshal(in)
	require.NoError(t, err)
	return string(b)
}

// sessionHistory reads a session's workflow from the project's store, as
// the hooks and the gateway do.
func sessionHistory(t testing.TB, project, session string) *mcpbind.Workflow {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(project, ".chartgate", "workflow.json"))
	require.NoError(t, err)
	w, err := workflow.Load(data, nil)
	require.NoError(t, err)
	store, err := sqlitestore.Open(filepath.Join(project, ".chartgate", "state.db"), nil)
	require.NoError(t, err)
	defer store.Close()
	g, err := mcpbind.New(w.Machine.Engine(), agreedGateOptions(projectOf(w, data, store), nil, false, defaultLeaseTTL))
	require.NoError(t, err)
	wf, err := g.WorkflowOf(context.Background(), mcpbind.Ref{Name: session})
	require.NoError(t, err)
	return wf
}

// TestHookConcurrentInterrupts runs 60 `chartgate hook claude-code`
// processes at once, each the PostToolUse of a Write of its own .env file
// in one agent session, on one SQLite store: each fires an interrupt, and
// they wait for one another's hold on the workflow. No process may fail
// (they once panicked on the wait, exit 2 with a Go stack trace shown to
// the agent), and every interrupt is applied exactly once (at once, or
// kept and applied by the session's next event).
func TestHookConcurrentInterrupts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 60 processes")
	}
	bin := chartgateBinary(t)
	project := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(project, ".chartgate"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(project, ".chartgate", "workflow.json"), []byte(touchWorkflow), 0o644))
	const session, hooks = "s-concurrent", 60
	// The session's first event creates the store.
	r := runHook(t, bin, project, fixture(t, "claude-code", "session-start.json", project, session), nil, "claude-code")
	require.Equal(t, 0, r.code, r.errOut)

	runs := make([]hookRun, hooks)
	var wg sync.WaitGroup
	for i := range hooks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runs[i] = runHook(t, bin, project, postWrite(t, project, session, fmt.Sprintf("f%02d.env", i)), nil, "claude-code")
		}()
	}
	wg.Wait()
	for i, r := range runs {
		assert.Equal(t, 0, r.code, "hook %d: %s", i, r.errOut)
		assert.NotContains(t, r.errOut, "panic", "hook %d", i)
		assert.NotContains(t, r.errOut, "goroutine ", "hook %d", i)
		// Applied now, or (on a machine too loaded for the workflow to be
		// free within the gate's wait) kept for the next event.
		applied := strings.Contains(r.out, fmt.Sprintf(`file f%02d.env triggered interrupt \"touch\"`, i))
		kept := strings.Contains(r.out, "could not take 1 event(s) this call sent")
		assert.True(t, applied || kept, "hook %d: %s", i, r.out)
	}
	// The session's next event applies whatever was kept.
	r = runHook(t, bin, project, fixture(t, "claude-code", "user-prompt-submit.json", project, session), nil, "claude-code")
	require.Equal(t, 0, r.code, r.errOut)

	wf := sessionHistory(t, project, session)
	applied := map[string]int{}
	for _, h := range wf.History {
		if h.Event.Type != workflow.InterruptEventPrefix+"touch" {
			continue
		}
		assert.Equal(t, "hook", h.By)
		in, _ := h.Event.Data["input"].(map[string]any)
		f, _ := in["file"].(string)
		applied[f]++
	}
	for i := range hooks {
		f := fmt.Sprintf("f%02d.env", i)
		assert.Equal(t, 1, applied[f], "interrupt of %s applied %d times", f, applied[f])
	}
	assert.Len(t, applied, hooks)
	store, err := sqlitestore.Open(filepath.Join(project, ".chartgate", "state.db"), nil)
	require.NoError(t, err)
	defer store.Close()
	sess, _, err := hook.LoadSession(context.Background(), store, session)
	require.NoError(t, err)
	assert.Empty(t, sess.Pending, "nothing left to apply")
}

// projectOf is the project of a loaded workflow file and an open store.
func projectOf(w *workflow.Workflow, data []byte, store mcpbind.Store) *project {
	return &project{workflow: w, version: workflowVersion(data), store: store}
}
