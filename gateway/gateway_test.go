// This file tests the gateway with Go upstreams: children running the test
// binary over stdio, and an HTTP server in process.

//lint:file-ignore SA1019 logging and sampling are deprecated from protocol 2026-07-28 on; the gateway passes them through for the versions that have them.

package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/gateway"
)

// testLogger logs to the test's log.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// newGateway starts a gateway over the servers and closes it at the end
// of the test.
func newGateway(t testing.TB, opts *gateway.Options, servers ...*gateway.ServerConfig) *gateway.Gateway {
	t.Helper()
	if opts == nil {
		opts = &gateway.Options{}
	}
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	g, err := gateway.New(ctx, &gateway.Config{Servers: servers}, opts)
	require.NoError(t, err)
	t.Cleanup(func() { g.Close() })
	return g
}

// connect connects a client to the gateway's server in memory.
func connect(t testing.TB, g *gateway.Gateway, copts *mcp.ClientOptions, protocol string) *mcp.ClientSession {
	t.Helper()
	return connectVia(t, g, copts, protocol, func(t mcp.Transport) mcp.Transport { return t })
}

// connectVia is connect with the client's transport wrapped.
func connectVia(t testing.TB, g *gateway.Gateway, copts *mcp.ClientOptions, protocol string, wrap func(mcp.Transport) mcp.Transport) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := g.Server().Connect(ctx, st, nil)
	require.NoError(t, err)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, copts).Connect(ctx, wrap(ct), &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close(); ss.Close() })
	return cs
}

func toolNames(t testing.TB, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		require.NoError(t, err)
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func call(t testing.TB, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err, "calling %s", name)
	return res
}

// hangingCall calls the upstream's slow tool with a progress token: it
// takes one step, notifies its progress and hangs. The result comes on the
// channel returned; a protocol error comes as a result that says so.
func hangingCall(cs *mcp.ClientSession) <-chan *mcp.CallToolResult {
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		params := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"steps": 1, "stepMillis": 1, "hang": true}}
		params.SetProgressToken(1)
		res, err := cs.CallTool(context.Background(), params)
		if err != nil {
			res = errorResultOf(err)
		}
		done <- res
	}()
	return done
}

// eventually waits up to 20s for cond, polling.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestToolNamesAndCollisions(t *testing.T) {
	g := newGateway(t, nil,
		upstreamCommand(t, "a", "full", ""),
		upstreamCommand(t, "b", "small", ""))
	cs := connect(t, g, nil, "")
	// echo is on both: prefixed on both; the others are unique.
	assert.Equal(t, []string{"a__echo", "add_tool", "b__echo", "elicit", "fail", "log", "only_b", "pid", "sample", "slow", "spawn"}, toolNames(t, cs))

	infos := map[string]gateway.ToolInfo{}
	for _, ti := range g.Tools() {
		infos[ti.Name] = ti
		assert.Equal(t, ti.Name, ti.Tool.Name)
	}
	assert.Equal(t, gateway.ToolInfo{Name: "a__echo", Upstream: "a", UpstreamName: "echo", Tool: infos["a__echo"].Tool}, infos["a__echo"])
	assert.Equal(t, "b", infos["b__echo"].Upstream)
	assert.Equal(t, "echo", infos["b__echo"].UpstreamName)
	assert.Equal(t, "pid", infos["pid"].UpstreamName)
	assert.Len(t, infos, 11)

	// Each prefixed tool reaches its own upstream under its own name.
	for _, up := range []string{"a", "b"} {
		res := call(t, cs, up+"__echo", map[string]any{"text": "hi"})
		assert.Equal(t, map[string]any{"text": "hi", "server": up}, res.StructuredContent)
	}
	assert.Equal(t, "b", text(call(t, cs, "only_b", nil)))

	// b gives no instructions: a's are the gateway's.
	assert.Equal(t, "Instructions of a.", cs.InitializeResult().Instructions)
}

