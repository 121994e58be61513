// This file checks the linear-time parts of the interpreter (conflict
// removal, exit and entry sets, history records, done events) against a
// plain transcription of XState's quadratic algorithms, on random machines,
// configurations (including the irregular ones XState's history quirks
// leave), history values and sets of enabled transitions.

package statechart

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// randomTree writes a random machine config: nested compound, parallel,
// atomic, final and history states, every non-history state with a list
// of transitions on E to random targets (sometimes two targets in
// different regions of a parallel state), some re-entering.
func randomTree(rng *rand.Rand) []byte {
	type node struct {
		key      string
		kind     string
		children []*node
		parent   *node
		path     string
	}
	count := 0
	var build func(parent *node, depth int) *node
	build = func(parent *node, depth int) *node {
		count++
		n := &node{key: fmt.Sprintf("s%d", count), parent: parent}
		switch {
		case depth == 0:
			n.kind = []string{"compound", "parallel"}[rng.IntN(2)]
		case depth >= 4 || rng.IntN(3) == 0:
			n.kind = []string{"atomic", "atomic", "final"}[rng.IntN(3)]
		default:
			n.kind = []string{"compound", "compound", "parallel"}[rng.IntN(3)]
		}
		if parent != nil {
			n.path = parent.path + "." + n.key
		} else {
			n.path = "m"
		}
		if n.kind == "compound" || n.kind == "parallel" {
			for range 1 + rng.IntN(3) {
				n.children = append(n.children, build(n, depth+1))
			}
			if rng.IntN(3) == 0 {
				count++
				n.children = append(n.children, &node{key: fmt.Sprintf("h%d", count), kind: "history", parent: n, path: n.path + fmt.Sprintf(".h%d", count)})
			}
		}
		return n
	}
	root := build(nil, 0)
	var all []*node
	var walk func(*node)
	walk = func(n *node) {
		all = append(all, n)
		for _, c := range n.children {
			walk(c)
		}
	}
	walk(root)
	isDesc := func(a, b *node) bool {
		for p := a.parent; p != nil; p = p.parent {
			if p == b {
				return true
			}
		}
		return false
	}
	target := func() string {
		t := all[rng.IntN(len(all))]
		return "#" + t.path
	}
	var b strings.Builder
	var write func(n *node)
	write = func(n *node) {
		b.WriteString("{")
		fmt.Fprintf(&b, `"id": %q`, n.path)
		switch n.kind {
		case "history":
			b.WriteString(`, "type": "history"`)
			if rng.IntN(2) == 0 {
				b.WriteString(`, "history": "deep"`)
			}
			var inside []*node
			for _, x := range all {
				if isDesc(x, n.parent) && x.kind != "history" {
					inside = append(inside, x)
				}
			}
			if rng.IntN(2) == 0 && len(inside) > 0 {
				fmt.Fprintf(&b, `, "target": "#%s"`, inside[rng.IntN(len(inside))].path)
			}
			b.WriteString("}")
			return
		case "parallel", "final":
			fmt.Fprintf(&b, `, "type": %q`, n.kind)
		}
		if n.kind == "compound" {
			var first *node
			for _, c := range n.children {
				if c.kind != "history" {
					first = c
					break
				}
			}
			if first == nil {
				first = n.children[0]
			}
			fmt.Fprintf(&b, `, "initial": %q`, first.key)
		}
		b.WriteString(`, "on": {"E": [`)
		for i := range rng.IntN(3) {
			if i > 0 {
				b.WriteString(",")
			}
			t := target()
			if rng.IntN(6) == 0 {
				// two targets in two regions of a parallel state
				for _, p := range all {
					if p.kind == "parallel" && len(p.children) >= 2 && p.children[0].kind != "history" && p.children[1].kind != "history" {
						t = fmt.Sprintf(`#%s", "#%s`, p.children[0].path, p.children[1].path)
						break
					}
				}
				fmt.Fprintf(&b, `{"target": ["%s"], "reenter": %v}`, t, rng.IntN(2) == 0)
				continue
			}
			switch rng.IntN(5) {
			case 0:
				b.WriteString(`{}`)
			case 1:
				fmt.Fprintf(&b, `{"target": "#%s", "reenter": %v}`, n.path, rng.IntN(2) == 0)
			default:
				fmt.Fprintf(&b, `{"target": %q, "reenter": %v}`, t, rng.IntN(2) == 0)
			}
		}
		b.WriteString("]}")
		if len(n.children) > 0 {
			b.WriteString(`, "states": {`)
			for i, c := range n.children {
				if i > 0 {
					b.WriteString(",")
				}
				fmt.Fprintf(&b, "%q: ", c.key)
				write(c)
			}
			b.WriteString("}")
		}
		b.WriteString("}")
	}
	write(root)
	return []byte(b.String())
}

