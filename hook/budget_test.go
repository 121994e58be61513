package hook

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// hostEvent reads a host's documented input (testdata/hosts), with the
// fixture's session and project, and the fields of set changed (dotted
// paths into the JSON, "toolArgs.path"), as the host would send it.
func (f *fixture) hostEvent(host Host, file string, set map[string]any) Event {
	f.t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "hosts", string(host), file))
	require.NoError(f.t, err)
	var m map[string]any
	require.NoError(f.t, json.Unmarshal(data, &m))
	for _, k := range []string{"session_id", "sessionId", "conversation_id"} {
		if _, ok := m[k]; ok {
			m[k] = f.session
		}
	}
	if _, ok := m["cwd"]; ok {
		m["cwd"] = f.project
	}
	if _, ok := m["workspace_roots"]; ok {
		m["workspace_roots"] = []any{f.project}
	}
	for path, v := range set {
		keys := strings.Split(path, ".")
		obj := m
		for _, k := range keys[:len(keys)-1] {
			next, ok := obj[k].(map[string]any)
			require.True(f.t, ok, "%s: no object %s", file, k)
			obj = next
		}
		obj[keys[len(keys)-1]] = v
	}
	data, err = json.Marshal(m)
	require.NoError(f.t, err)
	ev, err := Parse(host, data, "")
	require.NoError(f.t, err, "%s", data)
	return ev
}

// answer handles a host's event and returns what the hook prints.
func (f *fixture) answer(ev Event) string {
	f.t.Helper()
	return strings.TrimSpace(string(Encode(ev, f.handle(ev))))
}

// claudeRead is Claude Code's Read of a file of the project whose content
// is n bytes: its PreToolUse answer, then its PostToolUse answer.
func (f *fixture) claudeRead(file string, n int) (pre, post string) {
	f.t.Helper()
	in := map[string]any{"tool_input": map[string]any{"file_path": filepath.Join(f.project, file)}}
	pre = f.answer(f.hostEvent(ClaudeCode, "pre-tool-use-read.json", in))
	in["tool_response.file.content"] = strings.Repeat("x", n)
	in["tool_response.file.filePath"] = filepath.Join(f.project, file)
	post = f.answer(f.hostEvent(ClaudeCode, "post-tool-use-read.json", in))
	return pre, post
}

// reads returns what the session's record holds of the current state's
// reads.
func (f *fixture) reads() StateReads {
	f.t.Helper()
	s, _, err := LoadSession(context.Background(), f.store, f.session)
	require.NoError(f.t, err)
	require.NotNil(f.t, s)
	if s.Reads == nil {
		return StateReads{}
	}
	return *s.Reads
}

const budgetWorkflow = `{
  "id": "research", "initial": "explore",
  "states": {
    "explore": {"allowed_tools": ["Read", "Grep", "Bash", "database_query"], "context_budget_bytes": 1000,
                "on": {"FOUND": "write"}},
    "write":   {"allowed_tools": ["Read", "Edit", "Bash"], "context_budget_bytes": 1000,
                "on": {"MORE": "explore", "DONE": "done"}},
    "done":    {"type": "final"}
  }
}`

