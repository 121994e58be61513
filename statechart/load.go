// This file defines Compile: it reads an XState v5 machine config from JSON,
// validates it, collecting every error with its JSON path, and builds the
// immutable Machine. Target resolution follows XState's resolveTarget and
// getStateNodeByPath; document order follows XState's (JavaScript key order).

package statechart

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/chartgate/chartgate/internal/hint"
	"github.com/chartgate/chartgate/internal/jsonx"
)

// Compile loads an XState v5 machine config (the JSON that Stately Studio
// exports, or a createMachine config written as JSON) and compiles it.
// opts may be nil. On failure the error is an [ErrorList] holding every
// problem found, each with its JSON path, warnings included.
//
// What XState accepts, Compile accepts too, and runs as XState does; what
// is most likely a mistake it reports as a warning (see [Error]), which
// [Machine.Warnings] returns: an unknown key, an XState v4 key, a negative
// delay, an empty action name. [Options.Strict] makes them errors.
func Compile(data []byte, opts *Options) (*Machine, error) {
	l := &loader{opts: opts.withDefaults(), nodes: slab[stateNode]{limit: 64}}
	m := l.load(data)
	l.sortErrors()
	for _, e := range l.errs {
		if !e.Warning {
			return nil, l.errs
		}
	}
	m.warnings = l.errs
	m.index()
	m.compileSlots()
	return m, nil
}

// Validate reports the errors of a machine config, like Compile, without
// keeping the machine. It returns nil when the config compiles, warnings
// or not; [Machine.Warnings] has those.
func Validate(data []byte, opts *Options) error {
	_, err := Compile(data, opts)
	return err
}

type loader struct {
	opts     Options
	m        *Machine
	errs     ErrorList // errors and warnings
	raw      []rawNode // per node, the config values read in the second pass
	cur      int       // the state node being read, for ordering errors
	errNodes []int     // per error, the state node it belongs to
	idErr    bool
	hints    hint.Budget // the did-you-mean work of this document
	ids      []string    // every state id, sorted, once needed for hints

	paths           []jsonPath     // per node, its JSON path once spelled out (see nodePath)
	extents         *jsonx.Extents // the document's objects, for members
	scratch         []jsonx.Member // the members of the objects being read, a stack (see members)
	got             []jsonx.Member // the members of node gotNode-1, which get reads
	gotNode         int            // 1 + the node whose members got holds; 0 for none
	nodes           slab[stateNode]
	transitions     slab[transition]
	targetChunk     []int         // single targets (see single)
	transitionChunk []*transition // single transitions of an event (see single)
	groupLists      []*eventGroup // the nodes' lists of event groups (see carve)
	groups          slab[eventGroup]
	namedGuards     map[string]*guard // guards referenced by name without params
	routes          []route           // the states' routes, in document order
}

// route is the "route" of a state with an explicit id, read once the tree
// is known.
type route struct {
	node   int
	config gjson.Result
	path   jsonPath
}

// rawNode keeps what the second pass (transitions, actions) needs.
type rawNode struct {
	// index and raw are the node's config, a part of the document at
	// offset index (see config), when it is an object (raw is empty
	// otherwise: the first pass reported it). The second pass reads its
	// members again rather than the first pass keeping them, since a kept
	// member (96 bytes) costs more than a scan of the node's keys, which
	// skips its nested objects in constant time.
	index int32
	// errMark is the number of errors reported when the first pass had
	// read the node's own keys: where a duplicate id's error goes (see
	// indexIDs).
	errMark int32
	raw     string
	path    jsonPath // where it is in the config, for messages: its nodeRef (the root's is empty)
	// byKey finds the node's children by key when it has more than
	// maxChildScan; fewer are scanned (see child).
	byKey *childIndex
}

// childIndex finds a node's children by key: a key's position among the
// members of the node's "states", which childAt maps to the child (-1 for
// a member that is not one). The map is the one the reading of the
// members checks duplicates with, not one more.
type childIndex struct {
	byKey   map[string]int
	childAt []int
}

// object reports whether the node's config is an object.
func (r *rawNode) object() bool { return r.raw != "" }

// config returns node i's config, as the first pass read it.
func (l *loader) config(i int) gjson.Result {
	r := &l.raw[i]
	return gjson.Result{Type: gjson.JSON, Raw: r.raw, Index: int(r.index)}
}

func (l *loader) errorf(path jsonPath, format string, args ...any) {
	l.add(&Error{Path: string(path), Msg: fmt.Sprintf(format, args...)})
}

// warnf reports a warning: what XState accepts but is most likely a
// mistake. With Options.Strict it is an error.
func (l *loader) warnf(path jsonPath, format string, args ...any) {
	l.add(&Error{Path: string(path), Msg: fmt.Sprintf(format, args...), Warning: !l.opts.Strict})
}

func (l *loader) add(e *Error) {
	e.Path = l.spell(jsonPath(e.Path))
	l.errs = append(l.errs, e)
	l.errNodes = append(l.errNodes, l.cur)
}

// sortErrors puts the errors and warnings in document order of the state
// nodes they belong to (the two passes over the tree would otherwise
// interleave them).
func (l *loader) sortErrors() {
	idx := make([]int, len(l.errs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return l.errNodes[idx[a]] < l.errNodes[idx[b]] })
	sorted := make(ErrorList, len(l.errs))
	for i, j := range idx {
		sorted[i] = l.errs[j]
	}
	l.errs = sorted
}

// get returns node i's member key, which the second pass reads (the
// first pass reported the node's duplicate keys). The node's members are
// read once for all its keys, in l.got.
func (l *loader) get(i int, key string) gjson.Result {
	if !l.raw[i].object() {
		return gjson.Result{}
	}
	if l.gotNode != i+1 {
		l.got = l.extents.AppendMembers(l.got[:0], l.config(i), nil)
		l.gotNode = i + 1
	}
	return memberValue(l.got, key)
}

// getOther returns node i's member key, like get, without replacing the
// members get holds: for a node read while another node's are.
func (l *loader) getOther(i int, key string) gjson.Result {
	if !l.raw[i].object() {
		return gjson.Result{}
	}
	if l.gotNode == i+1 {
		return memberValue(l.got, key)
	}
	mark := len(l.scratch)
	l.scratch = l.extents.AppendMembers(l.scratch, l.config(i), nil)
	v := memberValue(l.scratch[mark:], key)
	l.scratch = l.scratch[:mark]
	return v
}

func memberValue(ms []jsonx.Member, key string) gjson.Result {
	for _, mb := range ms {
		if mb.Key == key {
			return mb.Value
		}
	}
	return gjson.Result{}
}

// members reads the members of object v (see jsonx.Members) onto the
// loader's scratch stack, reporting duplicate keys below path. The caller
// pops them with l.scratch = l.scratch[:mark] once it is done with them;
// what it reads in between pushes and pops its own members above them.
// One buffer thus serves every object of the document.
func (l *loader) members(v gjson.Result, path jsonPath) (ms []jsonx.Member, mark int) {
	mark = len(l.scratch)
	l.scratch = l.extents.AppendMembers(l.scratch, v, func(k string) { l.errorf(path.key(k), "duplicate key %q", k) })
	return l.scratch[mark:], mark
}

