// This file defines the persisted form of a snapshot: MarshalJSON writes
// it, Restore reads it back and checks that it describes a state the
// machine can be in, and ResolveState builds a snapshot from a state value.

package statechart

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/chartgate/chartgate/internal/jsonx"
)

// persisted is the JSON form of a snapshot. Its shape is XState's
// getPersistedSnapshot (status, output, error, value, historyValue,
// context, children), plus what XState loses, in keys XState ignores: the
// pending delayed events, the order of the active configuration, the
// message of a Go error, and the session counter of the actor system.
type persisted struct {
	Status          Status                        `json:"status"`
	Value           any                           `json:"value"`
	Context         map[string]any                `json:"context"`
	Output          json.RawMessage               `json:"output,omitempty"`
	Error           json.RawMessage               `json:"error,omitempty"`
	HistoryValue    map[string][]persistedNodeRef `json:"historyValue"`
	Children        json.RawMessage               `json:"children"`
	ErrorMessage    string                        `json:"errorMessage,omitempty"`
	Nodes           []string                      `json:"nodes,omitempty"`
	ScheduledEvents []persistedTimer              `json:"scheduledEvents,omitempty"`
	Seq             uint64                        `json:"seq,omitempty"`
	Sessions        uint64                        `json:"sessions,omitempty"`
}

// restoring is persisted as Restore reads it: each delayed event on its
// own, so an error can say which one is wrong; the value as written, for
// its key order; and whether to restore as XState does.
type restoring struct {
	persisted
	ScheduledEvents []json.RawMessage `json:"scheduledEvents,omitempty"`
	rawValue        gjson.Result
	likeXState      bool
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
	To    string    `json:"to,omitempty"` // the session of the actor it is for
}

// persistedChild is a child in XState's persisted shape ({snapshot, src,
// systemId, syncSnapshot}), plus its session.
type persistedChild struct {
	Snapshot     json.RawMessage `json:"snapshot"`
	Src          string          `json:"src"`
	SystemID     string          `json:"systemId,omitempty"`
	SyncSnapshot bool            `json:"syncSnapshot"`
	Session      string          `json:"session,omitempty"`
}

