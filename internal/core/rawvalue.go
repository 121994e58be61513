// This file writes a call's arguments into its history entry as they came
// (JSON), without decoding them into Go values first: for the small,
// plain arguments of most calls, a canonical copy (keys sorted, no
// whitespace, numbers as encoding/json writes a float64) written in one
// pass; for anything else, the decoded value's.

package core

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync"

	"github.com/chartgate/chartgate/internal/jsonx"
)

// appendRawHistoryValue appends a call's arguments as a history entry's
// value: exactly what AppendHistoryValue appends for decodeJSON(raw).
func appendRawHistoryValue(b []byte, raw json.RawMessage) []byte {
	start := len(b)
	if len(raw) <= 2*maxHistoryValue {
		w := canonWriters.Get().(*canonWriter)
		w.raw, w.limit = raw, start+maxHistoryValue
		out, i, ok := w.object(b, skipSpace(raw, 0), 0)
		*w = canonWriter{} // nothing of raw kept
		canonWriters.Put(w)
		if ok && skipSpace(raw, i) == len(raw) && len(out)-start <= maxHistoryValue {
			return out
		}
	}
	return AppendHistoryValue(b[:start], decodeJSON(raw))
}

// canonWriters keeps the one-pass copy's writers between calls. A writer
// is over a kilobyte (its members' spans): in the frame of the function
// that records a call's arguments, deep in the request's goroutine, it
// would make that goroutine's stack grow (a copy of the whole stack) on
// every call that moves a workflow.
var canonWriters = sync.Pool{New: func() any { return new(canonWriter) }}

// Bounds of the one-pass copy: past them, arguments are decoded.
const (
	canonDepth   = 16 // nesting
	canonMembers = 32 // members of the objects open at once
)

// canonWriter copies a JSON object in canonical form, as encoding/json
// would decode it and AppendJSONValue write it, if it is made only of
// what the copy handles: strings of printable ASCII without escapes (and
// without <, > and &, which encoding/json escapes), numbers, literals,
// arrays, and objects without repeated keys. Its methods report false for
// anything else, valid or not: the caller then decodes the value.
type canonWriter struct {
	raw []byte
	// members are the spans of the members of the objects open, in
	// order: a stack, each object's at its end.
	members [canonMembers]canonMember
	n       int
	limit   int // the output's length past which the value is too large
}

// canonMember is one member of an object: its key in raw, and where the
// member (key, colon and value) was written in the output.
type canonMember struct {
	key        []byte
	start, end int
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i
}

// value copies the value at raw[i] (not whitespace) to b.
func (w *canonWriter) value(b []byte, i, depth int) ([]byte, int, bool) {
	if i >= len(w.raw) || len(b) > w.limit {
		return b, i, false
	}
	switch c := w.raw[i]; {
	case c == '{':
		return w.object(b, i, depth)
	case c == '[':
		return w.array(b, i, depth)
	case c == '"':
		s, j, ok := w.str(i)
		if !ok {
			return b, i, false
		}
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"'), j, true
	case c == '-' || (c >= '0' && c <= '9'):
		return w.number(b, i)
	default:
		for _, lit := range [...]string{"true", "false", "null"} {
			if bytes.HasPrefix(w.raw[i:], []byte(lit)) {
				return append(b, lit...), i + len(lit), true
			}
		}
		return b, i, false
	}
}

