package mcpbind_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/mcpbind"
)

// statelessClient serves s over stateless Streamable HTTP and connects a
// client of the given protocol.
func statelessClient(t *testing.T, s *mcp.Server, protocol string) *mcp.ClientSession {
	t.Helper()
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(srv.Close)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: srv.Client()}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// TestStatelessServerNeverFailsOpen: on a stateless HTTP server (a new
// session per request) with the default HandlesAuto, clients of the older
// protocols use workflow handles too. Before, each request got a fresh
// workflow and a once-only tool ran every time.
func TestStatelessServerNeverFailsOpen(t *testing.T) {
	for _, protocol := range []string{"2025-06-18", "2025-11-25"} {
		t.Run(protocol, func(t *testing.T) {
			s := newGatedServer(t, &mcpbind.Options{})
			close(s.release)
			cs := statelessClient(t, s.server, protocol)
			ctx := context.Background()
			if caps := cs.InitializeResult().Capabilities; caps.Tools == nil || caps.Tools.ListChanged {
				t.Fatalf("a stateless server advertises tools %+v: it never sends list_changed", caps.Tools)
			}
			for range 3 {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "claim_bonus"})
				if err != nil {
					t.Fatal(err)
				}
				if ref := refusal(t, res); ref.Code != mcpbind.CodeWorkflowRequired {
					t.Fatalf("claim without a workflow id: %+v", ref)
				}
			}
			if n := s.claimed.Load(); n != 0 {
				t.Fatalf("claim_bonus ran %d times", n)
			}
			lr, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range lr.Tools {
				if tool.Name == "claim_bonus" && !takesHandle(t, tool) {
					t.Fatal("claim_bonus is listed without its workflow_id argument")
				}
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "workflow_start"})
			if err != nil || res.IsError {
				t.Fatalf("workflow_start: %v %v", err, res)
			}
			id := res.StructuredContent.(map[string]any)["workflow_id"].(string)
			for i := range 3 {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "claim_bonus", Arguments: withID(id, nil)})
				if err != nil || res.IsError != (i > 0) {
					t.Fatalf("claim %d: %v %s", i+1, err, resultText(res))
				}
			}
			if n := s.claimed.Load(); n != 1 {
				t.Fatalf("claim_bonus ran %d times", n)
			}
		})
	}
}

// TestStatelessHandlesNeverRefuses: HandlesNever on a stateless server
// cannot keep a workflow: gated calls are refused (a protocol error, for
// the server's developer), never run; ungated tools work.
func TestStatelessHandlesNeverRefuses(t *testing.T) {
	s := newGatedServer(t, &mcpbind.Options{Handles: mcpbind.HandlesNever})
	close(s.release)
	s.server.AddTool(&mcp.Tool{Name: "help", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "help"}}}, nil
	})
	cs := statelessClient(t, s.server, "2025-11-25")
	ctx := context.Background()
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "claim_bonus"})
	if err == nil || !strings.Contains(err.Error(), "cannot keep a workflow between requests") {
		t.Fatalf("claim: %v", err)
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "help"}); err != nil || res.IsError {
		t.Fatalf("help: %v %v", err, res)
	}
	lr, err := cs.ListTools(ctx, nil)
	if err != nil || len(lr.Tools) != 1 || lr.Tools[0].Name != "help" {
		t.Fatalf("tools: %v %v", lr, err)
	}
	if s.claimed.Load() != 0 {
		t.Fatal("claim_bonus ran")
	}
}

// TestInitializeAskingForNewProtocol: a client that asks for 2026-07-28 in
// an initialize handshake is answered 2025-11-25, and is served as a
// session of that version (filtered lists, no workflow_id), not in handle
// mode.
func TestInitializeAskingForNewProtocol(t *testing.T) {
	s := newGatedServer(t, &mcpbind.Options{})
	close(s.release)
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	if _, err := s.server.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	conn, err := ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	id := int64(0)
	rpc := func(method, params string) json.RawMessage {
		t.Helper()
		id++
		rid, err := jsonrpc.MakeID(float64(id))
		if err != nil {
			t.Fatal(err)
		}
		if err := conn.Write(ctx, &jsonrpc.Request{ID: rid, Method: method, Params: json.RawMessage(params)}); err != nil {
			t.Fatal(err)
		}
		for {
			msg, err := conn.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if r, ok := msg.(*jsonrpc.Response); ok {
				if r.Error != nil {
					t.Fatalf("%s: %v", method, r.Error)
				}
				return r.Result
			}
		}
	}
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(rpc("initialize", `{"protocolVersion": "2026-07-28", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}`), &init)
	if init.ProtocolVersion != "2025-11-25" {
		t.Fatalf("negotiated %q", init.ProtocolVersion)
	}
	if err := conn.Write(ctx, &jsonrpc.Request{Method: "notifications/initialized", Params: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	var list struct {
		Tools []struct {
			Name        string         `json:"name"`
			InputSchema map[string]any `json:"inputSchema"`
		} `json:"tools"`
		CacheScope string `json:"cacheScope"`
	}
	_ = json.Unmarshal(rpc("tools/list", `{}`), &list)
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		if strings.Contains(string(mustJSON(t, tool.InputSchema)), "workflow_id") {
			t.Fatalf("%s takes a workflow_id: served in handle mode", tool.Name)
		}
	}
	if strings.Join(names, ",") != "claim_bonus,peek" || list.CacheScope != "private" {
		t.Fatalf("tools %v, cacheScope %q", names, list.CacheScope)
	}
	var res struct {
		IsError bool `json:"isError"`
	}
	_ = json.Unmarshal(rpc("tools/call", `{"name": "claim_bonus", "arguments": {}}`), &res)
	if res.IsError || s.claimed.Load() != 1 {
		t.Fatalf("claim in session mode: %+v, runs %d", res, s.claimed.Load())
	}
}

// TestListCacheScope: a list that depends on the session's workflow is
// private; the list of handle mode, the same for every client, stays
// public.
func TestListCacheScope(t *testing.T) {
	s := newGatedServer(t, &mcpbind.Options{})
	c := (&fixture{server: s.server, gate: s.gate}).connect(t, "2025-11-25")
	lr, err := c.cs.ListTools(context.Background(), nil)
	if err != nil || lr.CacheScope != "private" || lr.TTLMs != 0 {
		t.Fatalf("session list: scope %q, ttl %d, %v", lr.CacheScope, lr.TTLMs, err)
	}
	cs := statelessClient(t, s.server, "2026-07-28")
	lr, err = cs.ListTools(context.Background(), nil)
	if err != nil || lr.CacheScope != "public" {
		t.Fatalf("handle list: scope %q, %v", lr.CacheScope, err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