// rootOnlyKeys are read on the machine root only; "schemas" is XState's
// metadata, kept by its machine and never read.
var rootOnlyKeys = map[string]bool{"context": true, "version": true, "schemas": true}

var nodeKeys = []string{
	"id", "type", "initial", "states", "on", "always", "after", "onDone",
	"entry", "exit", "output", "history", "target", "tags", "meta", "description",
	"invoke", "route",
}

var transitionKeys = []string{"target", "guard", "actions", "reenter", "description", "meta"}

// ignoredNodeKeys are keys of state nodes that XState v5 ignores but that
// have a meaning elsewhere: in XState v4, or in TypeScript. The warning
// says which.
var ignoredNodeKeys = map[string]string{
	"predictableActionArguments": "an XState v4 option; v5 always works that way",
	"preserveActionOrder":        "an XState v4 option; v5 always works that way",
	"tsTypes":                    "XState v4's typegen, for TypeScript only",
	"schema":                     "XState v4's TypeScript typing (v5 types machines with setup({types}))",
	"types":                      "it types the machine for TypeScript and does nothing at run time",
	"data":                       `XState v4's done data; v5 reads "output"`,
	"activities":                 `XState v4's activities; v5 runs actors with "invoke"`,
	"onEntry":                    `XState v4's old name of "entry"`,
	"onExit":                     `XState v4's old name of "exit"`,
	"cond":                       `XState v4's guard, which belongs on a transition (as "guard" in v5)`,
}

// ignoredTransitionKeys are the XState v4 keys of transitions that v5
// ignores.
var ignoredTransitionKeys = map[string]string{
	"cond":     `it is XState v4's name of "guard", so the transition is unguarded (XState's development build refuses it)`,
	"internal": `XState v5 replaced it by "reenter" (internal: false is reenter: true)`,
	"in":       `XState v4's state condition; in v5 it is the guard {"type": "xstate.stateIn", "params": {"stateValue": ...}}`,
}

// routeEvent is the event of the transitions XState adds to the root for
// the states' routes.
const routeEvent = "xstate.route"

// negativeDelay is the warning of a negative delay.
const negativeDelay = "a negative delay: XState schedules its event in the past, so it fires at once, before the zero delays scheduled with it"

func (l *loader) load(data []byte) *Machine {
	if e := checkDocument(data, l.opts.MaxBytes, l.opts.MaxDepth); e != nil {
		l.add(e)
		return nil
	}
	doc := string(data)
	root := gjson.Parse(doc)
	l.extents = jsonx.NewExtents(doc)
	if !root.IsObject() {
		l.errorf("", "a machine config must be a JSON object, not %s", jsonx.Kind(root))
		return nil
	}
	l.m = &Machine{id: "(machine)", opts: l.opts}
	// The root's id and context, read before its other keys (a Get would
	// scan the whole document, for each key).
	var id, c gjson.Result
	mark := len(l.scratch)
	ms := l.extents.AppendMembers(l.scratch, root, nil) // duplicates are reported with the root's other keys
	for _, mb := range ms[mark:] {
		switch mb.Key {
		case "id":
			id = mb.Value
		case "context":
			c = mb.Value
		}
	}
	l.scratch = ms[:mark]
	if id.Exists() {
		if id.Type != gjson.String || id.String() == "" {
			l.errorf("id", "must be a non-empty string, not %s", nonEmptyKind(id))
		} else {
			l.m.id = id.String()
		}
	}
	l.m.context = map[string]any{}
	if c.Exists() {
		if !c.IsObject() {
			l.errorf("context", "must be an object, not %s", jsonx.Kind(c))
		} else {
			l.m.context = jsonx.GoValue(c).(map[string]any)
		}
	}
	l.readNode(root, "", -1, l.m.id, l.nodes.new())
	if len(l.errs) > 0 && len(l.m.nodes) == 0 {
		return nil
	}
	l.indexIDs()
	l.m.layout()
	for i := range l.m.nodes {
		l.readBehaviour(i)
	}
	l.readRoutes()
	return l.m
}

