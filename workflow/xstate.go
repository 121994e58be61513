// This file defines the loading of an XState workflow: the machine config
// compiled by package statechart, with the workflow's guards, interrupts,
// meta and per-state policies read from meta.chartgate.

package workflow

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"sort"

	"github.com/tidwall/gjson"

	"github.com/chartgate/chartgate/internal/jsonx"
	"github.com/chartgate/chartgate/statechart"
)

// rootChartgateKeys are the keys of the root's meta.chartgate besides the
// policy keys.
var rootChartgateKeys = []string{"interrupts", "guards", "workflow"}

// loadXState compiles an XState workflow.
func loadXState(data []byte, o Options) (*Workflow, error) {
	var e errs
	var root gjson.Result
	if gjson.ValidBytes(data) {
		root = gjson.ParseBytes(data)
	}
	rootCG := member(member(root, "meta"), "chartgate")

	// The guards declared in meta.chartgate.guards, before compiling: the
	// machine refers to them.
	impl := builtins()
	declared := map[string]statechart.GuardFunc{}
	defs := map[string]Guard{}
	if gs := member(rootCG, "guards"); gs.Exists() {
		p := jsonx.Path("meta").Key("chartgate").Key("guards")
		if !gs.IsObject() {
			e.add(p, "must be an object of named guards {\"field\", \"op\", \"value\"}, not %s", kind(gs))
		} else {
			for _, mb := range jsonx.Members(gs, func(k string) { e.add(p.Key(k), "duplicate key %q", k) }) {
				gp := p.Key(mb.Key)
				if msg := checkName(mb.Key, "guard"); msg != "" {
					e.add(gp, "%s", msg)
					continue
				}
				g, ok := readGuard(mb.Value, gp, &e)
				if !ok {
					// Defined, so the machine's use of it is not reported too.
					declared[mb.Key] = func(context.Context, statechart.GuardArgs) (bool, error) {
						return false, errors.New("invalid guard")
					}
					continue
				}
				declared[mb.Key] = guardFunc(g)
				defs[mb.Key] = g
			}
		}
	}
	for name, f := range declared {
		impl.Guards[name] = f
	}
	user := o.Statechart.Implementations
	for name := range user.Guards {
		if _, clash := impl.Guards[name]; clash {
			e.add("", "guard %q is given both in Options.Statechart.Implementations and by the workflow (meta.chartgate.guards or a built-in)", name)
		}
	}
	for name := range user.Actions {
		if _, clash := impl.Actions[name]; clash {
			e.add("", "action %q is given both in Options.Statechart.Implementations and as a built-in", name)
		}
	}
	copts := o.Statechart
	copts.Implementations = user.Merge(impl)
	m, err := statechart.Compile(data, &copts)
	if err != nil {
		var list statechart.ErrorList
		if errors.As(err, &list) {
			e.list = append(e.list, list...)
		} else {
			e.add("", "%v", err)
		}
		return nil, e.err()
	}
	// What XState would ignore is, in a workflow, a mistake that may leave
	// tools ungated (a misspelt "meta", an unknown key where "mcp" was
	// meant): a workflow is loaded strictly.
	for _, w := range m.Warnings() {
		w2 := *w
		w2.Warning = false
		e.list = append(e.list, &w2)
	}

	w := &Workflow{Format: FormatXState, Compat: o.Compat, Machine: m, JSON: bytes.Clone(data), Policies: map[string]StatePolicy{}}
	nodes := m.Nodes()
	if len(nodes) < 2 {
		// A machine without states is its root alone, which gates no tool:
		// a file emptied to {} would switch enforcement off.
		p := jsonx.Path("states")
		if !member(root, "states").Exists() {
			p = ""
		}
		e.add(p, "the workflow defines no state: it needs at least one state (a workflow without states would gate nothing)")
		return nil, e.err()
	}
	byID := make(map[string]int, len(nodes))
	values := make([]gjson.Result, len(nodes))
	paths := make([]jsonx.Path, len(nodes))
	for i, n := range nodes {
		byID[n.ID] = i
		if n.Parent == "" {
			values[i] = root
			continue
		}
		// Parents come first in document order.
		pi := byID[n.Parent]
		values[i] = member(member(values[pi], "states"), n.Key)
		paths[i] = paths[pi].Key("states").Key(n.Key)
	}
	w.guards = indexGuards(nodes, values, defs)
	known := slices.Concat(policyKeys, rootChartgateKeys)
	for i, n := range nodes {
		cg := member(member(values[i], "meta"), "chartgate")
		if !cg.Exists() {
			continue
		}
		p := paths[i].Key("meta").Key("chartgate")
		if !cg.IsObject() {
			e.add(p, "must be an object, not %s", kind(cg))
			continue
		}
		pr := newPolicyReader(&e)
		for _, mb := range jsonx.Members(cg, func(k string) { e.add(p.Key(k), "duplicate key %q", k) }) {
			kp := p.Key(mb.Key)
			if pr.read(mb.Key, mb.Value, kp) {
				continue
			}
			isRoot := n.Parent == ""
			switch {
			case isRoot && mb.Key == "guards":
				// read above
			case isRoot && mb.Key == "workflow":
				w.Meta, _ = readMachineMeta(mb.Value, kp, &e)
			case isRoot && mb.Key == "interrupts":
				w.Interrupts = readXStateInterrupts(mb.Value, kp, m, &e)
			case !isRoot && slices.Contains(rootChartgateKeys, mb.Key):
				e.add(kp, "%q belongs in the root state's meta.chartgate", mb.Key)
			default:
				if isRoot {
					e.add(kp, "%s", unknownKey(mb.Key, known))
				} else {
					e.add(kp, "%s", unknownKey(mb.Key, policyKeys))
				}
			}
		}
		if pol, ok := pr.policy(); ok {
			w.Policies[n.ID] = pol
		}
	}
	if len(e.list) > 0 {
		return nil, e.err()
	}
	return w, nil
}

