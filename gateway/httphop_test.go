// This file tests tool calls to Streamable HTTP upstreams, which go
// without go-sdk's client: go-sdk's server and the reference
// server-everything from npm as upstreams, over loopback HTTP.

//lint:file-ignore SA1019 logging and sampling are deprecated from protocol 2026-07-28 on; the gateway passes them through for the versions that have them.

package gateway_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/gateway"
)

// httpUpstream serves the test upstream of mode over Streamable HTTP on
// loopback, through wrap if it is not nil, and returns its configuration.
func httpUpstream(t *testing.T, name, mode, marks string, opts *mcp.StreamableHTTPOptions, wrap func(http.Handler) http.Handler) *gateway.ServerConfig {
	t.Helper()
	s := newUpstreamServer(mode, name, marks)
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, opts)
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &gateway.ServerConfig{Name: name, Transport: gateway.TransportHTTP, URL: srv.URL}
}

// directHTTP connects a go-sdk client straight to an HTTP upstream.
func directHTTP(t *testing.T, s *gateway.ServerConfig, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, copts).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: s.URL}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestHTTPUpstreamCallResultUnchanged: over an upstream that answers in
// server-sent events (go-sdk's default) and one that answers in JSON, a
// call's result and the upstream's JSON-RPC errors come through as a
// client connected to the upstream gets them.
func TestHTTPUpstreamCallResultUnchanged(t *testing.T) {
	for _, c := range []struct {
		name string
		opts *mcp.StreamableHTTPOptions
	}{{"sse", nil}, {"json", &mcp.StreamableHTTPOptions{JSONResponse: true}}} {
		t.Run(c.name, func(t *testing.T) {
			up := httpUpstream(t, "up", "full", "", c.opts, nil)
			cs := connect(t, newGateway(t, nil, up), nil, "2025-11-25")
			ref := directHTTP(t, up, nil)
			ctx := context.Background()
			for _, p := range []*mcp.CallToolParams{
				{Name: "echo", Arguments: map[string]any{"text": "héllo \"quoted\"\n"}, Meta: mcp.Meta{"client/meta": "m1"}},
				{Name: "echo", Arguments: map[string]any{"text": strings.Repeat("long ", 20000)}},
				{Name: "fail"},
				{Name: "echo", Arguments: map[string]any{"text": 42}}, // the upstream's schema refuses it
				{Name: "unknown_tool"},
			} {
				got, gerr := cs.CallTool(ctx, p)
				want, werr := ref.CallTool(ctx, p)
				assert.Equal(t, jsonOf(t, want, werr), jsonOf(t, got, gerr), p.Name)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "héllo"}, Meta: mcp.Meta{"client/meta": "m1"}})
			require.NoError(t, err)
			assert.JSONEq(t, `{"content":[{"type":"text","text":"héllo"}],"structuredContent":{"text":"héllo","server":"up"},"_meta":{"upstream/meta":"m1"}}`, jsonOf(t, res, nil))
			_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "unknown_tool"})
			require.ErrorContains(t, err, `unknown tool "unknown_tool"`)
		})
	}
}

// TestHTTPUpstreamConcurrentCalls: calls of several sessions in flight at
// once on one HTTP upstream each get their own answer.
func TestHTTPUpstreamConcurrentCalls(t *testing.T) {
	g := newGateway(t, nil, httpUpstream(t, "up", "full", "", nil, nil))
	assertConcurrentCallsKeepAnswers(t, g, 4, 8)
}

// TestHTTPUpstreamProgressAndCancellation: the upstream's progress
// reaches the client, with the client's token, before the result; a call
// cancelled by the client, or whose timeout passes, is cancelled
// upstream.
func TestHTTPUpstreamProgressAndCancellation(t *testing.T) {
	marks := t.TempDir()
	g := newGateway(t, &gateway.Options{CallTimeout: 300 * time.Millisecond}, httpUpstream(t, "up", "full", marks, nil, nil))
	var progress progressLog
	wire := &wireOrder{}
	cs := connectVia(t, g, &mcp.ClientOptions{ProgressNotificationHandler: progress.record}, "2025-11-25", wire.wrap)
	wire.reset() // the answer to initialize

	assertSlowProgress(t, cs, &progress)
	assert.Equal(t, []string{"notifications/progress", "notifications/progress", "notifications/progress", "response"}, wire.read())

	// Cancelled by the client.
	cancelAfterOneStep(t, cs, &progress, marks)
	require.NoError(t, os.Remove(filepath.Join(marks, "cancelled")))

	// The call's timeout passes.
	res := call(t, cs, "slow", map[string]any{"steps": 0, "stepMillis": 0, "hang": true})
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "did not answer the call of tool \"slow\" within 300ms")
	eventually(t, "the upstream sees the cancellation", func() bool {
		data, err := os.ReadFile(filepath.Join(marks, "cancelled"))
		return err == nil && string(data) == "hang"
	})
	assert.Equal(t, "after", text(call(t, cs, "echo", map[string]any{"text": "after"})))
}