// readNode is the first pass: the tree of state nodes, their kinds and ids.
// It fills n, which the caller takes from l.nodes.
func (l *loader) readNode(v gjson.Result, key string, parent int, defaultID string, n *stateNode) int {
	if len(l.m.nodes) >= l.opts.MaxStates {
		if !l.idErr {
			l.add(&Error{Path: string(l.nodePath(parent).key("states").key(key)), Msg: fmt.Sprintf("more than %d state nodes", l.opts.MaxStates), err: ErrLimit})
			l.idErr = true
		}
		return -1
	}
	var path jsonPath // the root's is empty
	if parent >= 0 {
		path = nodeRef(len(l.m.nodes))
	}
	*n = stateNode{key: key, id: defaultID, order: len(l.m.nodes), parent: parent}
	idx := n.order
	l.cur = idx
	l.m.nodes = append(l.m.nodes, n)
	r := rawNode{path: path}
	if v.IsObject() {
		r.index, r.raw = int32(v.Index), v.Raw
	}
	l.raw = append(l.raw, r)
	if !v.IsObject() {
		l.errorf(path, "a state node must be an object, not %s", jsonx.Kind(v))
		return idx
	}

	members, mark := l.members(v, path)
	defer func() { l.scratch = l.scratch[:mark] }()
	var states, routeConfig gjson.Result
	var typ string
	hasHistory, explicitID := false, false
	for _, mb := range members {
		p := func() jsonPath { return path.key(mb.Key) } // built only for a message
		switch mb.Key {
		case "id":
			if mb.Value.Type != gjson.String || mb.Value.String() == "" {
				if parent >= 0 {
					l.errorf(p(), "must be a non-empty string, not %s", nonEmptyKind(mb.Value))
				}
			} else if parent >= 0 {
				n.id, explicitID = mb.Value.String(), true
			}
		case "type":
			typ = mb.Value.String()
			switch typ {
			case "atomic", "compound", "parallel", "final", "history":
			default:
				l.errorf(p(), "%s is not a state type (atomic, compound, parallel, final, history)", quoteJSON(mb.Value))
				typ = ""
			}
		case "states":
			if !mb.Value.IsObject() {
				l.errorf(p(), "must be an object, not %s", jsonx.Kind(mb.Value))
			} else {
				states = mb.Value
			}
		case "history":
			hasHistory = true
			switch {
			case mb.Value.Type == gjson.True, mb.Value.String() == "shallow":
			case mb.Value.String() == "deep":
				n.rares().deep = true
			default:
				l.errorf(p(), `must be "shallow", "deep" or true, not %s`, quoteJSON(mb.Value))
			}
		case "tags":
			n.docs().tags = l.readStrings(mb.Value, p())
		case "meta":
			d := n.docs()
			d.meta, d.hasMeta = jsonx.GoValue(mb.Value), true
		case "description":
			if mb.Value.Type != gjson.String {
				l.errorf(p(), "must be a string, not %s", jsonx.Kind(mb.Value))
			}
			n.docs().description = mb.Value.String()
		case "output":
			t, err := compileTemplate(mb.Value, p(), machineRoots)
			if err != nil {
				l.add(err)
			} else {
				n.rares().output = t
			}
		case "invoke":
			// read in the second pass, once the state's id is known
		case "route":
			routeConfig = mb.Value
		case "options":
			if parent < 0 {
				l.warnf(p(), "%q is not read: XState's maxIterations is Options.MaxMicrosteps here", mb.Key)
				continue
			}
			l.warnf(p(), "unknown key %q%s", mb.Key, didYouMean(mb.Key, nodeKeys))
		case "initial", "on", "always", "after", "onDone", "entry", "exit", "target":
			// read in the second pass (see get)
		default:
			switch why, ignored := ignoredNodeKeys[mb.Key]; {
			case parent < 0 && rootOnlyKeys[mb.Key]:
			case rootOnlyKeys[mb.Key]:
				l.warnf(p(), "%q is ignored: XState reads it on the machine root only", mb.Key)
			case ignored:
				l.warnf(p(), "%q is ignored: %s", mb.Key, why)
			default:
				l.warnf(p(), "unknown key %q%s", mb.Key, didYouMean(mb.Key, nodeKeys))
			}
		}
	}
	if routeConfig.Exists() {
		l.readRouteConfig(idx, routeConfig, path.key("route"), explicitID)
	}

	hasStates := jsonx.HasMembers(states)
	switch typ {
	case "":
		switch {
		case hasStates:
			n.kind = kindCompound
		case hasHistory:
			n.kind = kindHistory
		default:
			n.kind = kindAtomic
		}
	case "atomic":
		n.kind = kindAtomic
	case "compound":
		n.kind = kindCompound
		if !hasStates {
			l.errorf(path.key("states"), "a compound state needs child states")
		}
	case "parallel":
		n.kind = kindParallel
	case "final":
		n.kind = kindFinal
	case "history":
		n.kind = kindHistory
	}
	if hasStates && (n.kind == kindAtomic || n.kind == kindFinal || n.kind == kindHistory) {
		l.errorf(path.key("states"), "a state of type %q cannot have child states", n.kind)
	}
	if n.kind == kindHistory && parent < 0 {
		l.errorf(path, "the machine root cannot be a history state")
	}
	if hasHistory && n.kind != kindHistory {
		l.errorf(path.key("history"), "only history states have \"history\"; add \"type\": \"history\"")
	}
	// The ids are indexed once the tree is read (see indexIDs); a
	// duplicate's error goes here, among the node's others.
	l.raw[idx].errMark = int32(len(l.errs))

	if states.Exists() && n.kind != kindAtomic && n.kind != kindFinal && n.kind != kindHistory {
		// Popped with n's members; the path of a duplicate is built only
		// for its message.
		kidsMark := len(l.scratch)
		var byKey map[string]int
		l.scratch, byKey = l.extents.AppendMembersIndexed(l.scratch, states, func(k string) { l.errorf(path.key("states").key(k), "duplicate key %q", k) })
		kids := l.scratch[kidsMark:]
		// Sized once for all the children (a machine's root may have
		// thousands), rather than grown as they are read.
		n.children = make([]int, 0, len(kids))
		var childAt []int
		if len(kids) > maxChildScan {
			if byKey == nil {
				byKey = make(map[string]int, len(kids))
				for j, mb := range kids {
					byKey[mb.Key] = j
				}
			}
			childAt = make([]int, len(kids))
			for j := range childAt {
				childAt[j] = -1
			}
			l.raw[idx].byKey = &childIndex{byKey: byKey, childAt: childAt}
		}
		if cap(l.raw)-len(l.raw) < len(kids) {
			// At least doubled: slices.Grow grows a long slice by a
			// quarter, which for thousands of small states (a few children
			// each) allocates them five times over.
			l.m.nodes = slices.Grow(l.m.nodes, max(len(kids), len(l.m.nodes)))
			l.raw = slices.Grow(l.raw, max(len(kids), len(l.raw)))
		}
		for j, mb := range kids {
			if mb.Key == "" {
				l.errorf(path.key("states"), "a state key cannot be empty")
				continue
			}
			child := l.readNode(mb.Value, mb.Key, idx, defaultID+"."+mb.Key, l.nodes.new())
			l.cur = idx
			if child < 0 {
				return idx
			}
			n.children = append(n.children, child)
			if childAt != nil {
				childAt[j] = child
			}
		}
	}
	return idx
}

// indexIDs fills Machine.byID once the first pass has read every node, so
// that the map is made at its size rather than grown (and rehashed) as
// the nodes are read. A node whose id an earlier node has is reported
// where the first pass reports the node's keys (its errMark), so that the
// errors keep their order.
func (l *loader) indexIDs() {
	l.m.byID = make(map[string]int, len(l.m.nodes))
	inserted := 0
	for i, n := range l.m.nodes {
		if !l.raw[i].object() {
			continue // reported as not an object; it has no id of its own
		}
		prev, dup := l.m.byID[n.id]
		if !dup {
			l.m.byID[n.id] = i
			continue
		}
		var path jsonPath // the root's is empty
		if n.parent >= 0 {
			path = nodeRef(i)
		}
		e := &Error{Path: l.spell(path.key("id")), Msg: fmt.Sprintf("duplicate state id %q (also %s)", n.id, describePath(l.nodePath(prev)))}
		at := int(l.raw[i].errMark) + inserted
		l.errs = slices.Insert(l.errs, at, e)
		l.errNodes = slices.Insert(l.errNodes, at, i)
		inserted++
	}
}

// nodeRef is the path a state node other than the root is known by while
// it is read: a NUL byte and its index, spelled out (see spell) only when
// a message needs it, so that reading a node costs no copy of its
// ancestors' keys.
func nodeRef(i int) jsonPath {
	var digits [20]byte
	var b strings.Builder
	b.Grow(8)
	b.WriteByte(0)
	b.Write(strconv.AppendInt(digits[:0], int64(i), 10))
	return jsonPath(b.String())
}

// maxChildScan is the number of children up to which the loader finds a
// child by key by comparing the keys one by one.
const maxChildScan = 8

// child returns the child of node i with the key, once the first pass has
// read them all.
func (l *loader) child(i int, key string) (int, bool) {
	if x := l.raw[i].byKey; x != nil {
		j, ok := x.byKey[key]
		if !ok || x.childAt[j] < 0 {
			return 0, false
		}
		return x.childAt[j], true
	}
	return l.m.childByKey(i, key)
}

// nodePath is the JSON path of state node i, spelled out.
func (l *loader) nodePath(i int) jsonPath {
	if i < 0 || l.m.nodes[i].parent < 0 {
		return ""
	}
	if len(l.paths) < len(l.m.nodes) {
		l.paths = append(l.paths, make([]jsonPath, len(l.m.nodes)-len(l.paths))...)
	}
	if l.paths[i] == "" {
		n := l.m.nodes[i]
		l.paths[i] = l.nodePath(n.parent).key("states").key(n.key)
	}
	return l.paths[i]
}

// spell replaces the node reference a path starts with (see nodeRef) by
// the node's JSON path.
func (l *loader) spell(p jsonPath) string {
	if len(p) == 0 || p[0] != 0 {
		return string(p)
	}
	end := 1
	for end < len(p) && p[end] >= '0' && p[end] <= '9' {
		end++
	}
	i, err := strconv.Atoi(string(p[1:end]))
	if err != nil || i >= len(l.m.nodes) {
		return string(p)
	}
	return string(l.nodePath(i)) + string(p[end:])
}

