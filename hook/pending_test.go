package hook

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/mcpbind/sqlitestore"
	"github.com/chartgate/chartgate/workflow"
)

// alertWorkflow: a .env file written sends the workflow to alert, where
// only Read is allowed; build (an MCP tool of the gateway) moves work on.
const alertWorkflow = `{
  "id": "alert", "initial": "work",
  "meta": {"chartgate": {"interrupts": {"env": {"file_pattern": "**/*.env"}}}},
  "states": {
    "work": {"on": {"BUILT": "built", "chartgate.interrupt.env": "alert"}, "meta": {"mcp": {"tools": ["*"], "events": {"build": "BUILT"}}}},
    "built": {"on": {"chartgate.interrupt.env": "alert"}, "meta": {"mcp": {"tools": ["*"]}}},
    "alert": {"meta": {"mcp": {"tools": ["Read"]}}}
  }
}`

// pendingFixture is a hook handler over a SQLite store whose gate waits
// 100 ms for a held workflow, and the store's path.
func pendingFixture(t *testing.T, storeOpts *sqlitestore.Options) (*fixture, string) {
	t.Helper()
	w, err := workflow.Load([]byte(alertWorkflow), nil)
	require.NoError(t, err)
	project := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(project, ConfigDir), 0o755))
	path := filepath.Join(project, sqlitestore.DefaultPath)
	store, err := sqlitestore.Open(path, storeOpts)
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	gate, err := mcpbind.New(w.Machine.Engine(), &mcpbind.Options{Store: store, Logger: quiet(), BusyWait: 100 * time.Millisecond, HistoryLimit: 50})
	require.NoError(t, err)
	h, err := NewHandler(w, gate, store, project, &Options{Ancestry: func() []Proc { return nil }})
	require.NoError(t, err)
	return &fixture{t: t, h: h, gate: gate, store: store, wf: w, project: project, session: "session-1"}, path
}

// interrupts counts the interrupt's entries in the session's history.
func (f *fixture) interrupts() int {
	f.t.Helper()
	w, err := f.gate.WorkflowOf(context.Background(), mcpbind.Ref{Name: f.session})
	require.NoError(f.t, err)
	n := 0
	for _, h := range w.History {
		if h.Event.Type == workflow.InterruptEventPrefix+"env" {
			n++
		}
	}
	return n
}

// TestInterruptKeptWhileWorkflowHeld: a .env file written while a gateway
// call holds the session's workflow (longer than the gate waits) is not
// dropped: the interrupt is kept, the next Write is refused with the
// reason, and once the call is done the next event applies it first, so
// that the Write is refused by the interrupt's state.
func TestInterruptKeptWhileWorkflowHeld(t *testing.T) {
	f, _ := pendingFixture(t, nil)
	ctx := context.Background()
	f.handle(f.ev(KindSessionStart, "", ""))

	release := holdWorkflow(t, f)

	r := f.post("Write", `{"file_path": "config/prod.env", "content": "X=1"}`)
	assert.Contains(t, r.Context, "could not take 1 event(s) this call sent")
	assert.Equal(t, 0, f.interrupts())
	deny := f.pre("Write", `{"file_path": "main.go", "content": "x"}`)
	assert.Contains(t, deny, `this tool is refused until the workflow has taken what earlier tool calls sent`)
	assert.Contains(t, deny, `interrupt "env" (file config/prod.env)`)
	assert.Contains(t, deny, "busy")

	release()
	r = f.handle(f.ev(KindPreTool, "Write", `{"file_path": "main.go", "content": "x"}`))
	assert.Contains(t, r.Deny, `Tool "Write" is not available in the current workflow state ("alert")`)
	assert.Equal(t, "alert", f.state())
	assert.Equal(t, 1, f.interrupts(), "applied once")
	s, _, err := LoadSession(ctx, f.store, f.session)
	require.NoError(t, err)
	assert.Empty(t, s.Pending)
	// Applied once: later events do not apply it again.
	f.pre("Read", `{"file_path": "main.go"}`)
	assert.Equal(t, 1, f.interrupts())
}

