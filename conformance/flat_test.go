package conformance_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/conformance"
	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/statechart/flat"
)

// flatCases returns the v1 cases whose machine is in the flat form. Every case
// under cases/flat/ must be.
func flatCases(t *testing.T) []*conformance.Case {
	t.Helper()
	cases, err := conformance.ReadDir("cases")
	require.NoError(t, err)
	var out []*conformance.Case
	for _, c := range cases {
		if len(c.V2Features()) > 0 && !strings.HasPrefix(filepath.ToSlash(c.Path), "cases/flat/") {
			continue // format v2 (actors, persistence, queries) is for the interpreter only
		}
		if flat.IsFlat(c.Machine) {
			out = append(out, c)
			continue
		}
		if strings.HasPrefix(filepath.ToSlash(c.Path), "cases/flat/") {
			_, err := flat.Compile(c.Machine)
			t.Errorf("%s (%s) is under cases/flat/ but not in the flat form: %v", c.Name, c.Path, err)
		}
	}
	if len(out) == 0 {
		t.Fatal("no case under cases/ has a machine in the flat form; cases/flat/ must hold some")
	}
	return out
}

// TestFlatCasesOnBothEngines replays every flat case on the full
// interpreter and on the flat engine. Both must match the snapshots
// recorded from XState, and so each other.
func TestFlatCasesOnBothEngines(t *testing.T) {
	ctx := context.Background()
	cases := flatCases(t)
	t.Logf("%d flat cases", len(cases))
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			if m := conformance.Check(ctx, c, conformance.RunStatechart); m != nil {
				t.Errorf("statechart: %s", m)
			}
			if m := conformance.Check(ctx, c, conformance.RunFlat); m != nil {
				t.Errorf("flat: %s", m)
			}
			full, fullErr, err := conformance.RunStatechart(ctx, c)
			require.NoError(t, err)
			fl, flatErr, err := conformance.RunFlat(ctx, c)
			require.NoError(t, err)
			assert.Equal(t, fullErr, flatErr, "errored")
			require.Len(t, fl, len(full))
			for i := range full {
				want, _ := json.Marshal(full[i])
				got, _ := json.Marshal(fl[i])
				if string(want) != string(got) {
					t.Errorf("snapshot %d: statechart %s, flat %s", i, want, got)
				}
			}
		})
	}
}

// checkout exercises every feature of the flat form: a "#id" target, an
// object target, a self-loop, integer-like keys, and a final state that
// has transitions of its own.
const checkout = `{
	"id": "checkout",
	"initial": "empty",
	"states": {
		"empty":     {"on": {"ADD_ITEM": "has_items", "2": "#checkout.10"}},
		"has_items": {"on": {"ADD_ITEM": "has_items", "CHECKOUT": {"target": "payment"}, "CLEAR": "empty"}},
		"payment":   {"on": {"PAY": "#checkout.confirmed", "BACK": "has_items", "FAIL": "10"}},
		"10":        {"on": {"RETRY": "payment", "1": "empty"}},
		"confirmed": {"type": "final", "on": {"REFUND": "empty"}}
	}
}`

var checkoutEvents = []string{
	"PAY", "2", "1", "ADD_ITEM", "ADD_ITEM", "CLEAR", "ADD_ITEM", "CHECKOUT", "FAIL", "RETRY",
	"BACK", "CHECKOUT", "NOPE", "PAY", "REFUND", "ADD_ITEM", "PAY",
}

// TestFlatEngineMatchesInterpreter runs the same flat machine on
// (*statechart.Machine).Engine() and on flat.Machine through the Engine
// interface and asserts identical Value, Status and StateIDs after every
// step, and identical Can answers and persisted JSON too.
func TestFlatEngineMatchesInterpreter(t *testing.T) {
	t.Run("checkout", func(t *testing.T) {
		compareEngines(t, []byte(checkout), checkoutEvents)
	})
	for _, c := range flatCases(t) {
		var events []string
		for _, s := range c.Steps {
			if s.Event != nil {
				events = append(events, s.Event.Type)
			}
		}
		t.Run(c.Name, func(t *testing.T) { compareEngines(t, c.Machine, events) })
	}
}

func compareEngines(t *testing.T, config []byte, events []string) {
	ctx, now := context.Background(), time.Unix(0, 0)
	fm, err := flat.Compile(config)
	require.NoError(t, err)
	sm, err := statechart.Compile(config, nil)
	require.NoError(t, err)
	engines := []statechart.Engine{sm.Engine(), fm}

	assert.Equal(t, engines[0].ID(), engines[1].ID())
	assert.Equal(t, engines[0].Nodes(), engines[1].Nodes())

	states := make([]statechart.State, len(engines))
	for i, e := range engines {
		states[i], err = e.Start(ctx, now)
		require.NoError(t, err)
	}
	all := append(fm.Events(), "NOPE")
	check := func(step string) {
		t.Helper()
		full, fl := states[0], states[1]
		assert.Equal(t, full.Value(), fl.Value(), "value after %s", step)
		assert.Equal(t, full.Status(), fl.Status(), "status after %s", step)
		assert.Equal(t, full.StateIDs(), fl.StateIDs(), "state ids after %s", step)
		assert.Equal(t, full.Context(), fl.Context(), "context after %s", step)
		for _, ev := range all {
			a, err := engines[0].Can(ctx, full, statechart.NewEvent(ev))
			require.NoError(t, err)
			b, err := engines[1].Can(ctx, fl, statechart.NewEvent(ev))
			require.NoError(t, err)
			assert.Equal(t, a, b, "Can(%s) after %s", ev, step)
		}
		// Each persisted state is the same and restores on the other engine.
		fullJSON, err := json.Marshal(full)
		require.NoError(t, err)
		flatJSON, err := json.Marshal(fl)
		require.NoError(t, err)
		assert.JSONEq(t, string(fullJSON), string(flatJSON), "persisted after %s", step)
		back, err := engines[1].Restore(fullJSON)
		require.NoError(t, err, "flat restores the interpreter's state after %s", step)
		assert.Equal(t, fl.Value(), back.Value())
		back, err = engines[0].Restore(flatJSON)
		require.NoError(t, err, "the interpreter restores the flat state after %s", step)
		assert.Equal(t, full.Value(), back.Value())
		assert.Equal(t, full.Status(), back.Status())
	}
	check("start")
	for _, ev := range events {
		for i, e := range engines {
			states[i], err = e.Send(ctx, states[i], statechart.NewEvent(ev), now)
			require.NoError(t, err)
		}
		check(ev)
		for i, e := range engines {
			states[i], err = e.Advance(ctx, states[i], now.Add(time.Hour))
			require.NoError(t, err)
		}
		check(ev + " and advance")
	}
}