// TestHTTPUpstreamRequestsAndLogs: the upstream's sampling and
// elicitation requests during a call reach the client and their answers
// come back; its log messages reach the client at the client's level.
func TestHTTPUpstreamRequestsAndLogs(t *testing.T) {
	g := newGateway(t, nil, httpUpstream(t, "up", "full", "", nil, nil))
	logs := make(chan *mcp.LoggingMessageParams, 10)
	handlers := answeringClient()
	handlers.LoggingMessageHandler = func(_ context.Context, req *mcp.LoggingMessageRequest) { logs <- req.Params }
	cs := connect(t, g, handlers, "2025-11-25")
	assert.Equal(t, "sampled: QUIET", text(call(t, cs, "sample", map[string]any{"text": "quiet"})))
	assert.Equal(t, "accept Ada", text(call(t, cs, "elicit", nil)))

	// A client that cannot sample: the upstream's error, as a tool error.
	res := call(t, connect(t, g, nil, "2025-11-25"), "sample", map[string]any{"text": "x"})
	assert.True(t, res.IsError, text(res))

	require.NoError(t, cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "info"}))
	call(t, cs, "log", map[string]any{"level": "debug", "text": "too low"})
	call(t, cs, "log", map[string]any{"level": "warning", "text": "careful"})
	select {
	case m := <-logs:
		assert.Equal(t, mcp.LoggingLevel("warning"), m.Level)
		assert.Equal(t, "careful", m.Data)
	case <-time.After(20 * time.Second):
		t.Fatal("no log message")
	}
}

// TestHTTPUpstreamSessionLost: when the upstream answers a call with 404
// (it no longer knows the session), the call's result says the upstream
// stopped, and the gateway starts a new session with it for the next
// calls; an HTTP 500 is transient, as go-sdk's client has it: the result
// says what the upstream answered, and the session stays.
func TestHTTPUpstreamSessionLost(t *testing.T) {
	for _, c := range []struct {
		status      int
		says        string
		initializes int32
		restarts    int
	}{
		{http.StatusNotFound, "stopped during the request", 2, 1},
		{http.StatusInternalServerError, "500 Internal Server Error", 1, 0},
	} {
		t.Run(fmt.Sprint(c.status), func(t *testing.T) {
			var fail atomic.Bool
			var initializes atomic.Int32
			up := httpUpstream(t, "up", "full", "", nil, func(h http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" {
						initializes.Add(1)
					}
					if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") != "" && fail.CompareAndSwap(true, false) {
						http.Error(w, "no such session", c.status)
						return
					}
					h.ServeHTTP(w, r)
				})
			})
			g := newGateway(t, &gateway.Options{MinBackoff: 10 * time.Millisecond}, up)
			cs := connect(t, g, nil, "2025-11-25")
			assert.Equal(t, "before", text(call(t, cs, "echo", map[string]any{"text": "before"})))
			require.Equal(t, int32(1), initializes.Load())
			fail.Store(true)
			res := call(t, cs, "echo", map[string]any{"text": "lost"})
			assert.True(t, res.IsError)
			assert.Contains(t, text(res), `upstream "up"`)
			assert.Contains(t, text(res), c.says)
			assert.Equal(t, "after", text(call(t, cs, "echo", map[string]any{"text": "after"})))
			assert.Equal(t, c.initializes, initializes.Load(), "sessions started")
			assert.Equal(t, c.restarts, g.Status()[0].Restarts)
		})
	}
}

