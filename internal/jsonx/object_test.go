package jsonx

import (
	"encoding/json"
	"testing"
)

func TestObject(t *testing.T) {
	var o Object
	o.Set("b", 1).Set("a", "<x>").Set("b", 2)
	inner := new(Object).Set("z", true).Set("y", nil)
	o.Set("in", inner)
	o.Set("gone", 0)
	o.Delete("gone")
	o.Delete("never")
	b, err := o.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"b":2,"a":"<x>","in":{"z":true,"y":null}}`; got != want {
		t.Errorf("MarshalJSON = %s, want %s", got, want)
	}
	// json.Marshal, around it, escapes for HTML as it always does.
	m, err := json.Marshal(&o)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(m), `{"b":2,"a":"\u003cx\u003e","in":{"z":true,"y":null}}`; got != want {
		t.Errorf("json.Marshal = %s, want %s", got, want)
	}
	if o.Len() != 3 || len(o.Keys()) != 3 {
		t.Errorf("Len %d, Keys %q", o.Len(), o.Keys())
	}
	if v, ok := o.Get("b"); !ok || v != 2 {
		t.Errorf("Get(b) = %v, %v", v, ok)
	}
	var empty Object
	if b, _ := empty.MarshalJSON(); string(b) != "{}" {
		t.Errorf("empty: %s", b)
	}
	if _, err := new(Object).Set("f", func() {}).MarshalJSON(); err == nil {
		t.Error("a function marshalled")
	}
}
