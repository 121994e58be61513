// This file defines the reading of a Statewright workflow file: every field
// of its schema, checked for type and unknown keys (with did-you-mean), and
// the cross-checks of Statewright's validate_definition (initial state,
// final state, targets, guards, interrupts, fork branches, reachability),
// extended to every branch of a guarded array and to safe_next.

package workflow

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/chartgate/chartgate/internal/jsonx"
	"github.com/chartgate/chartgate/internal/toolname"
	"github.com/chartgate/chartgate/statechart"
)

// returnTarget is the target that resumes the state an interrupt left.
const returnTarget = "$return"

var (
	docKeys       = []string{"id", "initial", "context", "states", "guards", "meta", "interrupts", "$schema"}
	stateOwnKeys  = []string{"on", "type", "allowed_tools", "disallowed_tools", "instructions", "safe_next"}
	fullKeys      = []string{"target", "guard", "guards", "requires_approval", "approval_message"}
	branchKeys    = []string{"target", "guard", "guards"}
	forkKeys      = []string{"branches", "join", "on_complete", "on_fail"}
	invokeKeys    = []string{"invoke", "on_complete", "on_fail", "input"}
	guardDefKeys  = []string{"field", "op", "value"}
	interruptKeys = []string{"trigger", "target"}
)

// stateKeys are every key a Statewright state may have.
var stateKeys = func() []string {
	ks := slices.Clone(stateOwnKeys)
	ks = append(ks, policyKeys...)
	for a := range policyAliases {
		ks = append(ks, a)
	}
	sort.Strings(ks[len(stateOwnKeys):])
	return ks
}()

type swDoc struct {
	id          string
	initial     string
	initialPath jsonx.Path
	context     *obj
	states      []*swState
	byName      map[string]*swState
	guards      []*swGuard
	guardByName map[string]*swGuard
	meta        MachineMeta
	metaJSON    *obj
	interrupts  []*swInterrupt // sorted by name
	broken      bool           // a transition could not be read
}

type swGuard struct {
	name string
	path jsonx.Path
	def  Guard
}

type swInterrupt struct {
	name, pattern, target string
	path, targetPath      jsonx.Path
}

type swState struct {
	name         string
	path         jsonx.Path
	final        bool
	on           []*swEvent
	tools        []string // nil: every tool
	deny         []string
	instructions string
	maxIter      int
	safeNext     string
	safeNextPath jsonx.Path
	policy       *policyReader
}

type swEvent struct {
	name string
	path jsonx.Path
	tr   *swTransition
}

type transitionKind uint8

const (
	kindSimple transitionKind = iota
	kindFull
	kindGuarded
	kindFork
	kindInvoke
)

type swTransition struct {
	kind        transitionKind
	branches    []*swBranch // simple, full: one; guarded: the array
	approval    bool
	approvalMsg string
	fork        *swFork
	invoke      *swInvoke
}

type swBranch struct {
	target     string
	targetPath jsonx.Path
	guards     []string
	guardPaths []jsonx.Path
}

type swFork struct {
	path       jsonx.Path
	branches   []*swForkBranch
	join       string // "all" or "any"
	onComplete string
	ocPath     jsonx.Path
	onFail     string // "" when not given
	ofPath     jsonx.Path
}

type swForkBranch struct {
	name                  string
	path                  jsonx.Path
	initial, terminal     string
	initialPath, termPath jsonx.Path
}

type swInvoke struct {
	path       jsonx.Path
	name       string
	onComplete string
	ocPath     jsonx.Path
	onFail     string
	ofPath     jsonx.Path
	input      *obj // nil when not given
}

// parseStatewright reads a Statewright workflow and checks it. It returns
// nil if the document is not usable at all; other problems are in e.
func parseStatewright(data []byte, limits statechart.Options, e *errs) *swDoc {
	if !checkDocument(data, limits, e) {
		return nil
	}
	root := gjson.ParseBytes(data)
	if !root.IsObject() {
		e.add("", "a Statewright workflow must be a JSON object, not %s", jsonx.Kind(root))
		return nil
	}
	d := &swDoc{id: "workflow", context: newObj(), byName: map[string]*swState{}, guardByName: map[string]*swGuard{}, metaJSON: newObj()}
	var states, guards, interrupts gjson.Result
	hasInitial, hasStates := false, false
	for _, mb := range jsonx.Members(root, func(k string) { e.add(jsonx.Path("").Key(k), "duplicate key %q", k) }) {
		p := jsonx.Path("").Key(mb.Key)
		v := mb.Value
		switch mb.Key {
		case "id":
			if v.Type != gjson.String || v.String() == "" {
				e.add(p, "must be a non-empty string, not %s", kind(v))
				continue
			}
			d.id = v.String()
		case "initial":
			hasInitial = true
			d.initialPath = p
			if v.Type != gjson.String || v.String() == "" {
				e.add(p, "must be the name of a state, not %s", kind(v))
				continue
			}
			d.initial = v.String()
		case "context":
			switch {
			case v.Type == gjson.Null:
			case v.IsObject():
				for _, c := range jsonx.Members(v, func(k string) { e.add(p.Key(k), "duplicate key %q", k) }) {
					d.context.set(c.Key, compact(c.Value.Raw))
				}
			default:
				e.add(p, "must be an object (the data guards test), not %s", kind(v))
			}
		case "states":
			hasStates = true
			if !v.IsObject() {
				e.add(p, "must be an object of states, not %s", kind(v))
				continue
			}
			states = v
		case "guards":
			if v.Type != gjson.Null && !v.IsObject() {
				e.add(p, "must be an object of named guards, not %s", kind(v))
				continue
			}
			guards = v
		case "meta":
			d.meta, d.metaJSON = readMachineMeta(v, p, e)
		case "interrupts":
			if v.Type != gjson.Null && !v.IsObject() {
				e.add(p, "must be an object of named interrupts, not %s", kind(v))
				continue
			}
			interrupts = v
		case "$schema":
		default:
			e.add(p, "%s", unknownKey(mb.Key, docKeys))
		}
	}
	if !hasInitial {
		e.add("", `a Statewright workflow needs "initial", the name of its first state`)
	}
	if !hasStates {
		e.add("", `a Statewright workflow needs "states"`)
	}
	d.readGuards(guards, e)
	d.readStates(states, e)
	d.readInterrupts(interrupts, e)
	return d
}

