// This file defines Snapshot, the immutable state of one machine instance:
// its state value in XState's JSON shape, status, context, tags, and the
// persisted form that restores on another process (history and pending
// delayed events included).

package statechart

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chartgate/chartgate/internal/jsonx"
)

// Status is the status of a snapshot, as in XState.
type Status string

const (
	StatusActive  Status = "active"  // processing events
	StatusDone    Status = "done"    // reached a top-level final state
	StatusError   Status = "error"   // a guard or action failed
	StatusStopped Status = "stopped" // stopped by its actor
)

// Snapshot is the state of one machine instance. It is immutable: the
// functions that process events return a new Snapshot.
type Snapshot struct {
	machine   *Machine
	status    Status
	context   map[string]any // copy-on-write: never modified once shared
	output    any
	hasOutput bool // output is defined (it may be null)
	err       error
	nodes     []int         // active configuration in XState's _nodes order
	history   map[int][]int // history node -> the nodes it remembers; copy-on-write
	timers    *timerQueue   // pending delayed events; copy-on-write (nil: none)
	seq       uint64        // scheduling counter, orders timers with equal due times
}

// Machine returns the machine the snapshot belongs to.
func (s *Snapshot) Machine() *Machine { return s.machine }

// Status returns the snapshot's status.
func (s *Snapshot) Status() Status { return s.status }

// Context returns the context. It must not be modified.
func (s *Snapshot) Context() map[string]any { return s.context }

// Output returns the machine's output once it is done (nil otherwise).
func (s *Snapshot) Output() any { return s.output }

// HasOutput reports whether the machine is done with a defined output
// (which may be JSON null).
func (s *Snapshot) HasOutput() bool { return s.hasOutput }

// Err returns the error that put the snapshot in status error.
func (s *Snapshot) Err() error { return s.err }

// Value returns the state value in XState's shape: a string for an atomic
// child of the root ("idle"), nested maps for compound and parallel states
// ({"payment": "card"}), and an empty map for an atomic region of a parallel
// state.
func (s *Snapshot) Value() any {
	return s.machine.valueOf(0, s.machine.adjacency(s.machine.allStateNodes(s.nodes)))
}

// valueOf follows XState's getValueFromAdj.
func (m *Machine) valueOf(n int, adj map[int][]int) any {
	kids := adj[n]
	if len(kids) == 0 {
		return map[string]any{}
	}
	if m.nodes[n].kind == kindCompound {
		if k := m.nodes[kids[0]]; k.kind == kindAtomic || k.kind == kindFinal {
			return k.key
		}
	}
	v := make(map[string]any, len(kids))
	for _, c := range kids {
		v[m.nodes[c].key] = m.valueOf(c, adj)
	}
	return v
}

// completeConfiguration returns, in set (allocated when nil or too
// short), the nodes plus what XState's getAllStateNodes adds for the state
// value (see allStateNodes).
func (m *Machine) completeConfiguration(nodes []int, set []bool) []bool {
	if len(set) != len(m.nodes) {
		set = make([]bool, len(m.nodes))
	} else {
		clear(set)
	}
	for _, n := range m.allStateNodes(nodes) {
		set[n] = true
	}
	return set
}

