// This file defines the slot context. Compile numbers the top-level
// context keys that a machine's declarative guards and assigns name; while
// an Actor, or a machine cell of an actor system, owns its context map and
// takes its steps from the step cache (fastStep), those guards read and
// those assigns write the keys' values in a slice indexed by these
// numbers, without hashing a key. The map stays the context's public
// form: a key's slot is read from it the first time it is needed, and the
// keys set are written back to it (leaveSlots) before anything else can
// see the map: a snapshot handed out, a subscriber, an inspection, a Go
// guard or action, a state's output, an event sent or an invoke's input
// that may read the context. An Actor's call on the general path goes on
// with the slots, recording how to undo what it sets, as it does for the
// map; a cell's writes them back first, and so does a cell that stops or
// gives its runner back.

package statechart

// slotPlan numbers the context keys of a machine's declarative guards and
// assigns.
type slotPlan struct {
	keys  []string         // by slot
	index map[string]int32 // slot by key
}

// slotCond is a declarative condition compiled for one machine: its
// context paths resolved to slots.
type slotCond struct {
	c *cond
	// field, ref: the slot of the key c.field (c.value's $ref) starts
	// with, when it is a context path; -1 otherwise.
	field, ref int32
	// event: the key of the event's data c.field names, when it is
	// "event.<key>" (not "event.type"); "" otherwise.
	event string
	// order: c orders its field (gt, gte, lt, lte) against a literal
	// number; a field that is not a number fails it.
	order bool
	subs  []*slotCond
	// tests: c as plain tests, all of which must pass (see
	// slotContext.tests), when it is one or an "and" of them; nil otherwise.
	tests []slotTest
}

// slotTest is a condition on a context key's whole value that
// slotContext.tests evaluates without dispatch, by kind.
type slotTest struct {
	slot int32
	code condCode
	kind testKind
	b    bool    // testBool's literal
	num  float64 // testOrder's literal
	ref  int32   // testOrderRef's slot
}

// testKind is what a slotTest compares its key's value with.
type testKind uint8

const (
	// testOrder orders it against a literal number; a value that is not a
	// number fails it.
	testOrder testKind = iota
	// testBool compares it (eq, neq) with a literal boolean; a value that
	// is not a boolean takes evalSlots.
	testBool
	// testOrderRef orders it against the whole value of another context
	// key; a value that is not a number, on either side, takes evalSlots.
	testOrderRef
)

// slotEntry is one entry of a declarative assign, compiled for one
// machine.
type slotEntry struct {
	key  string
	slot int32
	expr *slotExpr
}

// slotExpr is an assign expression compiled for one machine: ref is the
// slot of e's $ref when it is a context path, -1 otherwise.
type slotExpr struct {
	e    *expr
	ref  int32
	push *slotExpr
	// event: the key of the event's data e's $ref names, when it is
	// "event.<key>" (not "event.type"); "" otherwise.
	event string
}

// compileSlots gives the machine a slot plan, and its declarative guards
// and assigns their slot forms, unless one of them reads the context as a
// whole (a "context" path): that machine keeps the map alone.
func (m *Machine) compileSlots() {
	sc := slotCompiler{p: &slotPlan{index: map[string]int32{}}, ok: true}
	for _, n := range m.nodes {
		sc.actions(n.entry)
		sc.actions(n.exit)
		sc.transition(n.initial)
		for _, g := range n.on {
			for _, t := range g.transitions {
				sc.transition(t)
			}
		}
		for _, t := range n.always {
			sc.transition(t)
		}
		if r := n.rare; r != nil {
			sc.transition(r.historyDef)
			sc.transition(r.parallelDef)
		}
	}
	if sc.ok && len(sc.p.keys) > 0 {
		m.slots = sc.p
	}
}

// slotCompiler is compileSlots' state: ok turns false at the first path
// that cannot be a slot.
type slotCompiler struct {
	p  *slotPlan
	ok bool
}

func (sc *slotCompiler) slot(key string) int32 {
	i, ok := sc.p.index[key]
	if !ok {
		i = int32(len(sc.p.keys))
		sc.p.keys = append(sc.p.keys, key)
		sc.p.index[key] = i
	}
	return i
}

// path returns the slot of a context path's key, -1 for another path.
func (sc *slotCompiler) path(p []string) int32 {
	if len(p) == 0 || p[0] != "context" {
		return -1
	}
	if len(p) == 1 {
		sc.ok = false // the whole context
		return -1
	}
	return sc.slot(p[1])
}

