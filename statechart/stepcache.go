// This file defines the step cache: what a microstep does to the
// configuration (the states it exits, in order, the transitions whose
// actions run, the states it enters and the configuration it leaves) is
// determined by the configuration and the transitions taken, so a runner
// records it the first time and replays it after. Guards are still
// evaluated and actions still run every time; only the computation of
// exit and entry sets is skipped. Microsteps that depend on more than the
// configuration (history), that start or stop actors, or that enter a
// final state are never cached, and neither are the steps of an actor
// system: they take the general algorithm in algorithm.go.

package statechart

import "encoding/binary"

// maxCachedSteps bounds a runner's step cache; when it is full it is
// emptied and filled again with the steps seen next.
const maxCachedSteps = 256

// stepPlan is one recorded microstep.
type stepPlan struct {
	ts      []*transition // the transitions taken (conflicts removed), in order
	exit    []int         // exitStates: the states exited, in order
	kept    []int         // s.nodes once they are exited
	enter   []int         // enterStates: the states entered, in order
	initial []bool        // per entered state: its initial actions run
	final   []int         // s.nodes at the end of the microstep
	moved   bool          // the configuration differs from the one before
}

// stepCache holds the plans of one runner, by planKey.
type stepCache struct {
	plans map[string]*stepPlan
	key   []byte
	off   bool // the cache is not used (tests compare with the general path)
	hits  int  // plans replayed, for tests
}

// cacheable reports whether the machine's microsteps may be cached:
// without history states (whose values the steps would depend on).
func (m *Machine) cacheable() bool { return !m.hasHistory }

// planKey writes the key of a microstep into the cache's buffer: the
// number of active states, the configuration in order (the order of
// s.nodes is XState's, and a step keeps it), then the transitions' ids,
// each in two bytes (four in a machine with more than 65,535 states or
// transitions). ok is false for a transition made at run time.
func (r *runner) planKey(ts []*transition) (key []byte, ok bool) {
	wide := len(r.m.nodes) >= 1<<16 || r.m.transitions >= 1<<16
	put := func(k []byte, v int) []byte {
		if wide {
			return binary.LittleEndian.AppendUint32(k, uint32(v))
		}
		return binary.LittleEndian.AppendUint16(k, uint16(v))
	}
	k := put(r.cache.key[:0], len(r.s.nodes))
	for _, n := range r.s.nodes {
		k = put(k, n)
	}
	for _, t := range ts {
		if t.id < 0 {
			return nil, false
		}
		k = put(k, t.id)
	}
	r.cache.key = k
	return k, true
}

// cachedMicrostep replays the recorded plan of the microstep, if there is
// one, and reports whether it did. Otherwise, when the step may be cached,
// it leaves the key in the buffer and returns record true: the caller
// takes the general path and calls recordPlan.
func (r *runner) cachedMicrostep(ts []*transition, ev Event) (done, record bool) {
	if r.sys != nil || r.deferCustom || r.cache.off || !r.m.cacheable() {
		return false, false
	}
	key, ok := r.planKey(ts)
	if !ok {
		return false, false
	}
	p := r.cache.plans[string(key)]
	if p == nil {
		return false, true
	}
	r.cache.hits++
	r.replay(p, ev)
	return true, false
}

// replay does what the general microstep did when it recorded p, in the
// same order: exit actions with each state leaving the configuration after
// its own, the transitions' actions, then entry (and initial) actions with
// each state joining the configuration before its own.
func (r *runner) replay(p *stepPlan, ev Event) {
	for _, x := range p.exit {
		r.executeActions(r.m.nodes[x].exit, ev, x)
		if r.err != nil {
			return
		}
		r.active[x] = false
	}
	r.s.nodes = append(r.s.nodes[:0], p.kept...)
	for _, t := range p.ts {
		r.executeActions(t.actions, ev, t.source)
		if r.err != nil {
			return
		}
	}
	for i, n := range p.enter {
		if !r.active[n] {
			r.active[n] = true
			r.s.nodes = append(r.s.nodes, n)
		}
		node := r.m.nodes[n]
		r.executeActions(node.entry, ev, n)
		if r.err != nil {
			return
		}
		if p.initial[i] {
			r.executeActions(node.initial.actions, ev, n)
			if r.err != nil {
				return
			}
		}
	}
	r.s.nodes = append(r.s.nodes[:0], p.final...)
	if p.moved {
		r.changed = true
	}
}

// recordPlan stores the plan of the microstep the general path just took
// (its key is in the buffer), unless it did something a plan cannot
// replay: entering a final state, starting or stopping an invoked actor.
func (r *runner) recordPlan() {
	if r.err != nil || r.s.status != StatusActive || r.historyChanged {
		return
	}
	for _, x := range r.toExit {
		if len(r.m.nodes[x].invokes) > 0 {
			return
		}
	}
	for _, n := range r.order {
		if node := r.m.nodes[n]; node.kind == kindFinal || len(node.invokes) > 0 {
			return
		}
	}
	p := &stepPlan{
		ts:      append([]*transition(nil), r.filtered...),
		exit:    append([]int(nil), r.toExit...),
		kept:    append([]int(nil), r.exitKept...),
		enter:   append([]int(nil), r.order...),
		initial: make([]bool, len(r.order)),
		final:   append([]int(nil), r.s.nodes...),
		moved:   !r.sameNodes(),
	}
	for i, n := range r.order {
		p.initial[i] = r.defaultEntry.has[n] && r.m.nodes[n].initial != nil
	}
	if r.cache.plans == nil || len(r.cache.plans) >= maxCachedSteps {
		r.cache.plans = make(map[string]*stepPlan)
	}
	r.cache.plans[string(r.cache.key)] = p
}
