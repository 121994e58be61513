// This file defines the declarative JSON guards and actions, so that a
// workflow can be written with no Go code: conditions (eq, neq, gt, gte, lt,
// lte, in, contains, exists, not_exists, and, or, not, stateIn) and actions
// (assign with $ref, $inc and $push; raise; throw). The forms are those of
// the conformance case format, which the XState oracle implements
// identically; declarative actors are in actorlogic.go.

package statechart

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/chartgate/chartgate/internal/jsonx"
)

// ParseImplementations reads declarative implementations from JSON:
//
//	{
//	  "guards":  {"isBig": {"field": "event.qty", "op": "gt", "value": 10}},
//	  "actions": {"count": {"assign": {"n": {"$inc": 1}}}},
//	  "delays":  {"LONG": 5000},
//	  "actors":  {"fetch": {"promise": {"resolve": {"ok": true}, "after": 100}}}
//	}
//
// Other top-level keys are ignored, so a whole conformance case file can be
// passed. Every error is reported with its path. The actors are those of
// the case format: {"promise": {"resolve" or "reject": V, "after": ms}},
// {"callback": {"send": [{"at": ms, "event": E}], "onReceive": {"TYPE":
// [E, ...]}}} and {"machine": {"machine": CONFIG, "guards": ..., "actions":
// ..., "delays": ..., "actors": ...}}, a child machine compiled with the
// default [Options] (see [ParseImplementationsWith]).
func ParseImplementations(data []byte) (Implementations, error) {
	return ParseImplementationsWith(data, nil)
}

// ParseImplementationsWith is [ParseImplementations] with the options child
// machines are compiled with (their Implementations field is ignored: a
// child machine's come from its own JSON).
func ParseImplementationsWith(data []byte, opts *Options) (Implementations, error) {
	impl := Implementations{Guards: map[string]GuardFunc{}, Actions: map[string]ActionFunc{}, Delays: map[string]time.Duration{}, Actors: map[string]ActorLogic{}}
	defaults := opts.withDefaults()
	if e := checkDocument(data, defaults.MaxBytes, defaults.MaxDepth); e != nil {
		return impl, ErrorList{e}
	}
	doc := gjson.ParseBytes(data)
	if !doc.IsObject() {
		return impl, ErrorList{{Msg: "implementations must be a JSON object, not " + jsonx.Kind(doc)}}
	}
	return parseImplementations(doc, opts)
}

// parseImplementations reads the guards, actions, delays and actors of an
// object (a case, or the body of a declarative child machine).
func parseImplementations(doc gjson.Result, opts *Options) (Implementations, error) {
	impl := Implementations{Guards: map[string]GuardFunc{}, Actions: map[string]ActionFunc{}, Delays: map[string]time.Duration{}}
	var errs ErrorList
	add := func(e *Error) { errs = append(errs, e) }
	// section returns the members of a top-level object, reporting what is
	// not an object and duplicate keys.
	section := func(name, what string) []jsonx.Member {
		v := doc.Get(name)
		if !v.Exists() {
			return nil
		}
		if !v.IsObject() {
			add(&Error{Path: name, Msg: "must be an object of " + what + ", not " + jsonx.Kind(v)})
			return nil
		}
		return jsonx.Members(v, func(k string) {
			add(&Error{Path: string(jsonPath(name).key(k)), Msg: fmt.Sprintf("duplicate key %q", k)})
		})
	}
	for _, mb := range section("guards", "named conditions") {
		p := jsonPath("guards").key(mb.Key)
		if in := mb.Value.Get("stateIn"); mb.Value.IsObject() && in.Exists() {
			if in.Type != gjson.String && !in.IsObject() {
				add(&Error{Path: string(p.key("stateIn")), Msg: `must be a "#id" or a state value`})
				continue
			}
			target := jsonx.GoValue(in)
			impl.Guards[mb.Key] = func(_ context.Context, args GuardArgs) (bool, error) {
				return args.InState(target)
			}
			continue
		}
		c, err := compileCond(mb.Value, p)
		if err != nil {
			add(err)
			continue
		}
		impl.Guards[mb.Key] = func(_ context.Context, args GuardArgs) (bool, error) {
			return c.eval(args.scope()), nil
		}
	}
	for _, mb := range section("actions", "named actions") {
		f, err := compileDeclarativeAction(mb.Value, jsonPath("actions").key(mb.Key))
		if err != nil {
			add(err)
			continue
		}
		impl.Actions[mb.Key] = f
	}
	for _, mb := range section("delays", "named delays in milliseconds") {
		p := string(jsonPath("delays").key(mb.Key))
		if mb.Value.Type != gjson.Number {
			add(&Error{Path: p, Msg: "a delay must be a number of milliseconds, not " + quoteJSON(mb.Value)})
			continue
		}
		problem := delayProblem(mb.Value.Float())
		if problem == "" && mb.Value.Float() < 0 {
			problem = "a delay cannot be negative"
		}
		if problem != "" {
			add(&Error{Path: p, Msg: problem})
			continue
		}
		impl.Delays[mb.Key] = msDuration(mb.Value.Float())
	}
	impl.Actors = parseActors(doc.Get("actors"), "actors", opts, add)
	if len(errs) > 0 {
		return impl, errs
	}
	return impl, nil
}