// persistedLogicSnapshot is the persisted snapshot of a promise or
// callback child, as XState's logic persists it.
type persistedLogicSnapshot struct {
	Status Status          `json:"status"`
	Output json.RawMessage `json:"output,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
	Input  json.RawMessage `json:"input,omitempty"`
}

// MarshalJSON writes the persisted form of the snapshot: XState's
// persisted snapshot, which XState's createActor(machine, {snapshot})
// restores, with its children (a child machine with its own persisted
// snapshot), plus the pending delayed events that XState loses. Restore it
// with [Machine.Restore], on this process or another.
func (s *Snapshot) MarshalJSON() ([]byte, error) {
	return s.AppendJSON(make([]byte, 0, 256))
}

// AppendJSON appends what [Snapshot.MarshalJSON] writes to b and returns
// the extended buffer (b as far as it got, with the error, if the context,
// output or error value cannot be written as JSON). It writes the fields
// of the persisted form one by one, the bytes encoding/json would write
// for them, so that a caller that only needs the size (or keeps a buffer)
// pays for no reflection and no intermediate values.
func (s *Snapshot) AppendJSON(b []byte) ([]byte, error) {
	s.flush()
	m := s.machine
	b = append(b, `{"status":`...)
	b = jsonx.AppendString(b, string(s.status))
	b = append(b, `,"value":`...)
	if n, ok := s.machine.topLeaf(s.nodes); ok {
		b = jsonx.AppendString(b, m.nodes[n].key)
	} else {
		b = m.appendValue(b, 0, m.adjacency(m.allStateNodes(s.nodes)))
	}
	b = append(b, `,"context":`...)
	var err error
	if b, err = appendMarshaled(b, s.context); err != nil {
		return b, err
	}
	var errMsg string
	if e := s.x(); e.hasOutput {
		b = append(b, `,"output":`...)
		if b, err = appendMarshaled(b, e.output); err != nil {
			return b, err
		}
	}
	if s.status == StatusError {
		v, msg, err := marshalErrorValue(s.errorValue())
		if err != nil {
			return b, err
		}
		b = append(b, `,"error":`...)
		b = append(b, v...)
		errMsg = msg
	}
	b = append(b, `,"historyValue":{`...)
	if len(s.history) > 0 {
		hs := make([]int, 0, len(s.history))
		for h := range s.history {
			hs = append(hs, h)
		}
		// encoding/json orders a map's keys as strings.
		slices.SortFunc(hs, func(x, y int) int { return strings.Compare(m.nodes[x].id, m.nodes[y].id) })
		for i, h := range hs {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonx.AppendString(b, m.nodes[h].id)
			b = append(b, ":["...)
			for j, n := range s.history[h] {
				if j > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"id":`...)
				b = jsonx.AppendString(b, m.nodes[n].id)
				b = append(b, '}')
			}
			b = append(b, ']')
		}
	}
	b = append(b, `},"children":`...)
	if ch := s.x().children; ch != nil {
		children, err := marshalChildren(ch)
		if err != nil {
			return b, err
		}
		b = append(b, children...)
	} else {
		b = append(b, "{}"...)
	}
	if errMsg != "" {
		b = append(b, `,"errorMessage":`...)
		b = jsonx.AppendString(b, errMsg)
	}
	if len(s.nodes) > 0 {
		b = append(b, `,"nodes":[`...)
		for i, n := range s.nodes {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonx.AppendString(b, m.nodes[n].id)
		}
		b = append(b, ']')
	}
	if ts := s.timers.bySeq(); len(ts) > 0 {
		pts := make([]persistedTimer, len(ts))
		for i, t := range ts {
			pts[i] = persistedTimer{t.id, t.event, t.due, t.seq, s.timers.isKeyed(t), t.to}
		}
		b = append(b, `,"scheduledEvents":`...)
		if b, err = appendMarshaled(b, pts); err != nil {
			return b, err
		}
	}
	if s.seq != 0 {
		b = append(b, `,"seq":`...)
		b = strconv.AppendUint(b, s.seq, 10)
	}
	if n := s.x().sessions; n != 0 {
		b = append(b, `,"sessions":`...)
		b = strconv.AppendUint(b, n, 10)
	}
	return append(b, '}'), nil
}

// appendMarshaled appends v as encoding/json writes it.
func appendMarshaled(b []byte, v any) ([]byte, error) {
	if m, ok := v.(map[string]any); ok && len(m) == 0 {
		if m == nil {
			return append(b, "null"...), nil
		}
		return append(b, "{}"...), nil
	}
	out, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	return append(b, out...), nil
}

// marshalErrorValue writes what an actor failed with as XState persists
// it: a JSON value as it is, a Go error as {} (an Error object through
// JSON) with its message on the side.
func marshalErrorValue(v any) (json.RawMessage, string, error) {
	if err, ok := v.(error); ok || v == nil {
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		return json.RawMessage("{}"), msg, nil
	}
	b, err := json.Marshal(v)
	return b, "", err
}

