// This file defines Event, the message a machine reacts to, and the event
// types XState generates itself.

package statechart

import (
	"encoding/json"
	"errors"
	"strings"
)

// Event is an XState event: a type plus any other fields. In JSON it is one
// flat object, {"type": "ADD_ITEM", "sku": "a1"}; Data holds every field
// but "type".
type Event struct {
	Type string
	Data map[string]any
}

// NewEvent returns an event of the given type with no data.
func NewEvent(typ string) Event { return Event{Type: typ} }

// Field returns the value of a field of the event ("type" included) and
// whether it is present.
func (e Event) Field(name string) (any, bool) {
	if name == "type" {
		return e.Type, true
	}
	v, ok := e.Data[name]
	return v, ok
}

// object returns the event as one JSON-shaped map, as guards see it.
func (e Event) object() map[string]any {
	m := make(map[string]any, len(e.Data)+1)
	for k, v := range e.Data {
		m[k] = v
	}
	m["type"] = e.Type
	return m
}

// MarshalJSON writes the event as one flat object.
func (e Event) MarshalJSON() ([]byte, error) {
	return json.Marshal(e.object())
}

// UnmarshalJSON reads a flat event object; "type" must be a non-empty string.
func (e *Event) UnmarshalJSON(b []byte) error {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	t, ok := m["type"].(string)
	if !ok || t == "" {
		return errors.New(`event needs a non-empty string "type"`)
	}
	delete(m, "type")
	e.Type = t
	e.Data = nil
	if len(m) > 0 {
		e.Data = m
	}
	return nil
}

// Event types that XState generates; the machine may handle them under "on".
const (
	// EventInit is the event of the initial macrostep ("xstate.init").
	EventInit = "xstate.init"
	// EventStop stops a machine when sent to it ("xstate.stop").
	EventStop        = "xstate.stop"
	errorActorPrefix = "xstate.error.actor"
	// doneStatePrefix starts the event raised when a compound state reaches
	// a final child, or a parallel state has every region final.
	doneStatePrefix = "xstate.done.state."
	afterPrefix     = "xstate.after."
)

// matchesEventDescriptor reports whether an event type matches a descriptor:
// exactly, "*" (anything), or a "prefix.*" partial wildcard that matches the
// prefix itself and every event below it. It follows XState's
// matchesEventDescriptor: "foo" matches only "foo", "foo.*" matches "foo",
// "foo.x" and "foo.x.y" but not "foobar".
func matchesEventDescriptor(eventType, descriptor string) bool {
	if descriptor == eventType || descriptor == "*" {
		return true
	}
	if !strings.HasSuffix(descriptor, ".*") {
		return false
	}
	prefix := descriptor[:len(descriptor)-2]
	// An infix wildcard ("a.*.b.*") matches nothing, as in XState.
	if prefix == "*" || strings.HasPrefix(prefix, "*.") || strings.Contains(prefix, ".*.") || strings.HasSuffix(prefix, ".*") {
		return false
	}
	// Every token of the prefix must equal the event's token at the same
	// position; the event may have more tokens.
	if !strings.HasPrefix(eventType, prefix) {
		return false
	}
	return len(eventType) == len(prefix) || eventType[len(prefix)] == '.'
}
