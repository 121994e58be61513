// This file defines the low-level JSON reading used by the loader: hard
// limits checked before parsing, readable JSON paths, objects iterated in
// JavaScript's key order with duplicate keys detected, and conversion of
// JSON values to plain Go values.

package statechart

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// checkDocument rejects input that is too large, nested too deeply, or not
// valid JSON, before gjson parses it. The depth scan is iterative, so hostile
// nesting cannot exhaust the stack.
func checkDocument(data []byte, maxBytes, maxDepth int) *Error {
	if len(data) > maxBytes {
		return &Error{Msg: fmt.Sprintf("document is %d bytes, more than the limit of %d", len(data), maxBytes), err: ErrLimit}
	}
	depth, inString, escaped := 0, false, false
	for _, c := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > maxDepth {
				return &Error{Msg: fmt.Sprintf("JSON nesting is deeper than the limit of %d", maxDepth), err: ErrLimit}
			}
		case '}', ']':
			depth--
		}
	}
	if !utf8.Valid(data) {
		return &Error{Msg: "the document is not valid UTF-8"}
	}
	if !gjson.ValidBytes(data) {
		return &Error{Msg: "malformed JSON: " + syntaxErrorPosition(data)}
	}
	return nil
}

// syntaxErrorPosition asks encoding/json where the syntax error is and
// reports it as line:column.
func syntaxErrorPosition(data []byte) string {
	var v any
	err := json.Unmarshal(data, &v)
	var se *json.SyntaxError
	if err == nil {
		return "invalid document"
	}
	if !errors.As(err, &se) {
		return err.Error()
	}
	line, col := 1, 1
	for i := 0; i < int(se.Offset)-1 && i < len(data); i++ {
		if data[i] == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return fmt.Sprintf("line %d, column %d: %s", line, col, se.Error())
}

// jsonPath builds readable paths: key appends ".key" (or `["key"]` when the
// key would be ambiguous), index appends "[i]".
type jsonPath string

func (p jsonPath) key(k string) jsonPath {
	if k == "" || strings.ContainsAny(k, ".[]\" ") {
		return jsonPath(string(p) + "[" + strconv.Quote(k) + "]")
	}
	if p == "" {
		return jsonPath(k)
	}
	return jsonPath(string(p) + "." + k)
}

func (p jsonPath) index(i int) jsonPath {
	return jsonPath(string(p) + "[" + strconv.Itoa(i) + "]")
}

// member is one key/value pair of a JSON object.
type member struct {
	key   string
	value gjson.Result
}

// isArrayIndex reports whether k is a canonical array index, the keys a
// JavaScript object lists first, in ascending numeric order.
func isArrayIndex(k string) (uint64, bool) {
	if k == "" || len(k) > 10 || (len(k) > 1 && k[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < '0' || k[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(k, 10, 64)
	if err != nil || n >= 1<<32-1 {
		return 0, false
	}
	return n, true
}

// objectMembers returns the members of a JSON object in the order a
// JavaScript engine would list them (Object.keys): array-index keys first in
// ascending order, then the other keys in document order. XState derives
// document order from that listing, so we must too. A duplicated key is
// reported through dup, and only its first occurrence is kept.
func objectMembers(v gjson.Result, dup func(key string)) []member {
	members := make([]member, 0, 8)
	var seen map[string]bool // only for large objects; small ones are scanned
	indexKeys := false
	v.ForEach(func(k, val gjson.Result) bool {
		key := k.String()
		dupKey := false
		if seen != nil {
			dupKey = seen[key]
		} else {
			for _, m := range members {
				if m.key == key {
					dupKey = true
					break
				}
			}
		}
		if dupKey {
			if dup != nil {
				dup(key)
			}
			return true
		}
		if seen == nil && len(members) >= 16 {
			seen = make(map[string]bool, 2*len(members))
			for _, m := range members {
				seen[m.key] = true
			}
		}
		if seen != nil {
			seen[key] = true
		}
		if _, ok := isArrayIndex(key); ok {
			indexKeys = true
		}
		members = append(members, member{key, val})
		return true
	})
	if !indexKeys {
		return members
	}
	sort.SliceStable(members, func(i, j int) bool {
		a, aok := isArrayIndex(members[i].key)
		b, bok := isArrayIndex(members[j].key)
		if aok && bok {
			return a < b
		}
		return aok && !bok
	})
	return members
}

// goValue converts a JSON value to plain Go values: map[string]any, []any,
// float64, string, bool and nil, the shapes encoding/json produces.
func goValue(v gjson.Result) any {
	switch v.Type {
	case gjson.Null:
		return nil
	case gjson.False:
		return false
	case gjson.True:
		return true
	case gjson.Number:
		return v.Float()
	case gjson.String:
		return v.String()
	}
	if v.IsArray() {
		arr := []any{}
		v.ForEach(func(_, e gjson.Result) bool {
			arr = append(arr, goValue(e))
			return true
		})
		return arr
	}
	if v.IsObject() {
		obj := map[string]any{}
		v.ForEach(func(k, e gjson.Result) bool {
			if _, ok := obj[k.String()]; !ok {
				obj[k.String()] = goValue(e)
			}
			return true
		})
		return obj
	}
	return nil
}

// jsonKind names the kind of a JSON value for error messages.
func jsonKind(v gjson.Result) string {
	switch {
	case !v.Exists():
		return "nothing"
	case v.Type == gjson.Null:
		return "null"
	case v.Type == gjson.True || v.Type == gjson.False:
		return "a boolean"
	case v.Type == gjson.Number:
		return "a number"
	case v.Type == gjson.String:
		return "a string"
	case v.IsArray():
		return "an array"
	default:
		return "an object"
	}
}
