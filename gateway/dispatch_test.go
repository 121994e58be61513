package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/gateway"
	"github.com/chartgate/chartgate/internal/stdio"
	"github.com/chartgate/chartgate/mcpbind"
)

// connectDispatch connects a client to the gateway's server over a pair
// of OS pipes with a Dispatch on the server's side, as chartgate serve
// runs it with a workflow. It returns the number of tools/call requests
// of its session that go-sdk's server decoded and dispatched (not taken
// by Dispatch).
func connectDispatch(t testing.TB, g *gateway.Gateway, copts *mcp.ClientOptions) (*mcp.ClientSession, *atomic.Int64) {
	t.Helper()
	d := g.Dispatch()
	viaSDK := countCalls(g, "dispatch-client") // added after Dispatch: it sees only what go-sdk dispatches
	cs := pipeSession(t, d.Run, &stdio.Transport{Bypass: d.Bypass}, "dispatch-client", copts)
	return cs, viaSDK
}

// resultJSON is a call's result as the client decoded it, as JSON.
func resultJSON(t *testing.T, cs *mcp.ClientSession, name string, args any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err, "calling %s", name)
	data, err := json.Marshal(res)
	require.NoError(t, err)
	return string(data)
}

// echoMovesMachine is a workflow in which echo moves a → b, where only
// fail is allowed and BACK goes back.
const echoMovesMachine = `{"id": "w", "initial": "a", "states": {
	"a": {"on": {"ECHOED": "b"}, "meta": {"mcp": {"tools": ["echo", "fail"], "events": {"echo": "ECHOED"}}}},
	"b": {"on": {"BACK": "a"}, "meta": {"mcp": {"tools": ["fail"]}}}}}`

// toolsChanged returns client options whose tools/list_changed handler
// signals on the channel returned.
func toolsChanged() (*mcp.ClientOptions, <-chan struct{}) {
	changed := make(chan struct{}, 10)
	return &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}}, changed
}

// assertAnswersAsDirect makes the same calls on cs and on direct (a
// session through go-sdk's server), each with a workflow of its own on
// echoMovesMachine, and asserts the same answers: the gate moves the
// workflow, refuses in b with the refusal (code, state, available tools)
// the client reads, tells the client its tools changed; workflow_status,
// workflow_transition and an unknown tool answer the same way too. None
// of cs's calls may reach go-sdk's dispatch (viaSDK).
func assertAnswersAsDirect(t *testing.T, cs, direct *mcp.ClientSession, changed <-chan struct{}, viaSDK *atomic.Int64) {
	t.Helper()
	for i, s := range []struct {
		tool string
		args any
	}{
		{"fail", nil},
		{"echo", map[string]any{"text": "héllo <&>"}}, // moves a → b
		{"echo", map[string]any{"text": "again"}},     // refused in b
		{"workflow_status", nil},
		{"workflow_transition", map[string]any{"event": "NOPE"}},
		{"workflow_transition", map[string]any{"event": "BACK"}},
		{"echo", map[string]any{"text": "back"}},
	} {
		want := resultJSON(t, direct, s.tool, s.args)
		got := resultJSON(t, cs, s.tool, s.args)
		assert.JSONEq(t, want, got, "step %d: %s", i, s.tool)
	}
	assert.Zero(t, viaSDK.Load(), "every call was taken")

	res := call(t, cs, "echo", map[string]any{"text": "x"}) // in b again: refused
	ref, ok := mcpbind.RefusalOf(res)
	require.True(t, ok, text(res))
	assert.Equal(t, mcpbind.CodeForbidden, ref.Code)
	assert.Equal(t, "b", ref.State)
	assert.Contains(t, ref.Available, "fail")
	assert.NotContains(t, ref.Available, "echo")
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/tools/list_changed after the workflow moved")
	}
	assert.NotContains(t, toolNames(t, cs), "echo", "b lists no echo")

	// An unknown tool gets go-sdk's error, as through its server.
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "unknown_tool"})
	_, werr := direct.CallTool(context.Background(), &mcp.CallToolParams{Name: "unknown_tool"})
	require.Error(t, err)
	assert.Equal(t, werr.Error(), err.Error())
	assert.Zero(t, viaSDK.Load(), "the unknown tool's call was taken too")
}