// refIsDescendant is isDescendant by walking the parents.
func (m *Machine) refIsDescendant(a, b int) bool {
	if b < 0 {
		return true
	}
	for p := m.nodes[a].parent; p >= 0; p = m.nodes[p].parent {
		if p == b {
			return true
		}
	}
	return false
}

// refExitSet is XState's computeExitSet for one transition.
func (r *runner) refExitSet(t *transition) []int {
	if len(t.targets) == 0 {
		return nil
	}
	var set []int
	domain := r.getTransitionDomain(t)
	if t.reenter && int(t.source) == domain {
		set = append(set, domain)
	}
	for _, n := range r.s.nodes {
		if r.m.refIsDescendant(n, domain) && !slices.Contains(set, n) {
			set = append(set, n)
		}
	}
	return set
}

// refRemoveConflictingTransitions is XState's removeConflictingTransitions.
func (r *runner) refRemoveConflictingTransitions(ts []*transition) []*transition {
	var filtered []*transition
	for _, t1 := range ts {
		preempted := false
		var remove []*transition
		x1 := r.refExitSet(t1)
		for _, t2 := range filtered {
			x2 := r.refExitSet(t2)
			meet := false
			for _, n := range x1 {
				meet = meet || slices.Contains(x2, n)
			}
			if !meet {
				continue
			}
			if r.m.refIsDescendant(int(t1.source), int(t2.source)) {
				remove = append(remove, t2)
			} else {
				preempted = true
				break
			}
		}
		if preempted {
			continue
		}
		filtered = slices.DeleteFunc(filtered, func(t *transition) bool { return slices.Contains(remove, t) })
		filtered = append(filtered, t1)
	}
	return filtered
}

// refEntrySet is computeEntrySet with hasDescendantToEnter as a scan of
// the entry set, and no memo of parallel states already entered.
type refEntrySet struct {
	r                     *runner
	toEnter, defaultEntry []int
}

func (e *refEntrySet) add(list *[]int, n int) {
	if !slices.Contains(*list, n) {
		*list = append(*list, n)
	}
}

func (e *refEntrySet) hasDescendantToEnter(c int) bool {
	for _, s := range e.toEnter {
		if e.r.m.refIsDescendant(s, c) {
			return true
		}
	}
	return false
}

func (e *refEntrySet) compute(ts []*transition) {
	r := e.r
	for _, t := range ts {
		domain := r.getTransitionDomain(t)
		for _, s := range t.targets {
			if r.m.nodes[s].kind != kindHistory && (int(t.source) != s || int(t.source) != domain || t.reenter) {
				e.add(&e.toEnter, s)
				e.add(&e.defaultEntry, s)
			}
			e.descendants(s)
		}
		for _, s := range r.getEffectiveTargetStates(t, nil) {
			reentrancy := domain
			if t.source == 0 && t.reenter {
				reentrancy = -2
			}
			e.ancestors(s, domain, domain >= 0 && r.m.nodes[domain].kind == kindParallel, reentrancy)
		}
	}
}