func (sc *slotCompiler) transition(t *transition) {
	if t != nil {
		sc.guard(t.guard)
		sc.actions(t.actions)
	}
}

func (sc *slotCompiler) guard(g *guard) {
	if g == nil {
		return
	}
	for _, s := range g.subs {
		sc.guard(s)
	}
	if g.decl != nil && g.slot == nil {
		g.slot = sc.cond(g.decl)
	}
}

func (sc *slotCompiler) cond(c *cond) *slotCond {
	s := &slotCond{c: c, field: -1, ref: -1}
	for _, sub := range c.subs {
		s.subs = append(s.subs, sc.cond(sub))
	}
	if c.field != nil {
		s.field = sc.path(c.field)
		s.event = eventKey(c.field)
	}
	if c.value != nil && c.value.kind == exprRef {
		s.ref = sc.path(c.value.ref)
	}
	switch c.code {
	case condGt, condGte, condLt, condLte:
		s.order = c.value != nil && c.value.kind == exprLiteral && c.lit.kind == scalarNum
	}
	if t, ok := s.test(); ok {
		s.tests = []slotTest{t}
	} else if c.code == condAnd && len(s.subs) > 0 {
		for _, sub := range s.subs {
			t, ok := sub.test()
			if !ok {
				s.tests = nil
				break
			}
			s.tests = append(s.tests, t)
		}
	}
	return s
}

// test returns s as a slotTest, when it is one.
func (s *slotCond) test() (slotTest, bool) {
	c := s.c
	if s.field < 0 || len(c.field) != 2 {
		return slotTest{}, false
	}
	t := slotTest{slot: s.field, code: c.code}
	switch {
	case s.order:
		t.kind, t.num = testOrder, c.lit.num
	case (c.code == condEq || c.code == condNeq) && c.value != nil && c.value.kind == exprLiteral && c.lit.kind == scalarBool:
		t.kind, t.b = testBool, c.lit.b
	case c.code >= condGt && c.code <= condLte && c.value != nil && c.value.kind == exprRef && s.ref >= 0 && len(c.value.ref) == 2:
		t.kind, t.ref = testOrderRef, s.ref
	default:
		return slotTest{}, false
	}
	return t, true
}

func (sc *slotCompiler) actions(as []*action) {
	for _, a := range as {
		switch {
		case a.kind == actionAssign && a.slots == nil:
			a.slots = sc.entries(a.assign)
			a.slotsSeq = independentSlots(a.slots)
		case a.kind == actionCustom && a.decl != nil && a.slots == nil:
			a.slots = sc.entries(a.decl)
			a.slotsSeq = independentSlots(a.slots)
		}
	}
}

func (sc *slotCompiler) entries(es []assignEntry) []slotEntry {
	out := make([]slotEntry, len(es))
	for i, e := range es {
		out[i] = slotEntry{key: e.key, slot: sc.slot(e.key), expr: sc.expr(e.expr)}
	}
	return out
}

func (sc *slotCompiler) expr(e *expr) *slotExpr {
	if e == nil {
		return nil
	}
	s := &slotExpr{e: e, ref: -1, push: sc.expr(e.push)}
	if e.kind == exprRef {
		s.ref = sc.path(e.ref)
		s.event = eventKey(e.ref)
	}
	return s
}

// isNumber reports whether v is a float64, a number as JSON decodes it.
func isNumber(v any) bool {
	_, ok := v.(float64)
	return ok
}

// eventKey returns key when path is "event.<key>", a key of the event's
// data (Event.Field reads "type" from the event itself); "" otherwise.
func eventKey(path []string) string {
	if len(path) == 2 && path[0] == "event" && path[1] != "type" {
		return path[1]
	}
	return ""
}

// slotContext is a runner's slots: while live, they hold the values of
// the plan's keys of the context map m, which is behind by the slots in
// dirty.
type slotContext struct {
	live bool
	m    map[string]any
	// cells: per slot, its value and marks, together so that a step
	// reads one bounds-checked element.
	cells []slotCell
	cur   uint32      // the generation of the cells that hold their values
	dirty []int32     // the slots set since the map was last written
	next  []slotValue // assignSlots' values, computed before any is set
	// undo: while the runner is undoing (a call on the general path),
	// the value each slot had before it was set, in order.
	undo []slotUndo
	// callSet: leaveSlots' scratch.
	callSet []slotUndo
}