// checkDocument reports problems that stop the reading: size, depth,
// encoding and syntax.
func checkDocument(data []byte, limits statechart.Options, e *errs) bool {
	maxBytes, maxDepth := limits.MaxBytes, limits.MaxDepth
	if maxBytes <= 0 {
		maxBytes = 8 << 20
	}
	if maxDepth <= 0 {
		maxDepth = 256
	}
	switch {
	case len(data) > maxBytes:
		e.add("", "document is %d bytes, more than the limit of %d", len(data), maxBytes)
	case jsonx.TooDeep(data, maxDepth):
		e.add("", "JSON nesting is deeper than the limit of %d", maxDepth)
	case !utf8.Valid(data):
		e.add("", "the document is not valid UTF-8")
	case !gjson.ValidBytes(data):
		e.add("", "malformed JSON: %s", jsonx.SyntaxError(data))
	default:
		return true
	}
	return false
}

func (d *swDoc) readGuards(v gjson.Result, e *errs) {
	if !v.IsObject() {
		return
	}
	for _, mb := range jsonx.Members(v, func(k string) { e.add(jsonx.Path("guards").Key(k), "duplicate key %q", k) }) {
		p := jsonx.Path("guards").Key(mb.Key)
		if msg := checkName(mb.Key, "guard"); msg != "" {
			e.add(p, "%s", msg)
			continue
		}
		g, ok := readGuard(mb.Value, p, e)
		if !ok {
			// Known, so that its uses are not reported as undefined too.
			g = Guard{Op: "exists"}
		}
		sg := &swGuard{name: mb.Key, path: p, def: g}
		d.guards = append(d.guards, sg)
		d.guardByName[mb.Key] = sg
	}
}

// readGuard reads {field, op, value}.
func readGuard(v gjson.Result, p jsonx.Path, e *errs) (Guard, bool) {
	var g Guard
	if !v.IsObject() {
		e.add(p, `a guard must be an object {"field", "op", "value"}, not %s`, kind(v))
		return g, false
	}
	ok, hasField, hasOp := true, false, false
	for _, mb := range jsonx.Members(v, func(k string) { e.add(p.Key(k), "duplicate key %q", k) }) {
		kp := p.Key(mb.Key)
		switch mb.Key {
		case "field":
			hasField = true
			if mb.Value.Type != gjson.String {
				e.add(kp, "must be the name of a context key, not %s", kind(mb.Value))
				ok = false
				continue
			}
			g.Field = mb.Value.String()
		case "op":
			hasOp = true
			g.Op = mb.Value.String()
			if mb.Value.Type != gjson.String || !slices.Contains(guardOps, g.Op) {
				e.add(kp, "unknown op %s%s: the ops are %s", kind(mb.Value), didYouMean(g.Op, guardOps), strings.Join(guardOps, ", "))
				ok = false
			}
		case "value":
			g.Value = jsonx.GoValue(mb.Value)
		default:
			e.add(kp, "%s", unknownKey(mb.Key, guardDefKeys))
			ok = false
		}
	}
	if !hasField {
		e.add(p, `a guard needs a "field"`)
		ok = false
	}
	if !hasOp {
		e.add(p, `a guard needs an "op"`)
		ok = false
	}
	return g, ok
}

func (d *swDoc) readStates(v gjson.Result, e *errs) {
	if !v.IsObject() {
		return
	}
	for _, mb := range jsonx.Members(v, func(k string) { e.add(jsonx.Path("states").Key(k), "duplicate key %q", k) }) {
		p := jsonx.Path("states").Key(mb.Key)
		if msg := checkName(mb.Key, "state"); msg != "" {
			e.add(p, "%s", msg)
			continue
		}
		s := d.readState(mb.Key, mb.Value, p, e)
		d.states = append(d.states, s)
		d.byName[s.name] = s
	}
}