// allStateNodes is XState's getAllStateNodes, insertion order included:
// the nodes; then, for each node in turn (new ones too), the initial
// descendants of a compound state that had no active child in the original
// configuration and of each missing parallel region; then every ancestor.
// A configuration from XState's own quirks (a history state restoring a
// region without its parallel parent) gets its state value this way.
func (m *Machine) allStateNodes(nodes []int) []int {
	in := make([]bool, len(m.nodes))
	hadChild := make([]bool, len(m.nodes))
	order := make([]int, 0, len(nodes)+4)
	add := func(n int) {
		if !in[n] {
			in[n] = true
			order = append(order, n)
		}
	}
	for _, n := range nodes {
		add(n)
	}
	for _, n := range nodes {
		if p := m.nodes[n].parent; p >= 0 && in[p] {
			hadChild[p] = true
		}
	}
	for i := 0; i < len(order); i++ {
		n := m.nodes[order[i]]
		switch n.kind {
		case kindCompound:
			if !hadChild[order[i]] {
				m.initialStateNodes(order[i], add)
			}
		case kindParallel:
			for _, c := range n.children {
				if m.nodes[c].kind != kindHistory && !in[c] {
					m.initialStateNodes(c, add)
				}
			}
		}
	}
	for i := 0; i < len(order); i++ {
		for p := m.nodes[order[i]].parent; p >= 0; p = m.nodes[p].parent {
			add(p)
		}
	}
	return order
}

// adjacency returns each node's children in the configuration, in the
// order of nodes (XState's getAdjList).
func (m *Machine) adjacency(nodes []int) map[int][]int {
	adj := make(map[int][]int, len(nodes))
	for _, n := range nodes {
		if p := m.nodes[n].parent; p >= 0 {
			adj[p] = append(adj[p], n)
		}
	}
	return adj
}

// StateIDs returns the ids of the active state nodes, in document order,
// root first. A compound or parallel state is active while any of its
// descendants is.
func (s *Snapshot) StateIDs() []string {
	set := s.machine.completeConfiguration(s.nodes, nil)
	var ids []string
	for i, on := range set {
		if on {
			ids = append(ids, s.machine.nodes[i].id)
		}
	}
	return ids
}

// In reports whether the state node with the given id ("#id" or "id") is active.
func (s *Snapshot) In(id string) bool {
	n, ok := s.machine.byID[strings.TrimPrefix(id, "#")]
	if !ok {
		return false
	}
	for _, a := range s.nodes {
		if a == n {
			return true
		}
	}
	return false
}

// Matches reports whether the snapshot matches a partial state value, as
// XState's snapshot.matches does: "a", "a.b" and {"a": "b"} all match a
// state whose value is {"a": "b"}.
func (s *Snapshot) Matches(value any) bool {
	return matchesState(value, s.Value())
}

// HasTag reports whether any active state node has the tag.
func (s *Snapshot) HasTag(tag string) bool {
	for _, n := range s.nodes {
		for _, t := range s.machine.nodes[n].tags {
			if t == tag {
				return true
			}
		}
	}
	return false
}

// Tags returns the union of the tags of the active state nodes, sorted.
func (s *Snapshot) Tags() []string {
	set := map[string]bool{}
	for _, n := range s.nodes {
		for _, t := range s.machine.nodes[n].tags {
			set[t] = true
		}
	}
	return keysOf(set)
}

// Meta returns the meta of every active state node that has one, by id
// (XState's getMeta).
func (s *Snapshot) Meta() map[string]any {
	out := map[string]any{}
	for _, n := range s.nodes {
		if m := s.machine.nodes[n].meta; m != nil {
			out[s.machine.nodes[n].id] = m
		}
	}
	return out
}

// PendingEvent is a delayed event waiting for its time.
type PendingEvent struct {
	ID    string    // the send id; for `after`, "xstate.after.<delay>.<stateId>"
	Event Event     // the event that will be processed
	Due   time.Time // when it will be processed
}

// Pending returns the delayed events waiting to be processed, earliest first.
func (s *Snapshot) Pending() []PendingEvent {
	ts := s.timers.byDue()
	out := make([]PendingEvent, len(ts))
	for i, t := range ts {
		out[i] = PendingEvent{ID: t.id, Event: t.event, Due: t.due}
	}
	return out
}

// NextDue returns the time of the earliest pending delayed event, if any.
func (s *Snapshot) NextDue() (time.Time, bool) {
	t, ok := s.timers.next()
	return t.due, ok
}

// clearTimers drops every pending delayed event.
func (s *Snapshot) clearTimers() { s.timers = nil }

