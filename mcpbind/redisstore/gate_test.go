package redisstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/internal/redistest"
	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/mcpbind/redisstore"
	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/statechart/flat"
)

// countingStore counts the conflicts of the store it wraps.
type countingStore struct {
	mcpbind.Store
	conflicts atomic.Int64
}

func (s *countingStore) CompareAndSwap(ctx context.Context, key string, old uint64, data []byte) (uint64, error) {
	v, err := s.Store.CompareAndSwap(ctx, key, old, data)
	if errors.Is(err, mcpbind.ErrConflict) {
		s.conflicts.Add(1)
	}
	return v, err
}

// counterJSON counts INC events in its context, with a declarative assign.
const counterJSON = `{
  "id": "counter",
  "context": {"n": 0},
  "initial": "open",
  "states": {
    "open": {"on": {"INC": {"actions": {"type": "xstate.assign", "params": {"n": {"$inc": 1}}}}}}
  }
}`

// chainJSON is a chain of n+1 states s0 … sn, each NEXT moving one step:
// a flat machine (no context) can count too.
func chainJSON(n int) string {
	var b strings.Builder
	b.WriteString(`{"id": "chain", "initial": "s0", "states": {`)
	for i := range n + 1 {
		if i > 0 {
			b.WriteString(",")
		}
		if i < n {
			fmt.Fprintf(&b, `"s%d": {"on": {"NEXT": "s%d"}}`, i, i+1)
		} else {
			fmt.Fprintf(&b, `"s%d": {}`, i)
		}
	}
	b.WriteString("}}")
	return b.String()
}

