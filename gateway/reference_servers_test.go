// This file tests the gateway against software nobody here wrote: the
// official MCP reference servers from npm (server-everything and
// server-filesystem, pinned in testdata/upstreams), as stdio upstreams.

//lint:file-ignore SA1019 logging and sampling are deprecated from protocol 2026-07-28 on; the gateway passes them through for the versions that have them.

package gateway_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/gateway"
)

const installUpstreams = "cd gateway/testdata/upstreams && npm ci"

// referenceServer returns the command of a pinned reference server, or
// skips the test when Node.js or the packages are missing.
func referenceServer(t testing.TB, name string, args ...string) *gateway.ServerConfig {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("node is not on PATH; to run this test, install Node.js and npm, then: %s", installUpstreams)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "upstreams", "node_modules", "@modelcontextprotocol", name, "dist", "index.js"))
	require.NoError(t, err)
	if _, err := os.Stat(script); err != nil {
		t.Skipf("@modelcontextprotocol/%s is not installed (no %s); to run this test: %s", name, script, installUpstreams)
	}
	return &gateway.ServerConfig{Name: name, Transport: gateway.TransportStdio, Command: node, Args: append([]string{script}, args...)}
}

// direct connects a go-sdk client straight to a reference server.
func direct(t testing.TB, s *gateway.ServerConfig, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(s.Command, s.Args...)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, copts).Connect(context.Background(),
		&mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

// jsonOf marshals v, or the error, for comparing what two paths return.
func jsonOf(t testing.TB, v any, err error) string {
	t.Helper()
	if err != nil {
		return "error: " + err.Error()
	}
	data, err := json.Marshal(v)
	require.NoError(t, err)
	return string(data)
}

func TestReferenceServersThroughGateway(t *testing.T) {
	everything := referenceServer(t, "server-everything", "stdio")
	everything.Name = "everything"
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "hello.txt"), []byte("hello from the filesystem\n"), 0o644))
	fs := referenceServer(t, "server-filesystem", root)
	fs.Name = "fs"
	g := newGateway(t, nil, everything, fs)
	ctx := context.Background()
	// Sampling and elicitation answered by the downstream client.
	var mu sync.Mutex
	var progress []*mcp.ProgressNotificationParams
	// The order the client reads messages in: go-sdk runs notification
	// handlers on another goroutine, so a handler may run after the call
	// that follows returned; the order is defined on the wire.
	wire := &wireOrder{}
	cs := connectVia(t, g, everythingClientOptions(&progress, &mu), "2025-11-25", wire.wrap)
	ref := direct(t, everything, everythingClientOptions(nil, nil))

	t.Run("tools", func(t *testing.T) {
		names := toolNames(t, cs)
		for _, n := range []string{"echo", "get-sum", "trigger-long-running-operation", "trigger-sampling-request", "read_text_file", "list_allowed_directories"} {
			assert.Contains(t, names, n)
		}
		// The definitions are the upstream's, unchanged.
		want := map[string]string{}
		for tool, err := range ref.Tools(ctx, nil) {
			require.NoError(t, err)
			want[tool.Name] = jsonOf(t, tool, nil)
		}
		for _, ti := range g.Tools() {
			if ti.Upstream == "everything" {
				assert.Equal(t, want[ti.Name], jsonOf(t, ti.Tool, nil), ti.Name)
				delete(want, ti.Name)
			}
		}
		assert.Empty(t, want, "tools of server-everything missing from the gateway")
	})

	t.Run("calls return what the upstream returns", func(t *testing.T) {
		assertCallsAsEverything(t, cs, ref)
		res := call(t, cs, "echo", map[string]any{"message": "hi"})
		assert.Equal(t, "Echo: hi", text(res))
	})

	t.Run("filesystem", func(t *testing.T) {
		res := call(t, cs, "read_text_file", map[string]any{"path": filepath.Join(root, "hello.txt")})
		assert.False(t, res.IsError, text(res))
		assert.Equal(t, "hello from the filesystem\n", text(res))
		res = call(t, cs, "write_file", map[string]any{"path": filepath.Join(root, "new.txt"), "content": "written through the gateway"})
		assert.False(t, res.IsError, text(res))
		data, err := os.ReadFile(filepath.Join(root, "new.txt"))
		require.NoError(t, err)
		assert.Equal(t, "written through the gateway", string(data))
		res = call(t, cs, "read_text_file", map[string]any{"path": "/etc/passwd"})
		assert.True(t, res.IsError, "the upstream's own refusal comes through")
	})

	t.Run("progress", func(t *testing.T) {
		params := &mcp.CallToolParams{Name: "trigger-long-running-operation", Arguments: map[string]any{"duration": 0.3, "steps": 3}}
		params.SetProgressToken(42)
		wire.reset()
		res, err := cs.CallTool(ctx, params)
		require.NoError(t, err)
		assert.Contains(t, text(res), "Long running operation completed")
		assert.Equal(t, []string{"notifications/progress", "notifications/progress", "notifications/progress", "response"}, wire.read(),
			"over a stdio upstream, progress comes before the result")
		eventually(t, "the progress handlers", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(progress) == 3
		})
		mu.Lock()
		defer mu.Unlock()
		for i, p := range progress {
			assert.Equal(t, float64(42), p.ProgressToken)
			assert.Equal(t, float64(i+1), p.Progress)
			assert.Equal(t, float64(3), p.Total)
		}
		progress = nil
	})

	t.Run("cancellation", func(t *testing.T) {
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
			return len(progress) > 0
		})
		cancel()
		select {
		case err := <-done:
			assert.ErrorIs(t, err, context.Canceled)
		case <-time.After(20 * time.Second):
			t.Fatal("the cancelled call did not return")
		}
		// The upstream took the cancellation: no more progress for it,
		// and the next call is served.
		assert.Equal(t, "Echo: after", text(call(t, cs, "echo", map[string]any{"message": "after"})))
	})

	t.Run("resources, prompts, completions", func(t *testing.T) {
		for _, list := range []struct {
			name      string
			gw, upstr func() (any, error)
		}{
			{"resources", func() (any, error) { return sortedURIs(cs.ListResources(ctx, nil)) }, func() (any, error) { return sortedURIs(ref.ListResources(ctx, nil)) }},
			{"prompts", func() (any, error) { return promptNames(cs.ListPrompts(ctx, nil)) }, func() (any, error) { return promptNames(ref.ListPrompts(ctx, nil)) }},
		} {
			got, gerr := list.gw()
			want, werr := list.upstr()
			require.NoError(t, werr)
			assert.Equal(t, jsonOf(t, want, werr), jsonOf(t, got, gerr), list.name)
		}
		tmpl, err := cs.ListResourceTemplates(ctx, nil)
		require.NoError(t, err)
		assert.NotEmpty(t, tmpl.ResourceTemplates)

		res, err := ref.ListResources(ctx, nil)
		require.NoError(t, err)
		require.NotEmpty(t, res.Resources)
		// go-sdk's server (the gateway's) gives every resources/read result
		// the protocol's default cacheScope, "public" (SEP-2549), where the
		// upstream gave none; the rest is the upstream's.
		read := func(cs *mcp.ClientSession, uri string) (*mcp.ReadResourceResult, error) {
			res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			if res != nil {
				res.CacheScope = ""
			}
			return res, err
		}
		uri := res.Resources[0].URI
		got, gerr := read(cs, uri)
		want, werr := read(ref, uri)
		assert.Equal(t, jsonOf(t, want, werr), jsonOf(t, got, gerr), uri)
		// A URI of a template, which no upstream lists.
		// Its text says when it was made: "created at 9:55:27 PM".
		clock := regexp.MustCompile(`\d+:\d\d:\d\d [AP]M`)
		got, gerr = read(cs, "demo://resource/dynamic/text/7")
		want, werr = read(ref, "demo://resource/dynamic/text/7")
		require.NoError(t, gerr)
		assert.Equal(t, clock.ReplaceAllString(jsonOf(t, want, werr), "TIME"), clock.ReplaceAllString(jsonOf(t, got, gerr), "TIME"))
		assert.Contains(t, got.Contents[0].Text, "Resource 7")

		gp, gerr := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "completable-prompt", Arguments: map[string]string{"department": "Sales", "name": "Eve"}})
		wp, werr := ref.GetPrompt(ctx, &mcp.GetPromptParams{Name: "completable-prompt", Arguments: map[string]string{"department": "Sales", "name": "Eve"}})
		assert.Equal(t, jsonOf(t, wp, werr), jsonOf(t, gp, gerr))
		require.NoError(t, gerr)

		comp, err := cs.Complete(ctx, &mcp.CompleteParams{
			Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "completable-prompt"},
			Argument: mcp.CompleteParamsArgument{Name: "department", Value: "S"},
		})
		require.NoError(t, err)
		assert.Equal(t, []string{"Sales", "Support"}, comp.Completion.Values)
	})

	t.Run("logging", func(t *testing.T) {
		logs := make(chan *mcp.LoggingMessageParams, 100)
		lc := connect(t, g, &mcp.ClientOptions{LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			logs <- req.Params
		}}, "2025-11-25")
		require.NoError(t, lc.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}))
		assert.Contains(t, text(call(t, lc, "toggle-simulated-logging", nil)), "Started simulated")
		defer call(t, lc, "toggle-simulated-logging", nil)
		select {
		case m := <-logs:
			// A random level: "Debug-level message", ..., "Alert level-message".
			assert.Regexp(t, `^(Debug|Info|Notice|Warning|Error|Critical|Alert|Emergency)[- ]level[- ]message`, m.Data)
		case <-time.After(20 * time.Second):
			t.Fatal("no log message from server-everything")
		}
	})

	t.Run("sampling and elicitation", func(t *testing.T) {
		res := call(t, cs, "trigger-sampling-request", map[string]any{"prompt": "say something"})
		assert.False(t, res.IsError, text(res))
		assert.Contains(t, text(res), "sampled answer")
		res = call(t, cs, "trigger-elicitation-request", nil)
		assert.Contains(t, strings.ToLower(text(res)), "decline")
	})

	t.Run("killed mid-call", func(t *testing.T) {
		pid := g.Status()[0].PID
		require.NotZero(t, pid)
		mu.Lock()
		progress = nil
		mu.Unlock()
		done := make(chan *mcp.CallToolResult, 1)
		go func() {
			params := &mcp.CallToolParams{Name: "trigger-long-running-operation", Arguments: map[string]any{"duration": 60, "steps": 60}}
			params.SetProgressToken("doomed")
			res, err := cs.CallTool(ctx, params)
			if err != nil {
				res = errorResultOf(err)
			}
			done <- res
		}()
		eventually(t, "the operation's first progress", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(progress) > 0
		})
		require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
		var res *mcp.CallToolResult
		select {
		case res = <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("the call in flight did not end when its upstream died")
		}
		assert.True(t, res.IsError)
		assert.Contains(t, text(res), `upstream "everything"`)
		assert.Contains(t, text(res), "signal: killed")
		// The gateway goes on: the upstream is restarted, the filesystem
		// upstream never stopped.
		assert.Equal(t, "Echo: restarted", text(call(t, cs, "echo", map[string]any{"message": "restarted"})))
		st := g.Status()[0]
		assert.True(t, st.Connected)
		assert.Equal(t, 1, st.Restarts)
		assert.NotEqual(t, pid, st.PID)
		assert.Contains(t, st.LastError, "signal: killed")
		assert.Equal(t, 0, g.Status()[1].Restarts)
	})

	// Closing the gateway stops the children.
	pids := []int{g.Status()[0].PID, g.Status()[1].PID}
	require.NoError(t, g.Close())
	for _, pid := range pids {
		assert.True(t, processGone(pid), "pid %d outlived the gateway", pid)
	}
}

