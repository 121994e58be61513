package hook

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/mcpbind"
)

// TestGatewayRendezvous plays what `chartgate serve` does with the hooks'
// registry: an MCP server gated by mcpbind on the hooks' store, whose
// Options.SessionKey is a Resolver's. A transition the agent makes through
// the server's workflow_transition changes what the hook allows, and an
// interrupt the hook fires changes what the server lists.
func TestGatewayRendezvous(t *testing.T) {
	f := newFixture(t, codingWorkflow, &Options{Ancestry: func() []Proc { return chain(Proc{PID: 101, Start: 12, Name: "sh"}, hostA) }})
	f.session = "agent-A"
	ctx := context.Background()

	// Another agent session of the project, from another host, ran first.
	other := *f
	other.session = "agent-B"
	other.h = mustHandler(t, f, func() []Proc { return chain(hostB) })
	other.handle(other.ev(KindSessionStart, "", ""))
	// Host A's session starts: its hook records it.
	f.handle(f.ev(KindSessionStart, "", ""))

	// Host A's gateway.
	resolver := &Resolver{Store: f.store, Project: f.project, Ancestry: chain(hostA), Logger: quiet()}
	gate, err := mcpbind.New(f.wf.Machine.Engine(), &mcpbind.Options{Store: f.store, SessionKey: func(*mcp.ServerSession) string { return resolver.Name() }, Logger: quiet()})
	require.NoError(t, err)
	server := mcp.NewServer(&mcp.Implementation{Name: "gateway"}, nil)
	for _, name := range []string{"Read", "Edit"} {
		server.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	}
	gate.Attach(server)
	require.NoError(t, gate.AddWorkflowTools(server, nil))
	ct, st := mcp.NewInMemoryTransports()
	_, err = server.Connect(ctx, st, nil)
	require.NoError(t, err)
	client, err := mcp.NewClient(&mcp.Implementation{Name: "host"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	defer client.Close()
	listed := func() []string {
		res, err := client.ListTools(ctx, nil)
		require.NoError(t, err)
		var names []string
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
		}
		slices.Sort(names)
		return names
	}

	assert.Equal(t, []string{"Read", "workflow_status", "workflow_transition"}, listed())
	assert.Contains(t, f.pre("Edit", `{"file_path": "a.go", "old_string": "a", "new_string": "b"}`), `("plan")`)

	// The agent moves on through the gateway's MCP tool.
	res, err := client.CallTool(ctx, &mcp.CallToolParams{Name: "workflow_transition", Arguments: map[string]any{"event": "PLAN_READY", "data": map[string]any{"rationale": "planned"}}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%v", res.Content)
	assert.Empty(t, f.pre("Edit", `{"file_path": "a.go", "old_string": "a", "new_string": "b"}`), "the hook allows what the gateway's transition allows")
	assert.Equal(t, []string{"Edit", "Read", "workflow_status", "workflow_transition"}, listed())
	// The other session's workflow did not move.
	assert.Contains(t, other.pre("Edit", `{"file_path": "a.go", "old_string": "a", "new_string": "b"}`), `("plan")`)

	// The hook sees an edit of a .env file: the interrupt changes what the
	// gateway lists.
	post := f.post("Write", fmt.Sprintf(`{"file_path": %q, "content": "T=1"}`, f.project+"/.env"))
	assert.Contains(t, post.Context, "triggered interrupt")
	assert.Equal(t, []string{"Read", "workflow_status", "workflow_transition"}, listed())
	res, err = client.CallTool(ctx, &mcp.CallToolParams{Name: "Edit", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.True(t, res.IsError, "the gateway refuses Edit in env_check")
}

// mustHandler builds another handler on the fixture's store and workflow,
// with another ancestry (another agent host).
func mustHandler(t *testing.T, f *fixture, anc func() []Proc) *Handler {
	h, err := NewHandler(f.wf, f.gate, f.store, f.project, &Options{Ancestry: anc})
	require.NoError(t, err)
	return h
}
