// This file generates what concerns actors (case format v2): declarative
// promise, callback and machine actors, invokes with their onDone, onError
// and onSnapshot handlers, xstate.spawnChild, stopChild, sendTo, forwardTo,
// emit and enqueueActions, the machine's input and the event-loop clock.
//
// Actor decisions draw from their own random stream, so that with actors
// disabled (or for a machine that does not use them) the generated
// machine is the one the generator made before actors existed.
//
// Termination: everything a child sends its parent (its done, error and
// snapshot events, a callback's or a child machine's events C1 and C2) is
// handled by bounded transitions (see Transition.Bound), events sent with
// sendTo are never of the external alphabet, and forwardTo only targets
// children, which never forward back; so no ping-pong between actors
// outlives the counters.

package random

import (
	"fmt"
	"math/rand/v2"
)

// childEvents are the events children send their parent.
var childEvents = []string{"C1", "C2"}

// actorNames are the srcs defineActors defines.
var actorNames = []string{"ok", "now", "bad", "cb", "quiet", "kid", "kid2"}

// withActorRand runs f with the actor stream as the generator's stream.
func (g *gen) withActorRand(f func()) {
	saved := g.r
	g.r = g.ra
	defer func() { g.r = saved }()
	f()
}

// setupActors decides whether the machine uses actors and defines them.
func (g *gen) setupActors(seed uint64, index int) {
	g.ra = rand.New(rand.NewPCG(seed^0x2545f4914f6cdd1d, uint64(index)))
	if !g.on("actors") || g.ra.Float64() >= 0.5 {
		return
	}
	g.actors = true
	g.withActorRand(func() {
		m := g.m
		m.Actors = map[string]any{}
		m.Clock = "eventloop"
		if g.chance(0.15) {
			m.Clock = "simulated"
		}
		if g.chance(0.5) {
			m.HasInput, m.Input = true, obj{{"v", g.r.IntN(4)}}
		}
		ref := func(p string) obj { return obj{{"$ref", p}} }
		m.Actors["ok"] = obj{{"promise", obj{{"resolve", obj{{"r", ref("input.v")}, {"k", 1}}}, {"after", pick(g, []int{0, 5, 10, 20})}}}}
		m.Actors["now"] = obj{{"promise", obj{{"resolve", g.jsonValue(1)}}}}
		m.Actors["bad"] = obj{{"promise", obj{{"reject", obj{{"code", 7}, {"v", ref("input.v")}}}, {"after", pick(g, []int{0, 3, 15})}}}}
		sends := []any{obj{{"at", pick(g, []int{0, 5, 12})}, {"event", obj{{"type", "C1"}, {"v", ref("input.v")}}}}}
		if g.chance(0.5) {
			sends = append(sends, obj{{"at", pick(g, []int{12, 20})}, {"event", obj{{"type", "C2"}}}})
		}
		m.Actors["cb"] = obj{{"callback", obj{{"send", sends}, {"onReceive", obj{
			{"PING", []any{obj{{"type", "C2"}, {"got", ref("event.v")}}}},
			{"C1", []any{obj{{"type", "C2"}, {"in", ref("input")}}}},
		}}}}}
		m.Actors["quiet"] = obj{{"callback", obj{{"onReceive", obj{{"PING", []any{obj{{"type", "C1"}, {"v", ref("input.v")}}}}}}}}}
		m.Actors["kid"] = obj{{"machine", g.childMachine(false)}}
		m.Actors["kid2"] = obj{{"machine", g.childMachine(true)}}
		g.m.Actions["log_err"] = push(ref("event.error"))
		g.m.Actions["log_snap"] = push(ref("event.snapshot.value"))
		g.m.Actions["log_c"] = push(ref("event.v"))
	})
}

