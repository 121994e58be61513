// Package scxml converts W3C SCXML documents into XState v5 JSON machine
// configs that statechart.Compile accepts (Convert), or, with the
// ECMAScript data model, into compiled machines whose expressions and
// executable content run in a JavaScript runtime of each actor's own
// (Compile, see its doc; the runtime is github.com/dop251/goja, which
// package statechart itself never imports).
//
// Convert supports only the parts of SCXML that need no data model: <scxml>,
// <state>, <parallel>, <final>, <history> (shallow or deep, with the
// default <transition> SCXML requires), <initial>, <transition> (event lists, eventless, targetless,
// multiple targets, type="internal"|"external"), <onentry>, <onexit> and the
// executable content <raise>, <log> (dropped), <send> to the session itself
// (with a literal event and delay) and <cancel sendid>, plus the conditions
// and expressions that need no data model: cond="true", cond="false",
// cond="In('id')" and "!In('id')" (XState's stateIn and not guards) and expression attributes
// (eventexpr, delayexpr, …) holding a string literal. Anything that needs
// an ECMAScript data model — other conds, <script>, <assign>, <data>, <if>,
// <foreach>, other expressions — or that XState cannot express (deep or
// multiple initial targets, <invoke>, <donedata>) makes Convert return an
// *UnsupportedError naming the element and its line. Compile accepts the
// data model's part too, <invoke> of an SCXML document, and external
// documents (src) read through Options.Source; it still refuses other
// invocations, XML content in <data> and <content>, and what XState
// cannot express.
//
// # Mapping
//
//   - Every state node gets an explicit XState "id" and its key under
//     "states" is that same id. SCXML ids may contain ".", which XState reads
//     as a path separator in "#id" targets, so each "." becomes "$" (and a
//     "$N" suffix is added if that collides). When the XState id differs from
//     the SCXML id, the node's "meta" holds {"scxml.id": "<original>"}; see
//     [OriginalID]. States without an SCXML id get a generated id and no meta.
//   - Targets are written as "#id" (an array for several targets).
//   - <scxml initial>, <state initial> and <initial><transition> become
//     "initial"; the target must be a single direct child, since XState has no
//     deep or multiple initial targets (xstate-semantics §2.11.8). Transition
//     content in <initial> becomes the initial transition's actions.
//   - A transition without an event goes to "always". An event list
//     "a b.c" yields one "on" entry per descriptor. SCXML descriptors match by
//     token prefix ("foo" matches "foo" and "foo.bar"); XState's "foo" matches
//     only "foo", so each descriptor d becomes the two keys "d" and "d.*"
//     (a trailing ".*" or "." in the SCXML descriptor is dropped first; "*"
//     stays "*"). "done.state.ID" becomes XState's "xstate.done.state.<id>".
//   - type="external" (the default) becomes "reenter": true for transitions
//     with targets. type="internal" becomes the default "reenter": false only
//     when SCXML would honour it — the source is a compound <state> and every
//     target is a proper descendant; otherwise SCXML treats it as external,
//     so "reenter": true is kept.
//   - <raise> becomes {"type":"xstate.raise"}; <send> becomes a delayed
//     xstate.raise (delay 0 when none is given, so the event is handled after
//     the current macrostep, like SCXML's external queue — the caller must
//     let its clock run zero-delay timers); <send target="#_internal">
//     becomes an immediate raise; <cancel sendid> becomes xstate.cancel.
//
// # Where XState differs from SCXML (xstate-semantics.md §2.11)
//
// The converted machine runs with XState semantics, which differ from SCXML
// in ways a converter cannot paper over:
//
//   - transitions are chosen by descriptor specificity (exact, then longer
//     prefix, then "*"), not document order, when their descriptors differ;
//   - a parallel node's own transitions are tried only when no region took
//     the event, and the transition domain may be a parallel node;
//   - reenter:false also applies to atomic and parallel sources;
//   - reaching a top-level final state stops the actor;
//   - done events are named xstate.done.state.<id>, and there is no
//     error.execution event.
package scxml

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/chartgate/chartgate/internal/jsonx"
)

// Namespace is the SCXML namespace.
const Namespace = "http://www.w3.org/2005/07/scxml"

// MetaKey is the key of the node meta that holds the original SCXML id
// when the XState id had to differ from it.
const MetaKey = "scxml.id"