func describePath(p jsonPath) string {
	if p == "" {
		return "the machine root"
	}
	return string(p)
}

// nonEmptyKind is jsonKind for messages that ask for a non-empty string.
func nonEmptyKind(v gjson.Result) string {
	if v.Type == gjson.String && v.String() == "" {
		return "an empty string"
	}
	return jsonx.Kind(v)
}

func quoteJSON(v gjson.Result) string {
	if !v.Exists() {
		return "nothing"
	}
	return v.Raw
}

func (l *loader) readStrings(v gjson.Result, path jsonPath) []string {
	if v.Type == gjson.String {
		return []string{v.String()}
	}
	if !v.IsArray() {
		l.errorf(path, "must be a string or an array of strings, not %s", jsonx.Kind(v))
		return nil
	}
	var out []string
	for i, e := range v.Array() {
		if e.Type != gjson.String {
			l.errorf(path.index(i), "must be a string, not %s", jsonx.Kind(e))
			continue
		}
		out = append(out, e.String())
	}
	return out
}

// readBehaviour is the second pass over node i: initial, transitions, entry
// and exit actions, delayed transitions and history defaults. It mirrors the
// order in which XState's formatTransitions fills a node's transition map.
func (l *loader) readBehaviour(i int) {
	l.cur = i
	n := l.m.nodes[i]
	if !l.raw[i].object() {
		return
	}
	path := l.raw[i].path
	if entry := l.get(i, "entry"); entry.Exists() {
		n.entry = l.readActions(entry, path.key("entry"))
	}
	if exit := l.get(i, "exit"); exit.Exists() {
		n.exit = l.readActions(exit, path.key("exit"))
	}

	// initial
	init := l.get(i, "initial")
	switch {
	case n.kind == kindCompound && len(n.children) == 0:
		// reported in the first pass: a compound state needs child states
	case n.kind == kindCompound && !init.Exists():
		l.errorf(path, "compound state %q has no \"initial\"; add \"initial\": %q", n.id, l.m.nodes[n.children[0]].key)
	case n.kind == kindParallel && init.Exists():
		l.warnf(path.key("initial"), "\"initial\" is ignored: a parallel state enters all its regions (XState ignores it too)")
	case n.kind != kindCompound && init.Exists():
		l.errorf(path.key("initial"), "only compound states have an initial state (this one is %s)", n.kind)
	case init.Exists():
		l.readInitial(n, init, path.lazy().key("initial"))
	}

	// history default target, resolved relative to the parent
	if tg := l.get(i, "target"); tg.Exists() && !(tg.Type == gjson.String && tg.String() == "") {
		if n.kind != kindHistory {
			l.warnf(path.key("target"), "\"target\" is ignored: only history states have a default target (XState ignores it too); put targets on transitions")
		} else if n.parent >= 0 {
			t := &transition{source: int32(i)}
			for _, ref := range l.targetStrings(tg, path.key("target")) {
				s, p := ref.target, ref.path
				idx, err := l.resolvePath(n.parent, s)
				switch {
				case err != "":
					l.errorf(p, "%q is not a child of %q: %s", s, l.m.nodes[n.parent].id, err)
				case !l.m.isDescendant(idx, n.parent):
					l.errorf(p, "%q is not inside %q; a history state can only restore its parent's descendants", s, l.m.nodes[n.parent].id)
				case l.m.nodes[idx].kind == kindHistory:
					l.errorf(p, "%q is a history state; the default target must be a regular state", s)
				default:
					t.targets = append(t.targets, idx)
				}
			}
			if tg.IsArray() && len(tg.Array()) == 0 {
				l.errorf(path.key("target"), "must name at least one state; leave it out to use the parent's initial state")
			}
			t.targets = uniqueTargets(t.targets)
			l.checkTargets(t, path.key("target"))
			n.rares().historyDef = t
		}
	}

	set := func(descriptor string, ts []*transition) {
		if g := n.group(descriptor); g != nil {
			g.transitions = ts
			return
		}
		g := l.groups.new()
		g.descriptor, g.transitions = descriptor, ts
		n.addGroup(g)
	}
	if on := l.get(i, "on"); on.Exists() {
		p := path.key("on")
		if !on.IsObject() {
			l.errorf(p, "must be an object mapping events to transitions, not %s", jsonx.Kind(on))
		} else {
			ms, mark := l.members(on, p)
			n.on = carve(&l.groupLists, len(ms), l.groups.used)[:0]
			for _, mb := range ms {
				if mb.Key == "" {
					l.errorf(p, `an event descriptor cannot be empty; use "always" for eventless transitions`)
					continue
				}
				if strings.Contains(strings.TrimSuffix(mb.Key, "*"), "*") {
					// XState accepts it (with a warning) and it matches nothing.
					l.warnf(p.key(mb.Key), "wildcards can only be the whole descriptor (\"*\") or its last token (\"event.*\")")
				}
				set(mb.Key, l.readTransitions(i, mb.Key, mb.Value, path.lazy().key("on").key(mb.Key)))
			}
			l.scratch = l.scratch[:mark]
		}
	}
	if od := l.get(i, "onDone"); od.Exists() {
		if n.kind != kindCompound && n.kind != kindParallel {
			l.errorf(path.key("onDone"), "only compound and parallel states are ever done; this one is %s", n.kind)
		}
		ev := doneStatePrefix + n.id
		set(ev, l.readTransitions(i, ev, od, path.lazy().key("onDone")))
	}
	if inv := l.get(i, "invoke"); inv.Exists() {
		l.readInvokes(i, inv, path.key("invoke"), set)
	}
	if after := l.get(i, "after"); after.Exists() {
		l.readAfter(i, after, path.key("after"), set)
	}
	for _, g := range n.on {
		if g.descriptor == "*" || strings.HasSuffix(g.descriptor, ".*") {
			n.wildcards = append(n.wildcards, g)
		}
	}
	sort.SliceStable(n.wildcards, func(a, b int) bool {
		return len(n.wildcards[a].descriptor) > len(n.wildcards[b].descriptor)
	})
	if al := l.get(i, "always"); al.Exists() {
		n.always = l.readTransitions(i, "", al, path.lazy().key("always"))
	}
}

func (l *loader) readInitial(n *stateNode, init gjson.Result, path lazyPath) {
	t := l.transitions.new()
	t.source = int32(n.order)
	var key string
	switch {
	case init.Type == gjson.String:
		key = init.String()
	case init.IsObject():
		for _, mb := range jsonx.Members(init, func(k string) { l.errorf(path.spell().key(k), "duplicate key %q", k) }) {
			switch mb.Key {
			case "target":
				if mb.Value.Type != gjson.String {
					l.errorf(path.spell().key("target"), "must be the key of a child state, not %s", jsonx.Kind(mb.Value))
					return
				}
				key = mb.Value.String()
			case "actions":
				t.actions = l.readActions(mb.Value, path.spell().key("actions"))
			default:
				l.warnf(path.spell().key(mb.Key), "unknown key %q%s", mb.Key, didYouMean(mb.Key, []string{"target", "actions"}))
			}
		}
		path = path.key("target")
	default:
		l.errorf(path.spell(), "must be the key of a child state, not %s", jsonx.Kind(init))
		return
	}
	if c, ok := l.child(n.order, key); ok {
		if tg := l.getOther(c, "target"); l.m.nodes[c].kind == kindHistory && (!tg.Exists() || tg.String() == "") {
			// XState would recurse until the stack overflows.
			l.errorf(path.spell(), "%q is a history state without a \"target\", which would loop; give it a \"target\"", key)
			return
		}
		t.targets = single(&l.targetChunk, c, l.transitions.used)
		n.initial = t
		return
	}
	l.errorf(path.spell(), "%q is not a child state of %q%s", key, n.id, l.hint(key, func() []string {
		keys := make([]string, len(n.children))
		for j, c := range n.children {
			keys[j] = l.m.nodes[c].key
		}
		return keys
	}))
}

