// This file defines the ECMAScript data model (github.com/dop251/goja):
// Compile converts a document with it, turning every cond, every block of
// executable content and the data model's set-up into named guards and
// actions of the machine's Implementations, which run in a JavaScript
// runtime of the actor's own (its session).

package scxml

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"

	"github.com/chartgate/chartgate/statechart"
)

// Options configures Compile.
type Options struct {
	// Machine is passed to statechart.Compile; its Implementations are
	// merged with the data model's (the data model's names start with
	// "scxml.").
	Machine *statechart.Options
	// EvalTimeout bounds one evaluation of an expression or script
	// (default 1 s); one that runs longer is interrupted and counts as an
	// error (error.execution).
	EvalTimeout time.Duration
	// Source, if set, reads the external document a src attribute names
	// (<script src>, <data src>, <invoke src>; a "file:" prefix is
	// removed first), once, while Compile converts the document. Without
	// it a src is an *UnsupportedError. Compile reads nothing else.
	Source func(src string) ([]byte, error)
}

// Compile converts an SCXML document with the ECMAScript data model and
// compiles it: <datamodel>/<data> (early and late binding), <assign>,
// <script>, <log>, <if>/<elseif>/<else>, <foreach>, cond and every expr
// attribute, <send> with eventexpr, targetexpr, typeexpr, delayexpr,
// idlocation, namelist, <param> and <content>, <cancel sendidexpr>,
// <donedata>, and the system variables _event, _sessionid, _name and
// _ioprocessors, with In(). <invoke type="scxml"> of an SCXML document
// (inline <content><scxml>, or src read through Options.Source) starts it
// as a child machine with a data model of its own, its id assigned to
// idlocation and its namelist and <param> values given to the child's
// data of the same names: <send target="#_parent"> reaches the parent
// (with _event.invokeid), target="#_<invokeid>" the child, and its end is
// done.invoke.<id> (XState's xstate.done.actor.<id>). What Convert
// rejects for needing a data model is accepted; what XState cannot
// express (deep or multiple initial targets) and other invocations
// (srcexpr, typeexpr, <finalize>, autoforward) are still an
// *UnsupportedError, and so is a src attribute without Options.Source to
// read it. An invoke whose namelist or <param> fails to evaluate raises
// error.execution and still starts (SCXML would cancel it).
//
// Each actor of the machine gets its own JavaScript runtime, created by
// the root's entry action and kept in the context under "$scxml" (beside
// "$donedata" and "$input_…", which final states' outputs and invokes'
// inputs read): a snapshot of such a machine does not persist its data
// model, and an actor restored from one fails (with status error) at its
// first guard or action of the data model. As SCXML requires, an
// expression that fails places error.execution on the internal queue and
// ends its block of executable content; a cond that fails is false (its
// error.execution is raised by the next block of executable content that
// runs).
func Compile(data []byte, opts *Options) (*statechart.Machine, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.EvalTimeout <= 0 {
		o.EvalTimeout = time.Second
	}
	root, err := parse(data)
	if err != nil {
		return nil, err
	}
	dm := newECMA(o.EvalTimeout)
	dm.source = o.Source
	cfg, err := convertRoot(root, dm)
	if err != nil {
		return nil, err
	}
	var mo statechart.Options
	if o.Machine != nil {
		mo = *o.Machine
	}
	mo.Implementations = mo.Implementations.Merge(statechart.Implementations{Guards: dm.guards, Actions: dm.actions, Actors: dm.actors})
	return statechart.Compile(cfg, &mo)
}

// newECMA returns the data model of a document.
func newECMA(timeout time.Duration) *ecma {
	return &ecma{
		timeout: timeout,
		progs:   map[string]*goja.Program{},
		guards:  map[string]statechart.GuardFunc{},
		actions: map[string]statechart.ActionFunc{},
		actors:  map[string]statechart.ActorLogic{},
		setups:  map[*element][]*invokeSetup{},
		origID:  map[string]string{},
	}
}