// UnsupportedError reports an SCXML construct the converter cannot express
// without an ECMAScript data model or that XState has no form for.
type UnsupportedError struct {
	Element string // element name, e.g. "assign" or "transition"
	Line    int    // 1-based line of the element's start tag
	Reason  string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("scxml: line %d: <%s>: %s", e.Line, e.Element, e.Reason)
}

// OriginalID returns the SCXML id of a converted state node, given its
// XState id and meta (as in statechart.Node): the meta's MetaKey when set,
// otherwise the XState id itself.
func OriginalID(xstateID string, meta any) string {
	if m, ok := meta.(map[string]any); ok {
		if s, ok := m[MetaKey].(string); ok {
			return s
		}
	}
	return xstateID
}

// element is a parsed XML element.
type element struct {
	name     string
	space    string
	attrs    map[string]string
	children []*element
	line     int
	parent   *element
	text     []byte // the character data directly inside the element
}

func (e *element) attr(name string) (string, bool) {
	v, ok := e.attrs[name]
	return v, ok
}

func parse(data []byte) (*element, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	var root, cur *element
	for {
		line, _ := d.InputPos()
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("scxml: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			e := &element{name: t.Name.Local, space: t.Name.Space, attrs: map[string]string{}, line: line, parent: cur}
			for _, a := range t.Attr {
				if a.Name.Space == "" {
					e.attrs[a.Name.Local] = a.Value
				}
			}
			if cur == nil {
				if root != nil {
					return nil, fmt.Errorf("scxml: more than one root element")
				}
				root = e
			} else {
				cur.children = append(cur.children, e)
			}
			cur = e
		case xml.EndElement:
			cur = cur.parent
		case xml.CharData:
			if cur != nil {
				cur.text = append(cur.text, t...)
			}
		}
	}
	if root == nil {
		return nil, fmt.Errorf("scxml: empty document")
	}
	return root, nil
}

// obj is a JSON object that keeps its keys in insertion order (see
// jsonx.Object).
type obj struct{ jsonx.Object }

func newObj() *obj { return &obj{} }

func (o *obj) set(k string, v any) { o.Set(k, v) }

func (o *obj) get(k string) (any, bool) { return o.Get(k) }

type converter struct {
	xid   map[*element]string // state element -> XState id
	byID  map[string]*element // SCXML id -> state element
	taken map[string]bool     // XState ids in use
	gen   int
	dm    *ecma // the data model, or nil (Convert)
}

func isStateElem(e *element) bool {
	switch e.name {
	case "state", "parallel", "final", "history":
		return true
	}
	return false
}

func isChildState(e *element) bool { // a child that can be entered (not history)
	switch e.name {
	case "state", "parallel", "final":
		return true
	}
	return false
}

func unsupported(e *element, format string, args ...any) error {
	return &UnsupportedError{Element: e.name, Line: e.line, Reason: fmt.Sprintf(format, args...)}
}

const needsDataModel = "needs an ECMAScript data model"

// Convert turns an SCXML document into an XState v5 JSON machine config,
// which statechart.Compile accepts. It returns an *UnsupportedError for
// constructs it cannot express and a plain error for malformed documents,
// including those whose machine Compile would reject: a <history> without
// its default <transition>, a default target outside the history's parent
// or that is a history state, and targets that cannot be active together.
func Convert(data []byte) ([]byte, error) {
	root, err := parse(data)
	if err != nil {
		return nil, err
	}
	return convertRoot(root, nil)
}

// convertRoot converts a parsed document; with dm, the expressions and
// executable content go to the data model (see Compile).
func convertRoot(root *element, dm *ecma) ([]byte, error) {
	if root.name != "scxml" {
		return nil, fmt.Errorf("scxml: line %d: root element is <%s>, not <scxml>", root.line, root.name)
	}
	c := &converter{xid: map[*element]string{}, byID: map[string]*element{}, taken: map[string]bool{}, dm: dm}
	if err := c.assignIDs(root); err != nil {
		return nil, err
	}
	if dm != nil {
		if m, ok := root.attr("datamodel"); ok && m != "ecmascript" {
			return nil, unsupported(root, "datamodel %q (only ecmascript is supported)", m)
		}
		dm.name, dm.late = root.attrs["name"], root.attrs["binding"] == "late"
		for x, id := range c.xid {
			dm.origID[id] = OriginalID(id, nil)
			if orig := x.attrs["id"]; orig != "" {
				dm.origID[id] = orig
			}
		}
		dm.initAction()
	}
	cfg := newObj()
	if name, ok := root.attr("name"); ok && name != "" {
		cfg.set("id", sanitize(name))
	}
	if err := c.convertBody(root, cfg); err != nil {
		return nil, err
	}
	return json.MarshalIndent(cfg, "", "  ")
}