// TestDispatchAnswersAsGoSDK: calls taken by Dispatch answer as the
// same calls through go-sdk's server (assertAnswersAsDirect).
func TestDispatchAnswersAsGoSDK(t *testing.T) {
	g := newGateway(t, nil, upstreamCommand(t, "up", "full", ""))
	attachGate(t, g, echoMovesMachine)
	copts, changed := toolsChanged()
	cs, viaSDK := connectDispatch(t, g, copts)
	assertAnswersAsDirect(t, cs, connect(t, g, nil, "2025-11-25"), changed, viaSDK)
}

// onceMachine is a workflow in which echo moves a → b, where nothing is
// allowed.
const onceMachine = `{"id": "w", "initial": "a", "states": {
	"a": {"on": {"ECHOED": "b"}, "meta": {"mcp": {"tools": ["echo"], "events": {"echo": "ECHOED"}}}},
	"b": {"meta": {"mcp": {"tools": []}}}}}`

// assertOnceUnderConcurrency sends calls at once on cs (on onceMachine),
// each of which may move the workflow out of the only state that allows
// it, and asserts it moved once: one runs, the others are refused. None
// may reach go-sdk's dispatch (viaSDK).
func assertOnceUnderConcurrency(t *testing.T, cs *mcp.ClientSession, viaSDK *atomic.Int64) {
	t.Helper()
	const n = 8
	var ran, refused atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			res := call(t, cs, "echo", map[string]any{"text": "x"})
			if _, ok := mcpbind.RefusalOf(res); ok {
				refused.Add(1)
			} else if !res.IsError {
				ran.Add(1)
			}
		})
	}
	wg.Wait()
	assert.EqualValues(t, 1, ran.Load())
	assert.EqualValues(t, n-1, refused.Load())
	assert.Contains(t, text(call(t, cs, "workflow_status", nil)), `"b"`)
	assert.Zero(t, viaSDK.Load())
}

// TestDispatchOnceUnderConcurrency: calls sent at once through Dispatch
// move the workflow once (assertOnceUnderConcurrency).
func TestDispatchOnceUnderConcurrency(t *testing.T) {
	g := newGateway(t, nil, upstreamCommand(t, "up", "full", ""))
	attachGate(t, g, onceMachine)
	cs, viaSDK := connectDispatch(t, g, nil)
	assertOnceUnderConcurrency(t, cs, viaSDK)
}

// TestDispatchProgressCancellationTimeout: a call the client cancels is
// cancelled upstream and sends no event; a call that times out is
// answered so and sends no event; a call with a progress token gets its
// progress; one with a _meta key of SEP-2575 goes through go-sdk.
func TestDispatchProgressCancellationTimeout(t *testing.T) {
	marks := t.TempDir()
	up := upstreamCommand(t, "up", "full", marks)
	up.CallTimeout = 2 * time.Second
	g := newGateway(t, nil, up)
	attachGate(t, g, `{"id": "w", "initial": "a", "states": {
		"a": {"on": {"SLOW": "slowed", "ECHO": "echoed"}, "meta": {"mcp": {"tools": ["slow", "echo"], "events": {"slow": "SLOW", "echo": "ECHO"}}}},
		"slowed": {}, "echoed": {}}}`)
	var progress atomic.Int64
	cs, viaSDK := connectDispatch(t, g, &mcp.ClientOptions{ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
		progress.Add(1)
	}})

	// Cancelled by the client while it holds the workflow's lease.
	cancelHanging(t, cs, marks)
	assert.Contains(t, text(call(t, cs, "workflow_status", nil)), `"a"`, "the cancelled call sent no event")

	// Timed out: answered, cancelled upstream, no event.
	res := call(t, cs, "slow", map[string]any{"steps": 0, "stepMillis": 0, "hang": true})
	require.True(t, res.IsError)
	assert.Contains(t, text(res), `did not answer the call of tool "slow" within 2s`)
	eventually(t, "the upstream sees the timeout's cancellation", func() bool {
		data, err := os.ReadFile(filepath.Join(marks, "cancelled"))
		return err == nil && string(data) == "hang"
	})
	assert.Contains(t, text(call(t, cs, "workflow_status", nil)), `"a"`, "the timed-out call sent no event")
	assert.Zero(t, viaSDK.Load())

	// With a progress token (and a host's own _meta key): taken too, and
	// the progress reaches the client with its token.
	params := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"steps": 2, "stepMillis": 1}, Meta: mcp.Meta{"host/id": "x"}}
	params.SetProgressToken("tok")
	res, err := cs.CallTool(context.Background(), params)
	require.NoError(t, err)
	assert.Equal(t, "2 steps done", text(res))
	eventually(t, "the progress reached the client", func() bool { return progress.Load() == 2 })
	assert.Contains(t, text(call(t, cs, "workflow_status", nil)), `"slowed"`)
	assert.Zero(t, viaSDK.Load())

	assertSEPMetaViaSDK(t, cs, viaSDK)
}