func compileDeclarativeAction(v gjson.Result, path jsonPath) (ActionFunc, *Error) {
	if !v.IsObject() {
		return nil, &Error{Path: string(path), Msg: `an action must be {"assign": {...}}, {"raise": {...}} or {"throw": "message"}`}
	}
	if as := v.Get("assign"); as.Exists() {
		if !as.IsObject() {
			return nil, &Error{Path: string(path.key("assign")), Msg: "must be an object of context keys to expressions"}
		}
		var entries []assignEntry
		for _, mb := range jsonx.Members(as, nil) {
			e, err := compileExpr(mb.Value, path.key("assign").key(mb.Key))
			if err != nil {
				return nil, err
			}
			entries = append(entries, assignEntry{mb.Key, e})
		}
		return func(_ context.Context, args *ActionArgs) error {
			if args.r != nil {
				args.r.assignEntries(entries, args.Event)
				args.Context = args.r.s.context
			}
			return nil
		}, nil
	}
	if t := v.Get("throw"); t.Exists() {
		// A custom action that fails when it runs, like a user's action
		// that throws (the case format's "throw").
		if t.Type != gjson.String {
			return nil, &Error{Path: string(path.key("throw")), Msg: "must be the message of the error, not " + jsonx.Kind(t)}
		}
		err := errors.New(t.String())
		return func(context.Context, *ActionArgs) error { return err }, nil
	}
	if r := v.Get("raise"); r.Exists() {
		if !r.IsObject() || r.Get("type").Type != gjson.String || r.Get("type").String() == "" {
			return nil, &Error{Path: string(path.key("raise")), Msg: `must be an event object with a "type"`}
		}
		ev := eventFromJSON(r)
		return func(_ context.Context, args *ActionArgs) error {
			args.Raise(ev)
			return nil
		}, nil
	}
	return nil, &Error{Path: string(path), Msg: `an action must be {"assign": {...}}, {"raise": {...}} or {"throw": "message"}`}
}

// scope is what declarative conditions, expressions and templates see:
// the context and the event of a machine, or the input of a declarative
// actor (and the event it received).
type scope struct {
	context map[string]any
	event   Event
	// input is the input of a declarative actor; hasInput says it is
	// defined. actorScope: the scope is an actor's ({input} or {input,
	// event}), with no context, and with an event only when hasEvent.
	input                          any
	hasInput, actorScope, hasEvent bool
}

// lookup resolves a dotted path "context.a.b", "event.x" or "input.y"
// (array elements by index: "context.items.0").
func (s scope) lookup(path []string) (any, bool) {
	if len(path) == 0 {
		return nil, false
	}
	var cur any
	switch path[0] {
	case "context":
		if s.actorScope {
			return nil, false
		}
		cur = s.context
	case "event":
		if s.actorScope && !s.hasEvent {
			return nil, false
		}
		if len(path) == 1 {
			return s.event.object(), true
		}
		v, ok := s.event.Field(path[1])
		if !ok {
			return nil, false
		}
		cur, path = v, path[1:]
	case "input":
		if !s.hasInput {
			return nil, false
		}
		cur = s.input
	default:
		return nil, false
	}
	for _, k := range path[1:] {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[k]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, ok := jsonx.ArrayIndex(k) // canonical indexes only, as in JavaScript
			if !ok || i >= uint64(len(c)) {
				return nil, false
			}
			cur = c[i]
		case *Snapshot:
			// the snapshot of a child in xstate.snapshot.<id> events
			v, ok := c.field(k)
			if !ok {
				return nil, false
			}
			cur = v
		default:
			return nil, false
		}
	}
	return cur, true
}

