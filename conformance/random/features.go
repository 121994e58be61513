package random

import "strings"

// Depth is the nesting depth of s: 0 for the root.
func (s *State) Depth() int { return s.depth() }

// FeatureList names the generator features the machine uses, for coverage
// reports and tests: state kinds, history kinds, transition kinds, guard
// and action kinds and step kinds.
func (m *Machine) FeatureList() []string {
	seen := map[string]bool{}
	add := func(f string) { seen[f] = true }
	var guard func(g *Guard)
	guard = func(g *Guard) {
		if g == nil {
			return
		}
		switch g.Op {
		case "in":
			add("stateIn")
		case "and", "or", "not":
			add("guard-combinator")
		default:
			add("guard")
		}
		for _, s := range g.Subs {
			guard(s)
		}
	}
	for _, s := range m.States() {
		switch s.Kind {
		case Compound:
			add("compound")
		case Parallel:
			add("parallel")
		case Final:
			add("final")
			if s.Parent.Kind == Parallel || (s.Parent.Parent != nil && s.Parent.Parent.Kind == Parallel) {
				add("final-in-region")
			}
		case History:
			if s.Deep {
				add("history-deep")
			} else {
				add("history-shallow")
			}
			if s.HistTarget != nil {
				add("history-default-target")
			}
			if s.Parent.Kind == Parallel {
				add("history-of-parallel")
			}
		}
		if s.ID != "" {
			add("custom-id")
		}
		if len(s.Tags) > 0 {
			add("tags")
		}
		if len(s.Always) > 0 {
			add("always")
		}
		if len(s.After) > 0 {
			add("after")
		}
		if len(s.OnDone) > 0 {
			add("onDone")
		}
		if s.InitialActions != nil {
			add("initial-actions")
		}
		for _, h := range s.On {
			if h.Event == "*" || strings.HasSuffix(h.Event, ".*") {
				add("wildcard")
			}
		}
		for _, l := range s.transitionLists() {
			for _, t := range *l {
				if t.Targets == nil {
					add("targetless")
				}
				if len(t.Targets) > 1 {
					add("multi-target")
				}
				if t.Reenter {
					add("reenter")
				}
				if t.Bound != "" {
					add("bounded")
				}
				guard(t.Guard)
			}
		}
		for _, l := range s.actionLists() {
			for _, a := range *l {
				if a.Checks != nil {
					add("enqueue-check")
					for _, c := range a.Checks {
						guard(c.If)
					}
				}
				if a.Inline != nil {
					if o, ok := a.Inline.(obj); ok {
						typ, _ := o.get("type")
						p, _ := o.get("params")
						po, _ := p.(obj)
						_, delayed := po.get("delay")
						switch {
						case typ == "xstate.raise" && delayed:
							add("delayed-raise")
						case typ == "xstate.raise":
							add("raise")
						case typ == "xstate.cancel":
							add("cancel")
						case typ == "xstate.assign":
							add("inline-assign")
						}
					}
				} else if strings.HasPrefix(a.Name, "raise_") {
					add("raise")
				}
			}
		}
	}
	if m.HasInput {
		add("input")
	}
	if m.Clock == "eventloop" {
		add("eventloop-clock")
	}
	inline := func(v any) {
		o, ok := v.(obj)
		if !ok {
			return
		}
		typ, _ := o.get("type")
		switch typ {
		case "xstate.spawnChild":
			add("spawn")
		case "xstate.stopChild":
			add("stopChild")
		case "xstate.sendTo":
			add("sendTo")
		case "xstate.forwardTo":
			add("forwardTo")
		case "xstate.emit":
			add("emit")
		case "xstate.enqueueActions":
			add("enqueue")
		}
	}
	for _, s := range m.States() {
		for _, inv := range s.Invokes {
			add("invoke")
			if len(inv.OnDone) > 0 {
				add("invoke-onDone")
			}
			if len(inv.OnError) > 0 {
				add("invoke-onError")
			}
			if len(inv.OnSnapshot) > 0 {
				add("invoke-onSnapshot")
			}
		}
		for _, l := range s.actionLists() {
			for _, a := range *l {
				inline(a.Inline)
			}
		}
	}
	for _, st := range m.Steps {
		switch {
		case st.Persist != "":
			add("persist-step")
			continue
		case st.Restore != "":
			add("restore-step")
			continue
		case st.Query != nil:
			add("query-step")
			continue
		case st.Event == nil:
			add("advance-step")
			continue
		}
		typ, _ := st.Event.get("type")
		t, _ := typ.(string)
		for _, u := range unknownEvents {
			if t == u {
				add("unknown-event")
			}
		}
	}
	out := make([]string, 0, len(seen))
	for f := range seen {
		out = append(out, f)
	}
	return out
}