// TestTwoGatesOneRedis is the proof that a shared Redis store loses no
// transition: two gates, as two server instances would have, each with
// its own go-sdk server and client session, share one Redis store and one
// workflow (SessionKey maps both sessions to the same key). Many calls run
// concurrently through both; each successful call sends one event, and the
// handler sleeps a little so that the calls load the same version and race
// to save. Every transition must be in the final state.
func TestTwoGatesOneRedis(t *testing.T) {
	t.Parallel()
	const (
		workers = 8 // per gate
		each    = 12
		calls   = 2 * workers * each
	)
	cases := []struct {
		name   string
		engine func(t *testing.T) statechart.Engine
		tool   string
		bind   mcpbind.Binding
		count  func(statechart.State) any // what the state says of the number of transitions
		want   func(n int64) any          // what it should say after n transitions
	}{{
		name: "full/assign",
		engine: func(t *testing.T) statechart.Engine {
			m, err := statechart.Compile([]byte(counterJSON), nil)
			if err != nil {
				t.Fatal(err)
			}
			return m.Engine()
		},
		tool:  "inc",
		bind:  mcpbind.Binding{States: []string{"open"}, Event: "INC"},
		count: func(s statechart.State) any { return s.Context()["n"] },
		want:  func(n int64) any { return float64(n) },
	}, {
		name: "flat/chain",
		engine: func(t *testing.T) statechart.Engine {
			m, err := flat.Compile([]byte(chainJSON(calls)))
			if err != nil {
				t.Fatal(err)
			}
			return m
		},
		tool:  "next",
		bind:  mcpbind.Binding{Event: "NEXT"}, // visible while the machine takes NEXT
		count: func(s statechart.State) any { return s.Value() },
		want:  func(n int64) any { return fmt.Sprintf("s%d", n) },
	}}
	client := redistest.Start(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			store := &countingStore{Store: redisstore.New(client, &redisstore.Options{Prefix: "test:" + tc.name + ":"})}
			engine := tc.engine(t)
			const key = "shared-workflow"
			var (
				gates    []*mcpbind.Gate
				sessions []*mcp.ClientSession
				servers  []*mcp.ServerSession
				ran      atomic.Int64
			)
			for range 2 {
				g, err := mcpbind.New(engine, &mcpbind.Options{
					Store:      store,
					SessionKey: func(*mcp.ServerSession) string { return key },
					Logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
				})
				if err != nil {
					t.Fatal(err)
				}
				if err := g.Bind(tc.tool, tc.bind); err != nil {
					t.Fatal(err)
				}
				server := mcp.NewServer(&mcp.Implementation{Name: "instance", Version: "1"}, nil)
				server.AddTool(&mcp.Tool{Name: tc.tool, InputSchema: json.RawMessage(`{"type":"object"}`)},
					func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
						ran.Add(1)
						time.Sleep(2 * time.Millisecond) // let the concurrent calls load the same version
						return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
					})
				g.Attach(server)
				ct, st := mcp.NewInMemoryTransports()
				ss, err := server.Connect(ctx, st, nil)
				if err != nil {
					t.Fatal(err)
				}
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil).
					Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = cs.Close() })
				gates, sessions, servers = append(gates, g), append(sessions, cs), append(servers, ss)
			}

			var (
				wg        sync.WaitGroup
				saved     atomic.Int64
				notSaved  atomic.Int64
				refusals  atomic.Int64
				failed    atomic.Int64
				firstFail sync.Once
			)
			for _, cs := range sessions {
				for range workers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for range each {
							res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: map[string]any{}})
							switch {
							case err != nil:
								failed.Add(1)
								firstFail.Do(func() { t.Errorf("%s: %v", tc.tool, err) })
							case res.IsError:
								refusals.Add(1)
								firstFail.Do(func() { t.Errorf("%s refused: %s", tc.tool, resultText(res)) })
							case noteCode(res) == mcpbind.CodeStateNotSaved:
								notSaved.Add(1)
							case noteCode(res) == "":
								saved.Add(1)
							default:
								t.Errorf("%s: unexpected note %v", tc.tool, res.Meta)
							}
						}
					}()
				}
			}
			wg.Wait()

			want := tc.want(saved.Load())
			// Both instances see every transition, and so does a fresh
			// reader of the Redis record.
			for i, g := range gates {
				s, err := g.State(ctx, servers[i])
				if err != nil {
					t.Fatal(err)
				}
				if got := tc.count(s); got != want {
					t.Errorf("gate %d: transitions in the state = %v, want %v (one per saved call)", i+1, got, want)
				}
			}
			data, ver, err := redisstore.New(client, &redisstore.Options{Prefix: "test:" + tc.name + ":"}).
				Load(ctx, "mcpbind:"+engine.ID()+":session:"+key)
			if err != nil || ver == 0 {
				t.Fatalf("the record in Redis: version %d, %v", ver, err)
			}
			// The record's documented shape: {"state": <persisted state>, "history": [...]}.
			var rec struct {
				State   json.RawMessage   `json:"state"`
				History []json.RawMessage `json:"history"`
			}
			if err := json.Unmarshal(data, &rec); err != nil {
				t.Fatalf("the record in Redis: %v", err)
			}
			s, err := engine.Restore(rec.State)
			if err != nil {
				t.Fatal(err)
			}
			if got := tc.count(s); got != want {
				t.Errorf("record in Redis: transitions = %v, want %v", got, want)
			}
			if n := min(int(saved.Load()), 20); len(rec.History) != n {
				t.Errorf("record in Redis: %d history entries, want %d (the default bound is 20)", len(rec.History), n)
			}
			if saved.Load() != calls || ran.Load() != calls {
				t.Errorf("%d calls: %d saved, %d not saved, %d refused, %d failed; %d handler runs",
					calls, saved.Load(), notSaved.Load(), refusals.Load(), failed.Load(), ran.Load())
			}
			if store.conflicts.Load() == 0 {
				t.Error("no compare-and-swap conflict: the calls did not race")
			}
			t.Logf("%d calls through 2 gates, %d saved, %d conflicts retried", calls, saved.Load(), store.conflicts.Load())

			// When the sessions end, the workflow SessionKey named stays: it
			// belongs to its name (a reconnecting client finds it), not to
			// the sessions.
			for _, cs := range sessions {
				_ = cs.Close()
			}
			deadline := time.Now().Add(5 * time.Second)
			for gates[0].Sessions()+gates[1].Sessions() > 0 {
				if time.Now().After(deadline) {
					t.Fatal("the gates still hold the ended sessions")
				}
				time.Sleep(5 * time.Millisecond)
			}
			if d, v, err := store.Load(ctx, "mcpbind:"+engine.ID()+":session:"+key); !bytes.Equal(d, data) || v != ver || err != nil {
				t.Errorf("after the sessions ended: %d bytes, version %d, %v; want the record as it was (%d bytes, version %d)", len(d), v, err, len(data), ver)
			}
		})
	}
}