// invoke converts an <invoke> of an SCXML child session given as inline
// <content>, the index-th of its state: the child document is compiled
// with a data model of its own and becomes the actor logic the invoke
// starts. The child's input is an object holding its invoke id (under
// invokeIDKey) and the data namelist and <param> pass it.
func (c *converter) invoke(x *element, index int) (*obj, error) {
	switch x.attrs["type"] {
	case "", "scxml", "http://www.w3.org/TR/scxml/", "http://www.w3.org/TR/scxml":
	default:
		return nil, unsupported(x, "invoke type %q (only SCXML sessions are supported)", x.attrs["type"])
	}
	for _, a := range []string{"typeexpr", "srcexpr"} {
		if _, ok := x.attr(a); ok {
			return nil, unsupported(x, "the %s attribute is not supported", a)
		}
	}
	if v, ok := x.attr("autoforward"); ok && v != "false" {
		return nil, unsupported(x, "autoforward is not supported")
	}
	var doc *element
	var params []*element
	for _, ch := range x.children {
		if ch.name == "param" {
			params = append(params, ch)
			continue
		}
		if ch.name != "content" {
			return nil, unsupported(ch, "only <content> holding an <scxml> document is supported in <invoke>")
		}
		if len(ch.children) != 1 || ch.children[0].name != "scxml" {
			return nil, unsupported(ch, "the <content> of an <invoke> must hold one <scxml> document")
		}
		doc = ch.children[0]
	}
	if src, ok := x.attr("src"); ok {
		if doc != nil {
			return nil, unsupported(x, "an <invoke> with both src and <content>")
		}
		data, err := c.dm.load(x, src)
		if err != nil {
			return nil, err
		}
		if doc, err = parse(data); err != nil {
			return nil, fmt.Errorf("scxml: line %d: <invoke src=%q>: %w", x.line, src, err)
		}
		if doc.name != "scxml" {
			return nil, unsupported(x, "the document src=%q names is not an <scxml> document", src)
		}
	}
	if doc == nil {
		return nil, unsupported(x, "an <invoke> needs its document as <content>")
	}
	child := newECMA(c.dm.timeout)
	child.source = c.dm.source
	cfg, err := convertRoot(doc, child)
	if err != nil {
		return nil, err
	}
	m, err := statechart.Compile(cfg, &statechart.Options{Implementations: statechart.Implementations{Guards: child.guards, Actions: child.actions, Actors: child.actors}})
	if err != nil {
		return nil, fmt.Errorf("scxml: line %d: the invoked document: %w", doc.line, err)
	}
	src := c.dm.newName("scxml.invoke.")
	c.dm.actors[src] = m
	inv := newObj()
	inv.set("src", src)
	id := x.attrs["id"]
	loc, hasLoc := x.attr("idlocation")
	if id == "" && hasLoc {
		id = c.xid[x.parent] + "." + src // SCXML's form: stateid.platformid
	}
	if id != "" {
		inv.set("id", id)
	} else {
		id = strconv.Itoa(index) + "." + c.xid[x.parent] // XState's default invoke id
	}
	setup := &invokeSetup{idlocation: loc, id: id, params: params, namelist: strings.Fields(x.attrs["namelist"])}
	input := newObj()
	input.set(invokeIDKey, id)
	inv.set("input", input)
	if len(setup.params) > 0 || len(setup.namelist) > 0 {
		// The state's entry action computes the child's data into the
		// context key its input reads.
		setup.inputKey = "$input_" + strings.ReplaceAll(src, ".", "_") // no dot: a $ref path splits on dots
		ref := newObj()
		ref.set("$ref", "context."+setup.inputKey)
		inv.set("input", ref)
	}
	if hasLoc || setup.inputKey != "" {
		c.dm.setups[x.parent] = append(c.dm.setups[x.parent], setup)
	}
	return inv, nil
}

// load reads the external document src of element x with Options.Source.
func (d *ecma) load(x *element, src string) ([]byte, error) {
	if d.source == nil {
		return nil, unsupported(x, "an external document (src) needs Options.Source")
	}
	data, err := d.source(strings.TrimPrefix(src, "file:"))
	if err != nil {
		return nil, fmt.Errorf("scxml: line %d: <%s src=%q>: %w", x.line, x.name, src, err)
	}
	return data, nil
}

// invokeSetup is what the entry action of an invoking state does for one
// <invoke>: assign its id to idlocation, and compute the data (namelist,
// <param>) passed to the child as its input.
type invokeSetup struct {
	idlocation, id string
	params         []*element
	namelist       []string
	inputKey       string // the context key the invoke's input reads; "" for none
}