// readXStateInterrupts reads meta.chartgate.interrupts:
// {"name": {"file_pattern": "**/*.env*", "event": "chartgate.interrupt.name"}}.
func readXStateInterrupts(v gjson.Result, p jsonx.Path, m *statechart.Machine, e *errs) []Interrupt {
	if !v.IsObject() {
		e.add(p, "must be an object of named interrupts {\"file_pattern\", \"event\"}, not %s", kind(v))
		return nil
	}
	events := m.Events()
	var out []Interrupt
	for _, mb := range jsonx.Members(v, func(k string) { e.add(p.Key(k), "duplicate key %q", k) }) {
		ip := p.Key(mb.Key)
		if msg := checkInterruptName(mb.Key); msg != "" {
			e.add(ip, "%s", msg)
			continue
		}
		if !mb.Value.IsObject() {
			e.add(ip, "an interrupt must be an object {\"file_pattern\", \"event\"}, not %s", kind(mb.Value))
			continue
		}
		in := Interrupt{Name: mb.Key, Event: InterruptEventPrefix + mb.Key}
		ok := true
		for _, f := range jsonx.Members(mb.Value, func(k string) { e.add(ip.Key(k), "duplicate key %q", k) }) {
			fp := ip.Key(f.Key)
			switch f.Key {
			case "file_pattern":
				if f.Value.Type != gjson.String || f.Value.String() == "" {
					e.add(fp, `must be a glob such as "**/*.env*", not %s`, kind(f.Value))
					ok = false
					continue
				}
				in.FilePattern = f.Value.String()
			case "event":
				if f.Value.Type != gjson.String || f.Value.String() == "" {
					e.add(fp, "must be an event type, not %s", kind(f.Value))
					ok = false
					continue
				}
				in.Event = f.Value.String()
			default:
				e.add(fp, "%s", unknownKey(f.Key, []string{"file_pattern", "event"}))
				ok = false
			}
		}
		if in.FilePattern == "" && ok {
			e.add(ip, `an interrupt needs "file_pattern"`)
			ok = false
		}
		if ok && !slices.Contains(events, in.Event) {
			e.add(ip, "no state handles the interrupt's event %q%s", in.Event, didYouMean(in.Event, events))
			ok = false
		}
		if ok {
			out = append(out, in)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// member returns the value of key in an object (the first, if repeated),
// whatever characters the key holds.
func member(v gjson.Result, key string) gjson.Result {
	var out gjson.Result
	if !v.IsObject() {
		return out
	}
	v.ForEach(func(k, val gjson.Result) bool {
		if k.String() == key {
			out = val
			return false
		}
		return true
	})
	return out
}
