// This file defines Object, the one ordered JSON object encoder.

package jsonx

import (
	"bytes"
	"encoding/json"
	"slices"
)

// Object is a JSON object that keeps its members in the order they were
// first set: the compiled workflow, converted SCXML and the hooks' outputs
// are read by people and by hosts' logs, where a stable order reads
// better than a map's. The zero value is an empty object.
type Object struct {
	keys []string
	vals map[string]any
}

// Set sets k to v (any value encoding/json marshals, an *Object or a
// json.RawMessage), keeping the position of a key set before, and returns
// o.
func (o *Object) Set(k string, v any) *Object {
	if o.vals == nil {
		o.vals = map[string]any{}
	}
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
	return o
}

// Get returns the value set for k.
func (o *Object) Get(k string) (any, bool) {
	v, ok := o.vals[k]
	return v, ok
}

// Delete removes k, if it is set.
func (o *Object) Delete(k string) {
	if _, ok := o.vals[k]; !ok {
		return
	}
	delete(o.vals, k)
	o.keys = slices.DeleteFunc(o.keys, func(x string) bool { return x == k })
}

// Keys returns the keys in order, in a slice the caller may keep.
func (o *Object) Keys() []string { return slices.Clone(o.keys) }

// Len returns the number of members.
func (o *Object) Len() int { return len(o.keys) }

// MarshalJSON writes the members in order. Keys and values are written
// without escaping <, > and &: whether they are escaped for HTML is the
// choice of the outermost encoder (json.Marshal escapes them, an
// Encoder with SetEscapeHTML(false) does not).
func (o *Object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := enc.Encode(k); err != nil {
			return nil, err
		}
		b.Truncate(b.Len() - 1) // Encode's newline
		b.WriteByte(':')
		if err := enc.Encode(o.vals[k]); err != nil {
			return nil, err
		}
		b.Truncate(b.Len() - 1)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
