package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/gateway"
)

// serveFront serves g's server with its HTTPHandler on loopback, and
// returns its URL and the number of tools/call requests of the sessions
// of the client named "front-client" that go-sdk's server decoded and
// dispatched (not taken by the handler).
func serveFront(t testing.TB, g *gateway.Gateway, opts *mcp.StreamableHTTPOptions) (string, *atomic.Int64) {
	t.Helper()
	h := g.HTTPHandler(opts)
	viaSDK := countCalls(g, "front-client") // added after HTTPHandler: it sees only what go-sdk dispatches
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL, viaSDK
}

// frontClient connects a client named "front-client" to url over
// Streamable HTTP, protocol 2025-11-25.
func frontClient(t testing.TB, url string, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "front-client", Version: "1"}, copts).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

// sdkURL serves g's server with go-sdk's own Streamable HTTP handler.
func sdkURL(t testing.TB, g *gateway.Gateway, opts *mcp.StreamableHTTPOptions) string {
	t.Helper()
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return g.Server() }, opts))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestHTTPHandlerAnswersAsGoSDK: calls taken by the HTTP handler, with
// responses as streams of events and as JSON, answer as the same calls
// through go-sdk's handler (assertAnswersAsDirect).
func TestHTTPHandlerAnswersAsGoSDK(t *testing.T) {
	for _, jsonResponse := range []bool{false, true} {
		t.Run(map[bool]string{false: "sse", true: "json"}[jsonResponse], func(t *testing.T) {
			g := newGateway(t, nil, upstreamCommand(t, "up", "full", ""))
			attachGate(t, g, echoMovesMachine)
			opts := &mcp.StreamableHTTPOptions{JSONResponse: jsonResponse}
			url, viaSDK := serveFront(t, g, opts)
			copts, changed := toolsChanged()
			assertAnswersAsDirect(t, frontClient(t, url, copts), httpSession(t, sdkURL(t, g, opts)), changed, viaSDK)
		})
	}
}

// wire is a raw Streamable HTTP client of one session.
type wire struct {
	t       *testing.T
	url, id string
}

