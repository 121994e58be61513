// This file defines Snapshot, the immutable state of one machine instance:
// its state value in XState's JSON shape, status, context, tags, and the
// persisted form that restores on another process (history and pending
// delayed events included).

package statechart

import (
	"errors"
	"slices"
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
// functions that process events return a new Snapshot; only
// [Machine.TransitionInto] writes into a Snapshot, one the caller hands it
// as storage.
type Snapshot struct {
	machine *Machine
	status  Status
	context map[string]any // copy-on-write: never modified once shared
	// err is the error of status error; XState's snapshot.error is derived
	// from it (see errorValue).
	err     error
	nodes   []int         // active configuration in XState's _nodes order
	history map[int][]int // history node -> the nodes it remembers; copy-on-write
	timers  *timerQueue   // pending delayed events; copy-on-write (nil: none)
	seq     uint64        // scheduling counter, orders timers with equal due times
	ext     *snapshotExt  // what most snapshots do not have; copy-on-write (nil: none)
	// own: the storage of a snapshot that TransitionInto writes, which
	// changes in place (nil for every other snapshot: immutable).
	own *snapshotBuffer
}

// snapshotExt holds the parts of a snapshot that most snapshots do not
// have, so that the snapshot of a plain machine stays small to copy.
type snapshotExt struct {
	output    any
	hasOutput bool       // output is defined (it may be null)
	children  *childList // child actors; immutable once shared (nil: none)
	sessions  uint64     // the root's: session ids given out in its actor system
}

// noExt is what a snapshot without ext reads.
var noExt snapshotExt

func (s *Snapshot) x() *snapshotExt {
	if s.ext == nil {
		return &noExt
	}
	return s.ext
}

// ownExt gives s an ext of its own, a copy of the one it shares, to change.
func (s *Snapshot) ownExt() *snapshotExt {
	e := new(snapshotExt)
	if s.ext != nil {
		*e = *s.ext
	}
	s.ext = e
	return e
}

// setOutput sets the machine's output.
func (s *Snapshot) setOutput(v any, ok bool) {
	if !ok && s.ext == nil {
		return
	}
	e := s.ownExt()
	e.output, e.hasOutput = v, ok
}

// setChildren sets the children.
func (s *Snapshot) setChildren(l *childList) {
	if l == nil && s.ext == nil {
		return
	}
	s.ownExt().children = l
}

// setSessions sets the session counter.
func (s *Snapshot) setSessions(n uint64) {
	if n == 0 && s.ext == nil {
		return
	}
	s.ownExt().sessions = n
}

// Machine returns the machine the snapshot belongs to.
func (s *Snapshot) Machine() *Machine { return s.machine }

// Status returns the snapshot's status.
func (s *Snapshot) Status() Status { return s.status }

// Context returns the context. It must not be modified. For a snapshot
// that [Machine.TransitionInto] wrote, the map is valid until its next
// call.
func (s *Snapshot) Context() map[string]any {
	s.flush()
	return s.context
}

// Output returns the machine's output once it is done (nil otherwise).
func (s *Snapshot) Output() any { return s.x().output }

// HasOutput reports whether the machine is done with a defined output
// (which may be JSON null).
func (s *Snapshot) HasOutput() bool { return s.x().hasOutput }

// Err returns the error that put the snapshot in status error.
func (s *Snapshot) Err() error { return s.err }

// Value returns the state value in XState's shape: a string for an atomic
// child of the root ("idle"), nested maps for compound and parallel states
// ({"payment": "card"}), and an empty map for an atomic region of a parallel
// state.
func (s *Snapshot) Value() any {
	return s.machine.stateValue(s.nodes)
}

// stateValue is the state value of the configuration nodes.
func (m *Machine) stateValue(nodes []int) any {
	if n, ok := m.topLeaf(nodes); ok {
		return m.nodes[n].key
	}
	return m.valueOf(0, m.adjacency(m.allStateNodes(nodes)))
}

// topLeaf returns the active state of a configuration that is a compound
// root and one of its atomic or final children (every state of a flat
// machine): its state value is that child's key, and its active nodes are
// the root and the child, which allStateNodes would give.
func (m *Machine) topLeaf(nodes []int) (int, bool) {
	if len(nodes) != 2 || m.nodes[0].kind != kindCompound {
		return 0, false
	}
	n := nodes[1]
	if nodes[0] != 0 {
		n = nodes[0]
		if nodes[1] != 0 {
			return 0, false
		}
	}
	if k := m.nodes[n]; n != 0 && k.parent == 0 && (k.kind == kindAtomic || k.kind == kindFinal) {
		return n, true
	}
	return 0, false
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

// allStateNodes is XState's getAllStateNodes, insertion order included:
// the nodes; then, for each node in turn (new ones too), the initial
// descendants of a compound state that had no active child in the original
// configuration and of each missing parallel region; then every ancestor.
// A configuration from XState's own quirks (a history state restoring a
// region without its parallel parent) gets its state value this way.
func (m *Machine) allStateNodes(nodes []int) []int {
	in := newNodeMarks(m, 2*len(nodes))
	hadChild := newNodeMarks(m, len(nodes))
	order := make([]int, 0, len(nodes)+4)
	add := func(n int) {
		if !in.has(n) {
			in.add(n)
			order = append(order, n)
		}
	}
	for _, n := range nodes {
		add(n)
	}
	for _, n := range nodes {
		if p := m.nodes[n].parent; p >= 0 && in.has(p) {
			hadChild.add(p)
		}
	}
	for i := 0; i < len(order); i++ {
		n := m.nodes[order[i]]
		switch n.kind {
		case kindCompound:
			if !hadChild.has(order[i]) {
				m.initialStateNodes(order[i], add)
			}
		case kindParallel:
			for _, c := range n.regions {
				if !in.has(c) {
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
	if n, ok := s.machine.topLeaf(s.nodes); ok {
		return []string{s.machine.nodes[0].id, s.machine.nodes[n].id}
	}
	return s.machine.stateIDsOf(s.nodes)
}

// stateIDsOf returns the ids of the state nodes a configuration makes
// active (its nodes and their ancestors), in document order.
func (m *Machine) stateIDsOf(nodes []int) []string {
	all := m.allStateNodes(nodes)
	slices.Sort(all)
	ids := make([]string, len(all))
	for i, n := range all {
		ids[i] = m.nodes[n].id
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
		for _, t := range s.machine.nodes[n].info().tags {
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
		for _, t := range s.machine.nodes[n].info().tags {
			set[t] = true
		}
	}
	return keysOf(set)
}

// Meta returns the meta of every active state node that has one, by id
// (XState's getMeta); a meta of JSON null is listed with the value nil.
func (s *Snapshot) Meta() map[string]any {
	out := map[string]any{}
	for _, n := range s.nodes {
		if node := s.machine.nodes[n]; node.info().hasMeta {
			out[node.id] = node.doc.meta
		}
	}
	return out
}

// field is a property of the snapshot as XState's snapshot object has it,
// for $ref paths through the snapshot of an xstate.snapshot.<id> event.
func (s *Snapshot) field(name string) (any, bool) {
	switch name {
	case "value":
		return s.Value(), true
	case "context":
		return s.context, true
	case "status":
		return string(s.status), true
	case "output":
		return s.x().output, s.x().hasOutput
	case "error":
		if s.status == StatusError {
			return s.errorValue(), true
		}
	case "tags":
		tags := s.Tags()
		out := make([]any, len(tags))
		for i, t := range tags {
			out[i] = t
		}
		return out, true
	}
	return nil, false
}

// errorValue is what XState's snapshot.error holds: the value an actor
// failed with when it is not a Go error (a rejection, a persisted error),
// else the Go error.
func (s *Snapshot) errorValue() any {
	var re *RejectionError
	if errors.As(s.err, &re) {
		return re.Value
	}
	if s.err == nil {
		return nil
	}
	return s.err
}

// PendingEvent is a delayed event waiting for its time.
type PendingEvent struct {
	ID    string    // the send id; for `after`, "xstate.after.<delay>.<stateId>"
	Event Event     // the event that will be processed
	Due   time.Time // when it will be processed
}

// Pending returns the delayed events of this machine waiting to be
// processed, earliest first (those of its child machines are in their own
// snapshots: [Child].Snapshot).
func (s *Snapshot) Pending() []PendingEvent {
	ts := s.timers.byDue()
	out := make([]PendingEvent, len(ts))
	for i, t := range ts {
		out[i] = PendingEvent{ID: t.id, Event: t.event, Due: t.due}
	}
	return out
}

// NextDue returns the time of the earliest pending delayed event of the
// machine or of its child machines, if any: when [Machine.Advance] (or
// AdvanceEffects) has something to do.
func (s *Snapshot) NextDue() (time.Time, bool) {
	t, ok := s.timers.next()
	due := t.due
	for _, e := range s.x().children.all() {
		if e.rec == nil || e.rec.snap == nil || e.rec.status != StatusActive {
			continue
		}
		if d, ok2 := e.rec.snap.NextDue(); ok2 && (!ok || d.Before(due)) {
			due, ok = d, true
		}
	}
	return due, ok
}

// clearTimers drops every pending delayed event.
func (s *Snapshot) clearTimers() { s.timers = nil }

// clone returns a copy that shares the copy-on-write parts. A copy of a
// configuration of up to len(snapshotCell{}.nodes) nodes lives in the same
// allocation as the snapshot: one allocation instead of two.
// The copy of a buffer (see TransitionInto) shares none of its storage.
func (s *Snapshot) clone() *Snapshot {
	var c *Snapshot
	if len(s.nodes) <= len(snapshotCell{}.nodes) {
		cell := &snapshotCell{s: *s}
		cell.s.nodes = cell.nodes[:copy(cell.nodes[:], s.nodes)]
		c = &cell.s
	} else {
		cc := *s
		cc.nodes = append([]int(nil), s.nodes...)
		c = &cc
	}
	if s.own != nil {
		s.detach(c)
	}
	return c
}

// snapshotCell is a Snapshot with room for its nodes. The snapshot owns
// the array, as clone's copy owns its slice, so appending in place is safe.
type snapshotCell struct {
	s     Snapshot
	nodes [4]int
}

// snapshotPair is a snapshot and a spare buffer for the next one, both
// with room for their nodes.
type snapshotPair struct{ s, spare snapshotCell }

// newSnapshotWithSpare returns an active snapshot of m in configuration
// nodes (copied) with context ctx, and spare, an empty snapshot no one
// holds for the first macrostep to work on (see cell.work), in one
// allocation when the configuration fits in a snapshotCell; otherwise
// spare is nil.
func newSnapshotWithSpare(m *Machine, nodes []int, ctx map[string]any) (s, spare *Snapshot) {
	if len(nodes) > len(snapshotCell{}.nodes) {
		return &Snapshot{machine: m, status: StatusActive, context: ctx, nodes: slices.Clone(nodes)}, nil
	}
	return new(snapshotPair).fill(m, nodes, ctx)
}

// fill is newSnapshotWithSpare in p, for a configuration that fits.
func (p *snapshotPair) fill(m *Machine, nodes []int, ctx map[string]any) (s, spare *Snapshot) {
	p.s.s = Snapshot{machine: m, status: StatusActive, context: ctx, nodes: p.s.nodes[:copy(p.s.nodes[:], nodes)]}
	p.spare.s.nodes = p.spare.nodes[:0]
	return &p.s.s, &p.spare.s
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

// xstateJSON is the snapshot as XState's snapshot.toJSON() gives it:
// status, output and error when defined, context, value, children (as
// actor references), history value and tags (in the order of the active
// states). A history value names states by id, where XState writes whole
// state node definitions.
func (s *Snapshot) xstateJSON() map[string]any {
	out := map[string]any{"status": string(s.status), "context": cloneValue(s.context), "value": s.Value()}
	if e := s.x(); e.hasOutput {
		out["output"] = cloneValue(e.output)
	}
	if s.status == StatusError {
		if v := s.errorValue(); v != nil {
			if _, isErr := v.(error); isErr {
				v = map[string]any{}
			}
			out["error"] = cloneValue(v)
		}
	}
	children := map[string]any{}
	for _, e := range s.x().children.all() {
		if !e.ghost() {
			children[e.id] = map[string]any{"xstate$$type": 1.0, "id": e.id}
		}
	}
	out["children"] = children
	hist := map[string]any{}
	for h, ns := range s.history {
		refs := make([]any, len(ns))
		for i, n := range ns {
			refs[i] = map[string]any{"id": s.machine.nodes[n].id}
		}
		hist[s.machine.nodes[h].id] = refs
	}
	out["historyValue"] = hist
	tags := []any{}
	seen := map[string]bool{}
	for _, n := range s.nodes {
		for _, t := range s.machine.nodes[n].info().tags {
			if !seen[t] {
				seen[t] = true
				tags = append(tags, t)
			}
		}
	}
	out["tags"] = tags
	return out
}