func TestCallResultUnchanged(t *testing.T) {
	g := newGateway(t, nil, upstreamCommand(t, "up", "full", ""))
	// (Under 2026-07-28 the gateway's own server adds its serverInfo and
	// resultType, as every server of that protocol does.)
	cs := connect(t, g, nil, "2025-11-25")

	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{
		Name: "echo", Arguments: map[string]any{"text": "héllo"}, Meta: mcp.Meta{"client/meta": "m1"},
	})
	require.NoError(t, err)
	got, err := json.Marshal(res)
	require.NoError(t, err)
	assert.JSONEq(t, `{"content":[{"type":"text","text":"héllo"}],"structuredContent":{"text":"héllo","server":"up"},"_meta":{"upstream/meta":"m1"}}`, string(got))

	res = call(t, cs, "fail", nil)
	got, err = json.Marshal(res)
	require.NoError(t, err)
	assert.JSONEq(t, `{"content":[{"type":"text","text":"it failed on purpose"}],"isError":true,"_meta":{"why":"purpose"}}`, string(got))

	// The upstream's own JSON-RPC error comes through: arguments that do
	// not match the schema.
	_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "unknown_tool"})
	require.ErrorContains(t, err, `unknown tool "unknown_tool"`)
}

// TestConcurrentCallsKeepTheirAnswers: calls of several sessions in
// flight at once on one upstream each get their own answer.
func TestConcurrentCallsKeepTheirAnswers(t *testing.T) {
	g := newGateway(t, nil, upstreamCommand(t, "up", "full", ""))
	assertConcurrentCallsKeepAnswers(t, g, 4, 4)
}

// assertConcurrentCallsKeepAnswers makes sessions sessions on g, each
// with callers goroutines that call echo 25 times with a text of their
// own, and asserts that every call gets its own text back.
func assertConcurrentCallsKeepAnswers(t *testing.T, g *gateway.Gateway, sessions, callers int) {
	t.Helper()
	var wg sync.WaitGroup
	for s := range sessions {
		cs := connect(t, g, nil, "2025-11-25")
		for c := range callers {
			wg.Go(func() {
				for i := range 25 {
					want := fmt.Sprintf("session %d caller %d call %d", s, c, i)
					res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": want}})
					if !assert.NoError(t, err) || !assert.Equal(t, want, text(res)) {
						return
					}
				}
			})
		}
	}
	wg.Wait()
}

func TestProgressAndCancellation(t *testing.T) {
	marks := t.TempDir()
	g := newGateway(t, nil, upstreamCommand(t, "up", "full", marks))
	var progress progressLog
	cs := connect(t, g, &mcp.ClientOptions{ProgressNotificationHandler: progress.record}, "")
	assertSlowProgress(t, cs, &progress)
	// Cancelling the downstream request cancels the upstream one.
	cancelAfterOneStep(t, cs, &progress, marks)
}

// progressLog records the progress notifications a client receives.
type progressLog struct {
	mu  sync.Mutex
	got []*mcp.ProgressNotificationParams
}

// record is a client's ProgressNotificationHandler.
func (l *progressLog) record(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, req.Params)
}

func (l *progressLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.got)
}

// assertSlowProgress calls the upstream's slow tool for 3 steps with the
// client's progress token "my-token", and asserts its result and that
// the 3 progress notifications reached the client (l, empty before) as
// the upstream sent them, with the client's token.
func assertSlowProgress(t *testing.T, cs *mcp.ClientSession, l *progressLog) {
	t.Helper()
	params := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"steps": 3, "stepMillis": 1}}
	params.SetProgressToken("my-token")
	res, err := cs.CallTool(context.Background(), params)
	require.NoError(t, err)
	assert.Equal(t, "3 steps done", text(res))
	// The client may handle the notifications after the response.
	eventually(t, "3 progress notifications", func() bool { return l.count() == 3 })
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, p := range l.got {
		assert.Equal(t, "my-token", p.ProgressToken, "the client's own token")
		assert.Equal(t, float64(i+1), p.Progress)
		assert.Equal(t, float64(3), p.Total)
		assert.Equal(t, "step "+strconv.Itoa(i+1), p.Message)
	}
}