// TestContextBudgetClaudeCode: the bytes of Read outputs count against
// the state's context_budget_bytes; the agent is warned from 90% (not
// before), told when it is exceeded, never refused, and the count starts
// again when the state is entered again.
func TestContextBudgetClaudeCode(t *testing.T) {
	f := newFixture(t, budgetWorkflow, nil)
	_, post := f.claudeRead("a.go", 800)
	assert.Empty(t, post, "80%: no warning")
	_, post = f.claudeRead("b.go", 99)
	assert.Empty(t, post, "89.9%: no warning")
	assert.Equal(t, int64(899), f.reads().Bytes)

	_, post = f.claudeRead("c.go", 1)
	var out struct {
		HookSpecificOutput struct{ HookEventName, AdditionalContext string }
	}
	require.NoError(t, json.Unmarshal([]byte(post), &out), post)
	assert.Equal(t, "PostToolUse", out.HookSpecificOutput.HookEventName)
	assert.Equal(t, "chartgate: 90% of the context budget of state explore used: 900 of 1000 bytes of tool output read. Read only what you still need, then move the workflow on with workflow_transition.\n"+
		"To move on, call workflow_transition with {\"event\": EVENT, \"data\": {\"rationale\": \"why\"}}: FOUND → write.", out.HookSpecificOutput.AdditionalContext)

	_, post = f.claudeRead("d.go", 150)
	assert.Contains(t, post, "the context budget of state explore is exceeded: 1050 bytes of tool output read, more than its 1000 bytes (105%). Read nothing more here")
	pre, _ := f.claudeRead("e.go", 10)
	assert.NotContains(t, pre, "deny", "past the budget a read still runs, as in Statewright")
	assert.Contains(t, pre, "the context budget of state explore is exceeded: 1050 bytes of tool output read", "warned before the read too, as Statewright's gateway warns before each call")
	assert.Contains(t, f.handle(f.ev(KindPrompt, "", "")).Context, "Context budget: 1060 of 1000 bytes of tool output read in explore.")

	// Shell output counts too (Bash's stdout and stderr).
	f.send("FOUND", nil)
	assert.Equal(t, "write", f.state())
	bash := f.hostEvent(ClaudeCode, "post-tool-use-write.json", map[string]any{
		"tool_name": "Bash", "tool_input": map[string]any{"command": "go test ./..."},
		"tool_response": map[string]any{"stdout": strings.Repeat("o", 500), "stderr": strings.Repeat("e", 300), "interrupted": false, "isImage": false},
	})
	assert.Empty(t, f.answer(bash), "a new state: 800 of 1000")
	assert.Equal(t, int64(800), f.reads().Bytes)
	// An edit's response (the file it wrote) is not read.
	edit := f.hostEvent(ClaudeCode, "post-tool-use-write.json", map[string]any{
		"tool_input.file_path": filepath.Join(f.project, "a.go"), "tool_response.originalFile": strings.Repeat("z", 5000)})
	assert.Empty(t, f.answer(edit))
	assert.Equal(t, int64(800), f.reads().Bytes)
	_, post = f.claudeRead("a.go", 100)
	assert.Contains(t, post, "90% of the context budget of state write used: 900 of 1000")

	// Entering explore again starts its count again.
	f.send("MORE", nil)
	_, post = f.claudeRead("a.go", 850)
	assert.Empty(t, post)
	assert.Equal(t, int64(850), f.reads().Bytes)
}