func (e *refEntrySet) descendants(s int) {
	r := e.r
	node := r.m.nodes[s]
	if node.kind == kindHistory {
		if h, ok := r.s.history[s]; ok {
			for _, n := range h {
				e.add(&e.toEnter, n)
				e.descendants(n)
			}
			for _, n := range h {
				e.ancestors(n, node.parent, false, -2)
			}
			return
		}
		def := r.m.historyDefaultTransition(s)
		parent := r.m.nodes[node.parent]
		for _, n := range def.targets {
			e.add(&e.toEnter, n)
			if def == parent.initial {
				e.add(&e.defaultEntry, node.parent)
			}
			e.descendants(n)
		}
		for _, n := range def.targets {
			e.ancestors(n, node.parent, false, -2)
		}
		return
	}
	switch node.kind {
	case kindCompound:
		init := node.initial.targets[0]
		if r.m.nodes[init].kind != kindHistory {
			e.add(&e.toEnter, init)
			e.add(&e.defaultEntry, init)
		}
		e.descendants(init)
		e.ancestors(init, s, false, -2)
	case kindParallel:
		for _, c := range node.children {
			if r.m.nodes[c].kind == kindHistory || e.hasDescendantToEnter(c) {
				continue
			}
			e.add(&e.toEnter, c)
			e.add(&e.defaultEntry, c)
			e.descendants(c)
		}
	}
}

func (e *refEntrySet) ancestors(n, to int, withTo bool, reentrancy int) {
	r := e.r
	enter := func(anc int) {
		if reentrancy == -2 || r.m.refIsDescendant(anc, reentrancy) {
			e.add(&e.toEnter, anc)
		}
		if r.m.nodes[anc].kind != kindParallel {
			return
		}
		for _, c := range r.m.nodes[anc].children {
			if r.m.nodes[c].kind == kindHistory || e.hasDescendantToEnter(c) {
				continue
			}
			e.add(&e.toEnter, c)
			e.descendants(c)
		}
	}
	if n == to {
		if withTo {
			enter(to)
		}
		return
	}
	for anc := r.m.nodes[n].parent; anc >= 0; anc = r.m.nodes[anc].parent {
		if anc == to {
			if withTo {
				enter(anc)
			}
			return
		}
		enter(anc)
	}
}

// refDoneEvents is the done events enterStates raises for the states in
// order, with isInFinalState checked in full every time.
func (r *runner) refDoneEvents(order []int, active []bool) []string {
	active = slices.Clone(active)
	var out []string
	var completed []int
	done := false
	for _, n := range order {
		active[n] = true
		node := r.m.nodes[n]
		if node.kind != kindFinal {
			continue
		}
		parent := node.parent
		ancestor := -1
		if parent >= 0 {
			if r.m.nodes[parent].kind == kindParallel {
				ancestor = parent
			} else {
				ancestor = r.m.nodes[parent].parent
			}
		}
		if parent >= 0 && r.m.nodes[parent].kind == kindCompound {
			out = append(out, doneStatePrefix+r.m.nodes[parent].id)
		}
		for ancestor >= 0 && r.m.nodes[ancestor].kind == kindParallel && !slices.Contains(completed, ancestor) && r.m.isInFinalState(active, ancestor) {
			completed = append(completed, ancestor)
			out = append(out, doneStatePrefix+r.m.nodes[ancestor].id)
			ancestor = r.m.nodes[ancestor].parent
		}
		done = done || ancestor < 0
	}
	if done {
		out = append(out, "(done)")
	}
	return out
}