// slotCell is one slot: its key's value v, undefined{} when absent,
// unless num says the value is the number n, kept out of an interface
// until the map is written.
type slotCell struct {
	v   any
	n   float64
	gen uint32 // equal to slotContext.cur when the slot holds the value
	num bool
	set bool // listed in dirty
	// mark: leaveSlots' scratch.
	mark bool
}

// number returns the cell's value when it is a number.
func (c *slotCell) number() (float64, bool) {
	if c.num {
		return c.n, true
	}
	n, ok := c.v.(float64)
	return n, ok
}

// value returns the cell's value as a slotValue.
func (c *slotCell) value() slotValue { return slotValue{v: c.v, n: c.n, num: c.num} }

// slotUndo restores one slot.
type slotUndo struct {
	slot int32
	was  slotValue
}

// slotValue is a value for a slot: the number n when num, else v.
type slotValue struct {
	v   any
	n   float64
	num bool
}

// enterSlots makes the slots stand for ctx, a context map the runner may
// change in place, unless they do already.
func (r *runner) enterSlots(ctx map[string]any) {
	x := &r.slotCtx
	if x.live {
		return
	}
	if n := len(r.m.slots.keys); len(x.cells) != n {
		x.cells = make([]slotCell, n)
		x.cur = 0
	}
	x.cur++
	if x.cur == 0 { // wrapped: no slot may look loaded
		for i := range x.cells {
			x.cells[i].gen = 0
		}
		x.cur = 1
	}
	x.live, x.m = true, ctx
}

// leaveSlots writes the slots set back to the map and stops using them.
// In a call that is undoing, what earlier calls set is written as it is
// (it is the actor's), and what this call set is recorded in the map's
// undo log: rollbackContext restores the map.
func (r *runner) leaveSlots() {
	x := &r.slotCtx
	if !x.live {
		return
	}
	if !r.undoing || len(x.undo) == 0 {
		r.writeSlots()
	} else {
		// The values this call set, then the values before it.
		set := x.callSet[:0]
		for _, u := range x.undo {
			if c := &x.cells[u.slot]; !c.mark {
				c.mark = true
				set = append(set, slotUndo{slot: u.slot, was: c.value()})
			}
		}
		r.rollbackSlots()
		r.writeSlots()
		keys := r.m.slots.keys
		for _, c := range set {
			k := keys[c.slot]
			x.cells[c.slot].mark = false
			prev, had := x.m[k]
			r.undo = append(r.undo, contextUndo{key: k, value: prev, had: had})
			switch _, ok := c.was.v.(undefined); {
			case c.was.num:
				x.m[k] = r.numbers.box(c.was.n)
			case ok:
				delete(x.m, k)
			default:
				x.m[k] = c.was.v
			}
		}
		clear(set)
		x.callSet = set[:0]
	}
	clear(x.cells) // the values are the map's now; none is dirty or loaded
	clear(x.undo)
	x.live, x.m, x.undo = false, nil, x.undo[:0]
}

// beginSlots starts a call on the general path: the slots' undo log is
// that of the call.
func (r *runner) beginSlots() {
	x := &r.slotCtx
	clear(x.undo)
	x.undo = x.undo[:0]
}

// writeSlots writes the slots set to the map.
func (r *runner) writeSlots() {
	x := &r.slotCtx
	keys := r.m.slots.keys
	for _, i := range x.dirty {
		k, c := keys[i], &x.cells[i]
		switch _, ok := c.v.(undefined); {
		case c.num:
			x.m[k] = r.numbers.box(c.n)
		case ok:
			delete(x.m, k)
		default:
			x.m[k] = c.v
		}
		c.set = false
	}
	x.dirty = x.dirty[:0]
}

// rollbackSlots undoes what the call set in the slots, in reverse. A slot
// the call set stays listed in dirty: writing it back writes the value
// the map has, or one an earlier call set.
func (r *runner) rollbackSlots() {
	x := &r.slotCtx
	if !x.live {
		return
	}
	for j := len(x.undo) - 1; j >= 0; j-- {
		u := &x.undo[j]
		c := &x.cells[u.slot]
		c.v, c.n, c.num = u.was.v, u.was.n, u.was.num
	}
	clear(x.undo)
	x.undo = x.undo[:0]
}

// slotNumber returns the value of slot i when it is a number.
func (r *runner) slotNumber(i int32) (float64, bool) {
	x := &r.slotCtx
	c := &x.cells[i]
	if c.gen != x.cur {
		r.loadSlot(c, i)
	}
	return c.number()
}