// TestReadDedupClaudeCode: the third read of one file in one state entry
// is warned about before it runs (Claude Code shows PreToolUse context
// with a call it lets run), not the second; other files, a new state
// entry and another session count apart.
func TestReadDedupClaudeCode(t *testing.T) {
	f := newFixture(t, budgetWorkflow, nil)
	for i := range 2 {
		pre, post := f.claudeRead("src/main.go", 10)
		assert.Empty(t, pre, "read %d", i+1)
		assert.Empty(t, post, "read %d", i+1)
	}
	pre, post := f.claudeRead("src/other.go", 10)
	assert.Empty(t, pre+post, "another file")
	pre, post = f.claudeRead("src/main.go", 10)
	assert.Equal(t, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"chartgate: src/main.go is read for the 3rd time in state explore. Its content is already in your context: use it rather than reading the file again."}}`, pre)
	assert.Empty(t, post, "warned once, before the read")
	pre, _ = f.claudeRead("src/main.go", 10)
	assert.Contains(t, pre, "read for the 4th time")
	assert.Equal(t, map[string]int{"src/main.go": 4, "src/other.go": 1}, f.reads().Files)

	// A relative path names the same file.
	pre = f.answer(f.hostEvent(ClaudeCode, "pre-tool-use-read.json", map[string]any{"tool_input": map[string]any{"file_path": "src/main.go"}}))
	assert.Contains(t, pre, "src/main.go is read for the 5th time")

	// Another session of the project counts its own reads.
	first := f.session
	f.session = "session-2"
	for range 2 {
		pre, _ := f.claudeRead("src/main.go", 10)
		assert.Empty(t, pre)
	}
	f.session = first

	// A failed read reads nothing.
	fail := f.hostEvent(ClaudeCode, "post-tool-use-failure.json", map[string]any{"tool_name": "Read", "tool_input": map[string]any{"file_path": "src/new.go"}})
	assert.Empty(t, f.answer(fail))
	assert.NotContains(t, f.reads().Files, "src/new.go")

	// A new state entry counts again.
	f.send("FOUND", nil)
	pre, _ = f.claudeRead("src/main.go", 10)
	assert.Empty(t, pre)
}

// TestBudgetAndDedupOtherHosts: the budget and the read-dedup warning on
// each other host's documented payloads, and what of them reaches the
// agent.
func TestBudgetAndDedupOtherHosts(t *testing.T) {
	t.Run("gemini", func(t *testing.T) {
		// BeforeTool carries no context: the third read is warned about
		// after it (AfterTool's additionalContext).
		f := newFixture(t, budgetWorkflow, nil)
		read := func(n int) string {
			return f.answer(f.hostEvent(Gemini, "after-tool-read.json", map[string]any{
				"tool_input": map[string]any{"file_path": filepath.Join(f.project, "main.go")}, "tool_response.llmContent": strings.Repeat("g", n)}))
		}
		before := f.answer(f.hostEvent(Gemini, "before-tool-shell.json", map[string]any{"tool_name": "read_file", "tool_input": map[string]any{"file_path": "main.go"}}))
		assert.Equal(t, "{}", before)
		assert.Equal(t, "{}", read(100))
		assert.Equal(t, "{}", read(100), "second read")
		assert.Equal(t, `{"hookSpecificOutput":{"hookEventName":"AfterTool","additionalContext":"chartgate: main.go is read for the 3rd time in state explore. Its content is already in your context: use it rather than reading the file again."}}`, read(100))
		out := read(600)
		assert.Contains(t, out, "90% of the context budget of state explore used: 900 of 1000 bytes")
		assert.Contains(t, out, "main.go is read for the 4th time")
	})
	t.Run("codex", func(t *testing.T) {
		// Codex's hooks see Bash and MCP tools, not reads: its shell
		// output counts.
		f := newFixture(t, budgetWorkflow, nil)
		shell := func(stdout string) string {
			return f.answer(f.hostEvent(Codex, "post-tool-use-bash.json", map[string]any{"tool_response": map[string]any{"stdout": stdout, "exit_code": 0}}))
		}
		assert.Empty(t, shell(strings.Repeat("c", 899)))
		out := shell("c")
		assert.Contains(t, out, `"hookEventName":"PostToolUse","additionalContext":"chartgate: 90% of the context budget of state explore used: 900 of 1000 bytes`)
	})
	t.Run("cursor", func(t *testing.T) {
		// beforeReadFile gives the file's content before the read: the
		// read and its bytes count there (Cursor has no after-read
		// event); the postToolUse of the read (installed for Read) gives
		// the notices, which a permission answer cannot carry. MCP
		// results count after the call.
		f := newFixture(t, budgetWorkflow, nil)
		read := func(n int) (before, after string) {
			file := filepath.Join(f.project, "main.go")
			before = f.answer(f.hostEvent(Cursor, "before-read-file.json", map[string]any{"file_path": file, "content": strings.Repeat("r", n)}))
			after = f.answer(f.hostEvent(Cursor, "post-tool-use-read.json", map[string]any{"tool_input": map[string]any{"file_path": file}, "tool_output": strings.Repeat("r", n)}))
			return before, after
		}
		for i := range 2 {
			before, after := read(300)
			assert.Equal(t, `{"permission":"allow"}`, before, "read %d", i+1)
			assert.Equal(t, `{}`, after, "read %d", i+1)
		}
		before, after := read(300)
		assert.Equal(t, `{"permission":"allow"}`, before, "a permission answer carries no context")
		assert.Contains(t, after, `{"additional_context":"chartgate: 90% of the context budget of state explore used: 900 of 1000 bytes`)
		assert.Contains(t, after, `main.go is read for the 3rd time in state explore.`)
		assert.Equal(t, StateReads{Since: f.reads().Since, Bytes: 900, Files: map[string]int{"main.go": 3}}, f.reads(), "counted once, before the read")
		mcp := f.hostEvent(Cursor, "after-mcp-execution.json", map[string]any{"result_json": `{"content":[{"type":"text","text":"` + strings.Repeat("m", 50) + `"}]}`})
		out := f.answer(mcp)
		assert.Contains(t, out, `"additional_context":"chartgate: 95% of the context budget of state explore used: 950 of 1000 bytes`)
	})
	t.Run("copilot", func(t *testing.T) {
		// Copilot CLI reads postToolUse's additionalContext: the third
		// read's notice reaches its agent.
		f := newFixture(t, budgetWorkflow, nil)
		var out []byte
		for range 3 {
			ev := f.hostEvent(Copilot, "post-tool-use-view.json", map[string]any{"toolArgs": map[string]any{"path": filepath.Join(f.project, "src/app.ts")}, "toolResult.textResultForLlm": strings.Repeat("v", 320)})
			out = Encode(ev, f.handle(ev))
		}
		assert.Contains(t, gjson.GetBytes(out, "additionalContext").String(), "src/app.ts is read for the 3rd time")
		assert.Equal(t, int64(960), f.reads().Bytes)
	})
}