func (d *swDoc) readState(name string, v gjson.Result, p jsonx.Path, e *errs) *swState {
	s := &swState{name: name, path: p, policy: newPolicyReader(e)}
	if !v.IsObject() {
		e.add(p, "a state must be an object, not %s", kind(v))
		return s
	}
	var on gjson.Result
	for _, mb := range jsonx.Members(v, func(k string) { e.add(p.Key(k), "duplicate key %q", k) }) {
		kp := p.Key(mb.Key)
		val := mb.Value
		if s.policy.read(mb.Key, val, kp) {
			if mb.Key == "max_iterations" && s.policy.p.MaxIterations != nil {
				s.maxIter = *s.policy.p.MaxIterations
			}
			continue
		}
		if val.Type == gjson.Null && mb.Key != "on" {
			continue // an Option left unset
		}
		switch mb.Key {
		case "on":
			if val.Type != gjson.Null && !val.IsObject() {
				e.add(kp, "must be an object of events to transitions, not %s", kind(val))
				d.broken = true
				continue
			}
			on = val
		case "type":
			switch val.String() {
			case "final":
				s.final = val.Type == gjson.String
			case "parallel":
				// Statewright's engine gives "parallel" no meaning; nor do we
				// (parallel work is a fork).
			default:
				e.add(kp, `must be "final" or "parallel", not %s`, kind(val))
			}
		case "allowed_tools", "disallowed_tools":
			list, ok := stringList(val, kp, e)
			if !ok {
				continue
			}
			for i, t := range list {
				if msg := checkToolPattern(t); msg != "" {
					e.add(kp.Index(i), "%s", msg)
				}
			}
			if mb.Key == "allowed_tools" {
				s.tools = list
			} else {
				s.deny = list
			}
		case "instructions":
			if val.Type != gjson.String {
				e.add(kp, "must be a string, not %s", kind(val))
				continue
			}
			s.instructions = val.String()
		case "safe_next":
			s.safeNextPath = kp
			if val.Type != gjson.String || val.String() == "" {
				e.add(kp, "must be the name of a state, not %s", kind(val))
				continue
			}
			s.safeNext = val.String()
		default:
			e.add(kp, "%s", unknownKey(mb.Key, stateKeys))
		}
	}
	before := len(e.list)
	defer func() {
		if len(e.list) > before {
			// A transition could not be read: reachability would report
			// states it may have led to.
			d.broken = true
		}
	}()
	if on.IsObject() {
		for _, mb := range jsonx.Members(on, func(k string) { e.add(p.Key("on").Key(k), "duplicate key %q", k) }) {
			ep := p.Key("on").Key(mb.Key)
			if msg := checkEvent(mb.Key); msg != "" {
				e.add(ep, "%s", msg)
				continue
			}
			s.on = append(s.on, &swEvent{name: mb.Key, path: ep, tr: readTransition(mb.Value, ep, e)})
		}
	}
	return s
}

// readTransition reads one of Statewright's transition forms.
func readTransition(v gjson.Result, p jsonx.Path, e *errs) *swTransition {
	t := &swTransition{}
	switch {
	case v.Type == gjson.String:
		t.kind = kindSimple
		t.branches = []*swBranch{{target: v.String(), targetPath: p}}
		if v.String() == "" {
			e.add(p, "a target must be the name of a state, not an empty string")
		}
	case v.IsArray():
		t.kind = kindGuarded
		arr := v.Array()
		if len(arr) == 0 {
			e.add(p, "an array of guarded branches needs at least one branch")
		}
		for i, b := range arr {
			if br := readBranch(b, p.Index(i), branchKeys, nil, e); br != nil {
				t.branches = append(t.branches, br)
			}
		}
	case v.IsObject():
		switch {
		case v.Get("fork").Exists():
			t.kind = kindFork
			t.fork = readFork(v, p, e)
		case v.Get("invoke").Exists():
			t.kind = kindInvoke
			t.invoke = readInvoke(v, p, e)
		default:
			t.kind = kindFull
			if br := readBranch(v, p, fullKeys, t, e); br != nil {
				t.branches = []*swBranch{br}
			}
		}
	default:
		e.add(p, `a transition must be a target, an object {"target", ...}, an array of guarded branches, {"fork": ...} or {"invoke": ...}; not %s`, kind(v))
	}
	return t
}

// readBranch reads {target, guard?, guards?} and, for the full form (t
// not nil), requires_approval and approval_message.
func readBranch(v gjson.Result, p jsonx.Path, keys []string, t *swTransition, e *errs) *swBranch {
	if !v.IsObject() {
		e.add(p, `a guarded branch must be an object {"target", "guard", "guards"}, not %s`, kind(v))
		return nil
	}
	b := &swBranch{}
	hasTarget := false
	for _, mb := range jsonx.Members(v, func(k string) { e.add(p.Key(k), "duplicate key %q", k) }) {
		kp := p.Key(mb.Key)
		val := mb.Value
		if !slices.Contains(keys, mb.Key) {
			e.add(kp, "%s", unknownKey(mb.Key, keys))
			continue
		}
		if val.Type == gjson.Null && mb.Key != "target" {
			continue
		}
		switch mb.Key {
		case "target":
			hasTarget = true
			b.targetPath = kp
			if val.Type != gjson.String || val.String() == "" {
				e.add(kp, "must be the name of a state, not %s", kind(val))
				continue
			}
			b.target = val.String()
		case "guard":
			if val.Type != gjson.String || val.String() == "" {
				e.add(kp, "must be the name of a guard, not %s", kind(val))
				continue
			}
			b.guards = append(b.guards, val.String())
			b.guardPaths = append(b.guardPaths, kp)
		case "guards":
			names, ok := stringList(val, kp, e)
			if !ok {
				continue
			}
			for i, n := range names {
				b.guards = append(b.guards, n)
				b.guardPaths = append(b.guardPaths, kp.Index(i))
			}
		case "requires_approval":
			if val.Type != gjson.True && val.Type != gjson.False {
				e.add(kp, "must be true or false, not %s", kind(val))
				continue
			}
			t.approval = val.Type == gjson.True
		case "approval_message":
			if val.Type != gjson.String {
				e.add(kp, "must be a string, not %s", kind(val))
				continue
			}
			t.approvalMsg = val.String()
		}
	}
	if !hasTarget {
		if t != nil {
			e.add(p, `a transition object needs "target" (or is {"fork": ...} or {"invoke": ...})`)
		} else {
			e.add(p, `a guarded branch needs "target"`)
		}
		return nil
	}
	if b.target == "" {
		return nil
	}
	return b
}

