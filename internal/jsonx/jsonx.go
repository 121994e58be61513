// Package jsonx holds the low-level JSON helpers shared by the statechart
// loaders (package statechart and package statechart/flat): the iterative
// nesting-depth scan and syntax-error location done before gjson parses a
// document (and the tracking of strings such byte scans share),
// object members in JavaScript's key order with duplicate keys
// detected, conversion of JSON values to plain Go values, names of JSON
// kinds for messages, XState's state-path splitting, the edit distance
// behind did-you-mean hints (package internal/hint holds the hint rule),
// the JSON path every error location is written with ([Path]) and the deep
// copy of JSON-shaped values ([Clone]).
//
// The helpers return plain values; the callers own their limits and error
// messages.
package jsonx

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// TooDeep reports whether data nests objects and arrays more than maxDepth
// levels deep. The scan is iterative, so hostile nesting cannot exhaust the
// stack, and it does not require data to be valid JSON.
func TooDeep(data []byte, maxDepth int) bool {
	depth := 0
	var str Strings
	for _, c := range data {
		if str.Skip(c) {
			continue
		}
		switch c {
		case '"':
			str.Open()
		case '{', '[':
			if depth++; depth > maxDepth {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}

// Strings follows a byte-by-byte scan of JSON text into and out of its
// strings, so that the scan can tell structure ('{', ',', ...) from string
// content. The zero value is outside any string.
type Strings struct{ in, escaped bool }

// Open starts a string: call it at an opening quote.
func (s *Strings) Open() { s.in = true }

// Skip reports whether c, the next byte of the scan, belongs to the string
// being read (its closing quote included), and follows escapes; outside a
// string it returns false.
func (s *Strings) Skip(c byte) bool {
	if !s.in {
		return false
	}
	switch {
	case s.escaped:
		s.escaped = false
	case c == '\\':
		s.escaped = true
	case c == '"':
		s.in = false
	}
	return true
}

// InString reports whether the scan is inside a string (one left unterminated,
// at the end of the text).
func (s *Strings) InString() bool { return s.in }

// AppendString appends s as encoding/json writes a string: quoted, with
// <, > and & escaped for HTML. Strings of other printable ASCII (the usual
// ids, keys and names) are written as they are, without encoding/json.
func AppendString(b []byte, s string) []byte {
	if !plainString(s) {
		q, _ := json.Marshal(s) // a string always marshals
		return append(b, q...)
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// AppendFloat appends f as encoding/json writes a float64 (and JavaScript
// prints a number): in decimal notation from 1e-6 up to 1e21 ("1000000",
// "0.25"), in exponent notation beyond ("1e+21", "1e-7"). It must be
// finite.
func AppendFloat(b []byte, f float64) []byte {
	a := math.Abs(f)
	if a < 1e15 && f == math.Trunc(f) && (f != 0 || !math.Signbit(f)) {
		// An integer of at most 15 digits (but -0) is its own shortest
		// decimal form: written as an integer, without the float
		// formatting, which is slower and takes some 300 bytes more of
		// stack (deep in a call's commit).
		return strconv.AppendInt(b, int64(f), 10)
	}
	if a == 0 || (a >= 1e-6 && a < 1e21) {
		return strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	b = strconv.AppendFloat(b, f, 'e', -1, 64)
	// A negative exponent of one digit is written without its leading
	// zero: 1e-7, not 1e-07.
	if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1]
		b = b[:n-1]
	}
	return b
}

// StringLen returns len(AppendString(nil, s)).
func StringLen(s string) int {
	if !plainString(s) {
		return len(AppendString(nil, s))
	}
	return len(s) + 2
}

// plainString reports whether encoding/json writes s as it is, between
// quotes: printable ASCII without quotes, backslashes or <, > and &.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if !PlainByte(s[i]) {
			return false
		}
	}
	return true
}

// PlainByte reports whether encoding/json writes the byte c of a string
// as it is: printable ASCII but quotes, backslashes and <, > and &.
func PlainByte(c byte) bool {
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
}

// Position returns the line and column (1-based, in bytes) of data[off].
func Position(data []byte, off int) (line, col int) {
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

// SyntaxError locates the syntax error of an invalid document as
// "line L, column C: message", using encoding/json's diagnosis. It returns
// "invalid document" when encoding/json finds no error.
func SyntaxError(data []byte) string {
	var v any
	err := json.Unmarshal(data, &v)
	if err == nil {
		return "invalid document"
	}
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return err.Error()
	}
	line, col := Position(data, max(0, min(int(se.Offset)-1, len(data))))
	return fmt.Sprintf("line %d, column %d: %s", line, col, se.Error())
}

// Member is one key/value pair of a JSON object.
type Member struct {
	Key   string
	Value gjson.Result
}

// ArrayIndex reports whether k is a canonical array index (a key that a
// JavaScript object lists before all others, in ascending numeric order)
// and its value.
func ArrayIndex(k string) (uint64, bool) {
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

// Members returns the members of a JSON object in the order a JavaScript
// engine would list them (Object.keys), which is the order XState sees:
// array-index keys first in ascending order, then the other keys in document
// order. Only the first occurrence of a duplicated key is kept; dup, if not
// nil, is called for every other one.
func Members(v gjson.Result, dup func(key string)) []Member {
	return AppendMembers(make([]Member, 0, 4), v, dup) // most objects of a config are small
}

// AppendMembers is Members appending to dst: the object's members are
// the result's elements from len(dst) on. A caller that reads many objects
// can reuse one buffer for all of them.
func AppendMembers(dst []Member, v gjson.Result, dup func(key string)) []Member {
	dst, _ = appendMembers(dst, v, dup, nil)
	return dst
}

// AppendMembers is AppendMembers of a value of x's document, which skips
// the object's nested objects and arrays without scanning them.
func (x *Extents) AppendMembers(dst []Member, v gjson.Result, dup func(key string)) []Member {
	dst, _ = appendMembers(dst, v, dup, x)
	return dst
}

// AppendMembersIndexed is x.AppendMembers that also returns, for a large
// object (about 16 members or more), the map it finds duplicates with: each
// key's position among the members it appended (nil for a smaller object,
// whose keys are compared one by one). A caller that looks members up by key
// then needs no map of its own.
func (x *Extents) AppendMembersIndexed(dst []Member, v gjson.Result, dup func(key string)) ([]Member, map[string]int) {
	return appendMembers(dst, v, dup, x)
}

// largeObject is the size in bytes past which appendMembers counts an
// object's members before it reads them.
const largeObject = 16 << 10

func appendMembers(dst []Member, v gjson.Result, dup func(key string), x *Extents) ([]Member, map[string]int) {
	start := len(dst)
	var seen map[string]int // by key, its position; only for large objects: small ones are scanned
	indexKeys := false
	add := func(key string, val gjson.Result) bool {
		dupKey := false
		if seen != nil {
			_, dupKey = seen[key]
		} else {
			for _, m := range dst[start:] {
				if m.Key == key {
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
		if seen == nil && len(dst)-start >= 16 {
			seen = make(map[string]int, 2*(len(dst)-start))
			for j, m := range dst[start:] {
				seen[m.Key] = j
			}
		}
		if seen != nil {
			seen[key] = len(dst) - start
		}
		if _, ok := ArrayIndex(key); ok {
			indexKeys = true
		}
		dst = append(dst, Member{key, val})
		return true
	}
	if k, ok := x.find(v); ok {
		if c := x.containers[k]; c.end-c.start > largeObject {
			// Counted first (a scan of its keys: the nested values are
			// skipped), so that the members and the duplicate check are
			// sized once rather than grown.
			n := 0
			x.forEach(k, func(string, gjson.Result) bool { n++; return true })
			dst = slices.Grow(dst, n)
			if n >= 16 {
				seen = make(map[string]int, n)
			}
		}
		x.forEach(k, add)
	} else {
		v.ForEach(func(k, val gjson.Result) bool { return add(k.String(), val) })
	}
	if !indexKeys {
		return dst, seen
	}
	members := dst[start:]
	sort.SliceStable(members, func(i, j int) bool {
		a, aok := ArrayIndex(members[i].Key)
		b, bok := ArrayIndex(members[j].Key)
		if aok && bok {
			return a < b
		}
		return aok && !bok
	})
	if seen != nil {
		for j, m := range members {
			seen[m.Key] = j
		}
	}
	return dst, seen
}

// HasMembers reports whether v, an object, has any member, without
// reading one (gjson's ForEach would scan the first member's value).
func HasMembers(v gjson.Result) bool {
	raw := v.Raw
	if len(raw) == 0 || raw[0] != '{' {
		return false
	}
	for i := 1; i < len(raw); i++ {
		if raw[i] > ' ' {
			return raw[i] != '}'
		}
	}
	return false
}

// GoValue converts a JSON value to the shapes encoding/json produces:
// map[string]any, []any, float64, string, bool and nil. The first
// occurrence of a duplicated key wins.
func GoValue(v gjson.Result) any {
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
			arr = append(arr, GoValue(e))
			return true
		})
		return arr
	}
	if v.IsObject() {
		obj := map[string]any{}
		v.ForEach(func(k, e gjson.Result) bool {
			if _, ok := obj[k.String()]; !ok {
				obj[k.String()] = GoValue(e)
			}
			return true
		})
		return obj
	}
	return nil
}

// Kind names the kind of a JSON value for messages: "nothing", "null",
// "a boolean", "a number", "a string", "an array" or "an object".
func Kind(v gjson.Result) string {
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

// StatePath splits a state path on dots; a backslash escapes the next
// character. This is how XState's toStatePath reads target strings.
func StatePath(s string) []string { return AppendStatePath(nil, s) }

// AppendStatePath appends the segments of the state path s (see StatePath)
// to dst. A segment without a backslash is a substring of s, not a copy,
// so that a caller with room in dst splits a plain path without
// allocating.
func AppendStatePath(dst []string, s string) []string {
	start := 0       // where the segment being read starts in s
	var esc []byte   // the segment being read, once it has a backslash
	escaped := false // esc holds the segment
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			if !escaped {
				esc, escaped = append(esc[:0], s[start:i]...), true
			}
			if i+1 < len(s) {
				esc = append(esc, s[i+1])
				i++
			}
		case c == '.':
			if escaped {
				dst, escaped = append(dst, string(esc)), false
			} else {
				dst = append(dst, s[start:i])
			}
			start = i + 1
		case escaped:
			esc = append(esc, c)
		}
	}
	if escaped {
		return append(dst, string(esc))
	}
	return append(dst, s[start:])
}

// Distance is the Levenshtein distance of a and b, in bytes; strings longer
// than 64 bytes are never close (their distance is 1<<30).
func Distance(a, b string) int {
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
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Path is a JSON path in the one form every chartgate message uses for
// where a problem is (the loaders, mcpbind, the gateway's configuration and
// chartgate validate): states.payment.on.PAY[0].target. A key is written
// after a dot, or as ["a.b"] (Go-quoted) when it is empty or holds a dot,
// a bracket, a quote, a space or a control character, which a reader could
// not tell apart from the path around it.
type Path string

// Key appends a member's key.
func (p Path) Key(k string) Path {
	if quotedKey(k) {
		return p + Path("["+strconv.Quote(k)+"]")
	}
	if p == "" {
		return Path(k)
	}
	return p + "." + Path(k)
}

// quotedKey reports whether Key writes k as ["k"].
func quotedKey(k string) bool {
	if k == "" {
		return true
	}
	for i := 0; i < len(k); i++ {
		switch c := k[i]; {
		case c < 0x20, c == 0x7f, c == '.', c == '[', c == ']', c == '"', c == ' ':
			return true
		}
	}
	return false
}

// Index appends an array index.
func (p Path) Index(i int) Path { return p + Path("["+strconv.Itoa(i)+"]") }

// Join appends rest, a path relative to p: states.a and on.GO give
// states.a.on.GO, states.a and [2] give states.a[2].
func (p Path) Join(rest Path) Path {
	switch {
	case p == "":
		return rest
	case rest == "", rest[0] == '[':
		return p + rest
	}
	return p + "." + rest
}

// Segments splits p into its keys and indexes, unquoted: states["a b"][2]
// gives states, a b and 2. It reads what Key, Index and Join write.
func (p Path) Segments() []string {
	path := string(p)
	var segs []string
	for i := 0; i < len(path); {
		switch path[i] {
		case '.':
			i++
		case '[':
			if i+1 < len(path) && path[i+1] == '"' {
				end := i + 2
				for end < len(path) && path[end] != '"' {
					if path[end] == '\\' {
						end++
					}
					end++
				}
				k, err := strconv.Unquote(path[i+1 : min(end+1, len(path))])
				if err != nil {
					k = path[i+1 : min(end+1, len(path))]
				}
				segs = append(segs, k)
				i = end + 2
				continue
			}
			end := strings.IndexByte(path[i:], ']')
			if end < 0 {
				return append(segs, path[i:])
			}
			segs = append(segs, path[i+1:i+end])
			i += end + 1
		default:
			end := strings.IndexAny(path[i:], ".[")
			if end < 0 {
				return append(segs, path[i:])
			}
			segs = append(segs, path[i:i+end])
			i += end
		}
	}
	return segs
}

// Text writes a value for a reader: a string as it is, anything else (a
// nested state value, say) as its JSON.
func Text(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Clone deep-copies a JSON-shaped value: every map[string]any and []any
// is copied, so that the copy shares no map or slice with v. Other values
// are kept as they are, or, when leaf is not nil, replaced by leaf's
// result (package statechart copies a child's snapshot as its JSON).
// It is the one deep copy of the loaders and interpreters: a context never
// shares maps with an event, a compiled machine or another context.
func Clone(v any, leaf func(any) any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = Clone(e, leaf)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Clone(e, leaf)
		}
		return out
	}
	if leaf != nil {
		return leaf(v)
	}
	return v
}

// Indented writes v as JSON indented by two spaces, as tools that answer
// JSON text do; a value JSON cannot hold (a NaN, a channel) gives
// {"error": "the answer could not be written"}.
func Indented(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return `{"error": "the answer could not be written"}`
	}
	return string(b)
}