// cancelAfterOneStep calls the upstream's slow tool so that it hangs after
// one step, cancels the call once that step's progress reached the client
// (l), and asserts that the upstream sees the cancellation (in marks).
func cancelAfterOneStep(t *testing.T, cs *mcp.ClientSession, l *progressLog, marks string) {
	t.Helper()
	before := l.count()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		params := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"steps": 1, "stepMillis": 1, "hang": true}}
		params.SetProgressToken("hang")
		_, err := cs.CallTool(ctx, params)
		done <- err
	}()
	eventually(t, "the upstream hangs (its one step is done)", func() bool { return l.count() == before+1 })
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	eventually(t, "the upstream sees the cancellation", func() bool {
		data, err := os.ReadFile(filepath.Join(marks, "cancelled"))
		return err == nil && string(data) == "hang"
	})
}

func TestListChangedReachesClient(t *testing.T) {
	g := newGateway(t, nil, upstreamCommand(t, "up", "full", ""))
	changed := make(chan struct{}, 10)
	cs := connect(t, g, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}}, "")
	require.NotContains(t, toolNames(t, cs), "extra")
	assert.Equal(t, "added", text(call(t, cs, "add_tool", nil)))
	select {
	case <-changed:
	case <-time.After(20 * time.Second):
		t.Fatal("no notifications/tools/list_changed")
	}
	assert.Contains(t, toolNames(t, cs), "extra")
	assert.Equal(t, "via extra", text(call(t, cs, "extra", map[string]any{"text": "via extra"})))
	assert.Contains(t, func() []string {
		var names []string
		for _, ti := range g.Tools() {
			names = append(names, ti.Name)
		}
		return names
	}(), "extra")
}

func TestResourcesPromptsCompletionsLogging(t *testing.T) {
	marks := t.TempDir()
	g := newGateway(t, nil, upstreamCommand(t, "up", "full", marks), upstreamCommand(t, "other", "full", ""))
	logs := make(chan *mcp.LoggingMessageParams, 10)
	cs := connect(t, g, nil, "")
	ctx := context.Background()
	caps := cs.InitializeResult().Capabilities
	require.NotNil(t, caps.Resources)
	assert.True(t, caps.Resources.Subscribe)
	assert.NotNil(t, caps.Prompts)
	assert.NotNil(t, caps.Completions)
	assert.NotNil(t, caps.Logging)

	res, err := cs.ListResources(ctx, nil)
	require.NoError(t, err)
	var uris []string
	for _, r := range res.Resources {
		uris = append(uris, r.URI)
	}
	assert.ElementsMatch(t, []string{"test://up/static", "test://other/static"}, uris)
	tres, err := cs.ListResourceTemplates(ctx, nil)
	require.NoError(t, err)
	assert.Len(t, tres.ResourceTemplates, 2)

	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://other/static"})
	require.NoError(t, err)
	assert.Equal(t, "static of other", read.Contents[0].Text)
	read, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://up/item/42"})
	require.NoError(t, err)
	assert.Equal(t, "item test://up/item/42", read.Contents[0].Text)
	_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://nowhere"})
	assert.ErrorContains(t, err, "not found")

	// Prompts collide like tools.
	pres, err := cs.ListPrompts(ctx, nil)
	require.NoError(t, err)
	var prompts []string
	for _, p := range pres.Prompts {
		prompts = append(prompts, p.Name)
	}
	assert.ElementsMatch(t, []string{"up__greet", "other__greet"}, prompts)
	gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "other__greet", Arguments: map[string]string{"who": "Ada"}})
	require.NoError(t, err)
	assert.Equal(t, "Hello, Ada (from other)", gp.Messages[0].Content.(*mcp.TextContent).Text)

	comp, err := cs.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "up__greet"},
		Argument: mcp.CompleteParamsArgument{Name: "who", Value: "al"},
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"alice", "albert"}, comp.Completion.Values)

	// Subscriptions reach the upstream that lists the resource.
	// (Under 2026-07-28 Subscribe opens a subscriptions/listen stream
	// and returns before the server has acted on it.)
	require.NoError(t, cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://up/static"}))
	eventually(t, "the upstream gets the subscription", func() bool {
		data, err := os.ReadFile(filepath.Join(marks, "subscribed"))
		return err == nil && string(data) == "test://up/static"
	})
	require.NoError(t, cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "test://up/static"}))

	// The log level reaches the upstream; its messages reach the client,
	// filtered by the client's level. (A 2026-07-28 client asks for log
	// messages in each request's _meta instead.)
	cs = connect(t, g, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) { logs <- req.Params },
	}, "2025-11-25")
	require.NoError(t, cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}))
	call(t, cs, "up__echo", map[string]any{"text": "x"}) // unrelated traffic
	call(t, cs, "up__log", map[string]any{"level": "debug", "text": "too low"})
	call(t, cs, "up__log", map[string]any{"level": "warning", "text": "careful"})
	select {
	case m := <-logs:
		assert.Equal(t, mcp.LoggingLevel("warning"), m.Level)
		assert.Equal(t, "careful", m.Data)
		assert.Equal(t, "up", m.Logger)
	case <-time.After(20 * time.Second):
		t.Fatal("no log message")
	}
}

