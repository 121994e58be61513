package random

import (
	"context"

	"github.com/chartgate/chartgate/conformance"
)

// Shrink reduces a machine on which XState and chartgate differ: it removes
// steps, states, transitions, actions, guards and decorations for as long as
// XState still builds the machine and the difference persists (of the same
// kind: a compile-time difference stays one, a snapshot difference stays
// one). It returns the smallest machine found and its outcome.
func Shrink(ctx context.Context, o *Oracle, m *Machine, first *conformance.Mismatch, maxChecks int) (*Machine, outcome, error) {
	s := &shrinker{ctx: ctx, o: o, compileErr: first.Err != nil, budget: maxChecks}
	best, err := s.check(m)
	if err != nil {
		return m, outcome{}, err
	}
	if best.mismatch == nil || best.invalid != "" {
		// Not reproducible (should not happen): keep the machine as is.
		return m, outcome{mismatch: first}, nil
	}
	s.best, s.bestOut = m, best
	for changed := true; changed && s.budget > 0; {
		changed = false
		s.truncateSteps()
		if s.steps() {
			changed = true
		}
		for _, mut := range mutations {
			if s.pass(mut) {
				changed = true
			}
			if s.err != nil {
				return s.best, s.bestOut, s.err
			}
		}
	}
	return s.best, s.bestOut, s.err
}

type shrinker struct {
	ctx        context.Context
	o          *Oracle
	compileErr bool
	budget     int
	best       *Machine
	bestOut    outcome
	err        error
}

func (s *shrinker) check(m *Machine) (outcome, error) {
	s.budget--
	return check(s.ctx, s.o, m, m.Name(), "")
}

// try reports whether candidate still shows the difference; if so it
// becomes the best machine.
func (s *shrinker) try(c *Machine) bool {
	if s.err != nil || s.budget <= 0 {
		return false
	}
	out, err := s.check(c)
	if err != nil {
		s.err = err
		return false
	}
	if out.invalid != "" || out.mismatch == nil || (out.mismatch.Err != nil) != s.compileErr {
		return false
	}
	s.best, s.bestOut = c, out
	return true
}

// truncateSteps drops the steps after the first difference.
func (s *shrinker) truncateSteps() {
	mm := s.bestOut.mismatch
	if mm == nil || mm.Err != nil || mm.Step < 0 || mm.Step >= len(s.best.Steps) {
		return
	}
	c := s.best.Clone()
	c.Steps = c.Steps[:mm.Step]
	s.try(c)
}

// steps removes chunks of steps, halving the chunk size.
func (s *shrinker) steps() bool {
	changed := false
	for chunk := max(1, len(s.best.Steps)/2); chunk >= 1; chunk /= 2 {
		for i := 0; i+chunk <= len(s.best.Steps); {
			c := s.best.Clone()
			c.Steps = append(c.Steps[:i:i], c.Steps[i+chunk:]...)
			if s.try(c) {
				changed = true
				s.truncateSteps()
				continue
			}
			i += chunk
		}
		if chunk == 1 {
			break
		}
	}
	return changed
}

// A mutation applies its i-th possible change to m and reports whether
// there was an i-th one.
type mutation func(m *Machine, i int) bool

func (s *shrinker) pass(mut mutation) bool {
	changed := false
	for i := 0; s.err == nil && s.budget > 0; {
		c := s.best.Clone()
		if !mut(c, i) {
			break
		}
		if s.try(c) {
			changed = true
			continue // the same index now names the next item
		}
		i++
	}
	return changed
}

var mutations = []mutation{
	removeState,
	removeTransition,
	removeAction,
	removeGuard,
	simplifyGuard,
	removeTarget,
	clearFlags,
	removeEventData,
	removeContextKey,
	shortenAdvance,
}

// removeState removes the i-th non-root state and its subtree, and every
// reference to them.
func removeState(m *Machine, i int) bool {
	states := m.States()[1:]
	if i >= len(states) {
		return false
	}
	victim := states[i]
	removed := map[*State]bool{}
	detach(victim, removed)
	fixReferences(m, removed)
	return true
}

func detach(s *State, removed map[*State]bool) {
	p := s.Parent
	for j, c := range p.Children {
		if c == s {
			p.Children = append(p.Children[:j:j], p.Children[j+1:]...)
			break
		}
	}
	s.walk(func(x *State) { removed[x] = true })
}

