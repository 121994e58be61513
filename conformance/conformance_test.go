package conformance_test

import (
	"context"
	"testing"

	"github.com/chartgate/chartgate/conformance"
)

// TestCorpus replays every recorded case on the statechart interpreter. It
// needs no node: the expected snapshots were recorded from XState by the
// oracle and are part of the case files.
func TestCorpus(t *testing.T) {
	cases, err := conformance.ReadDir("cases")
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 40 {
		t.Fatalf("only %d cases under cases/; the corpus must hold at least 40", len(cases))
	}
	seen := map[string]string{}
	for _, c := range cases {
		if prev, dup := seen[c.Name]; dup {
			t.Errorf("case name %q is used by %s and %s", c.Name, prev, c.Path)
		}
		seen[c.Name] = c.Path
		t.Run(c.Name, func(t *testing.T) {
			if m := conformance.Check(context.Background(), c, conformance.RunStatechart); m != nil {
				t.Error(m)
			}
		})
	}
}

// TestCorpusRestoresXStateSnapshots replays every case that restores a
// snapshot, restoring the one XState persisted (recorded in the case)
// instead of chartgate's: a snapshot persisted by XState restores in
// chartgate and goes on as in XState.
func TestCorpusRestoresXStateSnapshots(t *testing.T) {
	cases, err := conformance.ReadDir("cases")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range cases {
		if !c.Restores() {
			continue
		}
		n++
		t.Run(c.Name, func(t *testing.T) {
			if m := conformance.Check(context.Background(), c, conformance.RunStatechartFromXState); m != nil {
				t.Error(m)
			}
		})
	}
	if n < 10 {
		t.Fatalf("only %d cases restore a snapshot", n)
	}
}

// TestCheckReportsFirstDifference makes sure a wrong expectation is caught
// and reported with its step, so the corpus test cannot pass vacuously.
func TestCheckReportsFirstDifference(t *testing.T) {
	c, err := conformance.ParseCase([]byte(`{
		"name": "selftest/wrong",
		"machine": {"initial": "a", "states": {"a": {"on": {"GO": "b"}}, "b": {}}},
		"steps": [{"event": {"type": "GO"}}],
		"expected": [
			{"value": "a", "status": "active", "context": {}},
			{"value": "a", "status": "active", "context": {}}
		]
	}`), "selftest.json")
	if err != nil {
		t.Fatal(err)
	}
	m := conformance.Check(context.Background(), c, conformance.RunStatechart)
	if m == nil {
		t.Fatal("a wrong expectation passed")
	}
	want := `selftest/wrong: step 1 (event {"type":"GO"}): want {"context":{},"status":"active","value":"a"}, got {"context":{},"status":"active","value":"b"}`
	if m.String() != want {
		t.Errorf("got  %s\nwant %s", m, want)
	}
}
