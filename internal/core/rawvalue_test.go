package core

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/statechart"
)

// rawValueCases are arguments as calls give them: small plain objects the
// one-pass copy writes, and what it leaves to the decoder.
var rawValueCases = []string{
	``, `null`, `{}`, ` { } `, `[]`, `"s"`, `3`, `{`, `{"a":1,}`, `{"a":1} x`, `{"a" 1}`,
	`{"x":1}`, `{"b":2,"a":1}`, `{"a":1,"a":2}`, `{"b":1,"a":2,"b":3}`,
	`{"a": [1, 2.50, -0, 0.1, 1e2, 1E-7, 12345678901234567890, true, false, null, "t"]}`,
	`{"i": [999999999999999, -999999999999999, 1000000000000000, 9007199254740993, -9007199254740993, 0, -0]}`,
	`{"n": 1e400}`, `{"n": -}`, `{"n": 01}`, `{"n": 1.}`, `{"n": .5}`, `{"n": 1e}`, `{"n": 00}`,
	`{"z": {"y": {"x": [{"b": 1, "a": [2, {"d": 4, "c": 3}]}]}}}`,
	"{\"t\":\"tab\\there\"}", `{"h":"<b>&"}`, `{"u":"é"}`, "{\"c\":\"\x01\"}", `{"e":"\u00e9"}`,
	`{"long":"` + strings.Repeat("x", 1100) + `"}`,
	`{"deep":` + strings.Repeat(`[`, 20) + strings.Repeat(`]`, 20) + `}`,
	`{"deeper":` + strings.Repeat(`[`, 70) + strings.Repeat(`]`, 70) + `}`,
	`{"k01":1,"k02":2,"k03":3,"k04":4,"k05":5,"k06":6,"k07":7,"k08":8,"k09":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k18":18,"k19":19,"k20":20,"k21":21,"k22":22,"k23":23,"k24":24,"k25":25,"k26":26,"k27":27,"k28":28,"k29":29,"k30":30,"k31":31,"k32":32,"k33":33}`,
	`{"tru":tru}`, `{"t":trueish}`, "{\"a\":1}\n",
}

// TestRawHistoryValue: a call's arguments are written into its history
// entry as their decoded value is, byte for byte.
func TestRawHistoryValue(t *testing.T) {
	for _, raw := range rawValueCases {
		checkRawHistoryValue(t, []byte(raw))
	}
}

func checkRawHistoryValue(t *testing.T, raw []byte) {
	t.Helper()
	want := AppendHistoryValue([]byte("prefix"), decodeJSON(raw))
	got := appendRawHistoryValue([]byte("prefix"), raw)
	if !bytes.Equal(got, want) {
		t.Fatalf("arguments %q:\n got %s\nwant %s", raw, got, want)
	}
}

// FuzzRawHistoryValue: whatever the arguments, the one-pass copy writes
// what the decoded value's writing does.
func FuzzRawHistoryValue(f *testing.F) {
	for _, raw := range rawValueCases {
		f.Add([]byte(raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkRawHistoryValue(t, raw) })
}

// TestRawHistoryValueAllocs: small plain arguments are written without
// being decoded: nothing is allocated.
func TestRawHistoryValueAllocs(t *testing.T) {
	raw := json.RawMessage(`{"sku": "p-1", "qty": 2, "opts": {"gift": true, "note": null}, "tags": ["a", "b"], "price": 10.5}`)
	buf := make([]byte, 0, 512)
	if n := testing.AllocsPerRun(100, func() { buf = appendRawHistoryValue(buf[:0], raw) }); n != 0 {
		t.Fatalf("%v allocations", n)
	}
	if want := `{"opts":{"gift":true,"note":null},"price":10.5,"qty":2,"sku":"p-1","tags":["a","b"]}`; string(buf) != want {
		t.Fatalf("got %s, want %s", buf, want)
	}
}

// TestSparseEntry: the history entry of a call whose event carries no
// data (callEvent) is the entry of the event with its data.
func TestSparseEntry(t *testing.T) {
	for _, output := range []any{nil, map[string]any{"ok": true, "n": 2.0}, json.RawMessage(`{"b":1,"a":"x"}`)} {
		for _, raw := range []string{`{"x":1,"a":"b"}`, `not json`, ``} {
			d := callData{tool: "pay", args: json.RawMessage(raw), output: normalize(output)}
			full := gateTransition("PAY")
			full.Event.Data = map[string]any{"tool": "pay", "input": decodeJSON(d.args)}
			if d.output != nil {
				full.Event.Data["output"] = d.output
			}
			want := AppendTransition(nil, full)
			if got := appendTransition(nil, gateTransition("PAY"), &d); !bytes.Equal(got, want) {
				t.Fatalf("arguments %q, output %v:\n got %s\nwant %s", raw, output, got, want)
			}
		}
	}
}

// gateTransition is a transition by event typ, without data.
func gateTransition(typ string) gate.Transition {
	return gate.Transition{Tool: "pay", Event: statechart.Event{Type: typ}, From: "a", To: map[string]any{"b": "c"}, Time: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)}
}