// clone returns a copy that shares the copy-on-write parts.
func (s *Snapshot) clone() *Snapshot {
	c := *s
	c.nodes = append([]int(nil), s.nodes...)
	return &c
}

// persisted is the JSON form of a snapshot. Its shape follows XState's
// getPersistedSnapshot (status, value, context, historyValue, children),
// plus what XState loses: the pending delayed events and the order of the
// active configuration.
type persisted struct {
	Status          Status                        `json:"status"`
	Value           any                           `json:"value"`
	Context         map[string]any                `json:"context"`
	Output          json.RawMessage               `json:"output,omitempty"`
	Error           string                        `json:"error,omitempty"`
	HistoryValue    map[string][]persistedNodeRef `json:"historyValue"`
	Children        map[string]any                `json:"children"`
	Nodes           []string                      `json:"nodes,omitempty"`
	ScheduledEvents []persistedTimer              `json:"scheduledEvents,omitempty"`
	Seq             uint64                        `json:"seq,omitempty"`
}

type persistedNodeRef struct {
	ID string `json:"id"`
}

type persistedTimer struct {
	ID    string    `json:"id"`
	Event Event     `json:"event"`
	Due   time.Time `json:"due"`
	Seq   uint64    `json:"seq"`
	Keyed bool      `json:"keyed,omitempty"`
}

// MarshalJSON writes the persisted form of the snapshot. Restore it with
// [Machine.Restore], on this process or another.
func (s *Snapshot) MarshalJSON() ([]byte, error) {
	p := persisted{
		Status:       s.status,
		Value:        s.Value(),
		Context:      s.context,
		HistoryValue: map[string][]persistedNodeRef{},
		Children:     map[string]any{},
		Seq:          s.seq,
	}
	if s.err != nil {
		p.Error = s.err.Error()
	}
	if s.hasOutput {
		out, err := json.Marshal(s.output)
		if err != nil {
			return nil, err
		}
		p.Output = out
	}
	for h, ns := range s.history {
		refs := make([]persistedNodeRef, len(ns))
		for i, n := range ns {
			refs[i] = persistedNodeRef{s.machine.nodes[n].id}
		}
		p.HistoryValue[s.machine.nodes[h].id] = refs
	}
	for _, n := range s.nodes {
		p.Nodes = append(p.Nodes, s.machine.nodes[n].id)
	}
	for _, t := range s.timers.bySeq() {
		p.ScheduledEvents = append(p.ScheduledEvents, persistedTimer{t.id, t.event, t.due, t.seq, s.timers.isKeyed(t)})
	}
	return json.Marshal(p)
}

