// This file defines the guidance a gate sends a session whose workflow
// moved elsewhere: the new state's instructions, as a log message.

//lint:file-ignore SA1019 logging, deprecated by 2026-07-28 (SEP-2577), is the guidance channel of the protocols before it

package mcpbind

import (
	"context"
	"slices"

	"github.com/chartgate/chartgate/internal/core"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// GuidanceLogger is the logger name of the notifications/message a gate
// sends a session when its workflow moved elsewhere (another instance, a
// person's approval, a job): its data is {"state": the state value,
// "instructions": the active states' instructions, outermost first}.
const GuidanceLogger = "chartgate.guidance"

// guidance returns the log message that tells a session of its workflow's
// new state, or nil if the state's instructions did not change.
func (g *Gate) guidance(before, after *core.View) *mcp.LoggingMessageParams {
	ins := g.core.Instructions(after)
	if slices.Equal(g.core.Instructions(before), ins) {
		return nil
	}
	return &mcp.LoggingMessageParams{Level: "info", Logger: GuidanceLogger, Data: map[string]any{
		"state":        after.State.Value(),
		"instructions": ins,
	}}
}

// sendGuidance sends p to ss (the SDK drops it unless the client set a
// log level).
func sendGuidance(ctx context.Context, ss *mcp.ServerSession, p *mcp.LoggingMessageParams) error {
	return ss.Log(ctx, p)
}