type exprKind uint8

const (
	exprLiteral exprKind = iota
	exprRef
	exprInc
	exprPush
)

// expr is a compiled assign expression.
type expr struct {
	kind    exprKind
	literal any
	ref     []string
	inc     float64
	push    *expr
}

type assignEntry struct {
	key  string
	expr *expr
}

func compileExpr(v gjson.Result, path jsonPath) (*expr, *Error) {
	if v.IsObject() {
		members := jsonx.Members(v, nil)
		if len(members) == 1 && strings.HasPrefix(members[0].Key, "$") {
			mb := members[0]
			switch mb.Key {
			case "$ref":
				ref, err := compileRef(mb.Value, path.key("$ref"))
				if err != nil {
					return nil, err
				}
				return &expr{kind: exprRef, ref: ref}, nil
			case "$inc":
				if mb.Value.Type != gjson.Number {
					return nil, &Error{Path: string(path.key("$inc")), Msg: "must be a number, not " + jsonx.Kind(mb.Value)}
				}
				return &expr{kind: exprInc, inc: mb.Value.Float()}, nil
			case "$push":
				e, err := compileExpr(mb.Value, path.key("$push"))
				if err != nil {
					return nil, err
				}
				return &expr{kind: exprPush, push: e}, nil
			default:
				return nil, &Error{Path: string(path.key(mb.Key)), Msg: fmt.Sprintf("unknown operator %q (use $ref, $inc or $push)", mb.Key)}
			}
		}
	}
	return &expr{kind: exprLiteral, literal: jsonx.GoValue(v)}, nil
}

func compileRef(v gjson.Result, path jsonPath) ([]string, *Error) {
	s := v.String()
	if v.Type != gjson.String || !(s == "event" || strings.HasPrefix(s, "context.") || strings.HasPrefix(s, "event.") || s == "context") {
		return nil, &Error{Path: string(path), Msg: fmt.Sprintf(`must be a path that starts with "context" or "event", not %s`, quoteJSON(v))}
	}
	return strings.Split(s, "."), nil
}

// undefined is the value of a $ref to a missing path. Assigning it removes
// the key, as assigning JavaScript's undefined does once serialized.
type undefined struct{}

func (e *expr) eval(s scope, key string) any {
	switch e.kind {
	case exprRef:
		v, ok := s.lookup(e.ref)
		if !ok {
			return undefined{}
		}
		return cloneValue(v)
	case exprInc:
		n, _ := s.context[key].(float64)
		return n + e.inc
	case exprPush:
		old, _ := s.context[key].([]any)
		arr := make([]any, len(old), len(old)+1)
		copy(arr, old)
		v := e.push.eval(s, key)
		if _, ok := v.(undefined); ok {
			v = nil // [undefined] serializes as [null]
		}
		return append(arr, v)
	}
	return cloneValue(e.literal)
}

// cond is a compiled declarative condition.
type cond struct {
	op    string
	field []string
	value *expr // exprLiteral or exprRef
	subs  []*cond
}

var condOps = []string{"eq", "neq", "gt", "gte", "lt", "lte", "in", "contains", "exists", "not_exists"}

