// This file defines Machine, the compiled flat machine, and its Engine
// methods. Transitions are looked up in a table built at compile time
// (state index × event index → target index), which holds no state and is
// shared by every goroutine.

package flat

import (
	"context"
	"fmt"
	"time"

	"github.com/tidwall/gjson"

	"github.com/chartgate/chartgate/internal/jsonx"
	"github.com/chartgate/chartgate/statechart"
)

// Machine is a compiled flat machine. It implements [statechart.Engine],
// is immutable and is safe for concurrent use: every instance lives in the
// [*State] values its methods return.
type Machine struct {
	id          string
	description string
	meta        any
	initial     int    // index of the initial state
	nodes       []node // the states, in document order

	eventIdx map[string]int // event type -> its index in events
	events   []string       // event types, in document order
	next     []int32        // cell (node*len(events)+event index) -> target node, or -1 for none
	far      map[int]int32  // cell -> target node, instead of next when a table would be mostly empty
	states   []*State       // node index -> its active or done State
}

var _ statechart.Engine = (*Machine)(nil)

// node is one state of a flat machine.
type node struct {
	key         string
	id          string // XState's default id: machine id + "." + key
	path        jsonx.Path
	final       bool
	description string
	meta        any
	on          gjson.Result // the raw "on", read by the loader's second pass
	transitions []edge       // in the order of XState's transition map
	value       any          // key, boxed once
	persisted   []byte       // `,"value":…,"context":{},…,"nodes":[…]}` of MarshalJSON
}

// edge is one transition: event type to target state.
type edge struct {
	event  string
	target int
}

// Compile reads a machine config in the flat form and compiles it. On
// failure the error is a [statechart.ErrorList] holding every problem, each
// with its JSON path.
func Compile(data []byte) (*Machine, error) {
	m, errs := parse(data)
	if len(errs) > 0 {
		return nil, errs
	}
	m.build()
	return m, nil
}

// IsFlat reports whether data is a valid machine config in the flat form,
// that is whether [Compile] accepts it. Use it to choose the engine: a
// config that IsFlat accepts runs the same on this package and on
// [statechart.Compile]; any other goes to statechart.Compile, which also
// has the better error messages for configs that are not flat.
func IsFlat(data []byte) bool {
	_, errs := parse(data)
	return len(errs) == 0
}

// build precomputes the states and the transition table.
func (m *Machine) build() {
	m.states = make([]*State, len(m.nodes))
	for i := range m.nodes {
		n := &m.nodes[i]
		n.value = n.key
		st := statechart.StatusActive
		if n.final {
			st = statechart.StatusDone
		}
		m.states[i] = &State{m: m, node: i, status: st}
		b := []byte(`,"value":`)
		b = jsonx.AppendString(b, n.key)
		b = append(b, `,"context":{},"historyValue":{},"children":{},"nodes":[`...)
		b = jsonx.AppendString(b, m.id)
		b = append(b, ',')
		b = jsonx.AppendString(b, n.id)
		n.persisted = append(b, "]}"...)
	}
	m.eventIdx = map[string]int{}
	for i := range m.nodes {
		for _, e := range m.nodes[i].transitions {
			if _, ok := m.eventIdx[e.event]; !ok {
				m.eventIdx[e.event] = len(m.events)
				m.events = append(m.events, e.event)
			}
		}
	}
	edges := 0
	for i := range m.nodes {
		edges += len(m.nodes[i].transitions)
	}
	m.buildTable(denseTable(len(m.nodes)*len(m.events), edges))
}

// denseTable reports whether a machine whose table has cells cells, edges
// of them transitions, gets a dense table: always when it is small, and
// otherwise only when it is not mostly empty, so that a config of many
// states and many events, each handled in few states, stays in memory
// proportional to its size.
func denseTable(cells, edges int) bool {
	return cells <= 1<<16 || cells <= 8*edges
}