// setUpInvokes runs the invokeSetups of state st, entered. An error ends
// them and is raised, as for executable content.
func (s *session) setUpInvokes(st *element) {
	for _, u := range s.doc.setups[st] {
		if u.idlocation != "" {
			if err := s.setLocation(u.idlocation, s.vm.ToValue(u.id)); err != nil {
				s.raiseError(err)
				return
			}
		}
		if u.inputKey == "" {
			continue
		}
		data, err := s.eventData(&element{name: "invoke", attrs: map[string]string{"namelist": strings.Join(u.namelist, " ")}, children: u.params})
		if err != nil {
			s.raiseError(err)
			return
		}
		input, _ := data.(map[string]any)
		if input == nil {
			input = map[string]any{}
		}
		input[invokeIDKey] = u.id
		s.args.Assign(map[string]any{u.inputKey: input})
	}
}

// errNoSession is the error of a guard or action of an actor without its
// data model: one restored from a snapshot, which does not carry it.
var errNoSession = errors.New("scxml: the actor has no ECMAScript data model session (a restored snapshot does not carry one)")

// Names of the data model's implementations and of its context keys.
const (
	initAction  = "scxml.init"
	invokeIDKey = "$invokeid"
	sessionKey  = "$scxml"
	donedataKey = "$donedata"
	scxmlIOType = "http://www.w3.org/TR/scxml/#SCXMLEventProcessor"
	httpIOType  = "http://www.w3.org/TR/scxml/#BasicHTTPEventProcessor"
)

// ecma is the data model of one document, shared by its sessions.
type ecma struct {
	timeout  time.Duration
	mu       sync.Mutex
	progs    map[string]*goja.Program // compiled expressions and scripts
	sessions int                      // sessions started, for their ids

	guards  map[string]statechart.GuardFunc
	actions map[string]statechart.ActionFunc
	actors  map[string]statechart.ActorLogic // invoked SCXML sessions
	source  func(string) ([]byte, error)     // Options.Source
	setups  map[*element][]*invokeSetup      // per invoking state
	n       int

	data   []dataDecl        // every <data>, in document order
	script *element          // the <script> child of <scxml>
	late   bool              // binding="late"
	name   string            // <scxml name>
	origID map[string]string // XState id -> SCXML id, of every state
}

type dataDecl struct {
	el    *element
	state *element // the element whose <datamodel> holds it
}

// newName returns a new implementation name with the prefix.
func (d *ecma) newName(prefix string) string {
	d.n++
	return prefix + strconv.Itoa(d.n)
}

// cond registers the guard of a cond expression and returns its name.
func (d *ecma) cond(expr string) string {
	name := d.newName("scxml.cond.")
	d.guards[name] = func(_ context.Context, args statechart.GuardArgs) (bool, error) {
		s, ok := args.Context[sessionKey].(*session)
		if !ok {
			return false, errNoSession
		}
		s.bindEvent(args.Event)
		v, err := s.eval(expr)
		if err != nil {
			s.pending = append(s.pending, err)
			return false, nil
		}
		return v.ToBoolean(), nil
	}
	return name
}

// block registers the action that runs executable content (the children
// of each element of blocks, one block after the other) and returns its
// name. enter and exit, when set, is the state element the action enters
// (before the blocks) or exits (after them).
func (d *ecma) block(blocks []*element, enter, exit *element) string {
	name := d.newName("scxml.do.")
	d.actions[name] = func(_ context.Context, args *statechart.ActionArgs) error {
		s, ok := args.Context[sessionKey].(*session)
		if !ok {
			return errNoSession
		}
		s.args = args
		defer func() { s.args = nil }()
		s.bindEvent(args.Event)
		s.flushPending()
		if enter != nil {
			s.enter(enter)
		}
		ran := false
		for _, b := range blocks {
			ran = ran || len(b.children) > 0
			if err := s.run(b.children); err != nil {
				s.raiseError(err)
			}
		}
		if ran {
			// The data model may have changed: a new snapshot, as an
			// assign gives in XState, so eventless transitions are
			// selected again.
			args.Assign(map[string]any{sessionKey: s})
		}
		if enter != nil {
			s.setUpInvokes(enter)
			if enter.name == "final" {
				s.donedata(enter)
			}
		}
		if exit != nil {
			delete(s.active, exit.attrs["id"])
		}
		return nil
	}
	return name
}

