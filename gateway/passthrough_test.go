package gateway_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/gateway"
	"github.com/chartgate/chartgate/internal/stdio"
)

// connectStdio connects a client to the gateway's server over a pair of
// OS pipes, with the gateway's Passthrough on the server's side, as
// chartgate serve runs it without a workflow. It returns the number of
// tools/call requests go-sdk's server handled (not passed through).
func connectStdio(t testing.TB, g *gateway.Gateway) (*mcp.ClientSession, *atomic.Int64) {
	t.Helper()
	seen := countCalls(g, "test-client")
	cs := pipeSession(t, g.Server().Run, &stdio.Transport{Bypass: g.Passthrough()}, "test-client", nil)
	return cs, seen
}

// countCalls counts the tools/call requests that reach the handlers of
// the gateway's server after it, of the sessions of the client named
// client.
func countCalls(g *gateway.Gateway, client string) *atomic.Int64 {
	var n atomic.Int64
	g.Server().AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok && method == "tools/call" && ss.InitializeParams().ClientInfo.Name == client {
				n.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	return &n
}

// pipeSession serves a session with serve (the server's Run, or a
// Dispatch's) on st over a pair of OS pipes, as a host runs chartgate
// serve, and connects a client named client to it, over protocol
// 2025-11-25.
func pipeSession(t testing.TB, serve func(context.Context, mcp.Transport) error, st *stdio.Transport, client string, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	toServer, fromClient, err := os.Pipe()
	require.NoError(t, err)
	toClient, fromServer, err := os.Pipe()
	require.NoError(t, err)
	st.Reader, st.Writer = toServer, fromServer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = serve(ctx, st)
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: client, Version: "1"}, copts).Connect(context.Background(),
		&mcp.IOTransport{Reader: toClient, Writer: fromClient}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close(); cancel(); <-done })
	return cs
}

func TestPassthroughResultUnchanged(t *testing.T) {
	g := newGateway(t, nil, upstreamCommand(t, "up", "full", ""))
	cs, seen := connectStdio(t, g)

	res := call(t, cs, "echo", map[string]any{"text": "héllo"})
	got, err := json.Marshal(res)
	require.NoError(t, err)
	assert.JSONEq(t, `{"content":[{"type":"text","text":"héllo"}],"structuredContent":{"text":"héllo","server":"up"},"_meta":{"upstream/meta":null}}`, string(got))
	res = call(t, cs, "fail", nil)
	got, err = json.Marshal(res)
	require.NoError(t, err)
	assert.JSONEq(t, `{"content":[{"type":"text","text":"it failed on purpose"}],"isError":true,"_meta":{"why":"purpose"}}`, string(got))
	assert.Zero(t, seen.Load(), "the calls went past go-sdk's server")

	// A call with _meta (here a progress token) takes go-sdk's way, which
	// routes the progress.
	params := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"steps": 2, "stepMillis": 1}}
	params.SetProgressToken("tok")
	res, err = cs.CallTool(context.Background(), params)
	require.NoError(t, err)
	assert.Equal(t, "2 steps done", text(res))
	assert.EqualValues(t, 1, seen.Load())

	// So does a tool no upstream lists: the upstream's own error.
	_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "unknown_tool"})
	require.ErrorContains(t, err, `unknown tool "unknown_tool"`)
}

func TestPassthroughKeepsRefusals(t *testing.T) {
	g := newGateway(t, &gateway.Options{RefuseTools: func([]gateway.ToolInfo) map[string]string {
		return map[string]string{"echo": "echo is refused here"}
	}}, upstreamCommand(t, "up", "full", ""))
	cs, seen := connectStdio(t, g)
	res := call(t, cs, "echo", map[string]any{"text": "x"})
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "echo is refused here")
	assert.EqualValues(t, 1, seen.Load())
}

func TestPassthroughTimeoutAndCancellation(t *testing.T) {
	marks := t.TempDir()
	g := newGateway(t, &gateway.Options{CallTimeout: 300 * time.Millisecond}, upstreamCommand(t, "up", "full", marks))
	cs, seen := connectStdio(t, g)
	res := call(t, cs, "slow", map[string]any{"steps": 1, "stepMillis": 1, "hang": true})
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), `did not answer the call of tool "slow" within 300ms`)
	eventually(t, "the upstream sees the timeout's cancellation", func() bool {
		data, err := os.ReadFile(filepath.Join(marks, "cancelled"))
		return err == nil && string(data) == "hang"
	})
	require.NoError(t, os.Remove(filepath.Join(marks, "cancelled")))

	cancelHanging(t, cs, marks)
	assert.Zero(t, seen.Load())
}

// TestPassthroughPingsSilentUpstream: an upstream that answers a call
// only once it reads another line (a Go 1.26 server whose collection
// waits on its stdin read) is pinged while the call waits, and answers it
// within the call's timeout: through the passthrough and through Dispatch.
func TestPassthroughPingsSilentUpstream(t *testing.T) {
	g := newGateway(t, &gateway.Options{CallTimeout: 20 * time.Second}, upstreamCommand(t, "up", "held", ""))
	cs, _ := connectStdio(t, g)
	assert.Equal(t, "released", text(call(t, cs, "held", nil)))
	d, _ := connectDispatch(t, g, nil)
	assert.Equal(t, "released", text(call(t, d, "held", nil)))
}

func TestPassthroughUpstreamKilledMidCall(t *testing.T) {
	g := newGateway(t, &gateway.Options{MinBackoff: 10 * time.Millisecond}, upstreamCommand(t, "up", "full", ""))
	cs, _ := connectStdio(t, g)
	pid, err := strconv.Atoi(text(call(t, cs, "pid", nil)))
	require.NoError(t, err)
	done := make(chan *mcp.CallToolResult, 1)
	go func() { done <- call(t, cs, "slow", map[string]any{"steps": 1, "stepMillis": 1, "hang": true}) }()
	time.Sleep(200 * time.Millisecond)
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	var res *mcp.CallToolResult
	select {
	case res = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the call in flight did not end when its upstream died")
	}
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), `upstream "up"`)
	assert.Contains(t, text(res), "exited (signal: killed)")
	assert.Equal(t, "again", text(call(t, cs, "echo", map[string]any{"text": "again"})))
}

// cancelHanging calls the upstream's slow tool, which hangs, cancels the
// call from the client, and waits until the upstream sees it cancelled.
func cancelHanging(t *testing.T, cs *mcp.ClientSession, marks string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"steps": 0, "stepMillis": 0, "hang": true}})
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	eventually(t, "the upstream sees the client's cancellation", func() bool {
		data, err := os.ReadFile(filepath.Join(marks, "cancelled"))
		return err == nil && string(data) == "hang"
	})
	require.NoError(t, os.Remove(filepath.Join(marks, "cancelled")))
}