// childMachine returns a declarative child machine: it answers PING with
// C1, goes busy and then final, and sends C2 on the way. A variant may be
// done at start, fail on PING (a missing guard), or invoke a promise of
// its own.
func (g *gen) childMachine(variant bool) obj {
	ref := func(p string) obj { return obj{{"$ref", p}} }
	assign := func(p obj) obj { return obj{{"type", "xstate.assign"}, {"params", p}} }
	sendParent := func(ev obj, delay any) obj {
		p := obj{{"event", ev}}
		if delay != nil {
			p = append(p, kv{"delay", delay})
		}
		return obj{{"type", "xstate.sendParent"}, {"params", p}}
	}
	ping := obj{{"actions", []any{assign(obj{{"n", obj{{"$inc", 1}}}}), sendParent(obj{{"type", "C1"}, {"v", ref("context.n")}}, nil)}}}
	failing := variant && g.chance(0.3)
	if failing {
		ping = append(obj{{"guard", "missing"}}, ping...)
	}
	idle := obj{{"on", obj{{"PING", ping}, {"STOP", "end"}, {"A", "busy"}}}}
	if g.chance(0.4) {
		idle = append(idle, kv{"after", obj{{fmt.Sprint(pick(g, []int{5, 10, 30})), "busy"}}})
	}
	var delay any
	if g.chance(0.3) {
		delay = 5
	}
	busy := obj{
		{"entry", sendParent(obj{{"type", "C2"}, {"n", ref("context.n")}}, delay)},
		{"after", obj{{fmt.Sprint(pick(g, []int{5, 20})), "end"}}},
		{"on", obj{{"PING", obj{{"actions", sendParent(obj{{"type", "C2"}}, nil)}}}}},
	}
	spec := obj{}
	if variant && !failing && g.chance(0.5) {
		busy = append(busy, kv{"invoke", obj{{"src", "gp"}, {"onDone", obj{{"target", "end"}, {"actions", assign(obj{{"gp", ref("event.output")}})}}}}})
		spec = append(spec, kv{"actors", obj{{"gp", obj{{"promise", obj{{"resolve", 5}, {"after", pick(g, []int{0, 5})}}}}}}})
	}
	end := obj{{"type", "final"}}
	if g.chance(0.6) {
		end = append(end, kv{"output", obj{{"n", ref("context.n")}}})
	}
	initial := "idle"
	if variant && !failing && g.chance(0.3) {
		initial = "end"
	}
	cfg := obj{
		{"id", "kid"},
		{"context", obj{{"n", 0}}},
		{"entry", assign(obj{{"got", ref("event.input")}})},
		{"initial", initial},
		{"states", obj{{"idle", idle}, {"busy", busy}, {"end", end}}},
	}
	if g.chance(0.5) {
		cfg = append(cfg, kv{"output", obj{{"n", ref("context.n")}, {"fin", ref("event.output")}}})
	}
	return append(obj{{"machine", cfg}}, spec...)
}

// invokes adds invokes to some states, before their behaviours, so that
// actions can name the invoked children.
func (g *gen) invokes() {
	if !g.actors {
		return
	}
	g.withActorRand(func() {
		for _, s := range g.all {
			if s.Kind == History || !g.chance(map[bool]float64{true: 0.1, false: 0.14}[s == g.m.Root]) {
				continue
			}
			n := 1
			if g.chance(0.15) {
				n = 2
			}
			for i := 0; i < n; i++ {
				inv := &Invoke{Src: pick(g, actorNames)}
				failing := inv.Src == "bad" || inv.Src == "kid2"
				if g.chance(0.65) {
					g.invokeN++
					inv.ID = fmt.Sprintf("i%d", g.invokeN)
				}
				if g.chance(0.6) {
					inv.HasInput = true
					inv.Input = pick(g, []any{
						obj{{"v", obj{{"$ref", "context.n"}}}},
						obj{{"$ref", "event.v"}},
						obj{{"v", 2}, {"t", obj{{"$ref", "event.type"}}}},
						3,
					})
				}
				if g.chance(0.06) {
					inv.SystemID = "sys"
				}
				if g.chance(0.55) {
					inv.OnDone = g.candidates(s, fromInternal)
					last := inv.OnDone[len(inv.OnDone)-1]
					last.Actions = append(last.Actions, &Action{Name: "log_out"})
				}
				if g.chance(map[bool]float64{true: 0.8, false: 0.3}[failing]) {
					inv.OnError = g.candidates(s, fromInternal)
					last := inv.OnError[len(inv.OnError)-1]
					last.Actions = append(last.Actions, &Action{Name: "log_err"})
				}
				if (inv.Src == "kid" || inv.Src == "kid2") && g.chance(0.15) {
					inv.OnSnapshot = g.candidates(s, fromInternal)
					last := inv.OnSnapshot[len(inv.OnSnapshot)-1]
					last.Actions = append(last.Actions, &Action{Name: "log_snap"})
				}
				s.Invokes = append(s.Invokes, inv)
				id := inv.ID
				if id == "" {
					id = fmt.Sprintf("%d.%s", i, g.m.nodeID(s))
				}
				g.childIDs = append(g.childIDs, id)
			}
		}
	})
}