// Restore reads a snapshot written by [Snapshot.MarshalJSON] (or XState's
// getPersistedSnapshot, whose children are ignored) and returns it as a
// snapshot of m. No entry actions run; pending delayed events are kept.
func (m *Machine) Restore(data []byte) (*Snapshot, error) {
	var p persisted
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("statechart: restore: %w", err)
	}
	s := &Snapshot{machine: m, status: p.Status, context: p.Context, seq: p.Seq}
	if len(p.Output) > 0 {
		s.hasOutput = true
		if err := json.Unmarshal(p.Output, &s.output); err != nil {
			return nil, fmt.Errorf("statechart: restore: output: %w", err)
		}
	}
	if s.context == nil {
		s.context = map[string]any{}
	}
	switch s.status {
	case StatusActive, StatusDone, StatusError, StatusStopped:
	case "":
		s.status = StatusActive
	default:
		return nil, fmt.Errorf("statechart: restore: unknown status %q", p.Status)
	}
	if p.Error != "" {
		s.err = errors.New(p.Error)
	}
	if len(p.Nodes) > 0 {
		for _, id := range p.Nodes {
			n, ok := m.byID[id]
			if !ok {
				return nil, fmt.Errorf("statechart: restore: %q is not a state of machine %q", id, m.id)
			}
			s.nodes = append(s.nodes, n)
		}
		// XState's own quirks can leave a configuration without some
		// ancestors (see allStateNodes), so only the basics are checked.
		if err := m.checkNodes(s.nodes); err != nil {
			return nil, fmt.Errorf("statechart: restore: %w", err)
		}
	} else {
		nodes, err := m.nodesForValue(p.Value)
		if err != nil {
			return nil, fmt.Errorf("statechart: restore: %w", err)
		}
		s.nodes = nodes
	}
	for hid, refs := range p.HistoryValue {
		h, ok := m.byID[hid]
		if !ok || m.nodes[h].kind != kindHistory {
			return nil, fmt.Errorf("statechart: restore: historyValue: %q is not a history state", hid)
		}
		if s.history == nil {
			s.history = map[int][]int{}
		}
		for _, r := range refs {
			n, ok := m.byID[r.ID]
			if !ok {
				return nil, fmt.Errorf("statechart: restore: historyValue[%q]: %q is not a state", hid, r.ID)
			}
			s.history[h] = append(s.history[h], n)
		}
	}
	for _, t := range p.ScheduledEvents {
		if s.timers == nil {
			s.timers = (*timerQueue)(nil).clone()
		}
		s.timers.push(timer{id: t.ID, event: t.Event, due: t.Due, seq: t.Seq}, t.Keyed)
		if t.Seq >= s.seq {
			s.seq = t.Seq + 1
		}
	}
	return s, nil
}

// ResolveState returns a snapshot in the given state value (partial values
// are completed with initial states, as XState's resolveState does) and
// context (nil means the machine's context). No actions run and no delayed
// events are scheduled.
func (m *Machine) ResolveState(value any, context map[string]any) (*Snapshot, error) {
	nodes, err := m.nodesForValue(value)
	if err != nil {
		return nil, err
	}
	if context == nil {
		context = cloneValue(m.context).(map[string]any)
	}
	s := &Snapshot{machine: m, status: StatusActive, context: context, nodes: nodes}
	set := make([]bool, len(m.nodes))
	for _, n := range nodes {
		set[n] = true
	}
	if m.isInFinalState(set, 0) {
		s.status = StatusDone
	}
	return s, nil
}

// nodesForValue returns the full configuration for a (partial) state value,
// in document order: the nodes the value names, their ancestors, and the
// initial descendants of any compound state the value leaves open.
func (m *Machine) nodesForValue(value any) ([]int, error) {
	set := make([]bool, len(m.nodes))
	set[0] = true
	if err := m.markValue(0, toStateValue(value), set, "value"); err != nil {
		return nil, err
	}
	// complete: every active compound needs one active child, every active
	// parallel all its regions (XState's getAllStateNodes).
	for i := 0; i < len(m.nodes); i++ {
		if !set[i] {
			continue
		}
		n := m.nodes[i]
		switch n.kind {
		case kindCompound:
			has := false
			for _, c := range n.children {
				has = has || set[c]
			}
			if !has {
				m.markInitial(i, set)
			}
		case kindParallel:
			for _, c := range n.children {
				if m.nodes[c].kind != kindHistory && !set[c] {
					m.markInitial(c, set)
				}
			}
		}
	}
	var out []int
	for i, on := range set {
		if on {
			out = append(out, i)
		}
	}
	return out, m.checkConfiguration(out)
}

func (m *Machine) markInitial(n int, set []bool) {
	set[n] = true
	switch m.nodes[n].kind {
	case kindCompound:
		init := m.nodes[n].initial.targets[0]
		if m.nodes[init].kind != kindHistory {
			m.markInitial(init, set)
			return
		}
		// an initial history state enters its default target
		for _, t := range m.historyDefaultTransition(init).targets {
			for p := m.nodes[t].parent; p >= 0 && p != n; p = m.nodes[p].parent {
				set[p] = true
			}
			m.markInitial(t, set)
		}
	case kindParallel:
		for _, c := range m.nodes[n].children {
			if m.nodes[c].kind != kindHistory {
				m.markInitial(c, set)
			}
		}
	}
}