func readFork(v gjson.Result, p jsonx.Path, e *errs) *swFork {
	for _, mb := range jsonx.Members(v, nil) {
		if mb.Key != "fork" {
			e.add(p.Key(mb.Key), "%s", unknownKey(mb.Key, []string{"fork"}))
		}
	}
	p = p.Key("fork")
	v = v.Get("fork")
	f := &swFork{path: p, join: "all"}
	if !v.IsObject() {
		e.add(p, `must be an object {"branches", "join", "on_complete", "on_fail"}, not %s`, kind(v))
		return nil
	}
	hasBranches, hasComplete := false, false
	for _, mb := range jsonx.Members(v, func(k string) { e.add(p.Key(k), "duplicate key %q", k) }) {
		kp := p.Key(mb.Key)
		val := mb.Value
		switch mb.Key {
		case "branches":
			hasBranches = true
			if !val.IsObject() {
				e.add(kp, "must be an object of named branches, not %s", kind(val))
				continue
			}
			for _, b := range jsonx.Members(val, func(k string) { e.add(kp.Key(k), "duplicate key %q", k) }) {
				bp := kp.Key(b.Key)
				if msg := checkBranchName(b.Key); msg != "" {
					e.add(bp, "%s", msg)
					continue
				}
				if br := readForkBranch(b.Key, b.Value, bp, e); br != nil {
					f.branches = append(f.branches, br)
				}
			}
			if len(jsonx.Members(val, nil)) == 0 {
				e.add(kp, "a fork needs at least one branch")
			}
		case "join":
			if val.Type == gjson.Null {
				continue
			}
			if s := val.String(); val.Type != gjson.String || (s != "all" && s != "any") {
				e.add(kp, `must be "all" or "any", not %s`, kind(val))
				continue
			}
			f.join = val.String()
		case "on_complete":
			hasComplete = true
			f.ocPath = kp
			f.onComplete = stateName(val, kp, e)
		case "on_fail":
			if val.Type == gjson.Null {
				continue
			}
			f.ofPath = kp
			f.onFail = stateName(val, kp, e)
		default:
			e.add(kp, "%s", unknownKey(mb.Key, forkKeys))
		}
	}
	if !hasBranches {
		e.add(p, `a fork needs "branches"`)
	}
	if !hasComplete {
		e.add(p, `a fork needs "on_complete", the state it goes to once the branches join`)
	}
	return f
}

func readForkBranch(name string, v gjson.Result, p jsonx.Path, e *errs) *swForkBranch {
	if !v.IsObject() {
		e.add(p, `a branch must be an object {"initial", "terminal"}, not %s`, kind(v))
		return nil
	}
	b := &swForkBranch{name: name, path: p}
	for _, mb := range jsonx.Members(v, func(k string) { e.add(p.Key(k), "duplicate key %q", k) }) {
		kp := p.Key(mb.Key)
		switch mb.Key {
		case "initial":
			b.initialPath = kp
			b.initial = stateName(mb.Value, kp, e)
		case "terminal":
			b.termPath = kp
			b.terminal = stateName(mb.Value, kp, e)
		default:
			e.add(kp, "%s", unknownKey(mb.Key, []string{"initial", "terminal"}))
		}
	}
	if b.initialPath == "" {
		e.add(p, `a branch needs "initial", the state it starts in`)
	}
	if b.termPath == "" {
		e.add(p, `a branch needs "terminal", the state that completes it`)
	}
	if b.initial == "" || b.terminal == "" {
		return nil
	}
	return b
}

func readInvoke(v gjson.Result, p jsonx.Path, e *errs) *swInvoke {
	in := &swInvoke{path: p}
	hasComplete := false
	for _, mb := range jsonx.Members(v, func(k string) { e.add(p.Key(k), "duplicate key %q", k) }) {
		kp := p.Key(mb.Key)
		val := mb.Value
		switch mb.Key {
		case "invoke":
			if val.Type != gjson.String || val.String() == "" {
				e.add(kp, "must be the name of a workflow, not %s", kind(val))
				continue
			}
			in.name = val.String()
		case "on_complete":
			hasComplete = true
			in.ocPath = kp
			in.onComplete = stateName(val, kp, e)
		case "on_fail":
			if val.Type == gjson.Null {
				continue
			}
			in.ofPath = kp
			in.onFail = stateName(val, kp, e)
		case "input":
			switch {
			case val.Type == gjson.Null:
			case val.IsObject():
				in.input = newObj()
				for _, f := range jsonx.Members(val, func(k string) { e.add(kp.Key(k), "duplicate key %q", k) }) {
					in.input.set(f.Key, compact(f.Value.Raw))
				}
			default:
				e.add(kp, "must be an object (merged into the context), not %s", kind(val))
			}
		default:
			e.add(kp, "%s", unknownKey(mb.Key, invokeKeys))
		}
	}
	if !hasComplete {
		e.add(p, `an invoke needs "on_complete", the state it goes to once the subflow ends`)
	}
	return in
}

// stateName reads a string naming a state ("$return" not allowed).
func stateName(v gjson.Result, p jsonx.Path, e *errs) string {
	if v.Type != gjson.String || v.String() == "" {
		e.add(p, "must be the name of a state, not %s", kind(v))
		return ""
	}
	if v.String() == returnTarget {
		e.add(p, "%q is a target only in transitions (on) of interrupt handlers", returnTarget)
		return ""
	}
	return v.String()
}