// sanitize turns an SCXML id into a string XState accepts as a state id.
func sanitize(id string) string {
	return strings.ReplaceAll(id, ".", "$")
}

func (c *converter) assignIDs(e *element) error {
	// First the explicit ids, so generated ones never take them.
	var explicit, anonymous []*element
	var walk func(*element) error
	walk = func(x *element) error {
		for _, ch := range x.children {
			if ch.space != "" && ch.space != Namespace {
				return unsupported(ch, "element from namespace %q", ch.space)
			}
			if isStateElem(ch) {
				if id, ok := ch.attr("id"); ok && id != "" {
					if _, dup := c.byID[id]; dup {
						return fmt.Errorf("scxml: line %d: duplicate id %q", ch.line, id)
					}
					c.byID[id] = ch
					explicit = append(explicit, ch)
				} else {
					anonymous = append(anonymous, ch)
				}
				if err := walk(ch); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(e); err != nil {
		return err
	}
	for _, x := range explicit {
		id := x.attrs["id"]
		if s := sanitize(id); s == id {
			c.taken[s] = true
			c.xid[x] = s
		}
	}
	for _, x := range explicit {
		if _, done := c.xid[x]; done {
			continue
		}
		s := sanitize(x.attrs["id"])
		base := s
		for n := 2; c.taken[s]; n++ {
			s = base + "$" + strconv.Itoa(n)
		}
		c.taken[s] = true
		c.xid[x] = s
	}
	for _, x := range anonymous {
		var s string
		for {
			c.gen++
			s = "$" + x.name + strconv.Itoa(c.gen)
			if !c.taken[s] {
				break
			}
		}
		c.taken[s] = true
		c.xid[x] = s
	}
	return nil
}

// convertBody fills cfg with the children, initial, entry/exit and
// transitions of a <scxml>, <state>, <parallel> or <final> element.
func (c *converter) convertBody(e *element, cfg *obj) error {
	states := newObj()
	var entry, exit []any
	var entryBlocks, exitBlocks []*element // with a data model
	var invokes []any
	on := newObj()
	var always []any
	var initialEl *element
	for _, ch := range e.children {
		if ch.space != "" && ch.space != Namespace {
			return unsupported(ch, "element from namespace %q", ch.space)
		}
		switch ch.name {
		case "state", "parallel", "final", "history":
			if e.name == "final" {
				return unsupported(ch, "a <final> state cannot have children")
			}
			if ch.name == "history" && e.name == "scxml" {
				return unsupported(ch, "<history> must be inside a <state> or <parallel>")
			}
			sc, err := c.convertState(ch)
			if err != nil {
				return err
			}
			states.set(c.xid[ch], sc)
		case "initial":
			if initialEl != nil {
				return unsupported(ch, "more than one <initial>")
			}
			initialEl = ch
		case "onentry", "onexit":
			if e.name == "scxml" {
				return unsupported(ch, "not allowed in <scxml>")
			}
			if c.dm != nil {
				if err := c.checkContent(ch); err != nil {
					return err
				}
				if ch.name == "onentry" {
					entryBlocks = append(entryBlocks, ch)
				} else {
					exitBlocks = append(exitBlocks, ch)
				}
				continue
			}
			acts, err := c.actions(ch)
			if err != nil {
				return err
			}
			if ch.name == "onentry" {
				entry = append(entry, acts...)
			} else {
				exit = append(exit, acts...)
			}
		case "transition":
			if e.name == "final" {
				return unsupported(ch, "not allowed in <%s>", e.name)
			}
			if err := c.transition(e, ch, on, &always); err != nil {
				return err
			}
		case "datamodel":
			if c.dm != nil {
				if err := c.datamodel(e, ch); err != nil {
					return err
				}
				continue
			}
			if len(ch.children) > 0 {
				return unsupported(ch.children[0], needsDataModel)
			}
		case "script":
			if c.dm != nil && e.name == "scxml" {
				if err := c.checkContent(&element{name: "block", children: []*element{ch}}); err != nil {
					return err
				}
				c.dm.script = ch
				continue
			}
			return unsupported(ch, needsDataModel)
		case "data":
			return unsupported(ch, needsDataModel)
		case "invoke":
			if c.dm == nil {
				return unsupported(ch, "invoking external services is not supported")
			}
			inv, err := c.invoke(ch, len(invokes))
			if err != nil {
				return err
			}
			invokes = append(invokes, inv)
		case "donedata":
			if c.dm != nil && e.name == "final" {
				if err := c.checkContent(ch); err != nil {
					return err
				}
				ref := newObj()
				ref.set("$ref", "context."+donedataKey)
				cfg.set("output", ref)
				continue
			}
			return unsupported(ch, "done data %s", needsDataModel)
		default:
			return unsupported(ch, "unknown element")
		}
	}
	if e.name == "parallel" && initialEl != nil {
		return unsupported(initialEl, "a <parallel> has no initial state")
	}
	hasChildren := false
	for _, ch := range e.children {
		if isChildState(ch) {
			hasChildren = true
			break
		}
	}
	if e.name != "parallel" && e.name != "final" && hasChildren {
		if err := c.initial(e, initialEl, cfg); err != nil {
			return err
		}
	} else if initialEl != nil {
		return unsupported(initialEl, "an atomic state has no initial state")
	} else if v, ok := e.attr("initial"); ok && v != "" && e.name != "scxml" {
		return unsupported(e, "initial=%q on a state without child states", v)
	}
	if c.dm != nil {
		if e.name == "scxml" {
			entry = []any{initAction}
		} else {
			entry = []any{c.dm.block(entryBlocks, e, nil)}
			exit = []any{c.dm.block(exitBlocks, nil, e)}
		}
	}
	if states.Len() > 0 {
		cfg.set("states", states)
	}
	if on.Len() > 0 {
		cfg.set("on", on)
	}
	if len(always) > 0 {
		cfg.set("always", always)
	}
	if len(entry) > 0 {
		cfg.set("entry", entry)
	}
	if len(invokes) > 0 {
		cfg.set("invoke", invokes)
	}
	if len(exit) > 0 {
		cfg.set("exit", exit)
	}
	return nil
}

func (c *converter) initial(e, initialEl *element, cfg *obj) error {
	attr, hasAttr := e.attr("initial")
	switch {
	case hasAttr && initialEl != nil:
		return unsupported(initialEl, "both an initial attribute and an <initial> element")
	case initialEl != nil:
		var t *element
		for _, ch := range initialEl.children {
			if ch.name == "transition" && t == nil {
				t = ch
			} else {
				return unsupported(ch, "<initial> must hold exactly one <transition>")
			}
		}
		if t == nil {
			return unsupported(initialEl, "<initial> must hold a <transition>")
		}
		if _, ok := t.attr("event"); ok {
			return unsupported(t, "the initial transition cannot have an event")
		}
		if _, ok := t.attr("cond"); ok {
			return unsupported(t, "the initial transition cannot have a cond")
		}
		key, err := c.initialKey(e, t, t.attrs["target"])
		if err != nil {
			return err
		}
		acts, err := c.content(t)
		if err != nil {
			return err
		}
		if len(acts) == 0 {
			cfg.set("initial", key)
		} else {
			io := newObj()
			io.set("target", key)
			io.set("actions", acts)
			cfg.set("initial", io)
		}
	case hasAttr:
		key, err := c.initialKey(e, e, attr)
		if err != nil {
			return err
		}
		cfg.set("initial", key)
	default:
		for _, ch := range e.children {
			if isChildState(ch) {
				cfg.set("initial", c.xid[ch])
				break
			}
		}
	}
	return nil
}

func (c *converter) initialKey(e, at *element, targets string) (string, error) {
	ts := strings.Fields(targets)
	if len(ts) != 1 {
		return "", unsupported(at, "%d initial targets; XState supports exactly one", len(ts))
	}
	t, ok := c.byID[ts[0]]
	if !ok {
		return "", fmt.Errorf("scxml: line %d: initial target %q is not a state id", at.line, ts[0])
	}
	if t.parent != e {
		return "", unsupported(at, "deep initial target %q; XState supports only a direct child", ts[0])
	}
	return c.xid[t], nil
}

func (c *converter) convertState(e *element) (*obj, error) {
	cfg := newObj()
	xid := c.xid[e]
	cfg.set("id", xid)
	switch e.name {
	case "parallel":
		cfg.set("type", "parallel")
	case "final":
		cfg.set("type", "final")
	case "history":
		cfg.set("type", "history")
		kind := e.attrs["type"]
		switch kind {
		case "", "shallow":
			cfg.set("history", "shallow")
		case "deep":
			cfg.set("history", "deep")
		default:
			return nil, fmt.Errorf("scxml: line %d: history type %q", e.line, kind)
		}
	}
	if orig, ok := e.attr("id"); ok && orig != "" && orig != xid {
		m := newObj()
		m.set(MetaKey, orig)
		cfg.set("meta", m)
	}
	if e.name == "history" {
		var t *element
		for _, ch := range e.children {
			if ch.name == "transition" && t == nil {
				t = ch
			} else {
				return nil, unsupported(ch, "<history> may hold only one default <transition>")
			}
		}
		if t == nil {
			// SCXML requires it: without it the history state has no
			// default, and as an initial state it would loop in XState.
			return nil, fmt.Errorf("scxml: line %d: <history> needs a <transition> to its default states", e.line)
		}
		if _, ok := t.attr("event"); ok {
			return nil, unsupported(t, "a history default transition cannot have an event")
		}
		if _, ok := t.attr("cond"); ok {
			return nil, unsupported(t, "a history default transition cannot have a cond")
		}
		if len(t.children) > 0 {
			return nil, unsupported(t.children[0], "executable content in a history default transition has no XState form")
		}
		tg, err := c.targets(t)
		if err != nil {
			return nil, err
		}
		if tg == nil {
			return nil, unsupported(t, "a history default transition needs a target")
		}
		for _, id := range strings.Fields(t.attrs["target"]) {
			switch x := c.byID[id]; {
			case !isDescendant(x, e.parent):
				return nil, fmt.Errorf("scxml: line %d: the default target %q of a <history> must be inside its parent %q", t.line, id, describe(e.parent))
			case x.name == "history":
				return nil, fmt.Errorf("scxml: line %d: the default target %q of a <history> is a history state; name the states to restore", t.line, id)
			}
		}
		cfg.set("target", tg)
		return cfg, nil
	}
	if err := c.convertBody(e, cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// targets returns the "#id" target(s) of a transition, or nil for none.
func (c *converter) targets(t *element) (any, error) {
	if _, ok := t.attr("targetexpr"); ok {
		return nil, unsupported(t, "targetexpr %s", needsDataModel)
	}
	ts := strings.Fields(t.attrs["target"])
	if len(ts) == 0 {
		return nil, nil
	}
	out := make([]any, len(ts))
	elems := make([]*element, len(ts))
	for i, id := range ts {
		s, ok := c.byID[id]
		if !ok {
			return nil, fmt.Errorf("scxml: line %d: target %q is not a state id", t.line, id)
		}
		out[i], elems[i] = "#"+c.xid[s], s
	}
	if err := checkTargets(t, elems); err != nil {
		return nil, err
	}
	if len(out) == 1 {
		return out[0], nil
	}
	return out, nil
}

// checkTargets rejects targets that cannot be active together: two of
// them in different children of a <state> (or of <scxml>). Each target
// walks up to the first ancestor an earlier one reached.
func checkTargets(t *element, targets []*element) error {
	type via struct{ child, target *element }
	reached := map[*element]via{}
	for _, x := range targets {
		for c := x; c.parent != nil; c = c.parent {
			p := c.parent
			first, ok := reached[p]
			if !ok {
				reached[p] = via{c, x}
				continue
			}
			if first.child != c && p.name != "parallel" {
				return fmt.Errorf("scxml: line %d: targets %q and %q are in different children of %q, so they cannot both be active", t.line, first.target.attrs["id"], x.attrs["id"], describe(p))
			}
			break
		}
	}
	return nil
}

// describe names a state element for messages: its id, or its tag.
func describe(e *element) string {
	if id := e.attrs["id"]; id != "" {
		return id
	}
	return "<" + e.name + ">"
}

func isDescendant(x, anc *element) bool {
	for p := x.parent; p != nil; p = p.parent {
		if p == anc {
			return true
		}
	}
	return false
}

// literal returns the value of an ECMAScript string literal ('x' or "x"
// with no escapes), the only expressions evaluated without a data model.
func literal(expr string) (string, bool) {
	expr = strings.TrimSpace(expr)
	if len(expr) >= 2 && (expr[0] == '\'' || expr[0] == '"') && expr[len(expr)-1] == expr[0] {
		inner := expr[1 : len(expr)-1]
		if !strings.ContainsAny(inner, "\\'\"") {
			return inner, true
		}
	}
	return "", false
}

// guard converts a cond attribute. Only the conditions that need no data
// model are accepted: the literals true and false, and In('id') or
// !In('id'), which become XState's stateIn (and not) guards. never reports cond="false".
func (c *converter) guard(t *element) (g *obj, never bool, err error) {
	cond, ok := t.attr("cond")
	if !ok {
		return nil, false, nil
	}
	switch e := strings.TrimSpace(cond); e {
	case "true":
		return nil, false, nil
	case "false":
		return nil, true, nil
	default:
		neg := false
		if rest, ok := strings.CutPrefix(e, "!"); ok {
			neg, e = true, strings.TrimSpace(rest)
		}
		if arg, ok := strings.CutPrefix(e, "In("); ok {
			if arg, ok := strings.CutSuffix(arg, ")"); ok {
				if id, ok := literal(arg); ok {
					s, ok := c.byID[id]
					if !ok {
						return nil, false, fmt.Errorf("scxml: line %d: In(%q): not a state id", t.line, id)
					}
					p := newObj()
					p.set("stateValue", "#"+c.xid[s])
					g := newObj()
					g.set("type", "xstate.stateIn")
					g.set("params", p)
					if neg {
						np := newObj()
						np.set("guard", g)
						g = newObj()
						g.set("type", "xstate.not")
						g.set("params", np)
					}
					return g, false, nil
				}
			}
		}
	}
	if c.dm != nil {
		g := newObj()
		g.set("type", c.dm.cond(cond))
		return g, false, nil
	}
	return nil, false, unsupported(t, "cond %q %s", cond, needsDataModel)
}

func (c *converter) transition(src, t *element, on *obj, always *[]any) error {
	g, never, err := c.guard(t)
	if err != nil {
		return err
	}
	tg, err := c.targets(t)
	if err != nil {
		return err
	}
	acts, err := c.content(t)
	if err != nil {
		return err
	}
	to := newObj()
	if tg != nil {
		to.set("target", tg)
		reenter := true
		switch t.attrs["type"] {
		case "", "external":
		case "internal":
			compound := false
			for _, ch := range src.children {
				if isChildState(ch) {
					compound = true
				}
			}
			if src.name == "state" && compound {
				reenter = false
				for _, id := range strings.Fields(t.attrs["target"]) {
					if !isDescendant(c.byID[id], src) {
						reenter = true
					}
				}
			}
		default:
			return fmt.Errorf("scxml: line %d: transition type %q", t.line, t.attrs["type"])
		}
		if reenter {
			to.set("reenter", true)
		}
	}
	if g != nil {
		to.set("guard", g)
	}
	if len(acts) > 0 {
		to.set("actions", acts)
	}
	if never {
		return nil // cond="false": the transition can never be taken
	}
	ev, hasEvent := t.attr("event")
	descs := strings.Fields(ev)
	if !hasEvent || len(descs) == 0 {
		if hasEvent {
			return unsupported(t, "empty event attribute")
		}
		*always = append(*always, to)
		return nil
	}
	for _, key := range c.descriptors(descs) {
		cur, _ := on.get(key)
		list, _ := cur.([]any)
		dup := false
		for _, x := range list {
			if x == to {
				dup = true
			}
		}
		if !dup {
			on.set(key, append(list, any(to)))
		}
	}
	return nil
}

// descriptors maps SCXML event descriptors onto XState "on" keys.
func (c *converter) descriptors(descs []string) []string {
	var keys []string
	add := func(k string) {
		for _, x := range keys {
			if x == k {
				return
			}
		}
		keys = append(keys, k)
	}
	for _, d := range descs {
		d = strings.TrimSuffix(d, ".*")
		d = strings.TrimSuffix(d, ".")
		if d == "*" || d == "" {
			add("*")
			continue
		}
		if d == "done.invoke" || d == "done" {
			add("xstate.done.actor.*")
			if d == "done" {
				add(d)
				add(d + ".*")
			}
			continue
		}
		if rest, ok := strings.CutPrefix(d, "done.invoke."); ok {
			add("xstate.done.actor." + rest)
			add("xstate.done.actor." + rest + ".*")
			continue
		}
		if rest, ok := strings.CutPrefix(d, "done.state."); ok {
			if s, ok := c.byID[rest]; ok {
				add("xstate.done.state." + c.xid[s])
				continue
			}
		}
		add(d)
		add(d + ".*")
	}
	return keys
}

// content converts the executable content inside e: with a data model,
// one action of the data model that runs it.
func (c *converter) content(e *element) ([]any, error) {
	if c.dm == nil {
		return c.actions(e)
	}
	if len(e.children) == 0 {
		return nil, nil
	}
	if err := c.checkContent(e); err != nil {
		return nil, err
	}
	return []any{c.dm.block([]*element{e}, nil, nil)}, nil
}

// datamodel records the <data> of a <datamodel> of state e.
func (c *converter) datamodel(e, dm *element) error {
	for _, d := range dm.children {
		if d.name != "data" {
			return unsupported(d, "only <data> may be in a <datamodel>")
		}
		id := d.attrs["id"]
		if !isIdentifier(id) {
			return unsupported(d, "data id %q is not a plain ECMAScript variable name", id)
		}
		if src, ok := d.attr("src"); ok {
			if len(d.children) > 0 || len(strings.TrimSpace(string(d.text))) > 0 || d.attrs["expr"] != "" {
				return unsupported(d, "data with both src and a value")
			}
			text, err := c.dm.load(d, src)
			if err != nil {
				return err
			}
			d.text = text
		}
		if len(d.children) > 0 {
			return unsupported(d.children[0], "XML content is not supported (only JSON or text)")
		}
		c.dm.data = append(c.dm.data, dataDecl{el: d, state: e})
	}
	return nil
}

// executable lists the elements the data model runs, and those they may
// hold.
var executable = map[string]bool{"raise": true, "log": true, "send": true, "cancel": true, "assign": true,
	"script": true, "if": true, "elseif": true, "else": true, "foreach": true}

// checkContent rejects executable content the data model does not run,
// inside e (executable content, or an element holding <param>/<content>).
func (c *converter) checkContent(e *element) error {
	for _, x := range e.children {
		if x.space != "" && x.space != Namespace {
			return unsupported(x, "element from namespace %q", x.space)
		}
		switch {
		case x.name == "param" || x.name == "content":
			if e.name != "send" && e.name != "donedata" {
				return unsupported(x, "not allowed in <%s>", e.name)
			}
			if _, ok := x.attr("location"); ok && x.name == "param" {
				break
			}
			if len(x.children) > 0 {
				return unsupported(x.children[0], "XML content is not supported (only JSON or text)")
			}
			continue
		case x.name == "script" && c.dm != nil && x.attrs["src"] != "":
			text, err := c.dm.load(x, x.attrs["src"])
			if err != nil {
				return err
			}
			x.text = text
			delete(x.attrs, "src")
			continue
		case x.name == "script" || x.name == "assign" || x.name == "data":
			if _, ok := x.attr("src"); ok {
				return unsupported(x, "an external document (src)")
			}
			if len(x.children) > 0 {
				return unsupported(x.children[0], "XML content is not supported (only JSON or text)")
			}
			continue
		case x.name == "raise":
			if x.attrs["event"] == "" {
				return fmt.Errorf("scxml: line %d: <raise> needs an event", x.line)
			}
		case x.name == "send":
			if _, ok := x.attr("event"); !ok {
				if _, ok := x.attr("eventexpr"); !ok {
					return unsupported(x, "a <send> without event")
				}
			}
		case !executable[x.name]:
			return unsupported(x, "unsupported executable content")
		}
		if err := c.checkContent(x); err != nil {
			return err
		}
	}
	return nil
}

// actions converts the executable content inside e.
func (c *converter) actions(e *element) ([]any, error) {
	var out []any
	for _, x := range e.children {
		if x.space != "" && x.space != Namespace {
			return nil, unsupported(x, "element from namespace %q", x.space)
		}
		switch x.name {
		case "raise":
			if _, ok := x.attr("eventexpr"); ok {
				return nil, unsupported(x, "eventexpr %s", needsDataModel)
			}
			ev := x.attrs["event"]
			if ev == "" {
				return nil, fmt.Errorf("scxml: line %d: <raise> needs an event", x.line)
			}
			out = append(out, raise(ev, nil, ""))
		case "log":
			// A no-op: its expr would need a data model, and logging has no
			// effect on the configuration.
		case "send":
			a, err := c.send(x)
			if err != nil {
				return nil, err
			}
			out = append(out, a)
		case "cancel":
			if err := exprAttrs(x, "sendid"); err != nil {
				return nil, err
			}
			id := x.attrs["sendid"]
			if id == "" {
				return nil, fmt.Errorf("scxml: line %d: <cancel> needs a sendid", x.line)
			}
			p := newObj()
			p.set("sendId", id)
			a := newObj()
			a.set("type", "xstate.cancel")
			a.set("params", p)
			out = append(out, a)
		case "assign", "script", "if", "elseif", "else", "foreach":
			return nil, unsupported(x, needsDataModel)
		default:
			return nil, unsupported(x, "unsupported executable content")
		}
	}
	return out, nil
}

func raise(event string, delay *float64, id string) *obj {
	ev := newObj()
	ev.set("type", event)
	p := newObj()
	p.set("event", ev)
	if delay != nil {
		p.set("delay", *delay)
	}
	if id != "" {
		p.set("id", id)
	}
	a := newObj()
	a.set("type", "xstate.raise")
	a.set("params", p)
	return a
}

// exprAttrs replaces each expression attribute (name+"expr") that holds a
// string literal with the plain attribute; any other expression is an
// *UnsupportedError.
func exprAttrs(x *element, names ...string) error {
	for _, n := range names {
		v, ok := x.attr(n + "expr")
		if !ok {
			continue
		}
		if _, both := x.attr(n); both {
			return fmt.Errorf("scxml: line %d: <%s> has both %s and %sexpr", x.line, x.name, n, n)
		}
		lit, ok := literal(v)
		if !ok {
			return unsupported(x, "%sexpr %s", n, needsDataModel)
		}
		x.attrs[n] = lit
		delete(x.attrs, n+"expr")
	}
	return nil
}

func (c *converter) send(x *element) (*obj, error) {
	if err := exprAttrs(x, "event", "target", "type", "delay"); err != nil {
		return nil, err
	}
	for _, a := range []string{"idlocation", "namelist"} {
		if _, ok := x.attr(a); ok {
			return nil, unsupported(x, "%s %s", a, needsDataModel)
		}
	}
	if len(x.children) > 0 {
		return nil, unsupported(x.children[0], "event data %s", needsDataModel)
	}
	switch typ := x.attrs["type"]; typ {
	case "", "http://www.w3.org/TR/scxml/#SCXMLEventProcessor", "scxml":
	default:
		return nil, unsupported(x, "event I/O processor %q", typ)
	}
	ev := x.attrs["event"]
	if ev == "" {
		return nil, unsupported(x, "a <send> without event")
	}
	d := 0.0
	if s, ok := x.attr("delay"); ok {
		ms, err := parseDelay(s)
		if err != nil {
			return nil, fmt.Errorf("scxml: line %d: <send>: %v", x.line, err)
		}
		d = ms
	}
	switch target := x.attrs["target"]; target {
	case "":
		return raise(ev, &d, x.attrs["id"]), nil
	case "#_internal":
		if d != 0 {
			return nil, fmt.Errorf("scxml: line %d: <send>: a delay with target #_internal", x.line)
		}
		return raise(ev, nil, x.attrs["id"]), nil
	default:
		return nil, unsupported(x, "send target %q (only the session itself is supported)", target)
	}
}

// parseDelay parses a CSS2 time ("500ms", "1.5s", or bare milliseconds)
// into milliseconds.
func parseDelay(s string) (float64, error) {
	s = strings.TrimSpace(s)
	mult := 1.0
	switch {
	case strings.HasSuffix(s, "ms"):
		s = strings.TrimSuffix(s, "ms")
	case strings.HasSuffix(s, "s"):
		s, mult = strings.TrimSuffix(s, "s"), 1000
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("bad delay %q", s)
	}
	return v * mult, nil
}
