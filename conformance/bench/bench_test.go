package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// xstateAfter1235 is the final snapshot XState 5.33.3 reaches on each
// machine after the first 1235 events of its stream, recorded with
//
//	node xstate_bench.mjs --n 1235 --warmup 0 machines/NAME.json
var xstateAfter1235 = map[string]struct {
	value   string // JSON
	context string // JSON
}{
	"toggle":    {`"on"`, `{}`},
	"hierarchy": {`{"b":{"b1":{"b11":"b111"}}}`, `{}`},
	"parallel":  {`{"r1":"y","r2":"y","r3":"y","r4":"y"}`, `{}`},
	"regions":   {`{"a":"on","b":"on","c":"on"}`, `{"ticks":412,"flips":823}`},
	"workflow":  {`"s08"`, `{"ticks":2,"steps":308,"laps":6,"hold":false}`},
	"order":     {`"cart"`, `{"items":2,"total":10,"visits":705,"paid":176,"last":10}`},
	"roundtrip": {`"on"`, `{"pongs":1235}`},
	"spawnstop": {`"running"`, `{}`},
	"promise":   {`"idle"`, `{"fetched":1235,"last":{"ok":true}}`},
}

func TestMachinesCompile(t *testing.T) {
	machines, err := loadMachines()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, bm := range machines {
		names = append(names, bm.Name)
		if _, err := bm.compile(); err != nil {
			t.Errorf("%s: %v", bm.Name, err)
		}
	}
	if got, want := strings.Join(names, ","), strings.Join(machineOrder, ","); got != want {
		t.Errorf("machines = %s, want %s", got, want)
	}
}

// TestFinalStates checks, without node, that the Actor used by the
// benchmark ends where the pure API (Machine.Transition) ends, and where
// XState ended when the reference values were recorded.
func TestFinalStates(t *testing.T) {
	const total, warmup = 1235, 35
	machines, err := loadMachines()
	if err != nil {
		t.Fatal(err)
	}
	for _, bm := range machines {
		t.Run(bm.Name, func(t *testing.T) {
			got, err := runActor(bm, stream{n: total - warmup, warmup: warmup, rounds: 3})
			if err != nil {
				t.Fatal(err)
			}
			// The pure API runs child machines inside the call, but a
			// promise is an external job there: a machine that waits for
			// one (settle) is checked against XState only.
			if bm.Settle == "" {
				pure, err := runPure(bm, total)
				if err != nil {
					t.Fatal(err)
				}
				ref := &result{Engine: "pure", Events: total, Value: pure.Value(), Context: pure.Context(), Status: string(pure.Status())}
				if msg := compareFinal(ref, got); msg != "" {
					t.Errorf("actor vs pure API: %s", msg)
				}
			}
			rec, ok := xstateAfter1235[bm.Name]
			if !ok {
				t.Fatalf("no recorded XState state for %s", bm.Name)
			}
			if v := show(normalize(got.Value)); v != rec.value {
				t.Errorf("value = %s, XState recorded %s", v, rec.value)
			}
			if c := show(normalizeContext(got.Context)); c != show(normalize(mustJSON(t, rec.context))) {
				t.Errorf("context = %s, XState recorded %s", c, rec.context)
			}
		})
	}
}

// TestFlatCounterparts checks that only the flat toggle gets the stateless
// and statechart/flat runs, and that they end where the Actor does.
func TestFlatCounterparts(t *testing.T) {
	machines, err := loadMachines()
	if err != nil {
		t.Fatal(err)
	}
	for _, bm := range machines {
		st, errS := runStateless(bm, stream{n: 101, warmup: 10, rounds: 1})
		fl, errF := runFlat(bm, stream{n: 101, warmup: 10, rounds: 1})
		if bm.Name != "toggle" {
			if !errors.Is(errS, errNotFlat) || !errors.Is(errF, errNotFlat) {
				t.Errorf("%s: stateless err %v, flat err %v; want errNotFlat", bm.Name, errS, errF)
			}
			continue
		}
		if errS != nil || errF != nil {
			t.Fatalf("%s: stateless err %v, flat err %v", bm.Name, errS, errF)
		}
		actor, err := runActor(bm, stream{n: 101, warmup: 10, rounds: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []*result{st, fl} {
			if msg := compareFinal(actor, r); msg != "" {
				t.Errorf("%s: %s", bm.Name, msg)
			}
		}
		if actor.Value != "on" {
			t.Errorf("%s after 111 events: %v, want on", bm.Name, actor.Value)
		}
	}
}

func TestTable(t *testing.T) {
	x := &result{Engine: "xstate", EventsPerSec: 100_000}
	c := &result{Engine: "chartgate", EventsPerSec: 2_500_000, AllocsPerEvent: new(float64)}
	var buf bytes.Buffer
	writeTable(&buf, report{
		Environment: environment{Summary: "env"},
		Machines:    []*machineRun{{Name: "toggle", XState: x, Chartgate: c, Ratio: 25}},
	})
	want := "| toggle | 100,000 | 2,500,000 | 0.00 | – | – | 25.0× |"
	if !strings.Contains(buf.String(), want) {
		t.Errorf("table:\n%s\nwant a row %s", buf.String(), want)
	}
}

func mustJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestCompareFinalReportsMismatch(t *testing.T) {
	want := &result{Engine: "xstate", Events: 4, Value: "on", Context: map[string]any{"n": 2.0}, Status: "active"}
	same := &result{Engine: "chartgate", Value: "on", Context: map[string]any{"n": 2}, Status: "active"}
	if msg := compareFinal(want, same); msg != "" {
		t.Errorf("equal states reported as different: %s", msg)
	}
	other := &result{Engine: "chartgate", Value: "off", Context: map[string]any{"n": 3}, Status: "active"}
	msg := compareFinal(want, other)
	for _, part := range []string{`value: xstate "on", chartgate "off"`, `context: xstate {"n":2}, chartgate {"n":3}`} {
		if !strings.Contains(msg, part) {
			t.Errorf("message %q does not contain %q", msg, part)
		}
	}
}

func TestRoundEnds(t *testing.T) {
	for _, st := range []stream{{n: 10, warmup: 3, rounds: 3}, {n: 2, warmup: 0, rounds: 5}, {n: 7, warmup: 1, rounds: 1}} {
		ends := st.roundEnds()
		if len(ends) != min(st.rounds, st.n) || ends[len(ends)-1] != st.warmup+st.n {
			t.Errorf("%+v: ends %v", st, ends)
		}
		for k := 1; k < len(ends); k++ {
			if ends[k] <= ends[k-1] {
				t.Errorf("%+v: empty round in %v", st, ends)
			}
		}
	}
}