func (d *swDoc) readInterrupts(v gjson.Result, e *errs) {
	if !v.IsObject() {
		return
	}
	for _, mb := range jsonx.Members(v, func(k string) { e.add(jsonx.Path("interrupts").Key(k), "duplicate key %q", k) }) {
		p := jsonx.Path("interrupts").Key(mb.Key)
		if msg := checkInterruptName(mb.Key); msg != "" {
			e.add(p, "%s", msg)
			continue
		}
		if !mb.Value.IsObject() {
			e.add(p, `an interrupt must be an object {"trigger": {"file_pattern"}, "target"}, not %s`, kind(mb.Value))
			continue
		}
		in := &swInterrupt{name: mb.Key, path: p}
		hasTrigger, ok := false, true
		for _, f := range jsonx.Members(mb.Value, func(k string) { e.add(p.Key(k), "duplicate key %q", k) }) {
			kp := p.Key(f.Key)
			switch f.Key {
			case "trigger":
				hasTrigger = true
				if !f.Value.IsObject() {
					e.add(kp, `must be an object {"file_pattern"}, not %s`, kind(f.Value))
					ok = false
					continue
				}
				hasPattern := false
				for _, t := range jsonx.Members(f.Value, func(k string) { e.add(kp.Key(k), "duplicate key %q", k) }) {
					tp := kp.Key(t.Key)
					if t.Key != "file_pattern" {
						e.add(tp, "%s", unknownKey(t.Key, []string{"file_pattern"}))
						ok = false
						continue
					}
					hasPattern = true
					if t.Value.Type != gjson.String || t.Value.String() == "" {
						e.add(tp, `must be a glob such as "**/*.env*", not %s`, kind(t.Value))
						ok = false
						continue
					}
					in.pattern = t.Value.String()
				}
				if !hasPattern {
					e.add(kp, `a trigger needs "file_pattern"`)
					ok = false
				}
			case "target":
				in.targetPath = kp
				if in.target = stateName(f.Value, kp, e); in.target == "" {
					ok = false
				}
			default:
				e.add(kp, "%s", unknownKey(f.Key, interruptKeys))
				ok = false
			}
		}
		if !hasTrigger {
			e.add(p, `an interrupt needs "trigger": {"file_pattern": ...}`)
			ok = false
		}
		if in.targetPath == "" {
			e.add(p, `an interrupt needs "target", the state that handles it`)
			ok = false
		}
		if ok {
			d.interrupts = append(d.interrupts, in)
		}
	}
	sort.Slice(d.interrupts, func(i, j int) bool { return d.interrupts[i].name < d.interrupts[j].name })
}

// validate makes the checks that need the whole document. It runs after
// the reading, whatever errors it found.
func (d *swDoc) validate(e *errs) {
	names := make([]string, len(d.states))
	for i, s := range d.states {
		names[i] = s.name
	}
	guardNames := make([]string, len(d.guards))
	for i, g := range d.guards {
		guardNames[i] = g.name
	}
	checkState := func(name string, p jsonx.Path) {
		if name == "" {
			return
		}
		if _, ok := d.byName[name]; !ok {
			e.add(p, "%q is not a state%s", name, didYouMean(name, names))
			// The state it meant may look unreachable: report that once the
			// targets are right.
			d.broken = true
		}
	}
	if d.initial != "" {
		checkState(d.initial, d.initialPath)
		if s := d.byName[d.initial]; s != nil && s.final {
			e.add(d.initialPath, "the initial state %q is final: the workflow would end before it starts", d.initial)
		}
	}
	hasFinal := false
	for _, s := range d.states {
		hasFinal = hasFinal || s.final
	}
	if len(d.states) > 0 && !hasFinal {
		e.add("states", `no final state: at least one state needs "type": "final"`)
	}
	for _, s := range d.states {
		if s.final && len(s.on) > 0 {
			e.add(s.path.Key("on"), "a final state has no transitions: the workflow ends there")
		}
		checkState(s.safeNext, s.safeNextPath)
		if s.safeNext == returnTarget {
			e.add(s.safeNextPath, "safe_next must name a state, not %q", returnTarget)
		}
		for _, ev := range s.on {
			t := ev.tr
			for _, b := range t.branches {
				if b.target == returnTarget {
					if len(d.interrupts) == 0 {
						e.add(b.targetPath, "%q returns from an interrupt, but the workflow has no interrupts", returnTarget)
					}
				} else {
					checkState(b.target, b.targetPath)
				}
				for i, g := range b.guards {
					if _, ok := d.guardByName[g]; !ok {
						e.add(b.guardPaths[i], "guard %q is not defined in \"guards\"%s", g, didYouMean(g, guardNames))
					}
				}
			}
			if f := t.fork; f != nil {
				checkState(f.onComplete, f.ocPath)
				checkState(f.onFail, f.ofPath)
				for _, b := range f.branches {
					checkState(b.initial, b.initialPath)
					checkState(b.terminal, b.termPath)
				}
			}
			if in := t.invoke; in != nil {
				checkState(in.onComplete, in.ocPath)
				checkState(in.onFail, in.ofPath)
			}
		}
	}
	for _, in := range d.interrupts {
		checkState(in.target, in.targetPath)
	}
	d.checkReachable(e)
}

// edges returns the states a state may move to (not through $return).
func (s *swState) edges(d *swDoc) []string {
	var out []string
	if s.safeNext != "" {
		out = append(out, s.safeNext)
	}
	for _, ev := range s.on {
		out = append(out, ev.tr.targets(d)...)
	}
	return out
}

// targets returns the states a transition may lead to directly: its
// targets, a fork's branch states, join and failure states, an invoke's
// continuations.
func (t *swTransition) targets(d *swDoc) []string {
	var out []string
	for _, b := range t.branches {
		if b.target != returnTarget {
			out = append(out, b.target)
		}
	}
	if f := t.fork; f != nil {
		for _, b := range f.branches {
			// The terminal too, as Statewright does: whether a branch
			// reaches it is checked on its own.
			out = append(out, b.initial, b.terminal)
		}
		out = append(out, f.onComplete, f.failTarget(d))
	}
	if in := t.invoke; in != nil {
		out = append(out, in.onComplete, in.onFail)
	}
	return out
}

// failTarget is where a failed fork goes: on_fail, else the state
// "failed" if there is one, else "".
func (f *swFork) failTarget(d *swDoc) string {
	if f.onFail != "" {
		return f.onFail
	}
	if _, ok := d.byName["failed"]; ok {
		return "failed"
	}
	return ""
}