// TestHTTPUpstreamGoneMidCall: when the connection of a call in flight
// breaks, the call's result says so at once, and the upstream, if it is
// still there, is told the call is cancelled; when the upstream is gone
// for good, a call whose stream could be resumed ends too, after go-sdk's
// client's attempts to resume it.
func TestHTTPUpstreamGoneMidCall(t *testing.T) {
	for _, resumable := range []bool{false, true} {
		t.Run(fmt.Sprintf("resumable=%v", resumable), func(t *testing.T) {
			if resumable && testing.Short() {
				t.Skip("waits for 5 attempts to resume, about 13s")
			}
			marks := t.TempDir()
			s := newUpstreamServer("full", "up", marks)
			opts := &mcp.StreamableHTTPOptions{}
			if resumable {
				opts.EventStore = mcp.NewMemoryEventStore(nil)
			}
			srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, opts))
			t.Cleanup(srv.Close)
			g := newGateway(t, &gateway.Options{MinBackoff: 10 * time.Millisecond}, &gateway.ServerConfig{Name: "up", Transport: gateway.TransportHTTP, URL: srv.URL})
			hanging := make(chan struct{}, 1)
			cs := connect(t, g, &mcp.ClientOptions{ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
				hanging <- struct{}{}
			}}, "2025-11-25")
			done := hangingCall(cs)
			<-hanging
			if resumable {
				// Gone for good: no new connections either.
				srv.Listener.Close()
			}
			srv.CloseClientConnections()
			select {
			case res := <-done:
				assert.True(t, res.IsError)
				assert.Contains(t, text(res), `upstream "up"`)
			case <-time.After(40 * time.Second):
				t.Fatal("the call in flight did not end when its upstream went away")
			}
			if resumable {
				return
			}
			eventually(t, "the upstream sees the cancellation", func() bool {
				data, err := os.ReadFile(filepath.Join(marks, "cancelled"))
				return err == nil && string(data) == "hang"
			})
		})
	}
}

// TestHTTPReferenceServer runs server-everything over Streamable HTTP (it
// answers in server-sent events with event ids) as an upstream.
func TestHTTPReferenceServer(t *testing.T) {
	ref := referenceServer(t, "server-everything", "streamableHttp")
	port := freePort(t)
	cmd := exec.Command(ref.Command, ref.Args...)
	cmd.Env = append(os.Environ(), "PORT="+port)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	up := &gateway.ServerConfig{Name: "everything", Transport: gateway.TransportHTTP, URL: "http://127.0.0.1:" + port + "/mcp"}
	eventually(t, "server-everything listens", func() bool {
		c, err := net.Dial("tcp", "127.0.0.1:"+port)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	g := newGateway(t, nil, up)
	var mu sync.Mutex
	var progress []*mcp.ProgressNotificationParams
	wire := &wireOrder{}
	cs := connectVia(t, g, everythingClientOptions(&progress, &mu), "2025-11-25", wire.wrap)
	direct := directHTTP(t, up, everythingClientOptions(nil, nil))
	ctx := context.Background()

	assertCallsAsEverything(t, cs, direct)

	params := &mcp.CallToolParams{Name: "trigger-long-running-operation", Arguments: map[string]any{"duration": 0.3, "steps": 3}}
	params.SetProgressToken(42)
	wire.reset()
	res, err := cs.CallTool(ctx, params)
	require.NoError(t, err)
	assert.Contains(t, text(res), "Long running operation completed")
	assert.Equal(t, []string{"notifications/progress", "notifications/progress", "notifications/progress", "response"}, wire.read())

	res = call(t, cs, "trigger-sampling-request", map[string]any{"prompt": "say something"})
	assert.False(t, res.IsError, text(res))
	assert.Contains(t, text(res), "sampled answer")
	res = call(t, cs, "trigger-elicitation-request", nil)
	assert.Contains(t, strings.ToLower(text(res)), "decline")

	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		params := &mcp.CallToolParams{Name: "trigger-long-running-operation", Arguments: map[string]any{"duration": 60, "steps": 60}}
		params.SetProgressToken("cancel-me")
		_, err := cs.CallTool(cctx, params)
		done <- err
	}()
	eventually(t, "the operation's first progress", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range progress {
			if p.ProgressToken == "cancel-me" {
				return true
			}
		}
		return false
	})
	cancel()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(20 * time.Second):
		t.Fatal("the cancelled call did not return")
	}
	assert.Equal(t, "Echo: after", text(call(t, cs, "echo", map[string]any{"message": "after"})))
}

// freePort returns a loopback TCP port nothing listens on.
func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}
