package hook

import (
	"encoding/json"
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
		var a, b any
		if err := json.Unmarshal(data, &a); err != nil {
			t.Fatalf("parseJSON accepted %q, which is not JSON", data)
		}
		if err := json.Unmarshal(out, &b); err != nil {
			t.Fatalf("encode wrote invalid JSON %q for %q", out, data)
		}
		if !reflect.DeepEqual(a, b) && !hasDuplicateKeys(v) {
			t.Fatalf("%q became %q", data, out)
		}
	})
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