func compileCond(v gjson.Result, path jsonPath) (*cond, *Error) {
	if !v.IsObject() {
		return nil, &Error{Path: string(path), Msg: `a condition must be an object: {"field", "op", "value"}, {"and": [...]}, {"or": [...]} or {"not": ...}`}
	}
	for _, comb := range []string{"and", "or"} {
		if list := v.Get(comb); list.Exists() {
			if !list.IsArray() {
				return nil, &Error{Path: string(path.key(comb)), Msg: "must be an array of conditions"}
			}
			c := &cond{op: comb}
			for i, e := range list.Array() {
				sub, err := compileCond(e, path.key(comb).index(i))
				if err != nil {
					return nil, err
				}
				c.subs = append(c.subs, sub)
			}
			return c, nil
		}
	}
	if n := v.Get("not"); n.Exists() {
		sub, err := compileCond(n, path.key("not"))
		if err != nil {
			return nil, err
		}
		return &cond{op: "not", subs: []*cond{sub}}, nil
	}
	c := &cond{}
	for _, mb := range jsonx.Members(v, nil) {
		p := path.key(mb.Key)
		switch mb.Key {
		case "field":
			ref, err := compileRef(mb.Value, p)
			if err != nil {
				return nil, err
			}
			c.field = ref
		case "op":
			c.op = mb.Value.String()
			found := false
			for _, op := range condOps {
				found = found || op == c.op
			}
			if !found {
				return nil, &Error{Path: string(p), Msg: fmt.Sprintf("unknown op %s%s", quoteJSON(mb.Value), didYouMean(c.op, condOps))}
			}
		case "value":
			e, err := compileExpr(mb.Value, p)
			if err != nil {
				return nil, err
			}
			if e.kind != exprLiteral && e.kind != exprRef {
				return nil, &Error{Path: string(p), Msg: "a condition value is a JSON value or {\"$ref\": path}"}
			}
			c.value = e
		default:
			return nil, &Error{Path: string(p), Msg: fmt.Sprintf("unknown key %q%s", mb.Key, didYouMean(mb.Key, []string{"field", "op", "value", "and", "or", "not"}))}
		}
	}
	switch {
	case c.field == nil:
		return nil, &Error{Path: string(path), Msg: `a condition needs a "field"`}
	case c.op == "":
		return nil, &Error{Path: string(path), Msg: `a condition needs an "op"`}
	case c.value == nil && c.op != "exists" && c.op != "not_exists":
		return nil, &Error{Path: string(path), Msg: fmt.Sprintf("op %q needs a \"value\"", c.op)}
	}
	return c, nil
}

func (c *cond) eval(s scope) bool {
	switch c.op {
	case "and":
		for _, sub := range c.subs {
			if !sub.eval(s) {
				return false
			}
		}
		return true
	case "or":
		for _, sub := range c.subs {
			if sub.eval(s) {
				return true
			}
		}
		return false
	case "not":
		return !c.subs[0].eval(s)
	}
	// A missing field equals nothing; null is a value, except for exists.
	field, present := s.lookup(c.field)
	switch c.op {
	case "exists":
		return present && field != nil
	case "not_exists":
		return !present || field == nil
	}
	var want any
	if c.value != nil {
		want = c.value.literal // compared, never stored: no copy needed
		if c.value.kind == exprRef {
			if v, ok := s.lookup(c.value.ref); ok {
				want = v
			} else {
				want = undefined{}
			}
		}
	}
	if _, missing := want.(undefined); missing {
		present = false
	}
	if !present {
		return c.op == "neq"
	}
	switch c.op {
	case "eq":
		return jsonEqual(field, want)
	case "neq":
		return !jsonEqual(field, want)
	case "gt", "gte", "lt", "lte":
		a, ok1 := field.(float64)
		b, ok2 := want.(float64)
		if !ok1 || !ok2 {
			return false
		}
		switch c.op {
		case "gt":
			return a > b
		case "gte":
			return a >= b
		case "lt":
			return a < b
		}
		return a <= b
	case "in":
		arr, ok := want.([]any)
		if !ok {
			return false
		}
		for _, e := range arr {
			if jsonEqual(field, e) {
				return true
			}
		}
		return false
	case "contains":
		switch f := field.(type) {
		case []any:
			for _, e := range f {
				if jsonEqual(e, want) {
					return true
				}
			}
		case string:
			w, ok := want.(string)
			return ok && strings.Contains(f, w)
		}
	}
	return false
}

// jsonEqual is deep equality of JSON values, object key order ignored.
// Numbers of any Go numeric type compare by value.
func jsonEqual(a, b any) bool {
	a, b = normalizeJSON(a), normalizeJSON(b)
	return reflect.DeepEqual(a, b)
}

// normalizeJSON converts a Go value to the shapes encoding/json decodes to,
// so values set from Go code compare equal to values read from JSON.
func normalizeJSON(v any) any {
	switch x := v.(type) {
	case nil, bool, string, float64:
		return v
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalizeJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalizeJSON(e)
		}
		return out
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case float32:
		return float64(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}

// cloneValue deep-copies a JSON-shaped value, so literals compiled into a
// machine are never shared with (and mutated through) a context. A child's
// snapshot (the event.snapshot of xstate.snapshot.<id>) is copied as the
// JSON XState gives for it.
func cloneValue(v any) any {
	switch x := v.(type) {
	case *Snapshot:
		return x.xstateJSON()
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = cloneValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneValue(e)
		}
		return out
	}
	return v
}