// slotValue returns the value of slot i, undefined{} when its key is
// absent.
func (r *runner) slotValue(i int32) any {
	x := &r.slotCtx
	c := &x.cells[i]
	if c.gen != x.cur {
		r.loadSlot(c, i)
	}
	if c.num {
		// Kept in its interface, so that reading it again costs nothing.
		c.v, c.num = r.numbers.box(c.n), false
	}
	return c.v
}

// loadSlot reads slot i, cell c, from the map.
func (r *runner) loadSlot(c *slotCell, i int32) {
	x := &r.slotCtx
	v, ok := x.m[r.m.slots.keys[i]]
	if !ok {
		v = undefined{}
	}
	c.v, c.num, c.gen = v, false, x.cur
}

// setSlot sets slot i (undefined{} removes the key).
func (r *runner) setSlot(i int32, v slotValue) {
	x := &r.slotCtx
	c := &x.cells[i]
	if r.undoing {
		if c.gen != x.cur {
			r.loadSlot(c, i)
		}
		x.undo = append(x.undo, slotUndo{slot: i, was: c.value()})
	}
	c.v, c.n, c.num, c.gen = v.v, v.n, v.num, x.cur
	if !c.set {
		c.set = true
		x.dirty = append(x.dirty, i)
	}
}

// slotPath resolves path (a context path when slot >= 0) as scope.lookup
// does, reading the context's key from its slot.
func (r *runner) slotPath(slot int32, path []string, s *scope) (any, bool) {
	if slot < 0 {
		return s.lookup(path)
	}
	return r.slotIn(slot, path)
}

// slotIn resolves context path in slot, its key's.
func (r *runner) slotIn(slot int32, path []string) (any, bool) {
	v := r.slotValue(slot)
	if _, ok := v.(undefined); ok {
		return nil, false
	}
	if len(path) == 2 {
		return v, true
	}
	return lookupIn(v, path[2:])
}

// condPath is slotPath for a guard, whose scope has the context and the
// event ev: an event path is resolved without making the scope.
func (r *runner) condPath(slot int32, path []string, ev *Event) (any, bool) {
	if slot >= 0 {
		return r.slotIn(slot, path)
	}
	if len(path) >= 2 && path[0] == "event" {
		v, ok := ev.Field(path[1])
		if !ok || len(path) == 2 {
			return v, ok
		}
		return lookupIn(v, path[2:])
	}
	return scope{event: *ev}.lookup(path)
}

// evalSlots is c.eval with the context read from the slots, in the scope
// of event ev.
func (r *runner) evalSlots(sc *slotCond, ev *Event) bool {
	c := sc.c
	switch c.code {
	case condAnd:
		for _, sub := range sc.subs {
			if !r.evalSlots(sub, ev) {
				return false
			}
		}
		return true
	case condOr:
		for _, sub := range sc.subs {
			if r.evalSlots(sub, ev) {
				return true
			}
		}
		return false
	case condNot:
		return !r.evalSlots(sc.subs[0], ev)
	}
	if sc.field >= 0 && len(c.field) == 2 {
		// slotNumber, inlined: the field is a key's whole value.
		x := &r.slotCtx
		cell := &x.cells[sc.field]
		if cell.gen != x.cur {
			r.loadSlot(cell, sc.field)
		}
		n, ok := cell.number()
		if sc.order {
			// evalLiteral: only a number is ordered.
			return ok && compareNumbers(c.code, n, c.lit.num)
		}
		if ok {
			if pass, done := c.leafNumber(n); done {
				return pass
			}
			if w, ok := r.refNumber(sc); ok {
				// Two numbers: an order compares them as compare would,
				// without putting them in interfaces.
				switch c.code {
				case condGt, condGte, condLt, condLte:
					return compareNumbers(c.code, n, w)
				}
			}
		} else if b, ok := cell.v.(bool); ok && (c.code == condEq || c.code == condNeq) && c.value != nil && c.value.kind == exprLiteral && c.lit.kind != scalarNone {
			// c.leaf on a boolean (slotNumber loaded the slot).
			return (c.lit.kind == scalarBool && c.lit.b == b) == (c.code == condEq)
		}
	}
	var field any
	var present bool
	if sc.event != "" {
		// An event key, whose number needs no interface to compare.
		field, present = ev.Data[sc.event]
		n, ok := field.(float64)
		if sc.order {
			return ok && compareNumbers(c.code, n, c.lit.num)
		}
		if ok {
			if pass, done := c.leafNumber(n); done {
				return pass
			}
		}
	} else {
		field, present = r.condPath(sc.field, c.field, ev)
	}
	if c.value == nil || c.value.kind == exprLiteral {
		return c.leaf(field, present, nil, false)
	}
	want, ok := r.condPath(sc.ref, c.value.ref, ev)
	return c.leaf(field, present, want, ok)
}

