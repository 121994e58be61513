// This file holds the low-level JSON reading shared by Compile and Restore:
// hard limits checked before gjson parses anything, readable JSON paths,
// object members in JavaScript's key order with duplicate keys detected,
// and conversion of JSON values to plain Go values.

package flat

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/chartgate/chartgate/statechart"
)

// Hard limits on the input of Compile and Restore.
const (
	// MaxBytes is the largest document Compile and Restore accept.
	MaxBytes = 8 << 20
	// MaxDepth is the deepest JSON nesting Compile and Restore accept.
	MaxDepth = 256
	// MaxStates is the largest number of states a flat machine may have.
	MaxStates = 100_000
	// maxSuggest is the largest number of candidates didYouMean compares
	// against, so that hostile input cannot make suggestions quadratic.
	maxSuggest = 1000
)

// checkDocument rejects a document that is too large, nested too deeply or
// not valid JSON. The depth is measured by an iterative scan before gjson
// (whose validator recurses) sees the data.
func checkDocument(data []byte) *statechart.Error {
	if len(data) > MaxBytes {
		return &statechart.Error{Msg: fmt.Sprintf("document is %d bytes, more than the limit of %d", len(data), MaxBytes)}
	}
	depth := 0
	inString, escaped := false, false
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
			if depth++; depth > MaxDepth {
				return &statechart.Error{Msg: fmt.Sprintf("JSON nesting is deeper than the limit of %d", MaxDepth)}
			}
		case '}', ']':
			depth--
		}
	}
	if !gjson.ValidBytes(data) {
		return &statechart.Error{Msg: "malformed JSON: " + syntaxError(data)}
	}
	if !utf8.Valid(data) {
		// gjson passes invalid UTF-8 through, but encoding/json replaces it,
		// so ids containing it would not survive MarshalJSON and Restore.
		bad := 0
		for s := data; len(s) > 0; {
			r, size := utf8.DecodeRune(s)
			if r == utf8.RuneError && size <= 1 {
				break
			}
			bad += size
			s = s[size:]
		}
		line, col := position(data, bad)
		return &statechart.Error{Msg: fmt.Sprintf("malformed JSON: line %d, column %d: invalid UTF-8", line, col)}
	}
	return nil
}

// position returns the line and column (1-based, in bytes) of data[off].
func position(data []byte, off int) (line, col int) {
	line, col = 1, 1
	for _, c := range data[:off] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

// syntaxError locates the syntax error of an invalid document as
// "line L, column C: message", using encoding/json's diagnosis.
func syntaxError(data []byte) string {
	var v any
	err := json.Unmarshal(data, &v)
	if err == nil {
		return "invalid document"
	}
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return err.Error()
	}
	line, col := position(data, max(0, min(int(se.Offset)-1, len(data))))
	return fmt.Sprintf("line %d, column %d: %s", line, col, se.Error())
}

// jpath is a JSON path written for a reader: "states.payment.on.PAY", with
// keys that would be ambiguous written as ["a.b"].
type jpath string

func (p jpath) key(k string) jpath {
	if k == "" || strings.ContainsAny(k, `.[]" `) {
		return p + jpath("["+strconv.Quote(k)+"]")
	}
	if p == "" {
		return jpath(k)
	}
	return p + "." + jpath(k)
}

// member is one key/value pair of a JSON object.
type member struct {
	key   string
	value gjson.Result
}

// arrayIndex reports whether k is a canonical array index (a key that a
// JavaScript object lists before all others, in ascending numeric order)
// and its value.
func arrayIndex(k string) (uint64, bool) {
	if k == "" || len(k) > 10 || (len(k) > 1 && k[0] == '0') {
		return 0, false
	}
	n, err := strconv.ParseUint(k, 10, 64)
	if err != nil || n >= 1<<32-1 {
		return 0, false
	}
	return n, true
}

// members lists the members of a JSON object in the order of JavaScript's
// Object.keys, which is the order XState sees: array-index keys ascending,
// then the other keys in document order. Only the first occurrence of a
// duplicated key is kept; dup, if not nil, is called for every other one.
func members(v gjson.Result, dup func(key string)) []member {
	var out []member
	seen := map[string]struct{}{}
	v.ForEach(func(k, val gjson.Result) bool {
		key := k.String()
		if _, ok := seen[key]; ok {
			if dup != nil {
				dup(key)
			}
			return true
		}
		seen[key] = struct{}{}
		out = append(out, member{key, val})
		return true
	})
	sort.SliceStable(out, func(i, j int) bool {
		a, aok := arrayIndex(out[i].key)
		b, bok := arrayIndex(out[j].key)
		if aok && bok {
			return a < b
		}
		return aok && !bok
	})
	return out
}

// goValue converts a JSON value to the shapes encoding/json produces
// (map[string]any, []any, float64, string, bool, nil). The first occurrence
// of a duplicated key wins, as in package statechart.
func goValue(v gjson.Result) any {
	switch {
	case v.Type == gjson.Null:
		return nil
	case v.Type == gjson.False:
		return false
	case v.Type == gjson.True:
		return true
	case v.Type == gjson.Number:
		return v.Float()
	case v.Type == gjson.String:
		return v.String()
	case v.IsArray():
		arr := []any{}
		v.ForEach(func(_, e gjson.Result) bool {
			arr = append(arr, goValue(e))
			return true
		})
		return arr
	case v.IsObject():
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

// kind names the kind of a JSON value for messages.
func kind(v gjson.Result) string {
	switch {
	case !v.Exists():
		return "nothing"
	case v.Type == gjson.Null:
		return "null"
	case v.Type == gjson.True, v.Type == gjson.False:
		return "a boolean"
	case v.Type == gjson.Number:
		return "a number"
	case v.Type == gjson.String:
		return "a string"
	case v.IsArray():
		return "an array"
	}
	return "an object"
}

// isEmpty reports whether v is absent, null, {} or [].
func isEmpty(v gjson.Result) bool {
	switch {
	case !v.Exists(), v.Type == gjson.Null:
		return true
	case v.IsObject(), v.IsArray():
		empty := true
		v.ForEach(func(_, _ gjson.Result) bool {
			empty = false
			return false
		})
		return empty
	}
	return false
}

// toStatePath splits a state path on dots; a backslash escapes the next
// character. This is how XState reads target strings.
func toStatePath(s string) []string {
	var out []string
	var seg strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s):
			i++
			seg.WriteByte(s[i])
		case c == '\\':
		case c == '.':
			out = append(out, seg.String())
			seg.Reset()
		default:
			seg.WriteByte(c)
		}
	}
	return append(out, seg.String())
}

// didYouMean returns ` (did you mean "x"?)` for the candidate closest to s,
// or "" when none is close enough.
func didYouMean(s string, candidates []string) string {
	if len(candidates) > maxSuggest {
		return ""
	}
	best, bestD := "", len(s)/2+2
	for _, c := range candidates {
		if d := distance(strings.ToLower(s), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" || best == s {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// distance is the Levenshtein distance of a and b; strings longer than 64
// bytes are never close.
func distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 30
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