// initAction creates the session of an actor: its runtime, the system
// variables and the data, then runs the document's <script>.
func (d *ecma) initAction() {
	d.actions[initAction] = func(_ context.Context, args *statechart.ActionArgs) error {
		s := d.newSession()
		args.Assign(map[string]any{sessionKey: s})
		s.args = args
		defer func() { s.args = nil }()
		for _, x := range d.data {
			if _, err := s.vm.RunString("var " + x.el.attrs["id"]); err != nil {
				s.raiseError(err)
			}
		}
		input, _ := args.Event.Data["input"].(map[string]any) // an invoking parent's namelist and <param>s
		s.invokeID, _ = input[invokeIDKey].(string)
		for _, x := range d.data {
			if v, ok := input[x.el.attrs["id"]]; ok {
				s.vm.Set(x.el.attrs["id"], v)
				continue
			}
			if !d.late || x.state.name == "scxml" {
				s.initData(x.el)
			}
		}
		if d.script != nil {
			if _, err := s.evalScript(string(d.script.text)); err != nil {
				s.raiseError(err)
			}
		}
		return nil
	}
}

func (d *ecma) newSession() *session {
	d.mu.Lock()
	d.sessions++
	id := "scxml" + strconv.Itoa(d.sessions)
	d.mu.Unlock()
	s := &session{doc: d, vm: goja.New(), id: id, active: map[string]bool{}, entered: map[*element]bool{}}
	s.vm.Set("_sessionid", id)
	s.vm.Set("_name", d.name)
	io := s.vm.NewObject()
	for _, k := range []string{"scxml", scxmlIOType} {
		p := s.vm.NewObject()
		p.Set("location", "#_scxml_"+id)
		io.Set(k, p)
	}
	for _, k := range []string{"basichttp", httpIOType} {
		p := s.vm.NewObject()
		p.Set("location", "#_basichttp_"+id)
		io.Set(k, p)
	}
	s.vm.Set("_ioprocessors", io)
	s.vm.Set("In", func(id string) bool { return s.active[id] })
	s.vm.Set("_event", goja.Undefined()) // unbound until the first event
	return s
}

// session is the data model of one actor.
type session struct {
	doc      *ecma
	vm       *goja.Runtime
	id       string
	active   map[string]bool   // SCXML ids of the active states
	entered  map[*element]bool // states entered at least once (late binding)
	args     *statechart.ActionArgs
	pending  []error // errors of conds, raised by the next action
	sendN    int
	invokeID string           // the id the parent invoked this session with
	event    statechart.Event // the event _event holds
	bound    bool
}

// execError is an error of executable content: its event name
// (error.execution or error.communication) and why.
type execError struct {
	event  string
	err    error
	el     *element // the element that failed, once known
	sendid string   // the send id of a failed <send>
}

func (e *execError) Error() string { return e.event + ": " + e.err.Error() }

func execution(format string, args ...any) error {
	return &execError{event: "error.execution", err: fmt.Errorf(format, args...)}
}

// raiseError places the error event of err on the internal queue. Its
// data says where it happened: {tagname, line, column, reason}.
func (s *session) raiseError(err error) {
	if s.args == nil {
		return
	}
	ev := statechart.Event{Type: "error.execution", Data: map[string]any{"$type": "platform"}}
	data := map[string]any{"reason": err.Error(), "column": 0}
	var ee *execError
	if errors.As(err, &ee) {
		ev.Type = ee.event
		if ee.el != nil {
			data["tagname"], data["line"] = ee.el.name, ee.el.line
		}
		if ee.sendid != "" {
			ev.Data["sendid"] = ee.sendid
		}
	}
	ev.Data["data"] = data
	s.args.Raise(ev)
}

func (s *session) flushPending() {
	for _, err := range s.pending {
		s.raiseError(err)
	}
	s.pending = s.pending[:0]
}