// tests is evalSlots for a condition whose tests are ts, each reading its
// slot's cell directly, as evalSlots does for a leaf. It calls nothing: it
// reports done false, having evaluated in part, when a slot is not loaded
// or a test meets a value of a kind it leaves to evalSlots (see testKind);
// evalSlots then takes the whole condition (conditions have no effects).
func (x *slotContext) tests(ts []slotTest) (pass, done bool) {
	for i := range ts {
		t := &ts[i]
		cell := &x.cells[t.slot]
		if cell.gen != x.cur {
			return false, false
		}
		switch t.kind {
		case testOrder:
			n, ok := cell.number()
			if !ok || !compareNumbers(t.code, n, t.num) {
				return false, true
			}
		case testBool:
			b, ok := cell.v.(bool)
			if !ok || cell.num {
				return false, false
			}
			if (b == t.b) != (t.code == condEq) {
				return false, true
			}
		default: // testOrderRef
			ref := &x.cells[t.ref]
			if ref.gen != x.cur {
				return false, false
			}
			n, ok := cell.number()
			w, wok := ref.number()
			if !ok || !wok {
				return false, false
			}
			if !compareNumbers(t.code, n, w) {
				return false, true
			}
		}
	}
	return true, true
}

// refNumber returns the number sc's value refers to, when it is a
// context key's whole value and a number.
func (r *runner) refNumber(sc *slotCond) (float64, bool) {
	if sc.ref < 0 || len(sc.c.value.ref) != 2 {
		return 0, false
	}
	return r.slotNumber(sc.ref)
}

// assignSlots is assignEntries on the slots: every value is computed
// before any is set, unless seq says the entries are independent.
func (r *runner) assignSlots(entries []slotEntry, seq bool, ev Event) {
	r.changed = true
	if seq {
		x := &r.slotCtx
		for i := range entries {
			e := &entries[i]
			// mine: the slot is loaded and already listed in dirty, and
			// no undo is recorded: a number is set in place.
			c := &x.cells[e.slot]
			mine := !r.undoing && c.set && c.gen == x.cur
			switch ex := e.expr.e; ex.kind {
			case exprInc:
				if mine && c.num {
					c.n += ex.inc
					continue
				}
				n, _ := r.slotNumber(e.slot)
				r.setSlot(e.slot, slotValue{n: n + ex.inc, num: true})
				continue
			case exprLiteral:
				if n, ok := ex.literal.(float64); ok {
					if mine {
						c.v, c.n, c.num = nil, n, true
						continue
					}
					r.setSlot(e.slot, slotValue{n: n, num: true})
					continue
				}
			case exprRef:
				// A number of the event's data: its copy is itself, kept in
				// its interface.
				if k := e.expr.event; k != "" {
					if v := ev.Data[k]; isNumber(v) {
						r.setSlot(e.slot, slotValue{v: v})
						continue
					}
				}
			}
			r.setSlot(e.slot, r.slotEntryValue(e, ev))
		}
		return
	}
	r.assignSlotsAtOnce(entries, ev)
}

// numAssign is a slot entry that adds n to its slot's number (inc; a
// value that is not a number counts as 0) or sets it to the number n.
type numAssign struct {
	slot int32
	inc  bool
	n    float64
}

// numAssigns returns entries as numAssigns, when each is an $inc or a
// number literal; nil otherwise.
func numAssigns(entries []slotEntry) []numAssign {
	if len(entries) == 0 {
		return nil
	}
	out := make([]numAssign, 0, len(entries))
	for _, e := range entries {
		if e.expr == nil {
			return nil
		}
		switch ex := e.expr.e; ex.kind {
		case exprInc:
			out = append(out, numAssign{slot: e.slot, inc: true, n: ex.inc})
		case exprLiteral:
			n, ok := ex.literal.(float64)
			if !ok {
				return nil
			}
			out = append(out, numAssign{slot: e.slot, n: n})
		default:
			return nil
		}
	}
	return out
}