// assertSEPMetaViaSDK calls pid on cs with a _meta key of SEP-2575, which
// is go-sdk's to read, and asserts the call went through go-sdk's
// dispatch, the first of cs's to do so.
func assertSEPMetaViaSDK(t *testing.T, cs *mcp.ClientSession, viaSDK *atomic.Int64) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "pid", Meta: mcp.Meta{"io.modelcontextprotocol/logLevel": "debug"}})
	require.NoError(t, err)
	assert.False(t, res.IsError, text(res))
	assert.EqualValues(t, 1, viaSDK.Load())
}

// TestDispatchNoGate: without middleware, Dispatch serves the upstream's
// calls with their results unchanged.
func TestDispatchNoGate(t *testing.T) {
	g := newGateway(t, &gateway.Options{}, upstreamCommand(t, "up", "full", ""))
	cs, viaSDK := connectDispatch(t, g, nil)
	assert.JSONEq(t, `{"content":[{"type":"text","text":"héllo"}],"structuredContent":{"text":"héllo","server":"up"},"_meta":{"upstream/meta":null}}`,
		resultJSON(t, cs, "echo", map[string]any{"text": "héllo"}))
	assert.JSONEq(t, `{"content":[{"type":"text","text":"it failed on purpose"}],"isError":true,"_meta":{"why":"purpose"}}`,
		resultJSON(t, cs, "fail", nil))
	assert.Zero(t, viaSDK.Load())
}

// TestDispatchWorkers: while a call hangs, the session's other calls,
// made at once, are answered; once the session is over, no goroutine that
// ran its calls is left.
func TestDispatchWorkers(t *testing.T) {
	marks := t.TempDir()
	g := newGateway(t, nil, upstreamCommand(t, "up", "full", marks))
	t.Run("session", func(t *testing.T) {
		cs, viaSDK := connectDispatch(t, g, nil)
		ctx, cancel := context.WithCancel(context.Background())
		hung := make(chan error, 1)
		go func() {
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"steps": 0, "stepMillis": 0, "hang": true}})
			hung <- err
		}()
		for range 3 {
			var wg sync.WaitGroup
			for i := range 8 {
				wg.Go(func() {
					msg := fmt.Sprint("call ", i)
					assert.Equal(t, msg, text(call(t, cs, "echo", map[string]any{"text": msg})))
				})
			}
			wg.Wait()
		}
		select {
		case err := <-hung:
			t.Fatalf("the hanging call ended: %v", err)
		default:
		}
		cancel()
		require.ErrorIs(t, <-hung, context.Canceled)
		assert.Zero(t, viaSDK.Load())
	})
	eventually(t, "the session's workers end", func() bool {
		buf := make([]byte, 1<<20)
		return !strings.Contains(string(buf[:runtime.Stack(buf, true)]), "gateway.(*Dispatch).worker")
	})
}
