// This file holds the references the tests check snapshots against: the
// persisted form as encoding/json writes the snapshot's fields in a
// persisted value, which AppendJSON must match byte for byte, and the state
// value and active ids computed without the shortcut for flat
// configurations.

package statechart

import (
	"bytes"
	"encoding/json"
)

// MarshalByReflection writes the persisted form of s through encoding/json,
// for the tests of AppendJSON.
func MarshalByReflection(s *Snapshot) ([]byte, error) {
	var value bytes.Buffer
	s.machine.writeValueByReflection(&value, 0, s.machine.adjacency(s.machine.allStateNodes(s.nodes)))
	p := persisted{
		Status:       s.status,
		Value:        json.RawMessage(value.Bytes()),
		Context:      s.context,
		HistoryValue: map[string][]persistedNodeRef{},
		Seq:          s.seq,
		Sessions:     s.x().sessions,
	}
	if s.status == StatusError {
		v, msg, err := marshalErrorValue(s.errorValue())
		if err != nil {
			return nil, err
		}
		p.Error, p.ErrorMessage = v, msg
	}
	if e := s.x(); e.hasOutput {
		out, err := json.Marshal(e.output)
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
		p.ScheduledEvents = append(p.ScheduledEvents, persistedTimer{t.id, t.event, t.due, t.seq, s.timers.isKeyed(t), t.to})
	}
	children, err := marshalChildren(s.x().children)
	if err != nil {
		return nil, err
	}
	p.Children = children
	return json.Marshal(p)
}

// ValueInGeneral and StateIDsInGeneral are Value and StateIDs without the
// shortcut for a root and one atomic child, for the tests of the shortcut.
func ValueInGeneral(s *Snapshot) any {
	return s.machine.valueOf(0, s.machine.adjacency(s.machine.allStateNodes(s.nodes)))
}

func StateIDsInGeneral(s *Snapshot) []string {
	return s.machine.stateIDsOf(s.nodes)
}

// writeValueByReflection writes the state value below n with encoding/json
// quoting its keys.
func (m *Machine) writeValueByReflection(b *bytes.Buffer, n int, adj map[int][]int) {
	kids := adj[n]
	if len(kids) == 0 {
		b.WriteString("{}")
		return
	}
	if m.nodes[n].kind == kindCompound {
		if k := m.nodes[kids[0]]; k.kind == kindAtomic || k.kind == kindFinal {
			key, _ := json.Marshal(k.key)
			b.Write(key)
			return
		}
	}
	if len(kids) > 1 {
		kids = m.jsKeyOrder(kids)
	}
	b.WriteByte('{')
	for i, c := range kids {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(m.nodes[c].key)
		b.Write(key)
		b.WriteByte(':')
		m.writeValueByReflection(b, c, adj)
	}
	b.WriteByte('}')
}