// assignNumbers is assignSlots, one by one, for entries that are all
// numAssigns, while the runner records no undo: it calls nothing for a
// slot this macrostep already set and loaded (a number is set in place).
func (r *runner) assignNumbers(ops []numAssign) {
	r.changed = true
	x := &r.slotCtx
	for i := range ops {
		o := &ops[i]
		c := &x.cells[o.slot]
		if c.set && c.gen == x.cur {
			switch {
			case !o.inc && c.num:
				c.n = o.n // v is nil while num is set
				continue
			case !o.inc:
				c.v, c.n, c.num = nil, o.n, true
				continue
			case c.num:
				c.n += o.n
				continue
			}
		}
		n := o.n
		if o.inc {
			was, _ := r.slotNumber(o.slot)
			n += was
		}
		r.setSlot(o.slot, slotValue{n: n, num: true})
	}
}

// assignSlotsAtOnce is assignSlots for entries that may depend on each
// other: every value is computed before any is set.
func (r *runner) assignSlotsAtOnce(entries []slotEntry, ev Event) {
	s := scope{event: ev, moved: r.movedOutput()}
	x := &r.slotCtx
	vals := x.next[:0]
	for i := range entries {
		e := &entries[i]
		vals = append(vals, r.slotExprValue(e.expr, e.slot, &s))
	}
	for i := range entries {
		r.setSlot(entries[i].slot, vals[i])
	}
	clear(vals)
	x.next = vals[:0]
}

// slotEntryValue is the value of entry e in the scope of event ev; the
// scope is made here, for the entries that need it.
func (r *runner) slotEntryValue(e *slotEntry, ev Event) slotValue {
	s := scope{event: ev, moved: r.movedOutput()}
	return r.slotExprValue(e.expr, e.slot, &s)
}

// independentSlots is independent for slot entries: one entry, or up to
// four literals and increments of distinct keys.
func independentSlots(entries []slotEntry) bool {
	if len(entries) == 1 {
		return true
	}
	if len(entries) > 4 {
		return false
	}
	for i, e := range entries {
		if k := e.expr.e.kind; k != exprLiteral && k != exprInc {
			return false
		}
		for _, f := range entries[:i] {
			if f.slot == e.slot {
				return false
			}
		}
	}
	return true
}

// slotExprValue is e.eval with the context read from the slots; slot is
// the key the value is for.
func (r *runner) slotExprValue(se *slotExpr, slot int32, s *scope) slotValue {
	e := se.e
	switch e.kind {
	case exprLiteral:
		if n, ok := e.literal.(float64); ok {
			return slotValue{n: n, num: true}
		}
		return slotValue{v: cloneValue(e.literal)}
	case exprInc:
		n, _ := r.slotNumber(slot)
		return slotValue{n: n + e.inc, num: true}
	}
	return slotValue{v: r.slotExprAny(se, slot, s)}
}

// slotExprAny is slotExprValue for a $ref or a $push.
func (r *runner) slotExprAny(se *slotExpr, slot int32, s *scope) any {
	e := se.e
	switch e.kind {
	case exprLiteral:
		return cloneValue(e.literal)
	case exprInc:
		n, _ := r.slotNumber(slot)
		return r.numbers.box(n + e.inc)
	case exprRef:
		v, ok := r.slotPath(se.ref, e.ref, s)
		if !ok {
			return undefined{}
		}
		if s.moved != nil && sameReference(*s.moved, v) {
			*s.moved = nil
			return v
		}
		return cloneValue(v)
	}
	// exprPush
	prev := r.slotValue(slot)
	if _, ok := prev.(undefined); ok {
		prev = nil
	}
	old, _ := prev.([]any)
	arr := make([]any, len(old), len(old)+1)
	copy(arr, old)
	v := r.slotExprAny(se.push, slot, s)
	if _, ok := v.(undefined); ok {
		v = nil // [undefined] serializes as [null]
	}
	return append(arr, v)
}

// leafNumber is c.leaf on a field whose value is the number n, for the
// conditions that need no interface to compare it: done is false for the
// others.
func (c *cond) leafNumber(n float64) (pass, done bool) {
	switch c.code {
	case condExists:
		return true, true
	case condNotExists:
		return false, true
	}
	if c.value.kind != exprLiteral {
		return false, false
	}
	switch c.code {
	case condGt, condGte, condLt, condLte:
		return c.lit.kind == scalarNum && compareNumbers(c.code, n, c.lit.num), true
	case condEq, condNeq:
		if c.lit.kind == scalarNone {
			return false, false
		}
		eq := c.lit.kind == scalarNum && c.lit.num == n
		return eq == (c.code == condEq), true
	}
	return false, false
}