// program compiles (once per document) an expression or a script.
func (d *ecma) program(src string, expr bool) (*goja.Program, error) {
	key := src
	if expr {
		key = "\x00" + src
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if p, ok := d.progs[key]; ok {
		return p, nil
	}
	code := src
	if expr {
		code = "(" + strings.TrimRight(strings.TrimSpace(src), "; \t\r\n") + "\n)"
	}
	p, err := goja.Compile("", code, false)
	if err != nil {
		return nil, execution("%s: %v", strings.TrimSpace(src), err)
	}
	d.progs[key] = p
	return p, nil
}

func (s *session) runProgram(p *goja.Program, src string) (goja.Value, error) {
	t := time.AfterFunc(s.doc.timeout, func() { s.vm.Interrupt("timeout") })
	defer t.Stop()
	v, err := s.vm.RunProgram(p)
	s.vm.ClearInterrupt()
	if err != nil {
		return nil, execution("%s: %v", strings.TrimSpace(src), err)
	}
	return v, nil
}

// eval evaluates an expression.
func (s *session) eval(expr string) (goja.Value, error) {
	if strings.TrimSpace(expr) == "" {
		return nil, execution("empty expression")
	}
	p, err := s.doc.program(expr, true)
	if err != nil {
		return nil, err
	}
	return s.runProgram(p, expr)
}

func (s *session) evalScript(src string) (goja.Value, error) {
	p, err := s.doc.program(src, false)
	if err != nil {
		return nil, err
	}
	return s.runProgram(p, src)
}

// bindEvent makes ev the value of _event (SCXML names: done.state.<id>,
// done.invoke.<id>); xstate.init leaves _event unbound.
func (s *session) bindEvent(ev statechart.Event) {
	if ev.Type == statechart.EventInit || (s.bound && ev.Type == s.event.Type && sameData(ev.Data, s.event.Data)) {
		return
	}
	s.event, s.bound = ev, true
	o := s.vm.NewObject()
	name, typ, invokeID := ev.Type, "external", ""
	var data any
	switch {
	case strings.HasPrefix(ev.Type, "xstate.done.state."):
		id := strings.TrimPrefix(ev.Type, "xstate.done.state.")
		if orig, ok := s.doc.origID[id]; ok {
			id = orig
		}
		name, typ, data = "done.state."+id, "internal", ev.Data["output"]
	case strings.HasPrefix(ev.Type, "xstate.done.actor."):
		id := strings.TrimPrefix(ev.Type, "xstate.done.actor.")
		name, data, invokeID = "done.invoke."+id, ev.Data["output"], id
	default:
		data = ev.Data["data"]
		if t, ok := ev.Data["$type"].(string); ok {
			typ = t
		}
	}
	o.Set("name", name)
	o.Set("type", typ)
	if invokeID != "" {
		o.Set("invokeid", invokeID)
	}
	for _, k := range []string{"sendid", "origin", "origintype", "invokeid"} {
		if k == "invokeid" && invokeID != "" {
			continue
		}
		if v, ok := ev.Data[k]; ok {
			o.Set(k, v)
		} else {
			o.Set(k, goja.Undefined())
		}
	}
	if data == nil {
		o.Set("data", goja.Undefined())
	} else {
		o.Set("data", s.vm.ToValue(data))
	}
	s.vm.Set("_event", o)
}

// sameData reports whether two events' data are the same map.
func sameData(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 {
		return true
	}
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// enter marks a state active and binds its data late, on first entry.
func (s *session) enter(st *element) {
	if id := st.attrs["id"]; id != "" {
		s.active[id] = true
	}
	if s.entered[st] {
		return
	}
	s.entered[st] = true
	if !s.doc.late {
		return
	}
	for _, x := range s.doc.data {
		if x.state == st {
			s.initData(x.el)
		}
	}
}

// initData assigns a <data> element its initial value.
func (s *session) initData(x *element) {
	id := x.attrs["id"]
	v, err := s.valueOf(x)
	if err != nil {
		s.raiseError(err)
		return
	}
	if v == nil {
		return
	}
	if err := s.vm.Set(id, v); err != nil {
		s.raiseError(execution("data %q: %v", id, err))
	}
}

// valueOf is the value of an element with an expr attribute or content
// (JSON, else an expression, else the space-normalized text); nil when it
// has neither.
func (s *session) valueOf(x *element) (goja.Value, error) {
	if expr, ok := x.attrs["expr"]; ok {
		return s.eval(expr)
	}
	text := strings.TrimSpace(string(x.text))
	if text == "" {
		return nil, nil
	}
	if v, err := s.vm.RunString("JSON.parse(" + strconv.Quote(text) + ")"); err == nil {
		return v, nil
	}
	if v, err := s.eval(text); err == nil {
		return v, nil
	}
	return s.vm.ToValue(strings.Join(strings.Fields(text), " ")), nil
}

// donedata evaluates a final state's <donedata> into the context key the
// state's output reads.
func (s *session) donedata(final *element) {
	for _, ch := range final.children {
		if ch.name != "donedata" {
			continue
		}
		v, err := s.eventData(ch)
		if err != nil {
			s.raiseError(err)
			v = nil
		}
		if v == nil {
			s.args.Unset(donedataKey)
			return
		}
		s.args.Assign(map[string]any{donedataKey: v})
	}
}

// eventData is the data of a <send> or <donedata>: its <content>, or an
// object of its namelist and <param>s; nil when it has none.
func (s *session) eventData(x *element) (any, error) {
	var out map[string]any
	set := func(k string, v goja.Value) {
		if out == nil {
			out = map[string]any{}
		}
		out[k] = v.Export()
	}
	for _, name := range strings.Fields(x.attrs["namelist"]) {
		v, err := s.eval(name)
		if err != nil {
			return nil, err
		}
		set(name, v)
	}
	for _, ch := range x.children {
		switch ch.name {
		case "content":
			v, err := s.valueOf(ch)
			if err != nil {
				return nil, err
			}
			if v == nil {
				return "", nil
			}
			return v.Export(), nil
		case "param":
			name := ch.attrs["name"]
			src := ch.attrs["expr"]
			if loc, ok := ch.attrs["location"]; ok {
				src = loc
			}
			v, err := s.eval(src)
			if err != nil {
				return nil, err
			}
			set(name, v)
		}
	}
	if out == nil {
		return nil, nil
	}
	return out, nil
}

// run executes executable content; the first error ends it.
func (s *session) run(content []*element) error {
	for _, x := range content {
		if err := s.exec(x); err != nil {
			var ee *execError
			if !errors.As(err, &ee) {
				ee = &execError{event: "error.execution", err: err}
			}
			if ee.el == nil {
				ee.el = x
			}
			return ee
		}
	}
	return nil
}

// systemVars are the names an <assign> may not change.
var systemVars = map[string]bool{"_event": true, "_sessionid": true, "_name": true, "_ioprocessors": true, "_x": true, "In": true}

func (s *session) exec(x *element) error {
	switch x.name {
	case "raise":
		s.args.Raise(statechart.Event{Type: x.attrs["event"], Data: map[string]any{"$type": "internal"}})
	case "log":
		if expr, ok := x.attrs["expr"]; ok {
			if _, err := s.eval(expr); err != nil {
				return err
			}
		}
	case "script":
		_, err := s.evalScript(string(x.text))
		return err
	case "assign":
		return s.assign(x.attrs["location"], x)
	case "if":
		return s.ifElse(x)
	case "foreach":
		return s.foreach(x)
	case "send":
		return s.send(x)
	case "cancel":
		id, err := s.attr(x, "sendid")
		if err != nil {
			return err
		}
		s.args.Cancel(id)
	}
	return nil
}

// assign sets location to the value of x (its expr or content).
func (s *session) assign(loc string, x *element) error {
	root := strings.TrimSpace(loc)
	if i := strings.IndexAny(root, ".["); i >= 0 {
		root = root[:i]
	}
	if systemVars[strings.TrimSpace(root)] {
		return execution("<assign>: %q is a system variable", loc)
	}
	if _, err := s.eval(loc); err != nil {
		return execution("<assign>: location %q: %v", loc, err)
	}
	v, err := s.valueOf(x)
	if err != nil {
		return err
	}
	if v == nil {
		v = goja.Undefined()
	}
	return s.setLocation(loc, v)
}

func (s *session) setLocation(loc string, v goja.Value) error {
	s.vm.Set("__scxmlValue", v)
	defer s.vm.GlobalObject().Delete("__scxmlValue")
	_, err := s.evalScript(loc + " = __scxmlValue")
	return err
}

func (s *session) ifElse(x *element) error {
	cond, isElse := x.attrs["cond"], false
	decide := func() (bool, error) {
		if isElse {
			return true, nil
		}
		v, err := s.eval(cond)
		if err != nil {
			return false, err
		}
		return v.ToBoolean(), nil
	}
	var content []*element
	for _, ch := range x.children {
		if ch.name != "elseif" && ch.name != "else" {
			content = append(content, ch)
			continue
		}
		ok, err := decide()
		if err != nil || ok {
			if err != nil {
				return err
			}
			return s.run(content)
		}
		content, isElse, cond = nil, ch.name == "else", ch.attrs["cond"]
	}
	ok, err := decide()
	if err != nil || !ok {
		return err
	}
	return s.run(content)
}

func (s *session) foreach(x *element) error {
	arr, err := s.eval(x.attrs["array"])
	if err != nil {
		return err
	}
	obj, ok := arr.(*goja.Object)
	if !ok || obj.ClassName() != "Array" {
		return execution("<foreach>: array %q is not an array", x.attrs["array"])
	}
	item, index := x.attrs["item"], x.attrs["index"]
	if !isIdentifier(item) || (index != "" && !isIdentifier(index)) {
		return execution("<foreach>: item %q or index %q is not a variable name", item, index)
	}
	n := int(obj.Get("length").ToInteger())
	items := make([]goja.Value, n)
	for i := range items {
		items[i] = obj.Get(strconv.Itoa(i))
	}
	for i, v := range items {
		if err := s.vm.Set(item, v); err != nil {
			return execution("<foreach>: %v", err)
		}
		if index != "" {
			if err := s.vm.Set(index, i); err != nil {
				return execution("<foreach>: %v", err)
			}
		}
		if err := s.run(x.children); err != nil {
			return err
		}
	}
	return nil
}

// isIdentifier reports whether v is a plain JavaScript identifier.
func isIdentifier(v string) bool {
	if v == "" {
		return false
	}
	for i, r := range v {
		ok := r == '_' || r == '$' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9')
		if !ok {
			return false
		}
	}
	return true
}

// attr is the value of attribute name, or of name+"expr" evaluated.
func (s *session) attr(x *element, name string) (string, error) {
	if expr, ok := x.attrs[name+"expr"]; ok {
		v, err := s.eval(expr)
		if err != nil {
			return "", err
		}
		return v.String(), nil
	}
	return x.attrs[name], nil
}

func (s *session) send(x *element) error {
	var vals [4]string // event, target, type, delay
	for i, name := range [...]string{"event", "target", "type", "delay"} {
		v, err := s.attr(x, name)
		if err != nil {
			return err
		}
		vals[i] = v
	}
	event, target, typ, delayText := vals[0], vals[1], vals[2], vals[3]
	id := x.attrs["id"]
	if loc, ok := x.attrs["idlocation"]; ok {
		s.sendN++
		id = s.id + ".send" + strconv.Itoa(s.sendN)
		if err := s.setLocation(loc, s.vm.ToValue(id)); err != nil {
			return err
		}
	}
	data, err := s.eventData(x)
	if err != nil {
		return err
	}
	if err := s.sendTo(x, id, event, target, typ, delayText, data); err != nil {
		var ee *execError
		if errors.As(err, &ee) {
			ee.sendid = id
		}
		return err
	}
	return nil
}

// sendTo sends a <send>'s event once its attributes are evaluated.
func (s *session) sendTo(x *element, id, event, target, typ, delayText string, data any) error {
	var delay time.Duration
	if delayText != "" {
		ms, err := parseDelay(delayText)
		if err != nil {
			return execution("<send>: %v", err)
		}
		delay = time.Duration(ms * float64(time.Millisecond))
	}
	self := "#_scxml_" + s.id
	switch typ {
	case "", "scxml", scxmlIOType:
	case "basichttp", httpIOType:
		if target != "#_basichttp_"+s.id {
			return &execError{event: "error.communication", err: fmt.Errorf("<send>: basichttp target %q is not this session", target)}
		}
		target = self
	default:
		return execution("<send>: event I/O processor %q is not supported", typ)
	}
	ev := statechart.Event{Type: event, Data: map[string]any{"$type": "external", "origin": self, "origintype": scxmlIOType}}
	if data != nil {
		ev.Data["data"] = data
	}
	if id != "" {
		ev.Data["sendid"] = id
	}
	switch {
	case target == "" || target == self:
		s.args.RaiseAfter(ev, delay, id)
	case target == "#_internal":
		ev.Data["$type"] = "internal"
		s.args.Raise(ev)
	case target == "#_parent":
		ev.Data["invokeid"] = s.invokeID
		if err := s.args.SendParent(ev, delay, id); err != nil {
			return &execError{event: "error.communication", err: err}
		}
	case strings.HasPrefix(target, "#_") && !strings.HasPrefix(target, "#_scxml_") && !strings.HasPrefix(target, "#_basichttp_"):
		if err := s.args.SendTo(strings.TrimPrefix(target, "#_"), ev, delay, id); err != nil {
			return &execError{event: "error.communication", err: err}
		}
	case strings.HasPrefix(target, "#_"):
		return &execError{event: "error.communication", err: fmt.Errorf("<send>: target %q is not reachable", target)}
	default:
		return execution("<send>: target %q is not supported", target)
	}
	return nil
}
