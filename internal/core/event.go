// This file builds the event a successful call sends: its type, the
// tool, the call's arguments and its structured result as JSON values.

package core

import (
	"encoding/json"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/statechart/flat"
)

// maxDataDepth is core.MaxDataDepth.
const maxDataDepth = MaxDataDepth

// arguments are a call's arguments as the gate uses them, decoded once.
type arguments struct {
	Raw     json.RawMessage // as the front door gave them
	bounded bool            // checked against the bounds
	decoded bool
	value   any // the decoded arguments; {} when absent or not JSON
}

// input returns the decoded arguments of a call.
func (c *Call) input() any {
	if !c.Args.decoded {
		c.Args.value = decodeJSON(c.RawArguments())
		c.Args.decoded = true
	}
	return c.Args.value
}

// RawArguments returns a call's arguments as JSON, as its front door gave
// them, or nil (an event sent from outside MCP, a job's report).
func (c *Call) RawArguments() json.RawMessage {
	return c.Args.Raw
}

// ToolOutcome is what a call's tool did, as the commit reads it, in no
// transport's terms.
type ToolOutcome struct {
	Ok     bool // it succeeded, so its event is sent
	Output any  // its structured result (any Go value, or JSON), nil if none
}

// outcomeOf is a front door's gate.Outcome as the commit reads it.
func outcomeOf(o gate.Outcome) ToolOutcome {
	out := ToolOutcome{Ok: !o.Failed}
	if len(o.Output) > 0 {
		out.Output = json.RawMessage(o.Output)
	}
	return out
}

// word names how a call that ran ended, for its history entry.
func (o ToolOutcome) word() string {
	if o.Ok {
		return "ran"
	}
	return "failed"
}

// callEvent builds the event of a call whose tool succeeded with o.
func (g *Core) callEvent(c *Call, o ToolOutcome) statechart.Event {
	if c.Kind == CallTransition || c.Kind == CallSend {
		return c.Event
	}
	if g.dataless && g.onTrans == nil {
		if g.hlimit == 0 {
			return g.Event(c.Info.Event, c.Name, nil, nil) // nobody would look at the data
		}
		if c.Door != nil {
			// The transition goes to the front door, which shows its event's
			// type only: the data is for the history entry, which writes it
			// from the arguments as they came (sparse).
			return statechart.Event{Type: c.Info.Event}
		}
	}
	return g.Event(c.Info.Event, c.Name, c.input(), normalize(o.Output))
}

// sparse returns the data a call's event (from callEvent) would carry but
// does not, for its history entry; false if the event carries its data.
func (g *Core) sparse(c *Call, ev statechart.Event, o ToolOutcome) (callData, bool) {
	if ev.Data != nil || c.Kind != CallTool {
		return callData{}, false
	}
	return callData{tool: c.Name, args: c.RawArguments(), output: normalize(o.Output)}, true
}

// dataReader is implemented by engines that can tell whether they read
// event data ([statechart.Machine.ReadsEventData]).
type dataReader interface{ ReadsEventData() bool }

// ignoresData reports whether an engine goes to the same state whatever
// the data of the events it is sent.
func ignoresData(e statechart.Engine) bool {
	if _, ok := e.(*flat.Machine); ok {
		return true
	}
	r, ok := e.(dataReader)
	return ok && !r.ReadsEventData()
}

// Event builds the event a successful call sends: the type, plus "tool",
// "input" (the call's arguments) and "output" (its structured result).
func (g *Core) Event(typ, tool string, input, output any) statechart.Event {
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