func (m *Machine) markValue(n int, v any, set []bool, path string) error {
	child := func(key string) (int, error) {
		for _, c := range m.nodes[n].children {
			if m.nodes[c].key == key && m.nodes[c].kind != kindHistory {
				return c, nil
			}
		}
		return 0, fmt.Errorf("%s: state %q has no child %q", path, m.nodes[n].id, key)
	}
	switch x := v.(type) {
	case string:
		c, err := child(x)
		if err != nil {
			return err
		}
		set[c] = true
	case map[string]any:
		keys := keysOf(x)
		for _, k := range keys {
			c, err := child(k)
			if err != nil {
				return err
			}
			set[c] = true
			if err := m.markValue(c, x[k], set, path+"."+k); err != nil {
				return err
			}
		}
	case nil:
	default:
		return fmt.Errorf("%s: a state value is a string or an object, not %T", path, v)
	}
	return nil
}

// checkNodes verifies that a persisted configuration holds the root, no
// history state and no node twice.
func (m *Machine) checkNodes(nodes []int) error {
	seen := make([]bool, len(m.nodes))
	for _, n := range nodes {
		if seen[n] {
			return fmt.Errorf("state %q is listed twice", m.nodes[n].id)
		}
		seen[n] = true
		if m.nodes[n].kind == kindHistory {
			return fmt.Errorf("history state %q cannot be active", m.nodes[n].id)
		}
	}
	if !seen[0] {
		return errors.New("the configuration does not contain the root")
	}
	return nil
}

// checkConfiguration verifies that nodes is a legal configuration: the
// root, every parent of an active node, one child of each active compound
// state and every region of each active parallel state.
func (m *Machine) checkConfiguration(nodes []int) error {
	set := make([]bool, len(m.nodes))
	for _, n := range nodes {
		set[n] = true
	}
	if len(nodes) == 0 || !set[0] {
		return errors.New("the configuration does not contain the root")
	}
	for _, i := range nodes {
		n := m.nodes[i]
		if n.kind == kindHistory {
			return fmt.Errorf("history state %q cannot be active", n.id)
		}
		if n.parent >= 0 && !set[n.parent] {
			return fmt.Errorf("state %q is active but its parent is not", n.id)
		}
		count := 0
		for _, c := range n.children {
			if set[c] {
				count++
			}
		}
		switch {
		case n.kind == kindCompound && count != 1:
			return fmt.Errorf("compound state %q must have exactly one active child, has %d", n.id, count)
		case n.kind == kindParallel:
			for _, c := range n.children {
				if m.nodes[c].kind != kindHistory && !set[c] {
					return fmt.Errorf("region %q of parallel state %q is not active", m.nodes[c].id, n.id)
				}
			}
		}
	}
	return nil
}

// toStateValue turns "a.b.c" into {"a": {"b": "c"}}; other values pass.
func toStateValue(v any) any {
	s, ok := v.(string)
	if !ok || !strings.Contains(s, ".") {
		return v
	}
	path := jsonx.StatePath(s)
	var out any = path[len(path)-1]
	for i := len(path) - 2; i >= 0; i-- {
		out = map[string]any{path[i]: out}
	}
	return out
}

// matchesState is XState's matchesState(parent, child): dotted strings
// are expanded at every level.
func matchesState(parent, child any) bool {
	parent, child = toStateValue(parent), toStateValue(child)
	switch c := child.(type) {
	case string:
		p, ok := parent.(string)
		return ok && p == c
	case map[string]any:
		switch p := parent.(type) {
		case string:
			_, ok := c[p]
			return ok
		case map[string]any:
			for k, pv := range p {
				cv, ok := c[k]
				if !ok || !matchesState(pv, cv) {
					return false
				}
			}
			return true
		}
	}
	return false
}