// TestLevelOfEndedSession: the upstreams get the lowest log level the
// sessions set; the level of a session that ended (over Streamable
// HTTP) no longer counts.
func TestLevelOfEndedSession(t *testing.T) {
	marks := t.TempDir()
	g := newGateway(t, nil, upstreamCommand(t, "up", "full", marks))
	url, _ := serveFront(t, g, nil)
	level := func() string {
		data, _ := os.ReadFile(filepath.Join(marks, "level"))
		return string(data)
	}
	ctx := context.Background()
	a, b := frontClient(t, url, nil), frontClient(t, url, nil)
	require.NoError(t, a.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}))
	require.Equal(t, "debug", level())
	require.NoError(t, b.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "warning"}))
	require.Equal(t, "debug", level())
	require.NoError(t, a.Close())
	// Once a's level is forgotten, each change of b's is the lowest.
	levels, i := []mcp.LoggingLevel{"error", "critical"}, 0
	eventually(t, "the upstream gets b's level", func() bool {
		i++
		require.NoError(t, b.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: levels[i%2]}))
		return level() != "debug"
	})
}

// answeringClient returns client options that answer sampling with the
// text of the first message in capitals, and elicitation with the name
// Ada.
func answeringClient() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			in := req.Params.Messages[0].Content.(*mcp.TextContent).Text
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: strings.ToUpper(in)}}, nil
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
	}
}

func TestSamplingAndElicitation(t *testing.T) {
	g := newGateway(t, nil, upstreamCommand(t, "up", "full", ""))
	handlers := answeringClient()
	cs := connect(t, g, handlers, "2025-11-25")
	assert.Equal(t, "sampled: QUIET", text(call(t, cs, "sample", map[string]any{"text": "quiet"})))
	assert.Equal(t, "accept Ada", text(call(t, cs, "elicit", nil)))

	// A client that cannot sample gets the upstream's error as a tool
	// error.
	plain := connect(t, g, nil, "2025-11-25")
	res := call(t, plain, "sample", map[string]any{"text": "x"})
	assert.True(t, res.IsError, text(res))

	// Under 2026-07-28 a server may not send requests to the client
	// (SEP-2322): the gateway cannot pass the upstream's on.
	res = call(t, connect(t, g, handlers, "2026-07-28"), "sample", map[string]any{"text": "x"})
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "2026-07-28")
}

func TestDownstreamProtocolVersions(t *testing.T) {
	g := newGateway(t, nil, upstreamCommand(t, "up", "small", ""))
	for _, v := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(v, func(t *testing.T) {
			cs := connect(t, g, nil, v)
			assert.Equal(t, v, cs.InitializeResult().ProtocolVersion)
			assert.Equal(t, []string{"echo", "only_up"}, toolNames(t, cs))
			res := call(t, cs, "echo", map[string]any{"text": v})
			assert.Equal(t, v, text(res))
		})
	}
}

