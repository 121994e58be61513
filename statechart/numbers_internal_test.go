package statechart

import (
	"encoding/json"
	"math"
	"reflect"
	"runtime"
	"testing"
)

// TestNumberBoxes checks that the numbers numberBoxes hands out are
// float64 interfaces like any other: equal to Go's own, of type float64,
// written as JSON the same way, and unchanged by the numbers handed out
// after them, across chunks and garbage collections.
func TestNumberBoxes(t *testing.T) {
	var b numberBoxes
	var got []any
	var want []float64
	for i := range 3 * numberChunk {
		f := float64(i)*1.5 + 250 // small integers, larger ones, fractions
		if i == 7 {
			f = math.Copysign(0, -1)
		}
		got = append(got, b.box(f))
		want = append(want, f)
		runtime.GC()
	}
	for i, v := range got {
		f, ok := v.(float64)
		if !ok || f != want[i] || math.Signbit(f) != math.Signbit(want[i]) {
			t.Fatalf("box %d = %#v, want %v", i, v, want[i])
		}
		if v != any(want[i]) {
			t.Errorf("box %d: %#v != any(%v)", i, v, want[i])
		}
		if reflect.TypeOf(v) != reflect.TypeFor[float64]() {
			t.Errorf("box %d has type %T", i, v)
		}
		gotJSON, _ := json.Marshal(v)
		wantJSON, _ := json.Marshal(want[i])
		if string(gotJSON) != string(wantJSON) {
			t.Errorf("box %d is %s in JSON, want %s", i, gotJSON, wantJSON)
		}
	}
	if n := testing.AllocsPerRun(100, func() { b.box(1000.5) }); n > 0.1 {
		t.Errorf("box allocates %.2f times per number", n)
	}
}