func TestReferenceServerCollisions(t *testing.T) {
	a := referenceServer(t, "server-everything", "stdio")
	b := referenceServer(t, "server-everything", "stdio")
	a.Name, b.Name = "one", "two"
	g := newGateway(t, nil, a, b)
	cs := connect(t, g, nil, "2025-11-25")
	names := toolNames(t, cs)
	assert.Contains(t, names, "one__echo")
	assert.Contains(t, names, "two__echo")
	assert.NotContains(t, names, "echo")
	for _, n := range names {
		assert.True(t, strings.HasPrefix(n, "one__") || strings.HasPrefix(n, "two__"), n)
	}
	assert.Equal(t, "Echo: x", text(call(t, cs, "two__echo", map[string]any{"message": "x"})))
	prompts, err := promptNames(cs.ListPrompts(context.Background(), nil))
	require.NoError(t, err)
	assert.Contains(t, prompts, "one__simple-prompt")
	// Resources have one URI space: the first upstream has them.
	res, err := cs.ListResources(context.Background(), nil)
	require.NoError(t, err)
	uris := map[string]int{}
	for _, r := range res.Resources {
		uris[r.URI]++
	}
	for uri, n := range uris {
		assert.Equal(t, 1, n, uri)
	}
}

func errorResultOf(err error) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "protocol error: " + err.Error()}}}
}

