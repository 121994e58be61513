// This file defines value templates: JSON values in which any object
// {"$ref": "path"}, at any depth, stands for a copy of the value at that
// dotted path when the value is needed. They are the declarative form of
// XState's functions for invoke and spawn input, the events of sendTo,
// sendParent and emit, the output of final states and machines, and the
// results and events of declarative actors.

package statechart

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/chartgate/chartgate/internal/jsonx"
)

// template is a compiled value template.
type template struct {
	value  any  // the JSON value, with refValue for each $ref object
	hasRef bool // some $ref is in it; otherwise value is a literal
	// flat: value is a literal object or array with no object or array
	// in it, which a shallow copy copies wholly.
	flat bool
}

// templateRoots are the first segments a $ref path may start with, per use.
var (
	machineRoots = []string{"context", "event"}
	inputRoots   = []string{"input"}
	answerRoots  = []string{"input", "event"}
)

// compileTemplate reads a template; every $ref path must start with one of
// roots.
func compileTemplate(v gjson.Result, path jsonPath, roots []string) (*template, *Error) {
	t := &template{}
	val, err := t.read(v, path, roots)
	if err != nil {
		return nil, err
	}
	t.value = val
	t.flat = !t.hasRef && flatValue(val)
	return t, nil
}

// flatValue reports whether v is an object or array with no object or
// array in it.
func flatValue(v any) bool {
	var elems []any
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			elems = append(elems, e)
		}
	case []any:
		elems = x
	default:
		return false
	}
	for _, e := range elems {
		switch e.(type) {
		case map[string]any, []any:
			return false
		}
	}
	return true
}

// refValue is a $ref object inside a compiled template: its path.
type refValue []string

func (t *template) read(v gjson.Result, path jsonPath, roots []string) (any, *Error) {
	switch {
	case v.IsObject():
		members := jsonx.Members(v, nil)
		if len(members) == 1 && members[0].Key == "$ref" {
			ref := members[0].Value
			p := ref.String()
			first, _, _ := strings.Cut(p, ".")
			ok := ref.Type == gjson.String && p != ""
			if ok {
				ok = false
				for _, r := range roots {
					ok = ok || first == r
				}
			}
			if !ok {
				return nil, &Error{Path: string(path.key("$ref")), Msg: fmt.Sprintf("must be a dotted path that starts with %s, not %s", quoteRoots(roots), quoteJSON(ref))}
			}
			t.hasRef = true
			return refValue(strings.Split(p, ".")), nil
		}
		out := make(map[string]any, len(members))
		for _, mb := range members {
			x, err := t.read(mb.Value, path.key(mb.Key), roots)
			if err != nil {
				return nil, err
			}
			out[mb.Key] = x
		}
		return out, nil
	case v.IsArray():
		arr := v.Array()
		out := make([]any, len(arr))
		for i, e := range arr {
			x, err := t.read(e, path.index(i), roots)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	}
	return jsonx.GoValue(v), nil
}

func quoteRoots(roots []string) string {
	q := make([]string, len(roots))
	for i, r := range roots {
		q[i] = fmt.Sprintf("%q", r)
	}
	return strings.Join(q, " or ")
}

// resolve returns the value of the template in a scope: a fresh copy, with
// every $ref replaced by a copy of its value. ok is false when the whole
// template is a $ref to a missing path (JavaScript's undefined).
func (t *template) resolve(s scope) (v any, ok bool) {
	if t == nil {
		return nil, false
	}
	if t.flat {
		// A copy of the table, which, unlike cloneValue's, does not hash
		// the keys again.
		if m, ok := t.value.(map[string]any); ok {
			return maps.Clone(m), true
		}
		return slices.Clone(t.value.([]any)), true
	}
	if !t.hasRef {
		return cloneValue(t.value), true
	}
	return resolveTemplateValue(t.value, s)
}

func resolveTemplateValue(v any, s scope) (any, bool) {
	switch x := v.(type) {
	case refValue:
		got, ok := s.lookup(x)
		if !ok {
			return nil, false
		}
		return cloneValue(got), true
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if r, ok := resolveTemplateValue(e, s); ok {
				out[k] = r // a missing $ref leaves the key out, as JSON does with undefined
			}
		}
		return out, true
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i], _ = resolveTemplateValue(e, s) // undefined in an array is null in JSON
		}
		return out, true
	}
	return v, true
}

// eventTemplate is a template of an event: an object whose "type" is a
// literal string.
type eventTemplate struct {
	typ  string
	data *template // the other fields; nil when there are none
}

func compileEventTemplate(v gjson.Result, path jsonPath, roots []string, what string) (*eventTemplate, *Error) {
	if !v.IsObject() || v.Get("type").Type != gjson.String || v.Get("type").String() == "" {
		return nil, &Error{Path: string(path), Msg: fmt.Sprintf(`%s needs an event object with a "type" string`, what)}
	}
	t, err := compileTemplate(v, path, roots)
	if err != nil {
		return nil, err
	}
	obj := t.value.(map[string]any)
	et := &eventTemplate{typ: v.Get("type").String()}
	delete(obj, "type")
	if len(obj) > 0 {
		et.data = t
	}
	return et, nil
}

// resolve builds the event in a scope.
func (et *eventTemplate) resolve(s scope) Event {
	ev := Event{Type: et.typ}
	if et.data != nil {
		if d, ok := et.data.resolve(s); ok {
			if m, ok := d.(map[string]any); ok && len(m) > 0 {
				ev.Data = m
			}
		}
	}
	return ev
}

// decodeJSONValue turns a json.RawMessage (or a []byte-shaped JSON value)
// into a Go value, so that callers can pass JSON null where nil would mean
// "nothing"; other values pass through.
func decodeJSONValue(v any) (any, error) {
	raw, ok := v.(json.RawMessage)
	if !ok {
		return v, nil
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	return out, nil
}