// processGone reports whether no process has pid (or only a zombie that
// is not ours to reap).
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return os.IsNotExist(err)
	}
	fields := strings.Fields(string(data))
	return len(fields) > 2 && fields[2] == "Z"
}

func TestUpstreamKilledMidCall(t *testing.T) {
	var logs strings.Builder
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), nil))
	g := newGateway(t, &gateway.Options{Logger: logger, MinBackoff: 10 * time.Millisecond}, upstreamCommand(t, "up", "full", ""))
	hanging := make(chan struct{}, 1)
	cs := connect(t, g, &mcp.ClientOptions{ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
		hanging <- struct{}{}
	}}, "")
	pid, err := strconv.Atoi(text(call(t, cs, "pid", nil)))
	require.NoError(t, err)

	done := hangingCall(cs)
	<-hanging // the call is in the upstream
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
	assert.Contains(t, text(res), "restarting")

	// The next call waits for the restart and works, on a new process.
	newPid, err := strconv.Atoi(text(call(t, cs, "pid", nil)))
	require.NoError(t, err)
	assert.NotEqual(t, pid, newPid)
	assert.Equal(t, "again", text(call(t, cs, "echo", map[string]any{"text": "again"})))
	mu.Lock()
	assert.Contains(t, logs.String(), "upstream went down; restarting")
	mu.Unlock()
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestChildrenDoNotOutliveGateway(t *testing.T) {
	ctx := context.Background()
	g, err := gateway.New(ctx, &gateway.Config{Servers: []*gateway.ServerConfig{upstreamCommand(t, "up", "full", "")}},
		&gateway.Options{Logger: testLogger(t), StopGrace: 200 * time.Millisecond})
	require.NoError(t, err)
	cs := connect(t, g, nil, "")
	pid, err := strconv.Atoi(text(call(t, cs, "pid", nil)))
	require.NoError(t, err)
	grandchild, err := strconv.Atoi(text(call(t, cs, "spawn", nil)))
	require.NoError(t, err)
	require.False(t, processGone(pid))
	require.False(t, processGone(grandchild))
	require.NoError(t, g.Close())
	assert.True(t, processGone(pid), "the child is gone when Close returns")
	eventually(t, "the grandchild is killed with its process group", func() bool { return processGone(grandchild) })

	// A call after Close fails clearly.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "closed")
}

func TestHTTPUpstreamWithHeaders(t *testing.T) {
	upstream := newUpstreamServer("full", "remote", "")
	var mu sync.Mutex
	var auth []string
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return upstream }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close) // after the gateway's Close, which ends the upstream's streams
	cfg, err := gateway.ParseConfig([]byte(`{"mcpServers": {"remote": {"url": "`+srv.URL+`", "headers": {"Authorization": "Bearer ${TOKEN}"}}}}`),
		&gateway.ConfigOptions{LookupEnv: func(name string) (string, bool) { return map[string]string{"TOKEN": "s3cret"}[name], name == "TOKEN" }})
	require.NoError(t, err)
	g := newGateway(t, nil, cfg.Servers...)
	cs := connect(t, g, nil, "")
	assert.Contains(t, toolNames(t, cs), "echo")
	res := call(t, cs, "echo", map[string]any{"text": "over http"})
	assert.Equal(t, map[string]any{"text": "over http", "server": "remote"}, res.StructuredContent)
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, auth)
	for _, a := range auth {
		assert.Equal(t, "Bearer s3cret", a)
	}
}

func TestNewFailsNamingTheUpstream(t *testing.T) {
	_, err := gateway.New(context.Background(), &gateway.Config{Servers: []*gateway.ServerConfig{
		{Name: "nope", Transport: gateway.TransportStdio, Command: filepath.Join(t.TempDir(), "no-such-command")},
	}}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `upstream "nope"`)
	assert.Contains(t, err.Error(), "no-such-command")
}