// TestTightestBudgetXState: in parallel states the tightest
// context_budget_bytes applies; an XState machine sets it in
// meta.chartgate.
func TestTightestBudgetXState(t *testing.T) {
	f := newFixture(t, `{
	  "id": "m", "type": "parallel",
	  "states": {
	    "docs": {"initial": "reading", "states": {"reading": {"meta": {"chartgate": {"context_budget_bytes": 1000}, "mcp": {"tools": ["Read"]}}}}},
	    "code": {"initial": "reading", "states": {"reading": {"meta": {"chartgate": {"context_budget_bytes": 200}, "mcp": {"tools": ["Read"]}}}}}
	  }
	}`, nil)
	_, post := f.claudeRead("a.go", 179)
	assert.Empty(t, post)
	_, post = f.claudeRead("b.go", 1)
	assert.Contains(t, post, "90% of the context budget of state")
	assert.Contains(t, post, "180 of 200 bytes")
}

// TestReadsCountedConcurrently: the post tool hooks of parallel reads of
// one session run at once; no byte or read is lost.
func TestReadsCountedConcurrently(t *testing.T) {
	f := newFixture(t, budgetWorkflow, nil)
	evs := make([]Event, 16)
	for i := range evs {
		evs[i] = f.hostEvent(ClaudeCode, "post-tool-use-read.json", map[string]any{
			"tool_input": map[string]any{"file_path": fmt.Sprintf("f%d.go", i%4)}, "tool_response.file.content": strings.Repeat("x", 10)})
	}
	var wg sync.WaitGroup
	for _, ev := range evs {
		wg.Go(func() {
			_, err := f.h.Handle(context.Background(), ev)
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	r := f.reads()
	assert.Equal(t, int64(160), r.Bytes)
	assert.Equal(t, map[string]int{"f0.go": 4, "f1.go": 4, "f2.go": 4, "f3.go": 4}, r.Files)
}

// TestOutputBytes: what counts of an output, host by host; a string of
// JSON nested too deep is counted as text, not walked.
func TestOutputBytes(t *testing.T) {
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	cases := []struct {
		host Host
		in   string
		want int64
	}{
		{ClaudeCode, `{"hook_event_name":"PostToolUse","session_id":"s","tool_name":"mcp__db__query","tool_input":{},"tool_response":[{"type":"text","text":"abc"},{"type":"text","text":"de"}]}`, 5},
		{ClaudeCode, `{"hook_event_name":"PostToolUse","session_id":"s","tool_name":"Bash","tool_input":{"command":"ls"},"tool_response":"plain"}`, 5},
		{ClaudeCode, `{"hook_event_name":"PostToolUse","session_id":"s","tool_name":"Edit","tool_input":{"file_path":"a"},"tool_response":{"originalFile":"long text","newString":"x"}}`, 0},
		{ClaudeCode, `{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Read","tool_input":{"file_path":"a"}}`, 0},
		{Gemini, `{"hook_event_name":"AfterTool","session_id":"s","tool_name":"read_many_files","tool_input":{},"tool_response":{"llmContent":[{"text":"ab"},{"text":"cd"}],"returnDisplay":"not the model's"}}`, 4},
		{Cursor, `{"hook_event_name":"afterShellExecution","conversation_id":"c","command":"ls","output":"a\nb\n"}`, 4},
		{Cursor, `{"hook_event_name":"postToolUse","conversation_id":"c","tool_name":"Shell","tool_input":{},"tool_output":"{\"output\":\"hi\",\"exitCode\":0}"}`, 2},
		{Cursor, `{"hook_event_name":"postToolUse","conversation_id":"c","tool_name":"Shell","tool_input":{},"tool_output":"not json"}`, 8},
		{Cursor, `{"hook_event_name":"postToolUse","conversation_id":"c","tool_name":"Shell","tool_input":{},"tool_output":"` + deep + `"}`, int64(len(deep))},
		{Copilot, `{"sessionId":"s","toolName":"bash","toolArgs":{},"error":"boom"}`, 4},
	}
	for _, c := range cases {
		ev, err := Parse(c.host, []byte(c.in), "")
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, ev.OutputBytes, "%.120s", c.in)
	}
}