// readAfter reads delayed transitions. Like XState's getDelayedTransitions
// it appends to the node's entry a delayed raise of
// "xstate.after.<delay>.<id>" and to its exit the cancel of that event.
func (l *loader) readAfter(i int, after gjson.Result, path jsonPath, set func(string, []*transition)) {
	n := l.m.nodes[i]
	if !after.IsObject() {
		l.errorf(path, "must be an object mapping delays to transitions, not %s", jsonx.Kind(after))
		return
	}
	for _, mb := range jsonx.Members(after, func(k string) { l.errorf(path.key(k), "duplicate key %q", k) }) {
		raise := &action{kind: actionRaise, name: "xstate.raise"}
		delayKey := mb.Key
		if ms, numeric, problem := parseDelayKey(mb.Key); problem != "" {
			l.errorf(path.key(mb.Key), "%s", problem)
			continue
		} else if numeric {
			if ms < 0 {
				l.warnf(path.key(mb.Key), negativeDelay)
			}
			delayKey = jsNumber(ms)
			raise.hasDelay, raise.delay = true, msDuration(ms)
		} else if d, ok := l.opts.Implementations.Delays[mb.Key]; ok {
			raise.hasDelay, raise.delay = true, d
		} else {
			raise.delayName = mb.Key
			if l.opts.Strict {
				l.errorf(path.key(mb.Key), "delay %q has no implementation (XState would fire it at once)", mb.Key)
			}
		}
		ev := afterPrefix + delayKey + "." + n.id
		raise.event, raise.id = Event{Type: ev}, ev
		n.entry = append(n.entry, raise)
		n.exit = append(n.exit, &action{kind: actionCancel, name: "xstate.cancel", id: ev})
		l.m.hasTimers = true
		var ts []*transition
		if mb.Value.IsArray() {
			// XState: in `after`, an array's string items are spread into
			// objects without a target, so they are targetless.
			for j, e := range mb.Value.Array() {
				if e.Type == gjson.String {
					ts = append(ts, &transition{source: int32(i), event: ev})
					continue
				}
				ts = append(ts, l.readTransitions(i, ev, e, path.key(mb.Key).index(j).lazy())...)
			}
		} else {
			ts = l.readTransitions(i, ev, mb.Value, path.lazy().key(mb.Key))
		}
		if g := n.group(ev); g != nil {
			set(ev, append(g.transitions, ts...))
		} else {
			set(ev, ts)
		}
	}
}

func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// maxDelayMs is the longest delay a time.Duration holds: about 292 years.
const maxDelayMs = float64(math.MaxInt64 / int64(time.Millisecond))

// delayProblem says what is wrong with a delay in milliseconds, or "". A
// negative delay is only a warning (negativeDelay).
func delayProblem(ms float64) string {
	switch {
	case math.IsNaN(ms) || math.IsInf(ms, 0):
		return "a delay must be a finite number of milliseconds"
	case ms > maxDelayMs:
		return "a delay cannot be longer than about 292 years"
	case ms < -maxDelayMs:
		return "a negative delay cannot be longer than about 292 years"
	}
	return ""
}

var (
	decimalKey = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$`)
	radixKey   = regexp.MustCompile(`^[+-]?0[xXoObB]`)
	infKey     = regexp.MustCompile(`^[+-]?Infinity$`)
)

// parseDelayKey reads a key of "after" the way XState does (+key, a
// number unless NaN): numeric is false for the name of a delay. Keys that
// JavaScript reads as numbers but are not plain decimal milliseconds, or
// not usable delays, come back with a problem.
func parseDelayKey(key string) (ms float64, numeric bool, problem string) {
	k := strings.TrimSpace(key)
	switch {
	case k == "":
		return 0, false, `a delay cannot be empty (XState reads it as 0); write "0"`
	case radixKey.MatchString(k):
		return 0, false, "write a delay as decimal milliseconds or as the name of a delay"
	case infKey.MatchString(k):
		return 0, false, delayProblem(math.Inf(1))
	case !decimalKey.MatchString(k):
		return 0, false, ""
	}
	ms, _ = strconv.ParseFloat(k, 64) // ±Inf when out of range
	return ms, true, delayProblem(ms)
}

// jsNumber formats a delay as JavaScript's String(n) does, for the names
// of after events ("xstate.after.1000.m.a", "xstate.after.-5.m.a",
// "xstate.after.1e-7.m.a").
func jsNumber(f float64) string {
	if f == 0 {
		return "0" // also -0
	}
	return string(jsonx.AppendFloat(nil, f))
}

// readTransitions reads a transition config: a target string, a transition
// object, or an array of either (candidates in priority order).
func (l *loader) readTransitions(src int, event string, v gjson.Result, path lazyPath) []*transition {
	switch {
	case v.Type == gjson.String || v.IsObject():
		if t := l.readTransition(src, event, v, path); t != nil {
			return single(&l.transitionChunk, t, l.transitions.used)
		}
		return nil
	case v.IsArray():
		var ts []*transition
		for j, e := range v.Array() {
			if e.Type != gjson.String && !e.IsObject() {
				l.errorf(path.spell().index(j), "a transition must be a target string or an object, not %s", jsonx.Kind(e))
				continue
			}
			if t := l.readTransition(src, event, e, path.spell().index(j).lazy()); t != nil {
				ts = append(ts, t)
			}
		}
		return ts
	default:
		l.errorf(path.spell(), "a transition must be a target string, an object or an array, not %s", jsonx.Kind(v))
		return nil
	}
}

func (l *loader) readTransition(src int, event string, v gjson.Result, path lazyPath) *transition {
	t := l.transitions.new()
	t.source, t.event = int32(src), event
	var target gjson.Result
	targetPath := path
	if v.Type == gjson.String {
		target = v
	} else {
		target, targetPath = l.readTransitionKeys(t, v, path.spell(), false)
	}
	if !target.Exists() || (target.Type == gjson.String && target.String() == "") {
		return t // targetless
	}
	if target.Type == gjson.String { // the common case, without a list
		t.targets = []int{}
		if idx, ok := l.resolveTarget(src, target.String(), targetPath); ok {
			t.targets = single(&l.targetChunk, idx, l.transitions.used)
		}
		return t
	}
	t.targets = []int{}
	for _, ref := range l.targetStrings(target, targetPath.spell()) {
		if idx, ok := l.resolveTarget(src, ref.target, ref.path.lazy()); ok {
			t.targets = append(t.targets, idx)
		}
	}
	t.targets = uniqueTargets(t.targets)
	l.checkTargets(t, targetPath.spell())
	return t
}

// readTransitionKeys reads the keys of a transition object into t, and
// returns its target, left for the caller to resolve, with its path. A
// route's target is ignored.
func (l *loader) readTransitionKeys(t *transition, v gjson.Result, path jsonPath, isRoute bool) (target gjson.Result, targetPath lazyPath) {
	targetPath = path.lazy()
	ms, mark := l.members(v, path)
	defer func() { l.scratch = l.scratch[:mark] }()
	for _, mb := range ms {
		if mb.Key == "target" && !isRoute {
			target, targetPath = mb.Value, path.lazy().key("target")
			continue
		}
		p := path.key(mb.Key)
		switch mb.Key {
		case "target":
			l.warnf(p, `"target" is ignored: a route always targets its own state`)
		case "guard":
			if mb.Value.Type == gjson.Null || (mb.Value.Type == gjson.String && mb.Value.Str == "") {
				l.warnf(p, "an empty guard (%s) is no guard: XState takes the transition unguarded", mb.Value.Raw)
				continue
			}
			t.guard = l.readGuard(mb.Value, p)
		case "actions":
			t.actions = l.readActions(mb.Value, p)
		case "reenter":
			if mb.Value.Type != gjson.True && mb.Value.Type != gjson.False {
				l.errorf(p, "must be true or false, not %s", jsonx.Kind(mb.Value))
			}
			t.reenter = mb.Value.Type == gjson.True
		case "description", "meta":
		default:
			if why, ok := ignoredTransitionKeys[mb.Key]; ok {
				l.warnf(p, "%q is ignored: %s", mb.Key, why)
			} else {
				l.warnf(p, "unknown key %q%s", mb.Key, didYouMean(mb.Key, transitionKeys))
			}
		}
	}
	return target, targetPath
}

// readRouteConfig checks the "route" of state node i in the first pass and
// keeps it for readRoutes. Like XState, only a state below the root with
// an explicit id has a route.
func (l *loader) readRouteConfig(i int, v gjson.Result, path jsonPath, explicitID bool) {
	switch {
	case !v.IsObject():
		l.errorf(path, "must be an object (the route's guard, actions, meta and description), not %s", jsonx.Kind(v))
	case l.m.nodes[i].parent < 0:
		l.warnf(path, "the machine root has no route: XState collects the routes of the states below it")
	case !explicitID:
		l.warnf(path, `a route needs the state's own "id": XState ignores it without one`)
	default:
		l.routes = append(l.routes, route{node: i, config: v, path: path})
	}
}

