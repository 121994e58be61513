// This file checks the loader's shortcuts against what they stand for:
// the slab and chunk helpers, and the names of after events.

package statechart

import (
	"math"
	"reflect"
	"testing"
)

// TestSlabAndSingle: values and slices from shared chunks are distinct,
// zeroed, and an append to a slice leaves its neighbours alone.
func TestSlabAndSingle(t *testing.T) {
	var s slab[transition]
	seen := map[*transition]bool{}
	for i := range 1000 {
		p := s.new()
		if seen[p] || p.source != 0 || p.targets != nil {
			t.Fatalf("value %d reused or not zeroed: %+v", i, *p)
		}
		p.source = int32(i + 1)
		seen[p] = true
	}
	var chunk []int
	a := single(&chunk, 1, 10)
	b := single(&chunk, 2, 10)
	a = append(a, 3)
	if b[0] != 2 || !reflect.DeepEqual(a, []int{1, 3}) {
		t.Fatalf("a = %v, b = %v; want [1 3], [2]", a, b)
	}
	c := carve(&chunk, 2, 10)[:0]
	d := carve(&chunk, 2, 10)
	d[0], d[1] = 7, 8
	c = append(c, 1, 2, 3)
	if !reflect.DeepEqual(c, []int{1, 2, 3}) || !reflect.DeepEqual(d, []int{7, 8}) {
		t.Fatalf("c = %v, d = %v; want [1 2 3], [7 8]", c, d)
	}
	if long := carve(&chunk, 1000, 10); len(long) != 1000 || cap(long) != 1000 {
		t.Fatalf("a long slice has length %d and capacity %d, want 1000", len(long), cap(long))
	}
}

// TestJSNumber: after events are named with the delay as JavaScript's
// String(n) writes it, as XState names them.
func TestJSNumber(t *testing.T) {
	for f, want := range map[float64]string{0: "0", math.Copysign(0, -1): "0", 1000: "1000", -5: "-5", 2.5: "2.5",
		1e-6: "0.000001", 1e-7: "1e-7", 1.5e-9: "1.5e-9", 1e20: "100000000000000000000", 1e21: "1e+21"} {
		if got := jsNumber(f); got != want {
			t.Errorf("jsNumber(%v) = %q, want %q", f, got, want)
		}
	}
}
