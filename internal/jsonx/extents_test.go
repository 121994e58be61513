package jsonx

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// sameMembers reads every object of doc reachable from its root through
// objects and arrays, with Extents and without, and reports where the
// members or the duplicate keys differ, or where Extents does not know an
// object reached through objects.
func sameMembers(t *testing.T, doc string) {
	t.Helper()
	x := NewExtents(doc)
	// viaObjects: v was reached from the root through objects only, as
	// the loaders read a document, so Extents finds it.
	var walk func(v gjson.Result, path string, viaObjects bool)
	walk = func(v gjson.Result, path string, viaObjects bool) {
		if v.IsArray() {
			for i, e := range v.Array() {
				walk(e, path+"["+string(rune('0'+i%10))+"]", false)
			}
			return
		}
		if !v.IsObject() {
			return
		}
		if _, ok := x.find(v); viaObjects && !ok {
			t.Fatalf("%q at %s: the object is not found in the extents", doc, path)
		}
		var dupsWant, dupsGot []string
		want := Members(v, func(k string) { dupsWant = append(dupsWant, k) })
		got := x.AppendMembers(nil, v, func(k string) { dupsGot = append(dupsGot, k) })
		if len(want) == 0 {
			want = nil
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q at %s: members\n got %+v\nwant %+v", doc, path, got, want)
		}
		if !reflect.DeepEqual(dupsGot, dupsWant) {
			t.Fatalf("%q at %s: duplicates %q, want %q", doc, path, dupsGot, dupsWant)
		}
		for _, m := range got {
			walk(m.Value, path+"."+m.Key, viaObjects)
		}
	}
	walk(gjson.Parse(doc), "", true)
}

func TestExtentsMembers(t *testing.T) {
	for _, doc := range []string{
		`{}`,
		` {"a":1} `,
		"\n\t{ \"a\" : { \"b\" : [ 1 , {\"c\":\"}\"} ] , \"d\":\"x\\\"{\" } , \"e\" : -1.5e3 , \"f\":true,\"g\":false,\"h\":null}\n",
		`{"a":{"x":1},"a":{"y":2},"b":[{"z":{}},[]],"c":"\u00e9\\","":{"":""}}`,
		`{"2":{"k":1},"1":[],"b":{"q":{"r":{"s":{}}}},"10":"x"}`,
		`[{"a":1},{"b":{"c":2}}]`,
		`{"s":"[{\"a\":1}]","t":{"u":"]}"}}`,
	} {
		sameMembers(t, doc)
	}
	var b strings.Builder
	b.WriteString(`{`)
	for i := range 40 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + strings.Repeat("x", i%7) + `":{"n":[` + strings.Repeat(`{"d":{}},`, i%3) + `0]}`)
	}
	b.WriteString(`}`)
	sameMembers(t, b.String())

	// An object past largeObject, counted before it is read: with
	// duplicates and array-index keys, and one with fewer than 16 members.
	b.Reset()
	b.WriteString(`{"states":{`)
	for i := range 3000 {
		fmt.Fprintf(&b, `"s%d":{"on":{"E":"s%d"}},`, i%2900, i)
	}
	b.WriteString(`"7":1,"3":{"x":[]}},"big":{"a":"` + strings.Repeat("y", largeObject) + `","a":{},"0":2}}`)
	sameMembers(t, b.String())
}

// TestExtentsFindAnyOrder: find finds every object reached through objects
// whatever the order it is asked in (it tries the containers after the
// last one found first, and searches all of them otherwise).
func TestExtentsFindAnyOrder(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"states":{`)
	for i := range 50 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"s%d":{"on":{"E":[{"target":"s%d"}]},"states":{"a":{},"b":{"c":{}}}}`, i, i)
	}
	b.WriteString(`}}`)
	doc := b.String()
	var objects []gjson.Result
	var walk func(v gjson.Result)
	walk = func(v gjson.Result) {
		if !v.IsObject() {
			return
		}
		objects = append(objects, v)
		for _, m := range NewExtents(doc).AppendMembers(nil, v, nil) {
			walk(m.Value)
		}
	}
	walk(gjson.Parse(doc))
	orders := map[string][]int{}
	for i := range objects {
		orders["forward"] = append(orders["forward"], i)
		orders["backward"] = append(orders["backward"], len(objects)-1-i)
		orders["strided"] = append(orders["strided"], (i*37)%len(objects))
	}
	for name, order := range orders {
		x := NewExtents(doc)
		for _, i := range order {
			v := objects[i]
			k, ok := x.find(v)
			if !ok || int(x.containers[k].start) != v.Index {
				t.Fatalf("%s: object %d at %d: found %d (%v)", name, i, v.Index, k, ok)
			}
		}
	}
}

// TestExtentsElsewhere: a value that is not the document's own text is
// read by gjson, even at an offset where the document has an object.
func TestExtentsElsewhere(t *testing.T) {
	x := NewExtents(`{"a":{"b":1}}`)
	other := gjson.Parse(`{"c":2}`)
	other.Index = 0
	ms := x.AppendMembers(nil, other, nil)
	if len(ms) != 1 || ms[0].Key != "c" {
		t.Fatalf("members = %+v, want c", ms)
	}
}

func FuzzExtentsMembers(f *testing.F) {
	for _, s := range []string{`{"a":{"b":[1,{"c":"}"}]}}`, `{"x":"\"","y":{"z":null}}`, `[{"a":{}}]`, `{"1":{},"0":[]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		if !gjson.Valid(doc) {
			return
		}
		sameMembers(t, doc)
	})
}

// TestAppendMembersIndexed: the map of a large object gives each key's
// position among the members appended, after array-index keys are sorted
// first and duplicates dropped; a small object has none.
func TestAppendMembersIndexed(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{`)
	for i := range 40 {
		fmt.Fprintf(&b, `"k%d":{"v":%d},`, i%30, i)
	}
	b.WriteString(`"9":1,"2":{"x":[]},"k3":0}`)
	doc := b.String()
	x := NewExtents(doc)
	prefix := []Member{{Key: "before"}}
	ms, index := x.AppendMembersIndexed(prefix, gjson.Parse(doc), nil)
	members := ms[len(prefix):]
	if len(members) != 32 || len(index) != 32 {
		t.Fatalf("%d members, %d keys indexed; want 32 of each", len(members), len(index))
	}
	if members[0].Key != "2" || members[1].Key != "9" {
		t.Fatalf("members start %q, %q; want the array-index keys 2, 9", members[0].Key, members[1].Key)
	}
	for key, j := range index {
		if members[j].Key != key {
			t.Fatalf("index[%q] = %d, which is %q", key, j, members[j].Key)
		}
	}
	if v := members[index["k3"]].Value.Get("v").Int(); v != 3 {
		t.Fatalf("k3 is {v: %d}, want the first occurrence, {v: 3}", v)
	}
	if _, index := x.AppendMembersIndexed(nil, gjson.Parse(`{"a":1,"b":2}`), nil); index != nil {
		t.Fatalf("a small object has an index: %v", index)
	}
}