// TestInterruptKeptWhileStoreLocked: a PostToolUse whose store stays
// locked (longer than its busy timeout) keeps the call in the session's
// pending file; pre tool events cannot be decided (refused) while it
// lasts; once the lock is gone, the next event replays the call first,
// and its interrupt refuses the Write.
func TestInterruptKeptWhileStoreLocked(t *testing.T) {
	f, path := pendingFixture(t, &sqlitestore.Options{BusyTimeout: 200 * time.Millisecond})
	ctx := context.Background()
	f.handle(f.ev(KindSessionStart, "", ""))

	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, "BEGIN EXCLUSIVE")
	require.NoError(t, err)

	f.session = "session-2" // a session the store has no record of: its first event must write
	r := f.post("Write", `{"file_path": "prod.env", "content": "X=1"}`)
	assert.Contains(t, r.Context, "this call could not be recorded in the workflow")
	assert.Contains(t, r.Context, "it is kept")
	_, err = os.Stat(f.h.pendingFile(f.session))
	require.NoError(t, err, "kept in the pending file")
	_, err = f.h.Handle(ctx, f.ev(KindPreTool, "Write", `{"file_path": "main.go", "content": "x"}`))
	assert.Error(t, err, "not decided while the store is locked: `chartgate hook` refuses it")

	_, err = conn.ExecContext(ctx, "ROLLBACK")
	require.NoError(t, err)
	r = f.handle(f.ev(KindPreTool, "Write", `{"file_path": "main.go", "content": "x"}`))
	assert.Contains(t, r.Deny, `("alert")`)
	assert.Equal(t, "alert", f.state())
	assert.Equal(t, 1, f.interrupts(), "applied once")
	_, err = os.Stat(f.h.pendingFile(f.session))
	assert.ErrorIs(t, err, os.ErrNotExist)
	matches, _ := filepath.Glob(f.h.pendingFile(f.session) + "*")
	assert.Empty(t, matches)
	f.pre("Read", `{"file_path": "main.go"}`)
	assert.Equal(t, 1, f.interrupts())
}

// holdWorkflow starts a call of the session's gateway (a go-sdk server
// with a gate on the fixture's store) that holds the session's workflow
// until release is called, which waits for the call to be recorded.
func holdWorkflow(t *testing.T, f *fixture) (release func()) {
	t.Helper()
	ctx := context.Background()
	gw, err := mcpbind.New(f.wf.Machine.Engine(), &mcpbind.Options{Store: f.store, Logger: quiet(), HistoryLimit: 50,
		SessionKey: func(*mcp.ServerSession) string { return f.session }})
	require.NoError(t, err)
	started, done := make(chan struct{}), make(chan struct{})
	srv := mcp.NewServer(&mcp.Implementation{Name: "gw", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "build", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			close(started)
			<-done
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "built"}}}, nil
		})
	gw.Attach(srv)
	ct, st := mcp.NewInMemoryTransports()
	_, err = srv.Connect(ctx, st, nil)
	require.NoError(t, err)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	built := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "build"})
		built <- err
	}()
	<-started
	var once sync.Once
	release = func() {
		once.Do(func() {
			close(done)
			require.NoError(t, <-built)
			_ = cs.Close()
		})
	}
	t.Cleanup(release)
	return release
}

// TestSendsGiveUpBeforeTheDeadline: with the gate willing to wait 30 s,
// an event whose context ends in 1.5 s gives up waiting for the held
// workflow at two thirds of it, and keeps the interrupt before the end.
func TestSendsGiveUpBeforeTheDeadline(t *testing.T) {
	f, _ := pendingFixture(t, nil)
	gate, err := mcpbind.New(f.wf.Machine.Engine(), &mcpbind.Options{Store: f.store, Logger: quiet(), BusyWait: 30 * time.Second})
	require.NoError(t, err)
	f.h, err = NewHandler(f.wf, gate, f.store, f.project, &Options{Ancestry: func() []Proc { return nil }})
	require.NoError(t, err)
	f.handle(f.ev(KindSessionStart, "", ""))
	holdWorkflow(t, f)
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	start := time.Now()
	r, err := f.h.Handle(ctx, f.ev(KindPostTool, "Write", `{"file_path": "a.env", "content": "X=1"}`))
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 1500*time.Millisecond)
	assert.Contains(t, r.Context, "could not take 1 event(s) this call sent")
	s, _, err := LoadSession(context.Background(), f.store, f.session)
	require.NoError(t, err)
	require.Len(t, s.Pending, 1)
	assert.Equal(t, "env", s.Pending[0].Interrupt)
}