func sortedURIs(res *mcp.ListResourcesResult, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	var uris []string
	for _, r := range res.Resources {
		uris = append(uris, r.URI)
	}
	slices.Sort(uris)
	return uris, nil
}

func promptNames(res *mcp.ListPromptsResult, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	var names []string
	for _, p := range res.Prompts {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	return names, nil
}

// wireOrder records what a client reads, in order: each notification's
// method and "response" for each response.
type wireOrder struct {
	mu   sync.Mutex
	seen []string
}

func (w *wireOrder) wrap(t mcp.Transport) mcp.Transport { return wireTransport{t, w} }

func (w *wireOrder) reset() {
	w.mu.Lock()
	w.seen = nil
	w.mu.Unlock()
}

func (w *wireOrder) read() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.seen)
}

type wireTransport struct {
	mcp.Transport
	w *wireOrder
}

func (t wireTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	return wireConn{c, t.w}, err
}

type wireConn struct {
	mcp.Connection
	w *wireOrder
}

func (c wireConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		c.w.mu.Lock()
		switch m := msg.(type) {
		case *jsonrpc.Request:
			if !m.IsCall() {
				c.w.seen = append(c.w.seen, m.Method)
			}
		case *jsonrpc.Response:
			c.w.seen = append(c.w.seen, "response")
		}
		c.w.mu.Unlock()
	}
	return msg, err
}

