package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"testing"
)

// FuzzConfigJSON: a configuration file that is JSON is read and written
// back as the same value (keys in their order); anything else is an error,
// never a panic.
func FuzzConfigJSON(f *testing.F) {
	f.Add([]byte(`{"b": 1, "a": [true, null, {"x": "\u00e9\n"}], "n": 1.50e3}`))
	f.Add([]byte(`{"hooks": {}}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := parseJSON(data)
		if err != nil {
			return
		}
		out := v.encode(indentOf(data))
		// Numbers are read as their text (json.Number): JSON allows 1e1000,
		// which no float64 holds, and a configuration keeps it as written.
		a, errA := decodeNumbers(data)
		if errA != nil {
			t.Fatalf("parseJSON accepted %q, which is not JSON", data)
		}
		b, errB := decodeNumbers(out)
		if errB != nil {
			t.Fatalf("encode wrote invalid JSON %q for %q", out, data)
		}
		if !reflect.DeepEqual(a, b) && !hasDuplicateKeys(v) {
			t.Fatalf("%q became %q", data, out)
		}
	})
}

// decodeNumbers decodes one JSON value, numbers as json.Number.
func decodeNumbers(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}

func hasDuplicateKeys(v *jvalue) bool {
	seen := map[string]bool{}
	for _, k := range v.keys {
		if seen[k] {
			return true
		}
		seen[k] = true
	}
	for _, c := range v.vals {
		if hasDuplicateKeys(c) {
			return true
		}
	}
	return false
}