// object copies the object at raw[i], its members sorted by key.
func (w *canonWriter) object(b []byte, i, depth int) ([]byte, int, bool) {
	if i >= len(w.raw) || w.raw[i] != '{' || depth >= canonDepth {
		return b, i, false
	}
	first := w.n // this object's members are w.members[first:w.n]
	defer func() { w.n = first }()
	open := len(b)
	b = append(b, '{')
	i = skipSpace(w.raw, i+1)
	if i < len(w.raw) && w.raw[i] == '}' {
		return append(b, '}'), i + 1, true
	}
	sorted := true
	for {
		if w.n == len(w.members) || i >= len(w.raw) || w.raw[i] != '"' {
			return b, i, false
		}
		key, j, ok := w.str(i)
		if !ok {
			return b, i, false
		}
		if w.n > first {
			if bytes.Compare(w.members[w.n-1].key, key) >= 0 {
				sorted = false
			}
			b = append(b, ',')
		}
		m := canonMember{key: key, start: len(b)}
		b = append(b, '"')
		b = append(b, key...)
		b = append(b, '"', ':')
		if i = skipSpace(w.raw, j); i >= len(w.raw) || w.raw[i] != ':' {
			return b, i, false
		}
		if b, i, ok = w.value(b, skipSpace(w.raw, i+1), depth+1); !ok {
			return b, i, false
		}
		m.end = len(b)
		w.members[w.n] = m
		w.n++
		i = skipSpace(w.raw, i)
		if i < len(w.raw) && w.raw[i] == ',' {
			i = skipSpace(w.raw, i+1)
			continue
		}
		if i >= len(w.raw) || w.raw[i] != '}' {
			return b, i, false
		}
		break
	}
	if !sorted {
		ms := w.members[first:w.n]
		insertionSort(ms)
		for k := 1; k < len(ms); k++ {
			if bytes.Equal(ms[k-1].key, ms[k].key) {
				return b, i, false // repeated: encoding/json keeps the last
			}
		}
		// The members in order after the object, then moved in its place.
		end := len(b)
		for k, m := range ms {
			if k > 0 {
				b = append(b, ',')
			}
			b = append(b, b[m.start:m.end]...)
		}
		b = b[:open+1+copy(b[open+1:], b[end:])]
	}
	return append(b, '}'), i + 1, true
}

// insertionSort sorts an object's members by key (objects are small).
func insertionSort(ms []canonMember) {
	for k := 1; k < len(ms); k++ {
		for j := k; j > 0 && bytes.Compare(ms[j-1].key, ms[j].key) > 0; j-- {
			ms[j-1], ms[j] = ms[j], ms[j-1]
		}
	}
}

// array copies the array at raw[i].
func (w *canonWriter) array(b []byte, i, depth int) ([]byte, int, bool) {
	if depth >= canonDepth {
		return b, i, false
	}
	b = append(b, '[')
	i = skipSpace(w.raw, i+1)
	if i < len(w.raw) && w.raw[i] == ']' {
		return append(b, ']'), i + 1, true
	}
	for {
		var ok bool
		if b, i, ok = w.value(b, i, depth+1); !ok {
			return b, i, false
		}
		i = skipSpace(w.raw, i)
		if i < len(w.raw) && w.raw[i] == ',' {
			b = append(b, ',')
			i = skipSpace(w.raw, i+1)
			continue
		}
		if i >= len(w.raw) || w.raw[i] != ']' {
			return b, i, false
		}
		return append(b, ']'), i + 1, true
	}
}

// str returns the content of the string at raw[i] and the index after
// it, if it is plain: printable ASCII that encoding/json writes as it is.
func (w *canonWriter) str(i int) ([]byte, int, bool) {
	for j := i + 1; j < len(w.raw); j++ {
		switch c := w.raw[j]; {
		case c == '"':
			return w.raw[i+1 : j], j + 1, true
		case !jsonx.PlainByte(c):
			return nil, i, false
		}
	}
	return nil, i, false
}

// number copies the number at raw[i] as encoding/json decodes it (a
// float64) and AppendJSONValue writes it.
func (w *canonWriter) number(b []byte, i int) ([]byte, int, bool) {
	j := i
	digits := func() bool {
		k := j
		for j < len(w.raw) && w.raw[j] >= '0' && w.raw[j] <= '9' {
			j++
		}
		return j > k
	}
	if w.raw[j] == '-' {
		j++
	}
	if j < len(w.raw) && w.raw[j] == '0' {
		j++
	} else if !digits() {
		return b, i, false
	}
	frac := false // a fraction or an exponent
	if j < len(w.raw) && w.raw[j] == '.' {
		j, frac = j+1, true
		if !digits() {
			return b, i, false
		}
	}
	if j < len(w.raw) && (w.raw[j] == 'e' || w.raw[j] == 'E') {
		j, frac = j+1, true
		if j < len(w.raw) && (w.raw[j] == '+' || w.raw[j] == '-') {
			j++
		}
		if !digits() {
			return b, i, false
		}
	}
	if n := j - i; !frac && (n <= 15 || n == 16 && w.raw[i] == '-') {
		// An integer of at most 15 digits is a float64 exactly, which
		// AppendFloat writes as it is written here.
		return append(b, w.raw[i:j]...), j, true
	}
	f, err := strconv.ParseFloat(string(w.raw[i:j]), 64)
	if err != nil {
		return b, i, false // out of range: encoding/json fails too
	}
	return jsonx.AppendFloat(b, f), j, true
}