// readRoutes gives the root, as XState's formatRouteTransitions does, one
// transition on the event "xstate.route" per state with a route, in
// document order: to the state, guarded by the event's "to" being "#" and
// the state's id, and by the route's own guard after it. They replace the
// root's own transitions on "xstate.route".
func (l *loader) readRoutes() {
	if len(l.routes) == 0 {
		return
	}
	var ts []*transition
	for _, r := range l.routes {
		l.cur = r.node
		t := &transition{source: 0, event: routeEvent}
		l.readTransitionKeys(t, r.config, r.path, true)
		to := "#" + l.m.nodes[r.node].id
		idx, hint, ok := l.resolveID(to)
		if !ok {
			// XState reads the id as a path, as in any "#id.child" target.
			l.errorf(r.path, "a route targets %q, which is not a state id%s; give the state an id without dots", to, hint)
			continue
		}
		t.targets = []int{idx}
		match := &guard{kind: guardRoute, name: routeEvent, inNode: -1, to: to}
		if t.guard == nil {
			t.guard = match
		} else {
			t.guard = &guard{kind: guardAnd, name: "xstate.and", inNode: -1, subs: []*guard{match, t.guard}}
		}
		ts = append(ts, t)
	}
	root := l.m.nodes[0]
	l.cur = 0
	if g := root.group(routeEvent); g != nil {
		l.warnf(l.raw[0].path.key("on").key(routeEvent), "never taken: as in XState, the routes of the states replace the root's transitions on %q", routeEvent)
		g.transitions = ts
		return
	}
	root.addGroup(&eventGroup{descriptor: routeEvent, transitions: ts})
}

