// This file gates tools that run outside an MCP request: an agent host's
// own tools (a shell, a file editor), which the host's hooks ask about
// before they run and report after. The rules are the gate's: the same
// authorization as a tools/call, the same budgets, events and history.
// Gate implements gate.Decider with them, so that package hook needs no
// MCP type.

package mcpbind

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/internal/core"
)

// Decision is the answer of [Gate.Check]: [gate.Decision].
type Decision = gate.Decision

// Host describes the caller of [Gate.Check] and [Gate.Record]: an agent
// host whose own tools run outside MCP.
type Host struct {
	// Tools lists the names of the tools the agent may call, for the
	// refusal's guidance (the tools available now, the path).
	Tools []string
	// TransitionTool names the tool through which the agent sends events
	// (a gateway's workflow_transition), if it has one: a refusal's path
	// may then go through it.
	TransitionTool string
}

var _ gate.Decider = (*Gate)(nil)

// Check decides whether a tool may run now in the workflow ref names: it
// is [Gate.Decide] with the host's tools.
func (g *Gate) Check(ctx context.Context, ref Ref, tool string, args json.RawMessage, host Host) (Decision, error) {
	return g.core.Decide(ctx, gate.Request{Ref: ref, Tool: tool, Args: args, Tools: host.Tools, TransitionTool: host.TransitionTool})
}

// Record records a call of a tool that ran outside an MCP request, as
// [Gate.Commit] does, with res (nil for a success without a result) as
// the tool's result: its structured content is the event's output.
func (g *Gate) Record(ctx context.Context, ref Ref, tool string, args json.RawMessage, res *mcp.CallToolResult, host Host) (*Transition, error) {
	c, err := g.core.ExternalCall(gate.Request{Ref: ref, Tool: tool, Args: args, Tools: host.Tools, TransitionTool: host.TransitionTool})
	if err != nil {
		return nil, err
	}
	if res == nil {
		return g.core.Record(ctx, c, core.ToolOutcome{Ok: true})
	}
	return g.core.Record(ctx, c, mcpOutcome(res, nil))
}