// actorBehaviour adds to s handlers of its children's events and actions
// that talk to the children it invokes.
func (g *gen) actorBehaviour(s *State) {
	if !g.actors || s.Kind == History {
		return
	}
	g.withActorRand(func() {
		if s.Kind != Final && g.chance(0.25) {
			ev := pick(g, childEvents)
			used := false
			for _, h := range s.On {
				used = used || h.Event == ev
			}
			if !used {
				ts := g.candidates(s, fromInternal)
				ts[len(ts)-1].Actions = append(ts[len(ts)-1].Actions, &Action{Name: "log_c"})
				s.On = append(s.On, &Handler{Event: ev, Ts: ts})
			}
		}
		if g.chance(0.12) {
			s.Entry = append(s.Entry, g.actorActions(s)...)
		}
		if g.chance(0.08) {
			s.Exit = append(s.Exit, g.actorActions(s)...)
		}
		if g.chance(0.12) {
			s.Entry = append(s.Entry, g.checks(s))
		}
		if g.chance(0.1) {
			s.Exit = append(s.Exit, g.checks(s))
		}
		if s.InitialActions != nil && g.chance(0.3) {
			s.InitialActions = append(s.InitialActions, g.checks(s))
		}
		if s == g.m.Root && g.m.HasInput && g.chance(0.5) {
			s.Entry = append(s.Entry, &Action{Inline: obj{{"type", "xstate.assign"}, {"params", obj{{"inp", obj{{"$ref", "event.input.v"}}}}}}})
		}
	})
}

// moreActions may append actions that concern actors to a transition of
// src.
func (g *gen) moreActions(src *State, t *Transition) {
	if !g.actors {
		return
	}
	g.withActorRand(func() {
		if g.chance(0.18) {
			// A transition with targets may leave src, and its actions run
			// once the children of the states it left are stopped: send to
			// system ids mostly.
			g.leaving = t.Targets != nil
			t.Actions = append(t.Actions, g.actorActions(src)...)
			g.leaving = false
		}
		if g.chance(0.12) {
			t.Actions = append(t.Actions, g.checks(src))
		}
	})
}

// checks returns an xstate.enqueueActions action of src whose items check
// stateIn guards (XState's check), pushing which way each went to the log:
// what they see depends on when in the microstep the action runs.
func (g *gen) checks(src *State) *Action {
	a := &Action{}
	for n := 1 + g.r.IntN(3); n > 0; n-- {
		g.labelN++
		a.Checks = append(a.Checks, &Check{
			If:   g.configGuard(src, true),
			Then: fmt.Sprintf("c%d", g.labelN),
			Else: fmt.Sprintf("!c%d", g.labelN),
		})
	}
	return a
}

// childTarget picks a child id to send to: mostly one invoked by src or
// an ancestor (likely active, so that sends rarely fail), sometimes a
// spawned one or any invoked one, and, when systemIDs, a system id
// ("#nobody" names no actor, so the machine sends to itself). It returns
// "" when there is nothing likely to pick.
func (g *gen) childTarget(src *State, systemIDs bool) string {
	var cands []string
	for x := src; x != nil; x = x.Parent {
		for i, inv := range x.Invokes {
			id := inv.ID
			if id == "" {
				id = fmt.Sprintf("%d.%s", i, g.m.nodeID(x))
			}
			cands = append(cands, id)
		}
	}
	switch {
	case g.chance(0.03):
		return pick(g, []string{"k1", "k2"})
	case len(g.childIDs) > 0 && g.chance(0.03):
		return pick(g, g.childIDs)
	case systemIDs && (len(cands) == 0 || g.chance(0.2) || (g.leaving && g.chance(0.95))):
		return pick(g, []string{"#sys", "#sys2", "#nobody"})
	case len(cands) == 0:
		return ""
	}
	return pick(g, cands)
}

