// This file defines an editable JSON document that keeps the order of its
// objects' keys, for merging chartgate's entries into a host's
// configuration without reordering what the user wrote.

package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/chartgate/chartgate/internal/jsonx"
)

// jvalue is a JSON value whose objects keep their keys' order: an object
// (keys and vals), an array (vals) or a scalar (its JSON text).
type jvalue struct {
	kind byte // '{', '[' or 0 for a scalar
	keys []string
	vals []*jvalue
	raw  json.RawMessage
}

// maxConfigDepth bounds the nesting of a configuration file.
const maxConfigDepth = 256

// parseJSON reads a JSON document. Numbers keep their text; strings are
// decoded and written again (an escape may be spelt differently).
func parseJSON(data []byte) (*jvalue, error) {
	if jsonx.TooDeep(data, maxConfigDepth) {
		return nil, fmt.Errorf("nested more than %d levels deep", maxConfigDepth)
	}
	if !json.Valid(data) {
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, errors.New(jsonx.SyntaxError(data))
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := readValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}

func readValue(dec *json.Decoder) (*jvalue, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			v := &jvalue{kind: '{'}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ := k.(string)
				val, err := readValue(dec)
				if err != nil {
					return nil, err
				}
				v.keys, v.vals = append(v.keys, key), append(v.vals, val)
			}
			_, err := dec.Token() // '}'
			return v, err
		case '[':
			v := &jvalue{kind: '['}
			for dec.More() {
				val, err := readValue(dec)
				if err != nil {
					return nil, err
				}
				v.vals = append(v.vals, val)
			}
			_, err := dec.Token() // ']'
			return v, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case json.Number:
		return &jvalue{raw: json.RawMessage(t.String())}, nil
	default:
		raw, err := marshalText(t)
		return &jvalue{raw: raw}, err
	}
}

// marshalText marshals a value without escaping HTML characters.
func marshalText(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// jstr, jarr and jobj build configuration entries.
func jstr(s string) *jvalue {
	raw, err := marshalText(s)
	if err != nil { // a Go string always marshals
		raw = json.RawMessage(`""`)
	}
	return &jvalue{raw: raw}
}

func jarr(vals ...*jvalue) *jvalue { return &jvalue{kind: '[', vals: vals} }

// member is one key and value of an object jobj builds.
type member struct {
	k string
	v *jvalue
}

func jobj(ms ...member) *jvalue {
	o := &jvalue{kind: '{'}
	for _, m := range ms {
		o.set(m.k, m.v)
	}
	return o
}

func jstrs(ss []string) *jvalue {
	a := jarr()
	for _, s := range ss {
		a.vals = append(a.vals, jstr(s))
	}
	return a
}

// get returns the value of key in an object, or nil.
func (v *jvalue) get(key string) *jvalue {
	if v == nil || v.kind != '{' {
		return nil
	}
	for i, k := range v.keys {
		if k == key {
			return v.vals[i]
		}
	}
	return nil
}

// set sets key in an object: in its place if it is there, else at the
// end.
func (v *jvalue) set(key string, val *jvalue) {
	for i, k := range v.keys {
		if k == key {
			v.vals[i] = val
			return
		}
	}
	v.keys, v.vals = append(v.keys, key), append(v.vals, val)
}

// str returns a scalar string's value, or "".
func (v *jvalue) str() string {
	if v == nil || v.kind != 0 {
		return ""
	}
	var s string
	if json.Unmarshal(v.raw, &s) != nil {
		return ""
	}
	return s
}

// child returns the object or array under key, creating it (of kind) if
// it is missing; it fails, with path, when key holds something else.
func (v *jvalue) child(key string, kind byte, path string) (*jvalue, error) {
	c := v.get(key)
	if c == nil || c.kind == 0 && string(c.raw) == "null" {
		c = &jvalue{kind: kind}
		v.set(key, c)
		return c, nil
	}
	if c.kind != kind {
		want := "an object"
		if kind == '[' {
			want = "an array"
		}
		return nil, fmt.Errorf("%s must be %s", path, want)
	}
	return c, nil
}

// encode writes the document with indent per level, as
// encoding/json.MarshalIndent does, and a final newline.
func (v *jvalue) encode(indent string) []byte {
	var b bytes.Buffer
	v.write(&b, indent, 0)
	b.WriteByte('\n')
	return b.Bytes()
}

func (v *jvalue) write(b *bytes.Buffer, indent string, depth int) {
	nl := func(d int) {
		b.WriteByte('\n')
		b.WriteString(strings.Repeat(indent, d))
	}
	switch v.kind {
	case '{':
		if len(v.keys) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			nl(depth + 1)
			kb, _ := marshalText(k)
			b.Write(kb)
			b.WriteString(": ")
			v.vals[i].write(b, indent, depth+1)
		}
		nl(depth)
		b.WriteByte('}')
	case '[':
		if len(v.vals) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, e := range v.vals {
			if i > 0 {
				b.WriteByte(',')
			}
			nl(depth + 1)
			e.write(b, indent, depth+1)
		}
		nl(depth)
		b.WriteByte(']')
	default:
		b.Write(v.raw)
	}
}

// indentOf returns the indentation a JSON document uses: the leading
// space of its first indented line, two spaces when it has none.
func indentOf(data []byte) string {
	for line := range bytes.Lines(data) {
		trimmed := bytes.TrimLeft(line, " \t")
		if len(trimmed) < len(line) && len(bytes.TrimSpace(trimmed)) > 0 {
			return string(line[:len(line)-len(trimmed)])
		}
	}
	return "  "
}