// post POSTs body on the session (on none if w.id is "") with the
// headers a go-sdk client sends, changed by hdr ("" deletes one), and
// returns the response's status, headers that go-sdk sets, and body.
func (w *wire) post(body string, hdr map[string]string) (int, http.Header, string) {
	w.t.Helper()
	req, err := http.NewRequest(http.MethodPost, w.url, strings.NewReader(body))
	require.NoError(w.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if w.id != "" {
		req.Header.Set("Mcp-Session-Id", w.id)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(w.t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(w.t, err)
	kept := http.Header{}
	for _, k := range []string{"Content-Type", "Cache-Control", "Connection"} {
		if v := resp.Header.Get(k); v != "" {
			kept.Set(k, v)
		}
	}
	return resp.StatusCode, kept, string(data)
}

// end ends the session with a DELETE, and returns the response's status.
func (w *wire) end() int {
	w.t.Helper()
	req, err := http.NewRequest(http.MethodDelete, w.url, nil)
	require.NoError(w.t, err)
	req.Header.Set("Mcp-Session-Id", w.id)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(w.t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// openWire initializes a session at url with raw POSTs, as a client
// named client.
func openWire(t *testing.T, url, client string) *wire {
	t.Helper()
	return openWireWith(t, url, client, nil)
}

// openWireWith is openWire with the headers hdr added to its POSTs.
func openWireWith(t *testing.T, url, client string, hdr map[string]string) *wire {
	t.Helper()
	w := &wire{t: t, url: url}
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":`+strconv.Quote(client)+`,"version":"1"}}}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	w.id = resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, w.id)
	code, _, _ := w.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr)
	require.Equal(t, http.StatusAccepted, code)
	return w
}

// TestHTTPHandlerWireAsGoSDK: on the wire, the handler's answers (status,
// headers, the messages of the body) are go-sdk's, for calls it takes (as a
// stream of events and as JSON, with string and number ids, a result
// that is not of the common shape) and for POSTs it leaves to go-sdk
// (a session unknown, or another handler's, bad headers, a batch, an
// id in flight).
func TestHTTPHandlerWireAsGoSDK(t *testing.T) {
	for _, jsonResponse := range []bool{false, true} {
		t.Run(map[bool]string{false: "sse", true: "json"}[jsonResponse], func(t *testing.T) {
			g := newGateway(t, nil, upstreamCommand(t, "up", "full", ""))
			opts := &mcp.StreamableHTTPOptions{JSONResponse: jsonResponse}
			url, viaSDK := serveFront(t, g, opts)
			sdk := sdkURL(t, g, opts)
			front, ref := openWire(t, url, "front-client"), openWire(t, sdk, "sdk-client")
			same := func(what, body string, hdr map[string]string) {
				t.Helper()
				c1, h1, b1 := front.post(body, hdr)
				c2, h2, b2 := ref.post(body, hdr)
				assert.Equal(t, c2, c1, what)
				assert.Equal(t, h2, h1, what)
				assertSameMessages(t, b2, b1)
			}
			same("echo", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"h\u00e9llo \"q\" <&>"}}}`, nil)
			same("string id", `{"jsonrpc":"2.0","id":"a-b","method":"tools/call","params":{"name":"fail","arguments":{}}}`, nil)
			same("no arguments", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"pid","_meta":{"host/x":[1]}}}`, nil)
			same("unknown tool", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope"}}`, nil)
			same("bad arguments", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":[1]}}`, nil)
			same("no protocol header", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`, map[string]string{"Mcp-Protocol-Version": ""})
			taken := viaSDK.Load()
			assert.Zero(t, taken, "the calls above were taken")

			// Left to go-sdk.
			for _, c := range []struct {
				what, body string
				hdr        map[string]string
			}{
				{"another protocol", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`, map[string]string{"Mcp-Protocol-Version": "2025-06-18"}},
				{"unsupported protocol", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo"}}`, map[string]string{"Mcp-Protocol-Version": "1999-01-01"}},
				{"accept", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo"}}`, map[string]string{"Accept": "application/json"}},
				{"content type", `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"echo"}}`, map[string]string{"Content-Type": "text/plain"}},
				{"last event id", `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"echo"}}`, map[string]string{"Last-Event-ID": "x_1"}},
				{"invalid JSON", `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo"}`, nil},
				{"batch", `[{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"echo"}}]`, nil},
				{"SEP-2575 meta", `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"pid","_meta":{"io.modelcontextprotocol/logLevel":"debug"}}}`, nil},
				{"other fields", `{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"pid","task":{}}}`, nil},
				{"tools/list", `{"jsonrpc":"2.0","id":16,"method":"tools/list"}`, nil},
			} {
				same(c.what, c.body, c.hdr)
			}
			assert.EqualValues(t, 3, viaSDK.Load()-taken, "go-sdk dispatched the three well-formed calls left to it")

			// Sessions it does not know: none, and one of another handler of
			// the same server.
			for _, id := range []string{"NOSUCHSESSION", ref.id} {
				c1, h1, b1 := (&wire{t: t, url: url, id: id}).post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`, nil)
				assert.Equal(t, http.StatusNotFound, c1)
				assert.Equal(t, "text/plain; charset=utf-8", h1.Get("Content-Type"))
				assert.Equal(t, "session not found\n", b1)
			}
			// A session ended.
			for _, w := range []*wire{front, ref} {
				w.end()
			}
			same("ended session", `{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`, nil)
		})
	}
}

// TestHTTPHandlerDuplicateInFlight: a call whose id is that of a call in
// flight on the session is refused as go-sdk refuses it; a client's
// notifications/cancelled of the hanging call cancels it upstream.
func TestHTTPHandlerDuplicateInFlight(t *testing.T) {
	marks := t.TempDir()
	g := newGateway(t, nil, upstreamCommand(t, "up", "full", marks))
	url, _ := serveFront(t, g, nil)
	sdk := sdkURL(t, g, nil)
	hang := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{"steps":0,"stepMillis":0,"hang":true}}}`
	var answers []string
	for _, u := range []string{url, sdk} {
		w := openWire(t, u, "front-client")
		var wg sync.WaitGroup
		wg.Go(func() { w.post(hang, nil) })
		time.Sleep(300 * time.Millisecond)
		code, hdr, body := w.post(hang, nil)
		assert.Equal(t, http.StatusBadRequest, code)
		assert.Equal(t, "application/json", hdr.Get("Content-Type"))
		answers = append(answers, body)
		code, _, _ = w.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`, nil)
		assert.Equal(t, http.StatusAccepted, code)
		eventually(t, "the upstream sees the cancellation", func() bool {
			data, err := os.ReadFile(filepath.Join(marks, "cancelled"))
			return err == nil && string(data) == "hang"
		})
		require.NoError(t, os.Remove(filepath.Join(marks, "cancelled")))
		w.end() // the hanging POST ends once the session does
		wg.Wait()
	}
	assert.Equal(t, answers[1], answers[0])
	assert.Contains(t, answers[0], "duplicate in-flight request ID 7")
}

// TestHTTPHandlerSessionEndedByServer: a session the server ends, by
// closing it or because its client does not answer a keepalive ping,
// has its calls taken cancelled, and is forgotten: its next call gets
// go-sdk's answer for a session that ended.
func TestHTTPHandlerSessionEndedByServer(t *testing.T) {
	hang := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{"steps":0,"stepMillis":0,"hang":true}}}`
	for _, c := range []struct {
		name string
		opts *gateway.Options
		end  func(g *gateway.Gateway, id string)
	}{{"closed", nil, func(g *gateway.Gateway, id string) {
		for ss := range g.Server().Sessions() {
			if ss.ID() == id {
				require.NoError(t, ss.Close())
			}
		}
	}}, {"keepalive", &gateway.Options{ServerOptions: &mcp.ServerOptions{KeepAlive: 2 * time.Second}}, nil}} {
		t.Run(c.name, func(t *testing.T) {
			marks := t.TempDir()
			g := newGateway(t, c.opts, upstreamCommand(t, "up", "full", marks))
			url, viaSDK := serveFront(t, g, nil)
			w := openWire(t, url, "front-client") // it has no stream for the server's pings
			var wg sync.WaitGroup
			wg.Go(func() { w.post(hang, nil) })
			time.Sleep(300 * time.Millisecond)
			if c.end != nil {
				c.end(g, w.id)
			}
			eventually(t, "the upstream sees the call cancelled", func() bool {
				data, err := os.ReadFile(filepath.Join(marks, "cancelled"))
				return err == nil && string(data) == "hang"
			})
			wg.Wait()
			code, _, body := w.post(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`, nil)
			assert.Equal(t, http.StatusNotFound, code, body)
			assert.Zero(t, viaSDK.Load())
		})
	}
}

// TestHTTPHandlerServerLog: the server logs to the gateway's logger what
// that logger is enabled for, and only that, though the gateway reads
// the server's log at Info to learn of sessions ending.
func TestHTTPHandlerServerLog(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelWarn} {
		var mu sync.Mutex
		var log strings.Builder
		g := newGateway(t, &gateway.Options{Logger: slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			return log.Write(p)
		}), &slog.HandlerOptions{Level: level}))})
		url, _ := serveFront(t, g, nil)
		w := openWire(t, url, "front-client")
		require.Equal(t, http.StatusNoContent, w.end())
		mu.Lock()
		got := log.String()
		mu.Unlock()
		if level == slog.LevelInfo {
			assert.Contains(t, got, `msg="server session disconnected" session_id=`+w.id)
		} else {
			assert.NotContains(t, got, "level=INFO")
		}
	}
}

// TestHTTPHandlerOnceUnderConcurrency: calls sent at once through the
// HTTP handler move the workflow once (assertOnceUnderConcurrency).
func TestHTTPHandlerOnceUnderConcurrency(t *testing.T) {
	g := newGateway(t, nil, upstreamCommand(t, "up", "full", ""))
	attachGate(t, g, onceMachine)
	url, viaSDK := serveFront(t, g, nil)
	assertOnceUnderConcurrency(t, frontClient(t, url, nil), viaSDK)
}

// TestHTTPHandlerProgressCancellation: a call the client cancels is
// cancelled upstream and sends no event; a call with a progress token
// gets its progress on the stream of its POST, before its answer; one
// with a _meta key of SEP-2575 goes through go-sdk.
func TestHTTPHandlerProgressCancellation(t *testing.T) {
	marks := t.TempDir()
	g := newGateway(t, nil, upstreamCommand(t, "up", "full", marks))
	attachGate(t, g, `{"id": "w", "initial": "a", "states": {
		"a": {"on": {"SLOW": "slowed"}, "meta": {"mcp": {"tools": ["slow", "pid"], "events": {"slow": "SLOW"}}}},
		"slowed": {"meta": {"mcp": {"tools": ["pid"]}}}}}`)
	url, viaSDK := serveFront(t, g, nil)
	var progress atomic.Int64
	cs := frontClient(t, url, &mcp.ClientOptions{ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
		progress.Add(1)
	}})

	cancelHanging(t, cs, marks)
	assert.Contains(t, text(call(t, cs, "workflow_status", nil)), `"a"`, "the cancelled call sent no event")
	assert.Zero(t, viaSDK.Load())

	// On the wire: the progress events come on the POST's stream, then
	// the answer.
	w := openWire(t, url, "front-client")
	code, _, body := w.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"steps":2,"stepMillis":1},"_meta":{"progressToken":"tok"}}}`, nil)
	require.Equal(t, http.StatusOK, code)
	var data []string
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			data = append(data, d)
		}
	}
	require.Len(t, data, 3, body)
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":1,"total":2,"message":"step 1"}}`, data[0])
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":2,"total":2,"message":"step 2"}}`, data[1])
	assert.Contains(t, data[2], `"2 steps done"`)
	assert.Zero(t, viaSDK.Load())

	// Through a go-sdk client.
	params := &mcp.CallToolParams{Name: "pid", Meta: mcp.Meta{"host/id": "x"}}
	params.SetProgressToken(5)
	res, err := cs.CallTool(context.Background(), params)
	require.NoError(t, err)
	assert.False(t, res.IsError, text(res))
	assert.Zero(t, viaSDK.Load())
	assertSEPMetaViaSDK(t, cs, viaSDK)
}

// TestHTTPHandlerLeavesOptionsToGoSDK: with a stateless handler, an event
// store or an idle timeout, go-sdk's handler serves every request.
func TestHTTPHandlerLeavesOptionsToGoSDK(t *testing.T) {
	g := newGateway(t, nil, upstreamCommand(t, "up", "full", ""))
	for _, opts := range []*mcp.StreamableHTTPOptions{
		{EventStore: mcp.NewMemoryEventStore(nil)},
		{SessionTimeout: time.Minute},
	} {
		url, viaSDK := serveFront(t, g, opts)
		cs := frontClient(t, url, nil)
		assert.Equal(t, "x", text(call(t, cs, "echo", map[string]any{"text": "x"})))
		assert.EqualValues(t, 1, viaSDK.Load())
	}
}

// FuzzHTTPHandler: whatever the body of a POST on an initialized session,
// the handler answers as go-sdk's handler answers it on a session of its
// own (status, content type, body), and never panics.
func FuzzHTTPHandler(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`,
		`{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"workflow_status","_meta":{"progressToken":1}}}`,
		`{"jsonrpc":"2.0","id":2.5,"method":"tools/call","params":{"name":"echo"}}`,
		`{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"echo"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":1}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a","_meta":{"io.modelcontextprotocol/x":1}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a","_meta":null,"arguments":null}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a","name":"b"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
		`[]`, ``, `  {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"x"}}  `,
		// Names that gjson and encoding/json read differently.
		"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"tools/call\",\"params\":{\"name\":\"\x95\"}}",
		`{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"\ud800\u0041"}}`,
	} {
		f.Add(s)
	}
	g, err := gateway.New(context.Background(), &gateway.Config{}, &gateway.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(f, err)
	f.Cleanup(func() { g.Close() })
	front := g.HTTPHandler(nil)
	ref := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return g.Server() }, nil)
	post := func(h http.Handler, session, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	open := func(t *testing.T, h http.Handler) string {
		rec := post(h, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}`)
		id := rec.Header().Get("Mcp-Session-Id")
		require.NotEmpty(t, id)
		require.Equal(t, http.StatusAccepted, post(h, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Code)
		return id
	}
	end := func(h http.Handler, session string) {
		req := httptest.NewRequest(http.MethodDelete, "/", nil)
		req.Header.Set("Mcp-Session-Id", session)
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	f.Fuzz(func(t *testing.T, body string) {
		// Sessions of their own: what one body does (a cancellation) must
		// not meet the next.
		fs, rs := open(t, front), open(t, ref)
		defer end(front, fs)
		defer end(ref, rs)
		var got, want *httptest.ResponseRecorder
		done := make(chan struct{})
		go func() {
			defer close(done)
			got = post(front, fs, body)
			want = post(ref, rs, body)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("no answer to %q: front %v", body, got != nil)
		}
		assert.Equal(t, want.Code, got.Code)
		assert.Equal(t, want.Header().Get("Content-Type"), got.Header().Get("Content-Type"))
		assertSameMessages(t, want.Body.String(), got.Body.String())
	})
}

// assertSameMessages asserts that two bodies of answers are the same but
// for how their JSON is written (go-sdk does not escape <, > and & in
// strings; encoding/json does): events with the same lines, the data of
// each JSON-equal, or JSON-equal, or the same text.
func assertSameMessages(t *testing.T, want, got string) {
	t.Helper()
	if json.Valid([]byte(want)) {
		assert.JSONEq(t, want, got)
		return
	}
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	if !assert.Len(t, gl, len(wl), got) {
		return
	}
	for i, w := range wl {
		if d, ok := strings.CutPrefix(w, "data: "); ok && json.Valid([]byte(d)) {
			assert.JSONEq(t, d, strings.TrimPrefix(gl[i], "data: "))
		} else {
			assert.Equal(t, w, gl[i])
		}
	}
}

// TestHTTPHandlerLogSamplingElicitation: during a call taken, the
// upstream's log messages come on the POST's stream before the answer;
// its sampling and elicitation requests reach the client on that stream
// too (the client opens no stream of the session's, on which go-sdk's
// handler could send nothing), and their answers reach the upstream.
func TestHTTPHandlerLogSamplingElicitation(t *testing.T) {
	g := newGateway(t, nil, upstreamCommand(t, "up", "full", ""))
	url, viaSDK := serveFront(t, g, nil)

	w := openWire(t, url, "front-client")
	code, _, _ := w.post(`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"info"}}`, nil)
	require.Equal(t, http.StatusOK, code)
	code, _, body := w.post(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"log","arguments":{"level":"warning","text":"careful"}}}`, nil)
	require.Equal(t, http.StatusOK, code)
	var data []string
	for line := range strings.SplitSeq(body, "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			data = append(data, d)
		}
	}
	require.Len(t, data, 2, body)
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","logger":"up","data":"careful"}}`, data[0])
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"logged"}]}}`, data[1])

	handlers := answeringClient()
	noStream := func(url string) *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "front-client", Version: "1"}, handlers).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		require.NoError(t, err)
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	for _, cs := range []*mcp.ClientSession{frontClient(t, url, handlers), noStream(url)} {
		assert.Equal(t, "sampled: QUIET", text(call(t, cs, "sample", map[string]any{"text": "quiet"})))
		assert.Equal(t, "accept Ada", text(call(t, cs, "elicit", nil)))
	}
	assert.Zero(t, viaSDK.Load())

	// A client's error answer reaches the upstream as go-sdk's would.
	refuse := &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return nil, errors.New("no one is here")
	}}
	res, err := frontClient(t, url, refuse).CallTool(context.Background(), &mcp.CallToolParams{Name: "elicit"})
	want, werr := frontClient(t, sdkURL(t, g, nil), refuse).CallTool(context.Background(), &mcp.CallToolParams{Name: "elicit"})
	assert.Equal(t, jsonOf(t, want, werr), jsonOf(t, res, err))
}

// TestHTTPHandlerLeavesUsersSessionsToGoSDK: behind an authentication
// that is optional (a request with a bearer token gets its user, one
// without none), a session started by a user is not taken over by a
// request without the token: the call is refused as go-sdk refuses it
// ("session user mismatch") and never reaches a tool, and the user's own
// calls still run.
func TestHTTPHandlerLeavesUsersSessionsToGoSDK(t *testing.T) {
	g := newGateway(t, nil, upstreamCommand(t, "up", "full", ""))
	attachGate(t, g, echoMovesMachine)
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if token != "alice-token" {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: "alice", Expiration: time.Now().Add(time.Hour)}, nil
	}
	optional := func(h http.Handler) http.Handler {
		withUser := auth.RequireBearerToken(verify, nil)(h)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "" {
				withUser.ServeHTTP(w, r)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
	front := httptest.NewServer(optional(g.HTTPHandler(nil)))
	t.Cleanup(front.Close)
	viaSDK := countCalls(g, "front-client")
	alice := map[string]string{"Authorization": "Bearer alice-token"}

	w := openWireWith(t, front.URL, "front-client", alice)

	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`
	code, _, body := w.post(call, nil)
	assert.Equal(t, http.StatusForbidden, code, body)
	assert.Equal(t, "session user mismatch\n", body)
	assert.Zero(t, viaSDK.Load(), "no call ran")

	code, _, body = w.post(strings.Replace(call, `"id":2`, `"id":3`, 1), alice)
	assert.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, `"result"`)
	assert.EqualValues(t, 1, viaSDK.Load(), "the user's call went through go-sdk")
}