// actorActions returns one action (or a spawn with a send to the child)
// that concerns actors.
func (g *gen) actorActions(src *State) []*Action {
	ref := func(p string) obj { return obj{{"$ref", p}} }
	decl := func(typ string, params obj) *Action {
		return &Action{Inline: obj{{"type", typ}, {"params", params}}}
	}
	spawn := func() (*Action, string) {
		id := pick(g, []string{"k1", "k2"})
		src := pick(g, actorNames)
		if src == "bad" && g.chance(0.7) {
			src = "ok" // a spawned child's rejection is unhandled: the root fails
		}
		p := obj{{"src", src}, {"id", id}}
		if g.chance(0.5) {
			p = append(p, kv{"input", obj{{"v", ref("context.n")}}})
		}
		if g.chance(0.02) {
			p = append(p, kv{"systemId", "sys2"})
		}
		if g.chance(0.15) {
			p = append(p, kv{"syncSnapshot", true})
		}
		return decl("xstate.spawnChild", p), id
	}
	sendEvent := func() obj {
		return obj{{"type", pick(g, []string{"PING", "PING", "STOP", "C1"})}, {"v", ref("context.n")}}
	}
	switch x := g.r.IntN(10); {
	case x < 2:
		a, _ := spawn()
		return []*Action{a}
	case x < 3:
		to := g.childTarget(src, false)
		if to == "" {
			to = pick(g, []string{"k1", "k2"})
		}
		return []*Action{decl("xstate.stopChild", obj{{"id", to}})}
	case x < 5:
		p := obj{{"to", g.childTarget(src, true)}, {"event", sendEvent()}}
		if g.chance(0.3) {
			p = append(p, kv{"delay", pick(g, []any{0, 5, 15, "SHORT"})})
			if g.chance(0.5) {
				p = append(p, kv{"id", "s1"})
			}
		}
		return []*Action{decl("xstate.sendTo", p)}
	case x < 6:
		if to := g.childTarget(src, false); to != "" {
			return []*Action{decl("xstate.forwardTo", obj{{"to", to}})}
		}
		fallthrough
	case x < 7:
		return []*Action{decl("xstate.emit", obj{{"event", obj{{"type", "EM"}, {"n", ref("context.n")}, {"on", ref("event.type")}}}})}
	case x < 8:
		cond := any("ev_v")
		if g.chance(0.5) {
			cond = obj{{"field", "context.n"}, {"op", "gt"}, {"value", 1}}
		}
		items := []any{
			obj{{"if", cond}, {"then", []any{"inc_n", obj{{"type", "xstate.emit"}, {"params", obj{{"event", obj{{"type", "EQ"}}}}}}}}, {"else", []any{"log_type"}}},
			"log_n",
		}
		if g.chance(0.3) {
			items = append(items, obj{{"type", "xstate.sendTo"}, {"params", obj{{"to", "#nobody"}, {"event", obj{{"type", "C2"}}}}}})
		}
		return []*Action{decl("xstate.enqueueActions", obj{{"actions", items}})}
	case x < 9:
		return []*Action{decl("xstate.cancel", obj{{"sendId", "s1"}})}
	}
	a, id := spawn()
	return []*Action{a, decl("xstate.sendTo", obj{{"to", id}, {"event", sendEvent()}})}
}

// v2Steps inserts, in a machine with actors, a persist step and a later
// restore of it, and query steps.
func (g *gen) v2Steps() {
	if !g.actors {
		return
	}
	g.withActorRand(func() {
		steps := g.m.Steps
		insert := func(at int, s Step) {
			steps = append(steps[:at:at], append([]Step{s}, steps[at:]...)...)
		}
		if g.chance(0.45) && len(steps) > 1 {
			i := g.r.IntN(len(steps))
			j := i + 1 + g.r.IntN(len(steps)-i)
			insert(j, Step{Restore: "p"})
			insert(i, Step{Persist: "p"})
		}
		for g.chance(0.25) {
			var q obj
			switch g.r.IntN(4) {
			case 0:
				if g.m.usesMissingGuard() {
					// XState's can() throws on a guard without implementation.
					continue
				}
				q = obj{{"can", obj{{"type", pick(g, externalEvents)}}}}
			case 1:
				q = obj{{"matches", stateValue(g.m.Root, pick(g, g.nonHistory()))}}
			case 2:
				q = obj{{"hasTag", pick(g, []string{"busy", "idle", "t1"})}}
			default:
				q = obj{{"getMeta", obj{}}}
			}
			insert(g.r.IntN(len(steps)+1), Step{Query: q})
		}
		g.m.Steps = steps
	})
}

// usesMissingGuard reports whether a transition of the machine names a
// guard without implementation.
func (m *Machine) usesMissingGuard() bool {
	var missing func(g *Guard) bool
	missing = func(g *Guard) bool {
		if g == nil {
			return false
		}
		if g.Op == "name" {
			if _, ok := m.Guards[g.Name]; !ok {
				return true
			}
		}
		for _, s := range g.Subs {
			if missing(s) {
				return true
			}
		}
		return false
	}
	for _, s := range m.States() {
		for _, l := range s.transitionLists() {
			for _, t := range *l {
				if missing(t.Guard) {
					return true
				}
			}
		}
	}
	return false
}