// buildTable fills next (dense) or far with every transition.
func (m *Machine) buildTable(dense bool) {
	m.next, m.far = nil, nil
	if dense {
		m.next = make([]int32, len(m.nodes)*len(m.events))
		for i := range m.next {
			m.next[i] = -1
		}
	} else {
		m.far = map[int]int32{}
	}
	for i := range m.nodes {
		for _, e := range m.nodes[i].transitions {
			cell := i*len(m.events) + m.eventIdx[e.event]
			if dense {
				m.next[cell] = int32(e.target)
			} else {
				m.far[cell] = int32(e.target)
			}
		}
	}
}

// target returns the state that the transition of state node for event
// type ev enters, and false if node has no transition for ev.
func (m *Machine) target(node int, ev string) (int, bool) {
	e, ok := m.eventIdx[ev]
	if !ok {
		return 0, false
	}
	cell := node*len(m.events) + e
	if m.next == nil {
		t, ok := m.far[cell]
		return int(t), ok
	}
	t := m.next[cell]
	return int(t), t >= 0
}

// ID returns the machine id ("(machine)" when the config has none, as in
// XState).
func (m *Machine) ID() string { return m.id }

// Events returns every event type the machine handles in some state, in
// document order, without duplicates.
func (m *Machine) Events() []string { return append([]string(nil), m.events...) }

// Nodes describes the machine root (a compound node) and then every state,
// in document order, the way [statechart.Machine.Nodes] does.
func (m *Machine) Nodes() []statechart.Node {
	out := make([]statechart.Node, 0, len(m.nodes)+1)
	out = append(out, statechart.Node{
		ID:          m.id,
		Type:        "compound",
		Initial:     m.nodes[m.initial].id,
		Meta:        m.meta,
		Description: m.description,
	})
	for _, n := range m.nodes {
		d := statechart.Node{ID: n.id, Key: n.key, Parent: m.id, Type: "atomic", Meta: n.meta, Description: n.description}
		if n.final {
			d.Type = "final"
		}
		for _, e := range n.transitions {
			d.Transitions = append(d.Transitions, statechart.TransitionInfo{Event: e.event, Targets: []string{m.nodes[e.target].id}})
		}
		out = append(out, d)
	}
	return out
}

// Start returns the initial state of a new instance: the initial state,
// with status done if it is a final state.
func (m *Machine) Start(ctx context.Context, now time.Time) (statechart.State, error) {
	return m.states[m.initial], nil
}

// Send processes one event. An event the current state has no transition
// for is ignored: s is returned, without an error, as XState does. So is
// every event sent to a state whose status is not active: once a final state
// is entered the instance is done and stays where it is.
func (m *Machine) Send(ctx context.Context, s statechart.State, ev statechart.Event, now time.Time) (statechart.State, error) {
	st, err := m.own(s)
	if err != nil {
		return s, err
	}
	if st.status != statechart.StatusActive {
		return s, nil
	}
	t, ok := m.target(st.node, ev.Type)
	if !ok || t == st.node {
		return s, nil
	}
	return m.states[t], nil
}

// Advance returns s: a flat machine has no delayed transitions.
func (m *Machine) Advance(ctx context.Context, s statechart.State, now time.Time) (statechart.State, error) {
	if _, err := m.own(s); err != nil {
		return s, err
	}
	return s, nil
}

// Can reports whether the current state of s has a transition for the
// event. Like XState's snapshot.can it does not look at the status: in a
// done instance it reports the transitions of the final state, which Send
// will not take.
func (m *Machine) Can(ctx context.Context, s statechart.State, ev statechart.Event) (bool, error) {
	st, err := m.own(s)
	if err != nil {
		return false, err
	}
	_, ok := m.target(st.node, ev.Type)
	return ok, nil
}

// own returns s as a state of m.
func (m *Machine) own(s statechart.State) (*State, error) {
	st, ok := s.(*State)
	if !ok || st == nil || st.m != m {
		return nil, fmt.Errorf("flat: state %T does not belong to machine %q", s, m.id)
	}
	return st, nil
}