// fixReferences drops or repairs everything that refers to removed states,
// until the machine is consistent again.
func fixReferences(m *Machine, removed map[*State]bool) {
	for again := true; again; {
		again = false
		for _, s := range m.States() {
			if s.HistTarget != nil && removed[s.HistTarget] {
				s.HistTarget = nil
			}
		}
		for _, s := range m.States() {
			if s.Kind != Compound && s.Kind != Parallel {
				continue
			}
			var real []*State
			for _, c := range s.Children {
				if c.Kind != History {
					real = append(real, c)
				}
			}
			if len(real) == 0 {
				// Nothing left to be in: the state becomes atomic.
				for len(s.Children) > 0 {
					detach(s.Children[0], removed)
				}
				s.Kind, s.Initial, s.InitialActions, s.InitialObject, s.OnDone = Atomic, nil, nil, false, nil
				again = true
				continue
			}
			if s.Kind == Compound && (s.Initial == nil || removed[s.Initial] || (s.Initial.Kind == History && s.Initial.HistTarget == nil)) {
				s.Initial = real[0]
				if s.Parent == nil && s.Initial.Kind == Final {
					s.Initial.Kind = Atomic
					s.Initial.HasOutput, s.Initial.Output = false, nil
				}
			}
		}
	}
	for _, s := range m.States() {
		for _, l := range s.transitionLists() {
			kept := (*l)[:0]
			for _, t := range *l {
				if t.Targets != nil {
					var ts []*State
					for _, x := range t.Targets {
						if !removed[x] {
							ts = append(ts, x)
						}
					}
					if len(ts) == 0 {
						continue
					}
					t.Targets = ts
				}
				t.Guard = pruneGuard(t.Guard, removed)
				kept = append(kept, t)
			}
			*l = kept
		}
		s.On = pruneHandlers(s.On)
		s.After = pruneHandlers(s.After)
		for _, l := range s.actionLists() {
			for _, a := range *l {
				pruneChecks(a, removed)
			}
		}
	}
}

// pruneChecks drops the checks of a whose stateIn names a removed state.
func pruneChecks(a *Action, removed map[*State]bool) {
	if a.Checks == nil {
		return
	}
	kept := make([]*Check, 0, len(a.Checks))
	for _, c := range a.Checks {
		if g := pruneGuard(c.If, removed); g != nil {
			kept = append(kept, c)
		}
	}
	a.Checks = kept
}

func pruneHandlers(hs []*Handler) []*Handler {
	var out []*Handler
	for _, h := range hs {
		if len(h.Ts) > 0 {
			out = append(out, h)
		}
	}
	return out
}

func pruneGuard(g *Guard, removed map[*State]bool) *Guard {
	if g == nil {
		return nil
	}
	switch g.Op {
	case "in":
		if removed[g.In] {
			return nil
		}
	case "not":
		if pruneGuard(g.Subs[0], removed) == nil {
			return nil
		}
	case "and", "or":
		var subs []*Guard
		for _, x := range g.Subs {
			if y := pruneGuard(x, removed); y != nil {
				subs = append(subs, y)
			}
		}
		if len(subs) == 0 {
			return nil
		}
		g.Subs = subs
	}
	return g
}

type tref struct {
	list *[]*Transition
	j    int
	src  *State
}

func allTransitions(m *Machine) []tref {
	var out []tref
	for _, s := range m.States() {
		for _, l := range s.transitionLists() {
			for j := range *l {
				out = append(out, tref{l, j, s})
			}
		}
	}
	return out
}

func removeTransition(m *Machine, i int) bool {
	ts := allTransitions(m)
	if i >= len(ts) {
		return false
	}
	t := ts[i]
	*t.list = append((*t.list)[:t.j:t.j], (*t.list)[t.j+1:]...)
	for _, s := range m.States() {
		s.On = pruneHandlers(s.On)
		s.After = pruneHandlers(s.After)
	}
	return true
}

func removeAction(m *Machine, i int) bool {
	for _, s := range m.States() {
		for _, l := range s.actionLists() {
			if i < len(*l) {
				*l = append((*l)[:i:i], (*l)[i+1:]...)
				return true
			}
			i -= len(*l)
		}
		if s.InitialActions != nil && len(s.InitialActions) == 0 {
			if i == 0 {
				s.InitialActions = nil
				return true
			}
			i--
		}
	}
	return false
}