// everythingClientOptions are the options of a client of server-everything
// in these tests: what the gateway asks of its upstreams, so that
// server-everything registers the same tools for both, answering sampling
// and declining elicitation; progress, when not nil, records the progress
// notifications the client gets (under mu).
func everythingClientOptions(progress *[]*mcp.ProgressNotificationParams, mu *sync.Mutex) *mcp.ClientOptions {
	return &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{
			Sampling:    &mcp.SamplingCapabilities{},
			Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "test-model", Role: "assistant", Content: &mcp.TextContent{Text: "sampled answer"}}, nil
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			if progress != nil {
				mu.Lock()
				*progress = append(*progress, req.Params)
				mu.Unlock()
			}
		},
	}
}

// assertCallsAsEverything calls tools of server-everything through the
// gateway (via) and directly (ref), and asserts that both answer alike:
// results, content of every kind, and a tool's error.
func assertCallsAsEverything(t *testing.T, via, ref *mcp.ClientSession) {
	t.Helper()
	ctx := context.Background()
	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{"echo", map[string]any{"message": "hello, gateway"}},
		{"get-sum", map[string]any{"a": 2, "b": 40}},
		{"get-tiny-image", nil},
		{"get-structured-content", map[string]any{"location": "Chicago"}},
		{"get-annotated-message", map[string]any{"messageType": "success", "includeImage": true}},
		{"get-resource-links", map[string]any{"count": 2}},
		{"get-sum", map[string]any{"a": "not a number"}},
	} {
		got, gerr := via.CallTool(ctx, &mcp.CallToolParams{Name: c.name, Arguments: c.args})
		want, werr := ref.CallTool(ctx, &mcp.CallToolParams{Name: c.name, Arguments: c.args})
		assert.Equal(t, jsonOf(t, want, werr), jsonOf(t, got, gerr), c.name)
	}
}
