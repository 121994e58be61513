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
	decl := &declared{}
	impl.declared = decl
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
		f := func(_ context.Context, args GuardArgs) (bool, error) {
			sc := args.scope()
			return c.eval(&sc), nil
		}
		impl.Guards[mb.Key] = f
		decl.addGuard(mb.Key, f, c)
	}
	for _, mb := range section("actions", "named actions") {
		f, entries, err := compileDeclarativeAction(mb.Value, jsonPath("actions").key(mb.Key))
		if err != nil {
			add(err)
			continue
		}
		impl.Actions[mb.Key] = f
		if entries != nil {
			decl.addAction(mb.Key, f, entries)
		}
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

// compileDeclarativeAction compiles a declarative action to a function;
// for an assign, entries is its compiled form (non-nil, even when empty).
func compileDeclarativeAction(v gjson.Result, path jsonPath) (f ActionFunc, entries []assignEntry, _ *Error) {
	if !v.IsObject() {
		return nil, nil, &Error{Path: string(path), Msg: `an action must be {"assign": {...}}, {"raise": {...}} or {"throw": "message"}`}
	}
	if as := v.Get("assign"); as.Exists() {
		if !as.IsObject() {
			return nil, nil, &Error{Path: string(path.key("assign")), Msg: "must be an object of context keys to expressions"}
		}
		entries = []assignEntry{}
		for _, mb := range jsonx.Members(as, nil) {
			e, err := compileExpr(mb.Value, path.key("assign").key(mb.Key))
			if err != nil {
				return nil, nil, err
			}
			entries = append(entries, assignEntry{mb.Key, e})
		}
		return func(_ context.Context, args *ActionArgs) error {
			if args.r != nil {
				args.r.assignEntries(entries, args.Event)
				args.Context = args.r.s.context
			}
			return nil
		}, entries, nil
	}
	if t := v.Get("throw"); t.Exists() {
		// A custom action that fails when it runs, like a user's action
		// that throws (the case format's "throw").
		if t.Type != gjson.String {
			return nil, nil, &Error{Path: string(path.key("throw")), Msg: "must be the message of the error, not " + jsonx.Kind(t)}
		}
		err := errors.New(t.String())
		return func(context.Context, *ActionArgs) error { return err }, nil, nil
	}
	if r := v.Get("raise"); r.Exists() {
		if !r.IsObject() || r.Get("type").Type != gjson.String || r.Get("type").String() == "" {
			return nil, nil, &Error{Path: string(path.key("raise")), Msg: `must be an event object with a "type"`}
		}
		ev := eventFromJSON(r)
		return func(_ context.Context, args *ActionArgs) error {
			args.Raise(ev)
			return nil
		}, nil, nil
	}
	return nil, nil, &Error{Path: string(path), Msg: `an action must be {"assign": {...}}, {"raise": {...}} or {"throw": "message"}`}
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
	// moved, when set, holds a value of the event that no one else may
	// change: the first $ref that reads it keeps it without a copy, and
	// clears it (see runner.movedOutput).
	moved *any
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
	return lookupIn(cur, path[1:])
}

// lookupIn resolves the keys of path (object keys, array indexes) in cur.
func lookupIn(cur any, path []string) (any, bool) {
	for _, k := range path {
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

// eval computes the value an assign sets; prev is the value the key has
// in the context (nil when it has none), which $inc and $push start from.
func (e *expr) eval(s scope, prev any) any {
	switch e.kind {
	case exprRef:
		v, ok := s.lookup(e.ref)
		if !ok {
			return undefined{}
		}
		if s.moved != nil && sameReference(*s.moved, v) {
			*s.moved = nil
			return v
		}
		return cloneValue(v)
	case exprInc:
		n, _ := prev.(float64)
		return boxNumber(n + e.inc)
	case exprPush:
		old, _ := prev.([]any)
		arr := make([]any, len(old), len(old)+1)
		copy(arr, old)
		v := e.push.eval(s, prev)
		if _, ok := v.(undefined); ok {
			v = nil // [undefined] serializes as [null]
		}
		return append(arr, v)
	}
	return cloneValue(e.literal)
}

// cond is a compiled declarative condition. Compile resolves what it can
// once: the operator to a code, the field to a path, and a literal value
// to a typed scalar (or, for "in" over a list, to a set), so evaluating it
// compares numbers as numbers and strings as strings, and falls back to
// deep JSON equality only for objects, arrays and unusual Go types.
type cond struct {
	op    string
	code  condCode
	field []string
	value *expr // exprLiteral or exprRef
	subs  []*cond
	lit   scalar  // value, when it is a literal scalar
	set   *litSet // op "in" with a literal array
	// topKey: field is "context.<key>", a top-level key (the usual case),
	// looked up directly.
	topKey bool
}

// fieldValue is s.lookup(c.field).
func (c *cond) fieldValue(s *scope) (any, bool) {
	if c.topKey && !s.actorScope {
		v, ok := s.context[c.field[1]]
		return v, ok
	}
	return s.lookup(c.field)
}

// condCode is a condition's op, resolved at compile time.
type condCode uint8

const (
	condEq condCode = iota
	condNeq
	condGt
	condGte
	condLt
	condLte
	condIn
	condContains
	condExists
	condNotExists
	condAnd
	condOr
	condNot
)

var condOps = []string{"eq", "neq", "gt", "gte", "lt", "lte", "in", "contains", "exists", "not_exists"}

// scalarKind says which JSON scalar a scalar holds; scalarNone is any
// other value (object, array), compared with jsonEqual.
type scalarKind uint8

const (
	scalarNone scalarKind = iota
	scalarNull
	scalarBool
	scalarNum
	scalarStr
)

// scalar is a JSON scalar in typed form.
type scalar struct {
	kind scalarKind
	b    bool
	num  float64
	str  string
}

// scalarOf returns v as a typed scalar: JSON scalars and the Go numbers
// normalizeJSON converts directly (int, int64, float32). ok is false for
// anything jsonEqual must compare (objects, arrays, other Go types).
func scalarOf(v any) (sc scalar, ok bool) {
	switch x := v.(type) {
	case nil:
		return scalar{kind: scalarNull}, true
	case bool:
		return scalar{kind: scalarBool, b: x}, true
	case float64:
		return scalar{kind: scalarNum, num: x}, true
	case string:
		return scalar{kind: scalarStr, str: x}, true
	case int:
		return scalar{kind: scalarNum, num: float64(x)}, true
	case int64:
		return scalar{kind: scalarNum, num: float64(x)}, true
	case float32:
		return scalar{kind: scalarNum, num: float64(x)}, true
	}
	return scalar{}, false
}

// equals is jsonEqual(v, s's value) for a scalar s.
func (s scalar) equals(v any) bool {
	o, ok := scalarOf(v)
	if !ok {
		switch v.(type) {
		case map[string]any, []any:
			return false // a composite never equals a scalar
		}
		return jsonEqual(v, s.value())
	}
	if o.kind != s.kind {
		return false
	}
	switch s.kind {
	case scalarBool:
		return o.b == s.b
	case scalarNum:
		return o.num == s.num
	case scalarStr:
		return o.str == s.str
	}
	return true // both null
}

// value is the scalar as a JSON value.
func (s scalar) value() any {
	switch s.kind {
	case scalarBool:
		return s.b
	case scalarNum:
		return s.num
	case scalarStr:
		return s.str
	}
	return nil
}

// litSet is the literal array of an "in" condition: its scalars as sets,
// and the other elements compared one by one.
type litSet struct {
	nums                      map[float64]struct{}
	strs                      map[string]struct{}
	hasTrue, hasFalse, hasNil bool
	others                    []any
}

func newLitSet(arr []any) *litSet {
	ls := &litSet{nums: map[float64]struct{}{}, strs: map[string]struct{}{}}
	for _, e := range arr {
		sc, ok := scalarOf(e)
		if !ok {
			ls.others = append(ls.others, e)
			continue
		}
		switch sc.kind {
		case scalarNull:
			ls.hasNil = true
		case scalarBool:
			ls.hasTrue, ls.hasFalse = ls.hasTrue || sc.b, ls.hasFalse || !sc.b
		case scalarNum:
			if sc.num == sc.num { // NaN equals nothing
				ls.nums[sc.num] = struct{}{}
			}
		case scalarStr:
			ls.strs[sc.str] = struct{}{}
		}
	}
	return ls
}

// has is "some element of the array jsonEqual v".
func (ls *litSet) has(v any) bool {
	sc, ok := scalarOf(v)
	if !ok {
		if _, composite := v.(map[string]any); !composite {
			if _, composite = v.([]any); !composite {
				// another Go type: compare as the slow path does
				v = normalizeJSON(v)
				if sc, ok = scalarOf(v); ok {
					return ls.has(v)
				}
			}
		}
		for _, e := range ls.others {
			if jsonEqual(v, e) {
				return true
			}
		}
		return false
	}
	switch sc.kind {
	case scalarNull:
		return ls.hasNil
	case scalarBool:
		return (sc.b && ls.hasTrue) || (!sc.b && ls.hasFalse)
	case scalarNum:
		_, ok = ls.nums[sc.num]
		return ok
	}
	_, ok = ls.strs[sc.str]
	return ok
}

func compileCond(v gjson.Result, path jsonPath) (*cond, *Error) {
	if !v.IsObject() {
		return nil, &Error{Path: string(path), Msg: `a condition must be an object: {"field", "op", "value"}, {"and": [...]}, {"or": [...]} or {"not": ...}`}
	}
	for i, comb := range []string{"and", "or"} {
		if list := v.Get(comb); list.Exists() {
			if !list.IsArray() {
				return nil, &Error{Path: string(path.key(comb)), Msg: "must be an array of conditions"}
			}
			c := &cond{op: comb, code: condAnd + condCode(i)}
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
		return &cond{op: "not", code: condNot, subs: []*cond{sub}}, nil
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
			for i, op := range condOps {
				if op == c.op {
					found, c.code = true, condCode(i)
				}
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
	c.topKey = len(c.field) == 2 && c.field[0] == "context"
	if c.value != nil && c.value.kind == exprLiteral {
		c.lit, _ = scalarOf(c.value.literal)
		if arr, ok := c.value.literal.([]any); ok && c.code == condIn {
			c.set = newLitSet(arr)
		}
	}
	return c, nil
}

func (c *cond) eval(s *scope) bool {
	switch c.code {
	case condAnd:
		for _, sub := range c.subs {
			if !sub.eval(s) {
				return false
			}
		}
		return true
	case condOr:
		for _, sub := range c.subs {
			if sub.eval(s) {
				return true
			}
		}
		return false
	case condNot:
		return !c.subs[0].eval(s)
	}
	field, present := c.fieldValue(s)
	if c.value == nil || c.value.kind == exprLiteral {
		return c.leaf(field, present, nil, false)
	}
	want, ok := s.lookup(c.value.ref)
	return c.leaf(field, present, want, ok)
}

// leaf evaluates a condition that is not and, or, not: on the field's
// value (present: it is defined) and, for a $ref value, the value it
// refers to (wantOK: defined).
func (c *cond) leaf(field any, present bool, want any, wantOK bool) bool {
	// A missing field equals nothing; null is a value, except for exists.
	switch c.code {
	case condExists:
		return present && field != nil
	case condNotExists:
		return !present || field == nil
	}
	if !present {
		return c.code == condNeq
	}
	if c.value.kind == exprLiteral {
		return c.evalLiteral(field)
	}
	if !wantOK {
		return c.code == condNeq
	}
	return c.compare(field, want)
}

// evalLiteral compares a present field with the literal value, by type.
func (c *cond) evalLiteral(field any) bool {
	switch c.code {
	case condEq, condNeq:
		eq := false
		if c.lit.kind != scalarNone {
			eq = c.lit.equals(field)
		} else {
			eq = jsonEqual(field, c.value.literal)
		}
		return eq == (c.code == condEq)
	case condGt, condGte, condLt, condLte:
		a, ok := field.(float64)
		if !ok || c.lit.kind != scalarNum {
			return false
		}
		return compareNumbers(c.code, a, c.lit.num)
	case condIn:
		return c.set != nil && c.set.has(field)
	}
	return c.compare(field, c.value.literal)
}

// compare evaluates the op on a present field and a present value.
func (c *cond) compare(field, want any) bool {
	switch c.code {
	case condEq:
		return jsonEqual(field, want)
	case condNeq:
		return !jsonEqual(field, want)
	case condGt, condGte, condLt, condLte:
		a, ok1 := field.(float64)
		b, ok2 := want.(float64)
		return ok1 && ok2 && compareNumbers(c.code, a, b)
	case condIn:
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
	case condContains:
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

func compareNumbers(code condCode, a, b float64) bool {
	switch code {
	case condGt:
		return a > b
	case condGte:
		return a >= b
	case condLt:
		return a < b
	}
	return a <= b
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
func cloneValue(v any) any { return jsonx.Clone(v, snapshotJSON) }

// snapshotJSON is cloneValue's copy of a value that is neither an object
// nor an array.
func snapshotJSON(v any) any {
	if s, ok := v.(*Snapshot); ok {
		return s.xstateJSON()
	}
	return v
}