// noteCode returns the code of the gate's note in a call result's _meta,
// "" if it has none (a transition note has no code).
func noteCode(res *mcp.CallToolResult) string {
	note, ok := res.Meta[mcpbind.MetaKey]
	if !ok {
		return ""
	}
	b, err := json.Marshal(note)
	if err != nil {
		return "?"
	}
	var n struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(b, &n)
	return n.Code
}

// TestExpiredWorkflowRefused: a session whose workflow expired from Redis
// (unused for longer than the TTL) is refused with CodeWorkflowExpired,
// and a handle's with CodeUnknownWorkflow; neither starts again. A call
// within the TTL keeps the record alive.
func TestExpiredWorkflowRefused(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t)
	const ttl = 300 * time.Millisecond
	m, err := statechart.Compile([]byte(`{"id": "once", "initial": "a", "states": {
		"a": {"on": {"CLAIM": "b"}, "meta": {"mcp": {"tools": ["claim", "peek"], "events": {"claim": "CLAIM"}}}},
		"b": {"meta": {"mcp": {"tools": ["peek"]}}}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := mcpbind.New(m.Engine(), &mcpbind.Options{
		Store:  redisstore.New(client, &redisstore.Options{TTL: ttl, Prefix: "test:expiry:"}),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "once", Version: "1"}, nil)
	var claims atomic.Int32
	for _, name := range []string{"claim", "peek"} {
		server.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if name == "claim" {
					claims.Add(1)
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
			})
	}
	g.Attach(server)
	ctx := context.Background()
	connect := func(protocol string) *mcp.ClientSession {
		ct, st := mcp.NewInMemoryTransports()
		if _, err := server.Connect(ctx, st, nil); err != nil {
			t.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	code := func(res *mcp.CallToolResult, err error) string {
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError {
			return ""
		}
		ref, _ := mcpbind.RefusalOf(res)
		return ref.Code
	}
	session := connect("2025-11-25")
	if c := code(session.CallTool(ctx, &mcp.CallToolParams{Name: "claim"})); c != "" {
		t.Fatalf("claim: %s", c)
	}
	// Calls within the TTL keep the record alive past its first expiry.
	for range 4 {
		time.Sleep(ttl / 2)
		if c := code(session.CallTool(ctx, &mcp.CallToolParams{Name: "peek"})); c != "" {
			t.Fatalf("peek within the TTL: %s", c)
		}
	}
	time.Sleep(2 * ttl)
	if c := code(session.CallTool(ctx, &mcp.CallToolParams{Name: "claim"})); c != mcpbind.CodeWorkflowExpired {
		t.Fatalf("claim after expiry: %q, want %s", c, mcpbind.CodeWorkflowExpired)
	}
	if n := claims.Load(); n != 1 {
		t.Fatalf("claim ran %d times", n)
	}
	// Handles key a stateless server's requests (a lasting connection
	// serves one workflow under every protocol).
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(srv.Close)
	handles, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: srv.Client()}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = handles.Close() })
	res, err := handles.CallTool(ctx, &mcp.CallToolParams{Name: "workflow_start"})
	if err != nil || res.IsError {
		t.Fatalf("workflow_start: %v %v", err, res)
	}
	id := res.StructuredContent.(map[string]any)["workflow_id"].(string)
	time.Sleep(2 * ttl)
	if c := code(handles.CallTool(ctx, &mcp.CallToolParams{Name: "claim", Arguments: map[string]any{"workflow_id": id}})); c != mcpbind.CodeUnknownWorkflow {
		t.Fatalf("claim with an expired handle: %q", c)
	}
}

// resultText returns the text content of a call result, for messages.
func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
