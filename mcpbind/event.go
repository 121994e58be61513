// This file builds the event a successful call sends: its type, the
// tool, the call's arguments and its structured result as JSON values.

package mcpbind

import (
	"encoding/json"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/internal/core"
	"github.com/chartgate/chartgate/statechart"
)

// maxDataDepth is core.MaxDataDepth.
const maxDataDepth = core.MaxDataDepth

// arguments are a call's arguments as the gate uses them, decoded once.
type arguments struct {
	raw     json.RawMessage // as the front door gave them
	bounded bool            // checked against the bounds
	decoded bool
	value   any // the decoded arguments; {} when absent or not JSON
}

// input returns the decoded arguments of a call.
func (c *gatedCall) input() any {
	if !c.args.decoded {
		c.args.value = decodeJSON(c.rawArguments())
		c.args.decoded = true
	}
	return c.args.value
}

// rawArguments returns a call's arguments as JSON, as its front door gave
// them, or nil (an event sent from outside MCP, a job's report).
func (c *gatedCall) rawArguments() json.RawMessage {
	return c.args.raw
}

// toolOutcome is what a call's tool did, as the commit reads it, in no
// transport's terms.
type toolOutcome struct {
	ok     bool // it succeeded, so its event is sent
	output any  // its structured result (any Go value, or JSON), nil if none
}

// outcomeOf is a front door's gate.Outcome as the commit reads it.
func outcomeOf(o gate.Outcome) toolOutcome {
	out := toolOutcome{ok: !o.Failed}
	if len(o.Output) > 0 {
		out.output = json.RawMessage(o.Output)
	}
	return out
}

// word names how a call that ran ended, for its history entry.
func (o toolOutcome) word() string {
	if o.ok {
		return "ran"
	}
	return "failed"
}

// callEvent builds the event of a call whose tool succeeded with o.
func (g *gateCore) callEvent(c *gatedCall, o toolOutcome) statechart.Event {
	if c.kind == callTransition || c.kind == callSend {
		return c.event
	}
	if g.dataless && g.onTrans == nil && g.hlimit == 0 {
		return g.event(c.info.Event, c.name, nil, nil) // nobody would look at the data
	}
	return g.event(c.info.Event, c.name, c.input(), normalize(o.output))
}

// event builds the event a successful call sends: the type, plus "tool",
// "input" (the call's arguments) and "output" (its structured result).
func (g *gateCore) event(typ, tool string, input, output any) statechart.Event {
	if input == nil {
		input = map[string]any{}
	}
	data := map[string]any{"tool": tool, "input": input}
	if output != nil {
		data["output"] = output
	}
	return statechart.Event{Type: typ, Data: data}
}

// decodeJSON decodes a call's arguments for the event; invalid or absent
// arguments give an empty object.
func decodeJSON(raw json.RawMessage) any {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil || v == nil {
		return map[string]any{}
	}
	return v
}

// normalize turns a structured result (any Go value) into JSON-shaped
// values (maps, slices, float64...), as guards expect.
func normalize(v any) any {
	if v == nil {
		return nil
	}
	if raw, ok := v.(json.RawMessage); ok {
		return decodeJSON(raw)
	}
	if jsonShaped(v, 0) {
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}

// jsonShaped reports whether v is already made of the values
// encoding/json decodes into (and is not too deep to check).
func jsonShaped(v any, depth int) bool {
	if depth > 32 {
		return false
	}
	switch x := v.(type) {
	case nil, string, float64, bool:
		return true
	case map[string]any:
		for _, e := range x {
			if !jsonShaped(e, depth+1) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range x {
			if !jsonShaped(e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}
