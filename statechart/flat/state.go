// This file defines State, the immutable state of one flat machine
// instance, its persisted form (the same as statechart.Snapshot's) and
// Restore.

package flat

import (
	"fmt"

	"github.com/tidwall/gjson"

	"github.com/chartgate/chartgate/internal/hint"
	"github.com/chartgate/chartgate/internal/jsonx"
	"github.com/chartgate/chartgate/statechart"
)

// State is the state of one instance of a flat machine. It implements
// [statechart.State] and is immutable. A machine shares one State per
// state (two per final state) between all its instances, so states compare
// equal with == exactly when they are the same state with the same status.
type State struct {
	m      *Machine
	node   int
	status statechart.Status
}

var _ statechart.State = (*State)(nil)

// Machine returns the machine the state belongs to.
func (s *State) Machine() *Machine { return s.m }

// Name returns the key of the current state.
func (s *State) Name() string { return s.m.nodes[s.node].key }

// Value returns the state value in XState's shape: the key of the current
// state, as a string.
func (s *State) Value() any { return s.m.nodes[s.node].value }

// Status returns active, or done once a final state is entered (stopped
// only for a restored stopped state).
func (s *State) Status() statechart.Status { return s.status }

// Context returns a new empty map: a flat machine has no context.
func (s *State) Context() map[string]any { return map[string]any{} }

// StateIDs returns the ids of the active state nodes, root first: the
// machine id and the default id of the current state ("<machine id>.<key>").
func (s *State) StateIDs() []string {
	return []string{s.m.id, s.m.nodes[s.node].id}
}

// MarshalJSON writes the persisted form, the same as
// [statechart.Snapshot.MarshalJSON] writes for the same machine and state:
//
//	{"status":"active","value":"idle","context":{},"historyValue":{},"children":{},"nodes":["job","job.idle"]}
//
// so a state written here restores with [statechart.Machine.Restore], and
// one written by the full interpreter restores with [Machine.Restore].
func (s *State) MarshalJSON() ([]byte, error) {
	p := s.m.nodes[s.node].persisted
	b := make([]byte, 0, len(`{"status":"stopped"`)+len(p))
	b = append(b, `{"status":`...)
	b = jsonx.AppendString(b, string(s.status))
	return append(b, p...), nil
}

// Restore reads a state written by [State.MarshalJSON], by
// [statechart.Snapshot.MarshalJSON] for the same machine, or by XState's
// getPersistedSnapshot. The value must name a state; the status must be
// active (or absent), done, or stopped, and agree with the state (done
// exactly in final states); the optional "nodes" must be the root and that
// state. Context, history, output, error and scheduled events must be empty,
// as they always are for a flat machine; "children" and unknown keys are
// ignored, as the full interpreter does.
func (m *Machine) Restore(data []byte) (statechart.State, error) {
	s, err := m.restore(data)
	if err != nil {
		return nil, fmt.Errorf("flat: restore: %w", err)
	}
	return s, nil
}

func (m *Machine) restore(data []byte) (*State, error) {
	if e := checkDocument(data); e != nil {
		return nil, e
	}
	doc := gjson.ParseBytes(data)
	if !doc.IsObject() {
		return nil, fmt.Errorf("a persisted state must be a JSON object, not %s", jsonx.Kind(doc))
	}
	var dup string
	fields := map[string]gjson.Result{}
	for _, mb := range jsonx.Members(doc, func(k string) {
		if dup == "" {
			dup = k
		}
	}) {
		fields[mb.Key] = mb.Value
	}
	if dup != "" {
		return nil, fmt.Errorf("duplicate key %q", dup)
	}

	status := statechart.StatusActive
	switch v := fields["status"]; {
	case !v.Exists():
	case v.Type != gjson.String:
		return nil, fmt.Errorf("status: must be a string, not %s", jsonx.Kind(v))
	default:
		switch st := statechart.Status(v.String()); st {
		case statechart.StatusActive, statechart.StatusDone, statechart.StatusStopped:
			status = st
		case statechart.StatusError:
			return nil, fmt.Errorf(`status: a flat machine never fails, so it cannot restore status "error"`)
		default:
			return nil, fmt.Errorf("status: unknown status %q", st)
		}
	}

	v := fields["value"]
	if v.Type != gjson.String {
		return nil, fmt.Errorf("value: must be the name of a state of machine %q, not %s", m.id, jsonx.Kind(v))
	}
	idx := -1
	for i, n := range m.nodes {
		if n.key == v.String() {
			idx = i
			break
		}
	}
	if idx < 0 {
		keys := make([]string, len(m.nodes))
		for i, n := range m.nodes {
			keys[i] = n.key
		}
		return nil, fmt.Errorf("value: %q is not a state of machine %q%s", v.String(), m.id, hint.DidYouMean(v.String(), keys))
	}
	n := &m.nodes[idx]

	if ns := fields["nodes"]; ns.Exists() && ns.Type != gjson.Null {
		if !ns.IsArray() {
			return nil, fmt.Errorf("nodes: must be an array of state ids, not %s", jsonx.Kind(ns))
		}
		ids := ns.Array()
		ok := len(ids) == 2
		for _, id := range ids {
			ok = ok && id.Type == gjson.String && (id.String() == m.id || id.String() == n.id)
		}
		if !ok || ids[0].String() == ids[1].String() {
			return nil, fmt.Errorf("nodes: %s does not match value %q: want [%q, %q]", ns.Raw, n.key, m.id, n.id)
		}
	}

	for _, k := range []string{"context", "historyValue", "scheduledEvents"} {
		if f := fields[k]; !isEmpty(f) {
			return nil, fmt.Errorf("%s: must be empty for a flat machine, not %s", k, f.Raw)
		}
	}
	if f := fields["output"]; f.Exists() && f.Type != gjson.Null {
		return nil, fmt.Errorf("output: a flat machine has no output, but got %s", f.Raw)
	}
	if f := fields["error"]; f.Exists() && f.Type != gjson.Null && f.String() != "" {
		return nil, fmt.Errorf("error: a flat machine never fails, but got %s", f.Raw)
	}

	switch {
	case status == statechart.StatusStopped:
		return &State{m: m, node: idx, status: status}, nil
	case n.final && status != statechart.StatusDone:
		return nil, fmt.Errorf("status: %q is a final state, so the status is %q, not %q", n.key, statechart.StatusDone, status)
	case !n.final && status == statechart.StatusDone:
		return nil, fmt.Errorf("status: %q is not a final state, so the status cannot be %q", n.key, status)
	}
	return m.states[idx], nil
}