// failTarget is where an invoke goes when its subflow ends in "failed".
func (in *swInvoke) failTarget(d *swDoc) string {
	if in.onFail != "" {
		return in.onFail
	}
	if _, ok := d.byName["failed"]; ok {
		return "failed"
	}
	return ""
}

// reachable returns the states reached from the initial state and the
// interrupts' targets, following edges.
func (d *swDoc) reachable(edges func(*swState, *swDoc) []string) map[string]bool {
	seen := map[string]bool{}
	var queue []string
	visit := func(name string) {
		if _, ok := d.byName[name]; ok && !seen[name] {
			seen[name] = true
			queue = append(queue, name)
		}
	}
	visit(d.initial)
	for _, in := range d.interrupts {
		visit(in.target)
	}
	for len(queue) > 0 {
		s := d.byName[queue[0]]
		queue = queue[1:]
		for _, t := range edges(s, d) {
			visit(t)
		}
	}
	return seen
}

// reaching returns the states from which the targets of "on" entries lead
// to target: the reverse of reachable, one breadth-first walk of the
// reversed transitions, linear in the workflow's size.
func (d *swDoc) reaching(target string) map[string]bool {
	into := map[string][]string{}
	for _, s := range d.states {
		for _, ev := range s.on {
			for _, b := range ev.tr.branches {
				into[b.target] = append(into[b.target], s.name)
			}
		}
	}
	reach := map[string]bool{}
	queue := []string{target}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, from := range into[cur] {
			if !reach[from] {
				reach[from] = true
				queue = append(queue, from)
			}
		}
	}
	return reach
}

// checkReachable reports the states no path reaches from the initial
// state or an interrupt's target.
func (d *swDoc) checkReachable(e *errs) {
	if d.byName[d.initial] == nil || d.broken {
		return
	}
	seen := d.reachable((*swState).edges)
	for _, s := range d.states {
		if !seen[s.name] {
			e.add(s.path, "state %q is unreachable: no transition leads to it from the initial state %q or an interrupt", s.name, d.initial)
		}
	}
}

// checkName returns why a state or guard name cannot be used, or "".
func checkName(name, what string) string {
	switch {
	case name == "":
		return fmt.Sprintf("a %s name must not be empty", what)
	case what == "state" && name == returnTarget:
		return fmt.Sprintf("%q is reserved: it is the target that returns from an interrupt", returnTarget)
	case what == "state" && strings.HasPrefix(name, "#"):
		return fmt.Sprintf("a state name must not start with \"#\" (%q): XState reads it as a state id", name)
	case what == "guard" && (strings.HasPrefix(name, reservedPrefix) || strings.HasPrefix(name, "xstate.")):
		return fmt.Sprintf("guard names starting with %q or \"xstate.\" are reserved (%q)", reservedPrefix, name)
	}
	return ""
}

// checkBranchName returns why a fork branch name cannot be used, or "".
func checkBranchName(name string) string {
	switch {
	case name == "":
		return "a branch name must not be empty"
	case strings.HasPrefix(name, "#"):
		return fmt.Sprintf("a branch name must not start with \"#\" (%q)", name)
	case strings.Contains(name, "*"):
		return fmt.Sprintf("a branch name must not contain \"*\" (%q): it prefixes the branch's events", name)
	}
	return ""
}

// checkInterruptName returns why an interrupt name cannot be used, or "".
func checkInterruptName(name string) string {
	if name == "" {
		return "an interrupt name must not be empty"
	}
	if strings.Contains(name, "*") {
		return fmt.Sprintf("an interrupt name must not contain \"*\" (%q): it names the event %s<name>", name, InterruptEventPrefix)
	}
	return ""
}

// checkEvent returns why an event name cannot be used, or "".
func checkEvent(ev string) string {
	switch {
	case ev == "":
		return "an event name must not be empty"
	case strings.HasPrefix(ev, "chartgate.") || strings.HasPrefix(ev, "xstate."):
		return fmt.Sprintf("event names starting with \"chartgate.\" or \"xstate.\" are reserved (%q)", ev)
	case strings.Contains(ev, "*"):
		return fmt.Sprintf("an event name must not contain \"*\" (%q): XState reads it as a wildcard", ev)
	}
	return ""
}

// checkToolPattern returns why s is not a tool name or pattern mcpbind
// accepts, or "": 1 to 128 letters, digits, "_", "-", "." and "*".
func checkToolPattern(s string) string { return toolname.Check(s, true) }

// Upstream is an MCP server of a Statewright gateway configuration's
// "upstream_servers": a command run over stdio.
type Upstream struct {
	Name    string
	Command string
	Args    []string
	Env     map[string]string
}

// gatewayConfigKeys are the keys of a Statewright gateway configuration
// file: {"definition": {...}, "upstream_servers": [...]}, or the gateway's
// own {"default": name, "workflows": {name: {...}}, "upstream_servers",
// "workdir", "api_key", "cloud_url"}.
var gatewayConfigKeys = []string{"definition", "upstream_servers", "workdir", "$schema"}

// multiConfigKeys are the keys of the gateway's own configuration, with
// named workflows.
var multiConfigKeys = []string{"default", "workflows", "upstream_servers", "workdir", "api_key", "cloud_url", "$schema"}

// isGatewayConfig reports whether root is a Statewright gateway
// configuration rather than a workflow.
func isGatewayConfig(root gjson.Result) bool {
	if !root.IsObject() || member(root, "states").Exists() {
		return false
	}
	return member(root, "definition").IsObject() || member(root, "workflows").IsObject()
}