// uniqueTargets drops repeated targets, keeping the first of each: a long
// target array naming the same state again and again is one target.
func uniqueTargets(targets []int) []int {
	if len(targets) < 2 {
		return targets
	}
	seen := make(map[int]bool, len(targets))
	out := targets[:0]
	for _, x := range targets {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// targetRef is one target string and its path.
type targetRef struct {
	target string
	path   jsonPath
}

func (l *loader) targetStrings(v gjson.Result, path jsonPath) []targetRef {
	if v.Type == gjson.String {
		return []targetRef{{v.String(), path}}
	}
	if !v.IsArray() {
		l.errorf(path, "a target must be a string or an array of strings, not %s", jsonx.Kind(v))
		return nil
	}
	var out []targetRef
	j := 0
	v.ForEach(func(_, e gjson.Result) bool {
		if e.Type != gjson.String || e.String() == "" {
			l.errorf(path.index(j), "a target must be a non-empty string, not %s", quoteJSON(e))
		} else {
			out = append(out, targetRef{e.String(), path.index(j)})
		}
		j++
		return true
	})
	return out
}

// checkTargets rejects target sets that cannot form a legal configuration:
// two targets in different children of one compound state. Each target
// walks up to the first ancestor an earlier target already reached, so the
// check is linear in the number of targets and states.
func (l *loader) checkTargets(t *transition, path jsonPath) {
	if len(t.targets) < 2 {
		return
	}
	type via struct{ child, target int }
	reached := map[int]via{} // ancestor -> the child and target that first reached it
	for _, x := range t.targets {
		for c := x; l.m.nodes[c].parent >= 0; c = l.m.nodes[c].parent {
			p := l.m.nodes[c].parent
			first, ok := reached[p]
			if !ok {
				reached[p] = via{c, x}
				continue
			}
			if first.child != c && l.m.nodes[p].kind != kindParallel {
				l.errorf(path, "targets %q and %q are in different children of compound state %q, so they cannot both be active",
					l.m.nodes[first.target].id, l.m.nodes[x].id, l.m.nodes[p].id)
			}
			break // p and its ancestors were reached before
		}
	}
}

// resolveTarget resolves a target string declared on node src, following
// XState's resolveTarget: "#id.path" is absolute, ".child" is relative to
// the source, and anything else is relative to the source's parent.
func (l *loader) resolveTarget(src int, target string, path lazyPath) (int, bool) {
	n := l.m.nodes[src]
	switch {
	case strings.HasPrefix(target, "#"):
		idx, hint, ok := l.resolveID(target)
		if !ok {
			l.errorf(path.spell(), "%q is not a state id%s", target, hint)
			return 0, false
		}
		return idx, true
	case strings.HasPrefix(target, "."):
		idx, err := l.resolvePath(src, target[1:])
		if err != "" {
			l.errorf(path.spell(), "%q is not a descendant of %q: %s", target, n.id, err)
			return 0, false
		}
		return idx, true
	case n.parent < 0:
		l.errorf(path.spell(), "%q is not a valid target from the root node; did you mean %q?", target, "."+target)
		return 0, false
	default:
		idx, err := l.resolvePath(n.parent, target)
		if err != "" {
			l.errorf(path.spell(), "%q is not a sibling of %q: %s", target, n.key, err)
			return 0, false
		}
		return idx, true
	}
}

// resolveID looks up "#id" or "#id.child.path" (XState's getStateNodeById):
// the first segment is an id, the rest a path below it.
// When ok is false, hint completes the message "... is not a state id".
func (l *loader) resolveID(target string) (idx int, hint string, ok bool) {
	var buf [4]string
	segs := jsonx.AppendStatePath(buf[:0], target[1:])
	idx, ok = l.m.byID[segs[0]]
	if !ok {
		return 0, l.hint(segs[0], l.sortedIDs), false
	}
	if len(segs) == 1 {
		return idx, "", true
	}
	idx, err := l.resolveSegments(idx, segs[1:])
	if err != "" {
		return 0, ": " + err, false
	}
	return idx, "", true
}

// sortedIDs returns every state id, sorted, for hints.
func (l *loader) sortedIDs() []string {
	if l.ids == nil {
		l.ids = keysOf(l.m.byID)
	}
	return l.ids
}

// resolvePath walks a dotted path of child keys down from node from
// (XState's getStateNodeByPath); an empty segment stops the walk.
func (l *loader) resolvePath(from int, path string) (int, string) {
	var buf [4]string
	idx, err := l.resolveSegments(from, jsonx.AppendStatePath(buf[:0], path))
	if _, isKey := l.child(from, path); err != "" && isKey {
		// The path is a key with dots: in JSON, "a\\.b" names it.
		err += fmt.Sprintf("; to target the key %q, escape its dots: %q", path, strings.ReplaceAll(path, ".", `\.`))
	}
	return idx, err
}

// resolveSegments is resolvePath on a path already split into keys. A key
// that starts with "#" is looked up as a state id, as XState's getStateNode
// does.
func (l *loader) resolveSegments(from int, segs []string) (int, string) {
	cur := from
	for _, key := range segs {
		if key == "" {
			break
		}
		if strings.HasPrefix(key, "#") {
			idx, hint, ok := l.resolveID(key)
			if !ok {
				return 0, fmt.Sprintf("%q is not a state id%s", key, hint)
			}
			cur = idx
			continue
		}
		next, ok := l.child(cur, key)
		if !ok {
			hint := l.hint(key, func() []string {
				keys := make([]string, len(l.m.nodes[cur].children))
				for i, c := range l.m.nodes[cur].children {
					keys[i] = l.m.nodes[c].key
				}
				return keys
			})
			return 0, fmt.Sprintf("state %q has no child %q%s", l.m.nodes[cur].id, key, hint)
		}
		cur = next
	}
	return cur, ""
}

// guardPath is the JSON path of a guard, built only when a message needs
// it: a guard nested deep with wide xstate.and/xstate.or levels would
// otherwise cost a path string as long as the nesting for every element.
type guardPath struct {
	parent *guardPath
	path   jsonPath // the whole path when parent is nil, else unused
	key    string   // below parent: "guard" (xstate.not) or "guards" (and/or)
	index  int      // below parent, for "guards": the element
}

func (p *guardPath) jsonPath() jsonPath {
	if p.parent == nil {
		return p.path
	}
	jp := p.parent.jsonPath().key("params").key(p.key)
	if p.key == "guards" {
		jp = jp.index(p.index)
	}
	return jp
}

// readGuard reads a guard reference: "name", {"type": name, "params": {...}},
// or one of the declared built-ins xstate.and, xstate.or, xstate.not and
// xstate.stateIn. Only a named guard keeps its params (its implementation
// receives them); the built-ins are compiled into the guard tree, so the
// memory a guard takes is linear in its JSON, however deep it nests.
func (l *loader) readGuard(v gjson.Result, path jsonPath) *guard {
	return l.readGuardAt(v, &guardPath{path: path})
}

func (l *loader) readGuardAt(v gjson.Result, gp *guardPath) *guard {
	g := &guard{inNode: -1}
	var params gjson.Result
	switch {
	case v.Type == gjson.String:
		g.name = v.String()
	case v.IsObject():
		path := gp.jsonPath()
		ms, mark := l.members(v, path)
		for _, mb := range ms {
			switch mb.Key {
			case "type":
				if mb.Value.Type != gjson.String || mb.Value.String() == "" {
					l.errorf(path.key("type"), "must be a non-empty string, not %s", nonEmptyKind(mb.Value))
				}
				g.name = mb.Value.String()
			case "params":
				if !mb.Value.IsObject() {
					l.errorf(path.key("params"), "must be an object, not %s", jsonx.Kind(mb.Value))
				} else {
					params = mb.Value
				}
			default:
				l.warnf(path.key(mb.Key), "unknown key %q%s", mb.Key, didYouMean(mb.Key, []string{"type", "params"}))
			}
		}
		l.scratch = l.scratch[:mark]
		if g.name == "" {
			l.errorf(path, `a guard object needs a "type"`)
			return nil
		}
	default:
		l.errorf(gp.jsonPath(), "a guard must be a name or an object with a \"type\", not %s", jsonx.Kind(v))
		return nil
	}
	switch g.name {
	case "xstate.and", "xstate.or":
		g.kind = guardAnd
		if g.name == "xstate.or" {
			g.kind = guardOr
		}
		subs := params.Get("guards")
		if !subs.IsArray() {
			l.errorf(gp.jsonPath().key("params").key("guards"), "%s needs an array of guards", g.name)
			return g
		}
		j := 0
		subs.ForEach(func(_, s gjson.Result) bool {
			if shared, ok := l.namedGuards[s.Str]; ok && s.Type == gjson.String {
				g.subs = append(g.subs, shared)
			} else if sg := l.readGuardAt(s, &guardPath{parent: gp, key: "guards", index: j}); sg != nil {
				g.subs = append(g.subs, sg)
			}
			j++
			return true
		})
	case "xstate.not":
		g.kind = guardNot
		sub := params.Get("guard")
		if !sub.Exists() {
			l.errorf(gp.jsonPath().key("params").key("guard"), "xstate.not needs a guard")
			return g
		}
		if sg := l.readGuardAt(sub, &guardPath{parent: gp, key: "guard"}); sg != nil {
			g.subs = []*guard{sg}
		}
	case "xstate.stateIn":
		g.kind = guardStateIn
		sv := params.Get("stateValue")
		p := gp.jsonPath().key("params").key("stateValue")
		switch {
		case sv.Type == gjson.String && strings.HasPrefix(sv.String(), "#"):
			idx, hint, ok := l.resolveID(sv.String())
			if !ok {
				l.errorf(p, "%q is not a state id%s", sv.String(), hint)
			}
			g.inNode = idx
		case sv.Type == gjson.String || sv.IsObject():
			g.inValue = jsonx.GoValue(sv)
		default:
			l.errorf(p, "xstate.stateIn needs a \"#id\" or a state value, not %s", jsonx.Kind(sv))
		}
	default:
		g.impl = l.opts.Implementations.Guards[g.name]
		g.decl = l.opts.Implementations.declared.guard(g.name, g.impl)
		if g.impl == nil {
			l.missingGuard(g.name, gp.jsonPath())
		}
		if params.Exists() {
			g.params = jsonx.GoValue(params).(map[string]any)
			break
		}
		// A reference without params is the same wherever it appears
		// (once it is known to be implemented: each reference to a missing
		// guard is reported).
		if shared, ok := l.namedGuards[g.name]; ok {
			return shared
		}
		if g.impl == nil {
			break
		}
		if l.namedGuards == nil {
			l.namedGuards = map[string]*guard{}
		}
		l.namedGuards[g.name] = g
	}
	return g
}

// missingGuard reports a guard without implementation: an error, or with
// Options.AllowMissingGuards a warning (Strict or not: that option asks
// for it), as XState fails only when the guard is evaluated.
func (l *loader) missingGuard(name string, path jsonPath) {
	e := &Error{Path: string(path), err: ErrGuardNotImplemented,
		Msg: fmt.Sprintf("guard %q is not implemented%s", name, l.hint(name, func() []string { return keysOf(l.opts.Implementations.Guards) }))}
	if l.opts.AllowMissingGuards {
		e.Warning = true
		e.Msg += ": evaluating it is an error, as in XState"
	}
	l.add(e)
}

// readActions reads an action list: one action or an array of actions,
// each "name" or {"type": name, "params": {...}}, including the declared
// built-ins xstate.assign, xstate.raise, xstate.cancel and xstate.log.
func (l *loader) readActions(v gjson.Result, path jsonPath) []*action {
	if !v.Exists() {
		return nil
	}
	if v.IsArray() {
		var out []*action
		for j, e := range v.Array() {
			if a := l.readAction(e, path.index(j)); a != nil {
				out = append(out, a)
			}
		}
		return out
	}
	if a := l.readAction(v, path); a != nil {
		return []*action{a}
	}
	return nil
}

func (l *loader) readAction(v gjson.Result, path jsonPath) *action {
	a := &action{}
	var params gjson.Result
	switch {
	case v.Type == gjson.String && v.Str == "":
		l.warnf(path, "an empty action name does nothing: XState skips it")
		return nil
	case v.Type == gjson.String:
		a.name = v.String()
	case v.IsObject():
		emptyName := false
		ms, mark := l.members(v, path)
		for _, mb := range ms {
			switch mb.Key {
			case "type":
				if mb.Value.Type == gjson.String && mb.Value.Str == "" {
					emptyName = true
					continue
				}
				if mb.Value.Type != gjson.String {
					l.errorf(path.key("type"), "must be a non-empty string, not %s", nonEmptyKind(mb.Value))
				}
				a.name = mb.Value.String()
			case "params":
				if !mb.Value.IsObject() {
					l.errorf(path.key("params"), "must be an object, not %s", jsonx.Kind(mb.Value))
				} else {
					params = mb.Value
					a.params = jsonx.GoValue(mb.Value).(map[string]any)
				}
			default:
				l.warnf(path.key(mb.Key), "unknown key %q%s", mb.Key, didYouMean(mb.Key, []string{"type", "params"}))
			}
		}
		l.scratch = l.scratch[:mark]
		if emptyName {
			l.warnf(path.key("type"), "an empty action name does nothing: XState skips it")
			return nil
		}
		if a.name == "" {
			l.errorf(path, `an action object needs a "type"`)
			return nil
		}
	default:
		l.errorf(path, "an action must be a name or an object with a \"type\", not %s", quoteJSON(v))
		return nil
	}
	pp := path.key("params")
	switch a.name {
	case "xstate.assign":
		a.kind = actionAssign
		if !params.IsObject() {
			if !v.Get("params").Exists() { // otherwise reported above
				l.errorf(pp, "xstate.assign needs params: an object of context keys to expressions")
			}
			return a
		}
		for _, mb := range jsonx.Members(params, func(k string) { l.errorf(pp.key(k), "duplicate key %q", k) }) {
			e, err := compileExpr(mb.Value, pp.key(mb.Key))
			if err != nil {
				l.add(err)
				continue
			}
			a.assign = append(a.assign, assignEntry{key: mb.Key, expr: e})
		}
	case "xstate.raise":
		a.kind = actionRaise
		ev := params.Get("event")
		if !ev.IsObject() || ev.Get("type").Type != gjson.String || ev.Get("type").String() == "" {
			l.errorf(pp.key("event"), `xstate.raise needs an event object with a "type"`)
			return a
		}
		a.event = eventFromJSON(ev)
		a.hasDelay, a.delay, a.delayName = l.readDelay(params.Get("delay"), pp.key("delay"), "raise")
		a.id = params.Get("id").String()
		l.m.hasTimers = l.m.hasTimers || a.hasDelay
	case "xstate.cancel":
		a.kind = actionCancel
		id := params.Get("sendId")
		if id.Type != gjson.String || id.String() == "" {
			l.errorf(pp.key("sendId"), "xstate.cancel needs the id of the delayed event to cancel")
		}
		a.id = id.String()
	case "xstate.log":
		a.kind = actionLog
	case "xstate.sendTo", "xstate.sendParent", "xstate.forwardTo", "xstate.spawnChild", "xstate.stopChild", "xstate.emit", "xstate.enqueueActions":
		l.readActorAction(a, v.Get("params"), pp)
	default:
		a.kind = actionCustom
		a.impl = l.opts.Implementations.Actions[a.name]
		a.decl = l.opts.Implementations.declared.action(a.name, a.impl)
		if a.impl == nil && l.opts.Strict {
			l.errorf(path, "action %q is not implemented%s", a.name, l.hint(a.name, func() []string { return keysOf(l.opts.Implementations.Actions) }))
		}
	}
	return a
}

// readDelay reads the delay of a delayed raise or send (what says which):
// milliseconds, or the name of a delay, which without implementation is no
// delay at all (XState then raises or sends at once). hasDelay is false
// when there is no delay.
func (l *loader) readDelay(d gjson.Result, path jsonPath, what string) (hasDelay bool, delay time.Duration, name string) {
	switch {
	case !d.Exists():
	case d.Type == gjson.Number:
		if problem := delayProblem(d.Float()); problem != "" {
			l.errorf(path, "%s", problem)
		} else if d.Float() < 0 {
			l.warnf(path, negativeDelay)
		}
		return true, msDuration(d.Float()), ""
	case d.Type == gjson.String:
		if dd, ok := l.opts.Implementations.Delays[d.String()]; ok {
			return true, dd, ""
		}
		if l.opts.Strict {
			l.errorf(path, "delay %q has no implementation (XState would %s the event at once)", d.String(), what)
		}
		return false, 0, d.String()
	default:
		l.errorf(path, "must be milliseconds or the name of a delay, not %s", quoteJSON(d))
	}
	return false, 0, ""
}

func eventFromJSON(v gjson.Result) Event {
	ev := Event{Type: v.Get("type").String()}
	for _, mb := range jsonx.Members(v, nil) {
		if mb.Key == "type" {
			continue
		}
		if ev.Data == nil {
			ev.Data = map[string]any{}
		}
		ev.Data[mb.Key] = jsonx.GoValue(mb.Value)
	}
	return ev
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// didYouMean suggests the closest candidate of a short, fixed list (the
// keys a member may have), if one is close enough.
func didYouMean(s string, candidates []string) string { return hint.DidYouMean(s, candidates) }

// hint is didYouMean within the document's budget; candidates is only
// called while the budget lasts.
func (l *loader) hint(s string, candidates func() []string) string {
	return l.hints.DidYouMean(s, candidates)
}
