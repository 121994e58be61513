// This file tests that snapshots chartgate persists restore in XState: for
// every restore step of the corpus, the snapshot chartgate persisted is
// given to XState (the case format's "snapshot" key), which records the
// steps that follow the restore; chartgate, starting from the same
// snapshot, must agree with that recording.

package conformance_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/chartgate/chartgate/conformance"
	"github.com/chartgate/chartgate/conformance/random"
)

func TestGoSnapshotsRestoreInXState(t *testing.T) {
	if err := random.OracleAvailable("oracle"); err != nil {
		t.Skipf("needs the XState oracle: %v (run npm ci in conformance/oracle)", err)
	}
	cases, err := conformance.ReadDir("cases")
	if err != nil {
		t.Fatal(err)
	}
	o, err := random.StartOracle("oracle", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	ctx := context.Background()
	n := 0
	for _, c := range cases {
		if !c.Restores() {
			continue
		}
		persisted, err := conformance.PersistedByGo(ctx, c)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		for i, s := range c.Steps {
			if s.Restore == nil || !selfContained(c.Steps[i+1:]) {
				continue
			}
			derived := map[string]any{
				"name":     fmt.Sprintf("%s/restore-%d-in-xstate", c.Name, i),
				"machine":  c.Machine,
				"snapshot": persisted[*s.Restore],
				"steps":    c.Steps[i+1:],
			}
			for k, v := range map[string]json.RawMessage{"guards": c.Guards, "actions": c.Actions, "delays": c.Delays, "actors": c.Actors} {
				if len(v) > 0 {
					derived[k] = v
				}
			}
			if c.Clock != nil {
				derived["clock"] = *c.Clock
			}
			data, err := json.Marshal(derived)
			if err != nil {
				t.Fatal(err)
			}
			filled, oerr, err := o.Record(data)
			if err != nil || oerr != "" {
				t.Fatalf("%s: XState cannot start from chartgate's snapshot %s: %v %s", derived["name"], persisted[*s.Restore], err, oerr)
			}
			dc, err := conformance.ParseCase(filled, "derived.json")
			if err != nil {
				t.Fatal(err)
			}
			n++
			if m := conformance.Check(ctx, dc, conformance.RunStatechart); m != nil {
				t.Errorf("%v\n(chartgate's snapshot: %s)", m, persisted[*s.Restore])
			}
		}
	}
	if n < 10 {
		t.Fatalf("only %d restore steps to check", n)
	}
	t.Logf("%d snapshots persisted by chartgate restored in XState", n)
}

// selfContained reports whether every restore among steps names a snapshot
// persisted by an earlier one of them.
func selfContained(steps []conformance.Step) bool {
	names := map[string]bool{}
	for _, s := range steps {
		switch {
		case s.Persist != nil:
			names[*s.Persist] = true
		case s.Restore != nil && !names[*s.Restore]:
			return false
		}
	}
	return true
}