// unwrapGatewayConfig returns the workflow of a Statewright gateway
// configuration file (its definition, or its default workflow), the JSON
// path of that workflow in the file, and its upstream servers; ok is false
// when data is not one (it has "states", or no "definition" or
// "workflows" object). The other named workflows are not read: the one a
// gateway enforces is the default.
func unwrapGatewayConfig(data []byte) (def []byte, at string, ups []Upstream, ok bool, err error) {
	if !gjson.ValidBytes(data) {
		return nil, "", nil, false, nil
	}
	root := gjson.ParseBytes(data)
	if !isGatewayConfig(root) {
		return nil, "", nil, false, nil
	}
	var e errs
	d, at, keys := member(root, "definition"), "definition", gatewayConfigKeys
	if !d.IsObject() {
		keys = multiConfigKeys
		name := member(root, "default")
		if name.Type != gjson.String || name.String() == "" {
			e.add(jsonx.Path("default"), "required: the name of the workflow of \"workflows\" to enforce")
		} else if d = member(member(root, "workflows"), name.String()); !d.IsObject() {
			e.add(jsonx.Path("default"), "%q is not a workflow of \"workflows\"", name.String())
		}
		at = string(jsonx.Path("workflows").Key(name.String()))
	}
	root.ForEach(func(k, _ gjson.Result) bool {
		if !slices.Contains(keys, k.String()) {
			e.add(jsonx.Path("").Key(k.String()), "unknown key %q of a Statewright gateway configuration (its keys: %s)", k.String(), strings.Join(keys[:len(keys)-1], ", "))
		}
		return true
	})
	servers := member(root, "upstream_servers")
	if servers.Exists() && !servers.IsArray() {
		e.add(jsonx.Path("upstream_servers"), "must be an array of {name, command, args, env}, not %s", kind(servers))
	}
	for i, s := range servers.Array() {
		p := jsonx.Path("upstream_servers").Index(i)
		if !s.IsObject() {
			e.add(p, "must be an object {name, command, args, env}, not %s", kind(s))
			continue
		}
		u := Upstream{Name: s.Get("name").String(), Command: s.Get("command").String()}
		for _, k := range []string{"name", "command"} {
			if v := member(s, k); v.Type != gjson.String || v.String() == "" {
				e.add(p.Key(k), "required: a non-empty string")
			}
		}
		if a := member(s, "args"); a.Exists() {
			u.Args, _ = stringList(a, p.Key("args"), &e)
		}
		if env := member(s, "env"); env.Exists() {
			if !env.IsObject() {
				e.add(p.Key("env"), "must be an object of strings, not %s", kind(env))
			} else {
				u.Env = map[string]string{}
				env.ForEach(func(k, v gjson.Result) bool {
					if v.Type != gjson.String {
						e.add(p.Key("env").Key(k.String()), "must be a string, not %s", kind(v))
					}
					u.Env[k.String()] = v.String()
					return true
				})
			}
		}
		ups = append(ups, u)
	}
	if len(e.list) > 0 {
		return nil, "", nil, true, e.err()
	}
	return []byte(d.Raw), at, ups, true, nil
}

// prefixErrors puts prefix before the paths of a Load error.
func prefixErrors(err error, prefix string) error {
	var list statechart.ErrorList
	if !errors.As(err, &list) {
		return err
	}
	out := make(statechart.ErrorList, len(list))
	for i, x := range list {
		c := *x
		c.Path = string(jsonx.Path(prefix).Join(jsonx.Path(c.Path)))
		out[i] = &c
	}
	return out
}