func removeGuard(m *Machine, i int) bool {
	for _, t := range allTransitions(m) {
		tr := (*t.list)[t.j]
		if tr.Guard == nil {
			continue
		}
		if i == 0 {
			tr.Guard = nil
			return true
		}
		i--
	}
	return false
}

// simplifyGuard replaces a combination by one of its operands.
func simplifyGuard(m *Machine, i int) bool {
	var visit func(g **Guard) bool
	visit = func(g **Guard) bool {
		if *g == nil {
			return false
		}
		for j := range (*g).Subs {
			if i == 0 {
				*g = (*g).Subs[j]
				return true
			}
			i--
		}
		for j := range (*g).Subs {
			if visit(&(*g).Subs[j]) {
				return true
			}
		}
		return false
	}
	for _, t := range allTransitions(m) {
		if visit(&(*t.list)[t.j].Guard) {
			return true
		}
	}
	return false
}

func removeTarget(m *Machine, i int) bool {
	for _, t := range allTransitions(m) {
		tr := (*t.list)[t.j]
		if len(tr.Targets) < 2 {
			continue
		}
		if i < len(tr.Targets) {
			tr.Targets = append(tr.Targets[:i:i], tr.Targets[i+1:]...)
			return true
		}
		i -= len(tr.Targets)
	}
	return false
}

// clearFlags resets one decoration to its plainest form.
func clearFlags(m *Machine, i int) bool {
	var edits []func()
	for _, s := range m.States() {
		s := s
		if s.ID != "" {
			edits = append(edits, func() { s.ID = "" })
		}
		if len(s.Tags) > 0 {
			edits = append(edits, func() { s.Tags = nil })
		}
		if s.HasOutput {
			edits = append(edits, func() { s.HasOutput, s.Output = false, nil })
		}
		if s.InitialActions != nil || s.InitialObject {
			edits = append(edits, func() { s.InitialActions, s.InitialObject = nil, false })
		}
		if s.TypeExplicit {
			edits = append(edits, func() { s.TypeExplicit = false })
		}
		if s.Meta {
			edits = append(edits, func() { s.Meta = false })
		}
		if s.HistTarget != nil && !(s.Parent.Initial == s) {
			edits = append(edits, func() { s.HistTarget = nil })
		}
		if s.Deep || s.HistTrue {
			edits = append(edits, func() { s.Deep, s.HistTrue = false, false })
		}
		for _, h := range s.On {
			if h.Array {
				h := h
				edits = append(edits, func() { h.Array = false })
			}
		}
		afterTs := map[*Transition]bool{}
		for _, h := range s.After {
			for _, t := range h.Ts {
				afterTs[t] = true
			}
		}
		for _, l := range s.transitionLists() {
			for _, t := range *l {
				t := t
				if t.Reenter {
					edits = append(edits, func() { t.Reenter = false })
				}
				if t.Meta {
					edits = append(edits, func() { t.Meta = false })
				}
				if t.Style != 0 {
					edits = append(edits, func() { t.Style = 0 })
				}
				if t.Form != 0 && !(afterTs[t] && m.disabled["after-array-strings"]) {
					edits = append(edits, func() { t.Form = 0 })
				}
			}
		}
		for _, l := range s.actionLists() {
			for _, a := range *l {
				if a.Object {
					a := a
					edits = append(edits, func() { a.Object = false })
				}
			}
		}
	}
	if i >= len(edits) {
		return false
	}
	edits[i]()
	return true
}

func removeEventData(m *Machine, i int) bool {
	for j := range m.Steps {
		ev := m.Steps[j].Event
		if len(ev) <= 1 {
			continue
		}
		if i == 0 {
			m.Steps[j].Event = ev[:1]
			return true
		}
		i--
	}
	return false
}

func removeContextKey(m *Machine, i int) bool {
	if i >= len(m.Context) {
		return false
	}
	m.Context = append(m.Context[:i:i], m.Context[i+1:]...)
	return true
}

func shortenAdvance(m *Machine, i int) bool {
	for j := range m.Steps {
		if !m.Steps[j].isAdvance() || m.Steps[j].Advance <= 1 {
			continue
		}
		if i == 0 {
			m.Steps[j].Advance = float64(int(m.Steps[j].Advance) / 2)
			if m.Steps[j].Advance < 1 {
				m.Steps[j].Advance = 1
			}
			return true
		}
		i--
	}
	return false
}