func TestLinearAlgorithmsMatchXStates(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ctx := context.Background()
	machines, checked := 0, 0
	for machines < 400 {
		m, err := Compile(randomTree(rng), &Options{AllowMissingGuards: true})
		if err != nil {
			continue // e.g. two targets that are not in separate regions
		}
		machines++
		var ts []*transition
		for _, n := range m.nodes {
			if g := n.byEvent["E"]; g != nil {
				ts = append(ts, g.transitions...)
			}
		}
		if len(ts) == 0 {
			continue
		}
		for range 30 {
			s := randomSnapshot(rng, m)
			enabled := make([]*transition, 0, 8)
			for _, i := range rng.Perm(len(ts))[:min(len(ts), 1+rng.IntN(8))] {
				enabled = append(enabled, ts[i])
			}
			r := newRunner(m)
			r.begin(ctx, s, time.Time{})
			want := r.refRemoveConflictingTransitions(enabled)
			got := r.removeConflictingTransitions(enabled, nil)
			if !slices.Equal(want, got) {
				t.Fatalf("machine %s\nnodes %v\nenabled %s\nconflicts: got %s, want %s", m.nodes[0].id, s.nodes, describeTs(m, enabled), describeTs(m, got), describeTs(m, want))
			}

			// exit set and history
			var wantExit []int
			for _, t := range want {
				for _, n := range r.refExitSet(t) {
					if !slices.Contains(wantExit, n) {
						wantExit = append(wantExit, n)
					}
				}
			}
			sortDescending(wantExit)
			wantHistory := map[int][]int{}
			for _, x := range wantExit {
				for _, h := range m.nodes[x].histories() {
					var v []int
					for _, n := range s.nodes {
						if m.nodes[h].deep() {
							if k := m.nodes[n].kind; (k == kindAtomic || k == kindFinal) && m.refIsDescendant(n, x) {
								v = append(v, n)
							}
						} else if m.nodes[n].parent == x {
							v = append(v, n)
						}
					}
					wantHistory[h] = v
				}
			}
			r.exitStates(got, Event{Type: "E"})
			if !slices.Equal(wantExit, r.toExit) {
				t.Fatalf("machine %s nodes %v: exit set %v, want %v", m.nodes[0].id, r.prevNodes, r.toExit, wantExit)
			}
			for h, v := range wantHistory {
				if !slices.Equal(v, r.s.history[h]) {
					t.Fatalf("history %s: %v, want %v", m.nodes[h].id, r.s.history[h], v)
				}
			}

			// entry set, on the configuration after the exits
			ref := &refEntrySet{r: r}
			ref.compute(got)
			r.toEnter.reset(m)
			r.defaultEntry.reset(len(m.nodes))
			r.regionsDone.clear(len(m.nodes))
			r.computeEntrySet(got)
			if !sameMembers(ref.toEnter, r.toEnter.list) || !sameMembers(ref.defaultEntry, r.defaultEntry.list) {
				t.Fatalf("machine %s: entry set %v default %v, want %v default %v", m.nodes[0].id, r.toEnter.list, r.defaultEntry.list, ref.toEnter, ref.defaultEntry)
			}
			order := slices.Sorted(slices.Values(r.toEnter.list))
			wantDone := r.refDoneEvents(order, r.active)
			r.queue.reset()
			r.enterStates(got, Event{Type: "E"}, false)
			var gotDone []string
			for r.queue.len() > 0 {
				gotDone = append(gotDone, r.queue.pop().Type)
			}
			if r.s.status == StatusDone {
				gotDone = append(gotDone, "(done)")
			}
			if !slices.Equal(wantDone, gotDone) {
				t.Fatalf("machine %s: done events %v, want %v", m.nodes[0].id, gotDone, wantDone)
			}
			checked++
		}
	}
	t.Logf("%d machines, %d sets of transitions", machines, checked)
}

// randomSnapshot returns an active snapshot of m in a random
// configuration: a legal one, or (as XState's history quirks leave) any
// set of non-history states, with random history values.
func randomSnapshot(rng *rand.Rand, m *Machine) *Snapshot {
	s := &Snapshot{machine: m, status: StatusActive, context: map[string]any{}}
	if rng.IntN(2) == 0 {
		var walk func(n int)
		walk = func(n int) {
			s.nodes = append(s.nodes, n)
			switch node := m.nodes[n]; node.kind {
			case kindCompound:
				walk(node.regions[rng.IntN(len(node.regions))])
			case kindParallel:
				for _, c := range node.regions {
					walk(c)
				}
			}
		}
		walk(0)
		rng.Shuffle(len(s.nodes), func(i, j int) { s.nodes[i], s.nodes[j] = s.nodes[j], s.nodes[i] })
	} else {
		for i, n := range m.nodes {
			if n.kind != kindHistory && rng.IntN(2) == 0 {
				s.nodes = append(s.nodes, i)
			}
		}
	}
	for i, n := range m.nodes {
		if n.kind != kindHistory || rng.IntN(2) == 0 {
			continue
		}
		if s.history == nil {
			s.history = map[int][]int{}
		}
		v := []int{}
		for j := range m.nodes {
			k := m.nodes[j].kind
			ok := m.nodes[j].parent == n.parent && k != kindHistory
			if n.deep() {
				ok = (k == kindAtomic || k == kindFinal) && m.refIsDescendant(j, n.parent)
			}
			if ok && rng.IntN(2) == 0 {
				v = append(v, j)
			}
		}
		s.history[i] = v
	}
	return s
}