// marshalChildren writes the children in their order (XState restores
// them in the order of the JSON object's keys). Entries without an actor
// are left out.
func marshalChildren(l *childList) (json.RawMessage, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	for _, e := range l.all() {
		if e.rec == nil {
			continue
		}
		snap, err := e.rec.marshalSnapshot()
		if err != nil {
			return nil, err
		}
		entry, err := json.Marshal(persistedChild{Snapshot: snap, Src: e.rec.src, SystemID: e.rec.systemID, SyncSnapshot: e.rec.sync, Session: e.rec.session})
		if err != nil {
			return nil, err
		}
		key, _ := json.Marshal(e.id)
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.Write(key)
		b.WriteByte(':')
		b.Write(entry)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshalSnapshot writes the persisted snapshot of a child.
func (r *childRecord) marshalSnapshot() (json.RawMessage, error) {
	if r.snap != nil {
		return r.snap.MarshalJSON()
	}
	p := persistedLogicSnapshot{Status: r.status}
	var err error
	if r.hasOutput {
		if p.Output, err = json.Marshal(r.output); err != nil {
			return nil, err
		}
	}
	if r.status == StatusError {
		if p.Error, _, err = marshalErrorValue(r.errValue); err != nil {
			return nil, err
		}
	}
	if r.hasInput {
		if p.Input, err = json.Marshal(r.input); err != nil {
			return nil, err
		}
	}
	return json.Marshal(p)
}

// errRestoredStatusError is the error of a snapshot restored with status
// error but no error message, so that Err is never nil for status error.
var errRestoredStatusError = errors.New("the snapshot was saved with status error and no message")

// Restore reads a snapshot written by [Snapshot.MarshalJSON] or by
// XState's getPersistedSnapshot and returns it as a snapshot of m. No entry
// actions run; pending delayed events are kept. Children are restored with
// the logic their src names in m's implementations (a child whose src
// names none is dropped, as XState does); a child machine's snapshot is
// restored by that machine. An [Actor] started from the snapshot starts
// its active children again (see [ActorOptions.Resume]).
//
// Restore accepts only a state the machine can be in, and says what is
// wrong otherwise: unknown state ids; an active history state; a
// configuration that is not legal (an active state whose parent is not, a
// compound state with no active child or with several, a parallel state
// missing a region) — though for a machine with history states, XState's
// history quirks (reproduced for conformance) can leave such
// configurations, so there only the basics are checked; a state value that
// disagrees with the configuration; a history value that names a state its
// history state cannot remember; output without status done, an error
// without status error, a done snapshot whose root is not final, delayed
// events on a snapshot that is not active, and two delayed events with one
// seq or one cancellable id. Whatever Restore accepts, MarshalJSON writes
// back in a form Restore accepts and reads as the same snapshot.
func (m *Machine) Restore(data []byte) (*Snapshot, error) {
	s, err := m.restore(data)
	if err != nil {
		return nil, fmt.Errorf("statechart: restore: %w", err)
	}
	return s, nil
}

// RestoreLikeXState reads a persisted snapshot as XState's restoreSnapshot
// does: like [Machine.Restore], except that the configuration comes from
// the state value, in XState's order, pending delayed events are dropped,
// in the snapshot and in its child machines', and a history value names
// states by id the way XState's getStateNodeById reads them (an id with a
// dot in it names nothing, and is forgotten). What XState's history quirks
// and the order of active states made of the configuration before it was
// persisted is then lost, as in XState, where Restore keeps it.
func (m *Machine) RestoreLikeXState(data []byte) (*Snapshot, error) {
	s, err := m.restoreAs(data, true)
	if err != nil {
		return nil, fmt.Errorf("statechart: restore: %w", err)
	}
	return s, nil
}

func (m *Machine) restore(data []byte) (*Snapshot, error) { return m.restoreAs(data, false) }

func (m *Machine) restoreAs(data []byte, likeXState bool) (*Snapshot, error) {
	var p restoring
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, err
	}
	p.rawValue, p.likeXState = gjson.GetBytes(data, "value"), likeXState
	if likeXState {
		p.ScheduledEvents = nil
	}
	s := &Snapshot{machine: m, status: p.Status, context: p.Context, seq: p.Seq}
	switch s.status {
	case StatusActive, StatusDone, StatusError, StatusStopped:
	case "":
		s.status = StatusActive
	default:
		return nil, fmt.Errorf("status: unknown status %q (active, done, error or stopped)", p.Status)
	}
	if s.context == nil {
		s.context = map[string]any{}
	}
	if len(p.Output) > 0 {
		if s.status != StatusDone {
			return nil, fmt.Errorf("output: only a done snapshot has an output, and this one is %s", s.status)
		}
		var out any
		if err := json.Unmarshal(p.Output, &out); err != nil {
			return nil, fmt.Errorf("output: %w", err)
		}
		s.setOutput(out, true)
	}
	if err := restoreError(s, p.Error, p.ErrorMessage); err != nil {
		return nil, err
	}
	s.setSessions(p.Sessions)
	if err := m.restoreNodes(s, &p); err != nil {
		return nil, err
	}
	if err := m.restoreHistory(s, &p); err != nil {
		return nil, err
	}
	if err := m.restoreTimers(s, &p); err != nil {
		return nil, err
	}
	if err := m.restoreChildren(s, p.Children, likeXState); err != nil {
		return nil, err
	}
	return s, nil
}

// stateNodesOfValue is XState's getAllStateNodes(getStateNodes(root,
// value)): the state nodes a persisted state value names, in the order
// XState lists them (which decides the order of eventless transitions), a
// string naming a key even with a dot in it. For a snapshot that is not
// active the configuration is not checked: XState's snapshot of a machine
// that failed to start may name a history state, and in a machine with
// history states only the basics are checked, as in checkNodes: XState's
// history quirks, which the interpreter reproduces, can persist a value
// with two children of one compound state, and XState restores it.
func (m *Machine) stateNodesOfValue(v gjson.Result, status Status) ([]int, error) {
	var list []int
	if err := m.stateNodesOf(0, v, &list, "value"); err != nil {
		return nil, err
	}
	nodes := m.allStateNodes(list)
	if status == StatusActive && !m.hasHistory {
		if err := m.checkConfiguration(nodes); err != nil {
			return nil, fmt.Errorf("value: %w", err)
		}
	}
	return nodes, nil
}

// stateNodesOf is XState's getStateNodes(node n, value v).
func (m *Machine) stateNodesOf(n int, v gjson.Result, out *[]int, path string) error {
	child := func(key string) (int, error) {
		if c, ok := m.childByKey(n, key); ok {
			return c, nil
		}
		return 0, fmt.Errorf("%s: state %q has no child %q", path, m.nodes[n].id, key)
	}
	switch {
	case v.Type == gjson.String:
		c, err := child(v.String())
		if err != nil {
			return err
		}
		*out = append(*out, n, c)
		return nil
	case v.IsObject():
		members := jsonx.Members(v, nil)
		*out = append(*out, 0, n)
		kids := make([]int, len(members))
		for i, mb := range members {
			c, err := child(mb.Key)
			if err != nil {
				return err
			}
			kids[i] = c
			*out = append(*out, c)
		}
		for i, mb := range members {
			if err := m.stateNodesOf(kids[i], mb.Value, out, path+"."+mb.Key); err != nil {
				return err
			}
		}
		return nil
	case !v.Exists() && n == 0:
		*out = append(*out, 0)
		return nil
	}
	return fmt.Errorf("%s: a state value is a string or an object, not %s", path, jsonx.Kind(v))
}

// childByKey returns the child of n with the key (a history state too).
func (m *Machine) childByKey(n int, key string) (int, bool) {
	for _, c := range m.nodes[n].children {
		if m.nodes[c].key == key {
			return c, true
		}
	}
	return 0, false
}

// restoreError reads the error of a snapshot: XState's persisted error (a
// JSON value; an Error object is {}), with chartgate's message of a Go
// error, or chartgate's older form, the message as a string.
func restoreError(s *Snapshot, raw json.RawMessage, msg string) error {
	present := len(raw) > 0 && string(raw) != "null"
	if (present || msg != "") && s.status != StatusError {
		return fmt.Errorf("error: only a snapshot with status error has an error, and this one is %s", s.status)
	}
	if s.status != StatusError {
		return nil
	}
	var v any
	if present {
		if err := json.Unmarshal(raw, &v); err != nil {
			return fmt.Errorf("error: %w", err)
		}
	}
	if str, ok := v.(string); ok && msg == "" {
		msg = str // chartgate before XState's shape
	}
	switch {
	case msg != "":
		s.err = errors.New(msg)
	case present:
		s.err = &RejectionError{Value: v}
	default:
		s.err = errRestoredStatusError
	}
	return nil
}

// restoreChildren reads the children of a persisted snapshot, in the
// order of its keys.
func (m *Machine) restoreChildren(s *Snapshot, raw json.RawMessage, likeXState bool) error {
	v := gjson.ParseBytes(raw)
	if len(raw) == 0 || v.Type == gjson.Null {
		return nil
	}
	if !v.IsObject() {
		return fmt.Errorf("children: must be an object of child ids to children, not %s", jsonx.Kind(v))
	}
	var list *childList
	for _, mb := range jsonx.Members(v, nil) {
		path := "children." + mb.Key
		var pc persistedChild
		if err := json.Unmarshal([]byte(mb.Value.Raw), &pc); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		logic := m.opts.Implementations.Actors[pc.Src]
		if logic == nil {
			continue // XState: no logic for the src, no child
		}
		rec := &childRecord{src: pc.Src, systemID: pc.SystemID, session: pc.Session, sync: pc.SyncSnapshot, logic: logic}
		if child, ok := logic.(*Machine); ok {
			snap, err := child.restoreAs(pc.Snapshot, likeXState)
			if err != nil {
				return fmt.Errorf("%s.snapshot: %w", path, err)
			}
			rec.snap, rec.status = snap, snap.status
			rec.output, rec.hasOutput = snap.x().output, snap.x().hasOutput
			if snap.status == StatusError {
				rec.errValue = snap.errorValue()
			}
		} else if err := restoreLogicSnapshot(rec, pc.Snapshot); err != nil {
			return fmt.Errorf("%s.snapshot: %w", path, err)
		}
		if list == nil {
			list = (*childList)(nil).clone()
		}
		list.set(childEntry{id: mb.Key, rec: rec})
	}
	s.setChildren(list.compact())
	return nil
}

// restoreLogicSnapshot reads the persisted snapshot of a promise or
// callback child.
func restoreLogicSnapshot(rec *childRecord, raw json.RawMessage) error {
	var p persistedLogicSnapshot
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	switch p.Status {
	case StatusActive, StatusDone, StatusError, StatusStopped:
	default:
		return fmt.Errorf("status: unknown status %q (active, done, error or stopped)", p.Status)
	}
	rec.status = p.Status
	if len(p.Output) > 0 {
		if err := json.Unmarshal(p.Output, &rec.output); err != nil {
			return fmt.Errorf("output: %w", err)
		}
		rec.hasOutput = true
	}
	if len(p.Input) > 0 {
		if err := json.Unmarshal(p.Input, &rec.input); err != nil {
			return fmt.Errorf("input: %w", err)
		}
		rec.hasInput = true
	}
	if rec.status == StatusError {
		var v any
		if len(p.Error) > 0 {
			if err := json.Unmarshal(p.Error, &v); err != nil {
				return fmt.Errorf("error: %w", err)
			}
		}
		rec.errValue = v
	}
	return nil
}

// restoreNodes sets the configuration: from "nodes" (this package's form,
// which keeps XState's _nodes order), checked against "value" when both
// are given, or else from the state value as XState does.
func (m *Machine) restoreNodes(s *Snapshot, p *restoring) error {
	if len(p.Nodes) == 0 || p.likeXState {
		nodes, err := m.stateNodesOfValue(p.rawValue, s.status)
		if err != nil {
			return err
		}
		if !p.likeXState {
			// As in "nodes": a value that names a history state, or leaves
			// a compound state whose initial state is one, would persist a
			// configuration that does not restore.
			for _, n := range nodes {
				if m.nodes[n].kind == kindHistory {
					return fmt.Errorf("value: history state %q cannot be active", m.nodes[n].id)
				}
			}
		}
		s.nodes = nodes
	} else {
		for i, id := range p.Nodes {
			n, ok := m.byID[id]
			if !ok {
				return fmt.Errorf("nodes[%d]: %q is not a state of machine %q", i, id, m.id)
			}
			s.nodes = append(s.nodes, n)
		}
		if err := m.checkNodes(s.nodes, s.status); err != nil {
			return fmt.Errorf("nodes: %w", err)
		}
		if p.Value != nil {
			if want := s.Value(); !reflect.DeepEqual(p.Value, want) {
				got, _ := json.Marshal(p.Value)
				w, _ := json.Marshal(want)
				return fmt.Errorf("value: %s does not match the nodes, whose value is %s", got, w)
			}
		}
	}
	active := make([]bool, len(m.nodes))
	for _, n := range s.nodes {
		active[n] = true
	}
	if s.status == StatusDone && !m.isInFinalState(active, 0) {
		return fmt.Errorf("status: the snapshot is done, but the machine is not in a final state")
	}
	return nil
}

// restoreHistory sets the history values: a shallow history state
// remembers children of its parent, a deep one atomic or final
// descendants of it, each once.
func (m *Machine) restoreHistory(s *Snapshot, p *restoring) error {
	for hid, refs := range p.HistoryValue {
		h, ok := m.byID[hid]
		if !ok || m.nodes[h].kind != kindHistory {
			return fmt.Errorf("historyValue: %q is not a history state", hid)
		}
		hn := m.nodes[h]
		remembered := make([]int, 0, len(refs))
		for i, r := range refs {
			n, ok := m.byID[r.ID]
			if p.likeXState {
				// XState's getStateNodeById reads the id as a path: an id
				// with a dot in it finds nothing, and the state is not
				// remembered.
				if n, ok = m.stateByRef(r.ID); !ok {
					continue
				}
			}
			if !ok {
				return fmt.Errorf("historyValue[%q][%d]: %q is not a state", hid, i, r.ID)
			}
			node := m.nodes[n]
			switch {
			case hn.deep() && (node.kind == kindAtomic || node.kind == kindFinal) && m.isDescendant(n, hn.parent):
			case !hn.deep() && node.parent == hn.parent && node.kind != kindHistory:
			case hn.deep():
				return fmt.Errorf("historyValue[%q][%d]: deep history remembers atomic states inside %q, not %q", hid, i, m.nodes[hn.parent].id, r.ID)
			default:
				return fmt.Errorf("historyValue[%q][%d]: shallow history remembers children of %q, not %q", hid, i, m.nodes[hn.parent].id, r.ID)
			}
			for _, x := range remembered {
				if x == n {
					return fmt.Errorf("historyValue[%q][%d]: %q is listed twice", hid, i, r.ID)
				}
			}
			remembered = append(remembered, n)
		}
		if p.likeXState && len(remembered) == 0 {
			continue
		}
		if s.history == nil {
			s.history = map[int][]int{}
		}
		s.history[h] = remembered
	}
	return nil
}

// restoreTimers sets the pending delayed events: only an active snapshot
// has any, each seq is used once, and at most one timer per send id can be
// cancelled.
func (m *Machine) restoreTimers(s *Snapshot, p *restoring) error {
	if len(p.ScheduledEvents) > 0 && s.status != StatusActive {
		return fmt.Errorf("scheduledEvents: a snapshot with status %s has no pending delayed events", s.status)
	}
	for i, raw := range p.ScheduledEvents {
		var t persistedTimer
		if err := json.Unmarshal(raw, &t); err != nil {
			return fmt.Errorf("scheduledEvents[%d]: %w", i, err)
		}
		if s.timers == nil {
			s.timers = (*timerQueue)(nil).clone()
		}
		switch {
		case t.Event.Type == "":
			return fmt.Errorf("scheduledEvents[%d]: needs an event with a type", i)
		case s.timers.has(t.Seq):
			return fmt.Errorf("scheduledEvents[%d]: seq %d is used twice", i, t.Seq)
		case t.Keyed && t.ID == "":
			return fmt.Errorf("scheduledEvents[%d]: keyed, but it has no id to cancel it by", i)
		case t.Keyed:
			if _, dup := s.timers.keyedSeq(t.ID); dup {
				return fmt.Errorf("scheduledEvents[%d]: a cancel of %q would stop two events (only the latest is keyed)", i, t.ID)
			}
		}
		s.timers.push(timer{id: t.ID, event: t.Event, due: t.Due, seq: t.Seq, to: t.To}, t.Keyed)
		if t.Seq >= s.seq {
			s.seq = t.Seq + 1
		}
	}
	return nil
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
// initial descendants of any compound state the value leaves open; a string
// "a.b" is the path {"a": "b"}.
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
	if err := m.checkConfiguration(out); err != nil {
		return nil, fmt.Errorf("value: %w", err)
	}
	return out, nil
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

// checkNodes verifies a persisted configuration. It holds each state
// once and no history state. For a machine without history states it must
// be legal (see checkConfiguration), except that a snapshot that is not
// active may hold only the root: the pre-initial configuration of a
// machine that failed to start. With history states, XState's history
// quirks (which the interpreter reproduces) can leave an active state
// without its parent, a compound state with two active children, or a
// parallel state without a region, so only the basics are checked.
func (m *Machine) checkNodes(nodes []int, status Status) error {
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
	if m.hasHistory || (len(nodes) == 1 && nodes[0] == 0 && status != StatusActive) {
		return nil
	}
	return m.checkConfiguration(nodes)
}

// checkConfiguration verifies that nodes is a legal configuration: the
// root, every parent of an active node, one child of each active compound
// state and every region of each active parallel state.
func (m *Machine) checkConfiguration(nodes []int) error {
	set := make([]bool, len(m.nodes))
	children := make([][]int, len(m.nodes)) // the active children of each node
	for _, n := range nodes {
		set[n] = true
		if p := m.nodes[n].parent; p >= 0 {
			children[p] = append(children[p], n)
		}
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
			return fmt.Errorf("state %q is active but its parent %q is not", n.id, m.nodes[n.parent].id)
		}
	}
	for _, i := range nodes {
		n := m.nodes[i]
		switch kids := children[i]; {
		case n.kind == kindCompound && len(kids) == 0:
			return fmt.Errorf("compound state %q is active but none of its children is", n.id)
		case n.kind == kindCompound && len(kids) > 1:
			return fmt.Errorf("compound state %q has %d active children (%q and %q); it can only be in one", n.id, len(kids), m.nodes[kids[0]].id, m.nodes[kids[1]].id)
		case n.kind == kindParallel && len(kids) != len(n.regions):
			for _, c := range n.regions {
				if !set[c] {
					return fmt.Errorf("region %q of parallel state %q is not active", m.nodes[c].id, n.id)
				}
			}
		}
	}
	return nil
}

// appendValue appends the state value below node n (valueOf) as JSON,
// with its keys in XState's order (the order of the active states, as
// JavaScript orders an object's keys: array indexes first), which
// XState's restore reads the configuration in.
func (m *Machine) appendValue(b []byte, n int, adj map[int][]int) []byte {
	kids := adj[n]
	if len(kids) == 0 {
		return append(b, "{}"...)
	}
	if m.nodes[n].kind == kindCompound {
		if k := m.nodes[kids[0]]; k.kind == kindAtomic || k.kind == kindFinal {
			return jsonx.AppendString(b, k.key)
		}
	}
	if len(kids) > 1 {
		kids = m.jsKeyOrder(kids)
	}
	b = append(b, '{')
	for i, c := range kids {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonx.AppendString(b, m.nodes[c].key)
		b = append(b, ':')
		b = m.appendValue(b, c, adj)
	}
	return append(b, '}')
}