// DirResolver returns an [Options.Resolve] that finds the workflows an
// invoke names in dir: through dir's manifest.json when it has one
// (Statewright's {"workflows": [{"name", "file"}]}, whose names may hold
// spaces and brackets, "[stitch] debug-triage v1"), else as
// dir/<name>.json. A name with a path separator or "..", or a manifest
// file outside dir, is refused.
func DirResolver(dir string) func(name string) ([]byte, error) {
	return func(name string) ([]byte, error) {
		manifest, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
		switch {
		case err == nil:
			for _, w := range gjson.GetBytes(manifest, "workflows").Array() {
				if w.Get("name").String() != name {
					continue
				}
				file := w.Get("file").String()
				if !filepath.IsLocal(file) {
					return nil, fmt.Errorf("%s: the file of workflow %q, %q, is not inside %s", filepath.Join(dir, "manifest.json"), name, file, dir)
				}
				return os.ReadFile(filepath.Join(dir, file))
			}
		case !errors.Is(err, fs.ErrNotExist):
			return nil, err
		}
		if !filepath.IsLocal(name+".json") || strings.ContainsAny(name, `/\`) {
			return nil, fmt.Errorf("%q is not a workflow name of %s", name, dir)
		}
		return os.ReadFile(filepath.Join(dir, name+".json"))
	}
}

// The keys both formats read: a file with others is XState's (or, with
// keys only Statewright has, Statewright's: see DetectFormat).
var (
	sharedRootKeys       = []string{"id", "initial", "context", "states", "meta", "$schema"}
	sharedStateKeys      = []string{"on", "type"}
	sharedTransitionKeys = []string{"target", "guard"}
)

// ErrAmbiguousFormat is matched by the error of [Load] with
// [FormatAuto] for a file both formats read, differently: states with only
// "on" and "type": "final", transitions with only "target". Statewright
// merges a transition's data into the context; XState does not.
var ErrAmbiguousFormat = errors.New(`the file reads as a Statewright workflow and as an XState machine, which differ (Statewright merges the data sent with an event into the context; XState does not): give the format (--format statewright or --format xstate), or a "$schema" naming it`)

// FormatOf returns the format [Load] with [FormatAuto] reads data in, or
// [ErrAmbiguousFormat] for a file both formats read differently.
func FormatOf(data []byte) (Format, error) {
	if !gjson.ValidBytes(data) {
		return FormatXState, nil
	}
	t := topOf(gjson.ParseBytes(data))
	if t.gatewayConfig() {
		return FormatStatewright, nil
	}
	f, ambiguous := t.classify()
	if ambiguous {
		return "", ErrAmbiguousFormat
	}
	return f, nil
}

// schemaFormat is the format a top-level "$schema" s names, if it names
// one: a URL or name holding "statewright" or "xstate".
func schemaFormat(s gjson.Result) (Format, bool) {
	if s.Type != gjson.String {
		return "", false
	}
	switch l := strings.ToLower(s.String()); {
	case strings.Contains(l, "statewright"):
		return FormatStatewright, true
	case strings.Contains(l, "xstate"):
		return FormatXState, true
	}
	return "", false
}

// detect is DetectFormat that also says when the file is ambiguous: it
// has transitions (which the formats run differently) but no key only one
// of the formats has, and no "$schema" naming one.
func detect(data []byte) (Format, bool) {
	if !gjson.ValidBytes(data) {
		return FormatXState, false
	}
	return topOf(gjson.ParseBytes(data)).classify()
}

// top holds what the top level of a document tells of its format: the
// members that decide it (the first of each, if repeated), and whether
// every key is one both formats read. Each lookup in the document itself
// would step over all of its states again.
type top struct {
	object                                                    bool
	schema, states, definition, workflows, guards, interrupts gjson.Result
	shared                                                    bool
}

// topOf reads the top level of root in one pass.
func topOf(root gjson.Result) top {
	t := top{object: root.IsObject(), shared: true}
	if !t.object {
		return t
	}
	root.ForEach(func(k, v gjson.Result) bool {
		var slot *gjson.Result
		switch key := k.String(); key {
		case "$schema":
			slot = &t.schema
		case "states":
			slot = &t.states
		case "definition":
			slot = &t.definition
		case "workflows":
			slot = &t.workflows
		case "guards":
			slot = &t.guards
		case "interrupts":
			slot = &t.interrupts
		}
		if slot != nil && !slot.Exists() {
			*slot = v
		}
		t.shared = t.shared && slices.Contains(sharedRootKeys, k.String())
		return true
	})
	return t
}

// gatewayConfig is isGatewayConfig on the top level read.
func (t top) gatewayConfig() bool {
	return t.object && !t.states.Exists() && (t.definition.IsObject() || t.workflows.IsObject())
}

// classify is detect on the top level read. One walk of the states looks
// for the keys and transitions only Statewright has and, as long as the
// file could still be read by both formats, for what only XState has.
func (t top) classify() (Format, bool) {
	if f, ok := schemaFormat(t.schema); ok {
		return f, false
	}
	if t.gatewayConfig() {
		return FormatStatewright, false
	}
	states := t.states
	if !t.object || !states.IsObject() {
		return FormatXState, false // not a workflow of either: XState's errors say why
	}
	if t.guards.Exists() || t.interrupts.Exists() {
		return FormatStatewright, false
	}
	only := func(v gjson.Result, keys []string) bool {
		ok := true
		v.ForEach(func(k, _ gjson.Result) bool {
			ok = slices.Contains(keys, k.String())
			return ok
		})
		return ok
	}
	sw, xs, transitions := false, !t.shared, false
	plain := func(_, b gjson.Result) bool {
		xs = b.IsObject() && !only(b, sharedTransitionKeys)
		return !xs
	}
	states.ForEach(func(_, st gjson.Result) bool {
		if !st.IsObject() {
			xs = true
			return true
		}
		var on, typ gjson.Result
		st.ForEach(func(k, v gjson.Result) bool {
			switch key := k.String(); {
			case slices.Contains(statewrightStateKeys, key):
				sw = true
			case !slices.Contains(sharedStateKeys, key):
				xs = true
			case key == "on":
				if !on.Exists() {
					on = v
				}
			case key == "type":
				if !typ.Exists() {
					typ = v
				}
			}
			return !sw
		})
		if !sw && on.IsObject() {
			on.ForEach(func(_, t gjson.Result) bool {
				sw = statewrightTransition(t)
				return !sw
			})
		}
		if sw || xs {
			return !sw
		}
		if typ.Exists() && typ.String() != "final" {
			xs = true
			return true
		}
		on.ForEach(func(_, t gjson.Result) bool {
			transitions = true
			if plain(gjson.Result{}, t) && t.IsArray() {
				t.ForEach(plain)
			}
			return !xs
		})
		return true
	})
	if sw {
		return FormatStatewright, false
	}
	return FormatXState, !xs && transitions
}

// forksAndInvokes describes the forks and the subflows of the top-level
// states, by the key of the state each compiles to, as Statewright's
// transition result writes them: a fork {branches: {b: {initial,
// terminal}}, join, on_complete, on_fail}, an invoke {machine,
// on_complete, on_fail, input} (null when not given).
func forksAndInvokes(d *swDoc) (forks, invokes map[string]map[string]any) {
	forks, invokes = map[string]map[string]any{}, map[string]map[string]any{}
	for _, s := range d.states {
		for _, ev := range s.on {
			switch f, in := ev.tr.fork, ev.tr.invoke; {
			case ev.tr.kind == kindFork && f != nil:
				branches := map[string]any{}
				for _, b := range f.branches {
					branches[b.name] = map[string]any{"initial": b.initial, "terminal": b.terminal}
				}
				forks[s.name+":"+ev.name+":fork"] = map[string]any{
					"branches": branches, "join": f.join, "on_complete": f.onComplete, "on_fail": orNil(f.onFail),
				}
			case ev.tr.kind == kindInvoke && in != nil:
				var input any
				if in.input != nil {
					if b, err := json.Marshal(in.input); err == nil {
						_ = json.Unmarshal(b, &input)
					}
				}
				invokes[s.name+":"+ev.name+":invoke"] = map[string]any{
					"machine": in.name, "on_complete": in.onComplete, "on_fail": orNil(in.onFail), "input": input,
				}
			}
		}
	}
	return forks, invokes
}