func sameMembers(a, b []int) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

func describeTs(m *Machine, ts []*transition) string {
	var parts []string
	for _, t := range ts {
		var tg []string
		for _, x := range t.targets {
			tg = append(tg, m.nodes[x].id)
		}
		parts = append(parts, fmt.Sprintf("%s->%v(re=%v)", m.nodes[t.source].id, tg, t.reenter))
	}
	return strings.Join(parts, " ")
}

// TestWildcardLookupMatchesScan checks that a node with many wildcard
// descriptors picks, by looking up the prefixes of the event, the
// transition that comparing every descriptor (longest first) picks.
func TestWildcardLookupMatchesScan(t *testing.T) {
	tokens := []string{"a", "b", "c", "*", ""}
	word := func(rng *rand.Rand) string {
		var parts []string
		for range 1 + rng.IntN(4) {
			parts = append(parts, tokens[rng.IntN(len(tokens))])
		}
		return strings.Join(parts, ".")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 300 {
		var b strings.Builder
		b.WriteString(`{"initial": "s", "states": {"s": {"on": {"*": {"actions": "star"}`)
		for i := range 10 + rng.IntN(20) {
			fmt.Fprintf(&b, `, %q: {"actions": "a%d"}`, word(rng)+".*", i)
		}
		b.WriteString(`}}}}`)
		m, err := Compile([]byte(b.String()), nil)
		if err != nil {
			continue // a descriptor twice
		}
		node := m.nodes[1]
		if len(node.wildcards) <= maxWildcardScan {
			t.Fatalf("only %d wildcards", len(node.wildcards))
		}
		r := newRunner(m)
		r.begin(context.Background(), &Snapshot{machine: m, nodes: []int{0, 1}}, time.Time{})
		for range 50 {
			ev := Event{Type: word(rng)}
			var want *transition
			for _, g := range node.wildcards {
				if tr, done := r.tryWildcard(g, ev); done {
					want = tr
					break
				}
			}
			if got := r.nextByPrefix(node, ev); got != want {
				t.Fatalf("event %q: lookup picks %v, scan %v (descriptors %v)", ev.Type, describeTs(m, []*transition{got}), describeTs(m, []*transition{want}), b.String())
			}
		}
	}
}

// TestEventIDMatchesMachine looks event types up with runner.eventID, which
// remembers the last strings by address, and checks each id against the
// machine's: the same bytes at new addresses, prefixes sharing a longer
// string's address, types no descriptor names and the empty type, in
// random order, more of them than the runner remembers.
func TestEventIDMatchesMachine(t *testing.T) {
	on := map[string]string{}
	for i := range 12 {
		on[fmt.Sprintf("E%d", i)] = "a"
	}
	on["E1X"] = "a"
	src, err := json.Marshal(map[string]any{"id": "m", "initial": "a", "states": map[string]any{"a": map[string]any{"on": on}}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Compile(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	buf := "E10E1XE11"
	types := []string{buf[:3], buf[:2], buf[3:6], buf[3:5], buf[6:], buf[6:8], buf[:1], "", "E12", "OTHER"}
	for i := range 12 {
		types = append(types, fmt.Sprintf("E%d", i))
	}
	r := newRunner(m)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 5000 {
		typ := types[rng.IntN(len(types))]
		if rng.IntN(4) == 0 {
			typ = strings.Clone(typ) // the same bytes elsewhere
		}
		want, ok := m.eventIDs[typ]
		if !ok {
			want = -1
		}
		if got := r.eventID(typ); got != want {
			t.Fatalf("lookup %d: eventID(%q) = %d, want %d", i, typ, got, want)
		}
	}
}
