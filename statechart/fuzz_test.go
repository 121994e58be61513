package statechart_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/statechart"
)

// FuzzCompile feeds Compile arbitrary documents, seeded with the machine of
// every conformance case. Compile must never panic; a machine it accepts
// must start, answer queries, and survive a persist/restore round trip.
func FuzzCompile(f *testing.F) {
	var files []string
	for _, pattern := range []string{"../conformance/cases/*.json", "../conformance/cases/*/*.json"} {
		matches, err := filepath.Glob(pattern)
		require.NoError(f, err)
		files = append(files, matches...)
	}
	require.NotEmpty(f, files, "no conformance cases to seed from")
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(f, err)
		var c struct {
			Machine json.RawMessage `json:"machine"`
		}
		require.NoError(f, json.Unmarshal(data, &c), file)
		f.Add([]byte(c.Machine))
	}
	for _, broken := range []string{
		``, `{`, `[]`, `null`, `"a"`, `{"initial": "a"}`, `{"states": {"a": {}}}`,
		`{"initial": "a", "states": {"a": {"type": "compound"}}}`,
		`{"initial": "h", "states": {"h": {"type": "history"}, "b": {}}}`,
		`{"initial": "a", "states": {"a": {"on": {"E": "h"}}, "h": {"type": "history", "target": "h"}}}`,
		`{"initial": "a", "states": {"a": {"on": {"E": {"target": ["b", "c"]}}}, "b": {}, "c": {}}}`,
		`{"initial": "a", "states": {"a": {"on": {"E": "#a\\.#a.b"}, "id": "a"}}}`,
		`{"type": "parallel", "states": {"a": {"after": {"1e3": "a", "-1": "a"}}, "h": {"type": "history", "target": "#x"}}}`,
		`{"initial": "a", "states": {"a": {"entry": [{"type": "xstate.raise", "params": {"event": {"type": "E"}, "delay": 1e400}}]}}}`,
		`{"initial": "a", "route": {}, "on": {"xstate.route": ".a"}, "states": {"a": {"id": "x.y", "route": {"target": "b"}}, "b": {"id": "b", "route": {"guard": {"type": "xstate.not", "params": {"guard": ""}}}}}}`,
		`{"initial": "a", "cond": 1, "tsTypes": {}, "states": {"a": {"entry": ["", {"type": ""}], "after": {"-1e300": "a", "-5": {"target": "a", "cond": "x"}}}}}`,
		studioExport,
	} {
		f.Add([]byte(broken))
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		opts := &statechart.Options{AllowMissingGuards: true, MaxMicrosteps: 1000}
		m, err := statechart.Compile(data, opts)
		if err != nil {
			var list statechart.ErrorList
			require.ErrorAs(t, err, &list)
			require.NotEmpty(t, list)
			errs := 0
			for _, e := range list {
				require.NotEmpty(t, e.Msg, "error without a message at %q", e.Path)
				require.NotContains(t, e.Path, "\x00", "a node reference left in the path of %q", e.Msg)
				if !e.Warning {
					errs++
				}
			}
			require.NotZero(t, errs, "Compile failed with warnings only: %v", err)
			return
		}
		require.NotNil(t, m)
		requireStrictWarnings(t, data, m.Warnings())
		_ = m.Nodes()
		_ = m.Events()

		ctx := context.Background()
		a := statechart.NewActor(m, &statechart.ActorOptions{Clock: statechart.NewSimulatedClock()})
		_ = a.Start(ctx) // a missing guard may put it in status error
		requireRoundTrip(t, m, a.Snapshot())

		// Each event the machine names, once (no clock advance: a zero
		// delay that re-enters its own state would never let it return).
		for i, ev := range m.Events() {
			if i == 8 {
				break
			}
			if ev == "*" || strings.HasSuffix(ev, ".*") {
				ev = strings.TrimSuffix(ev, "*") + "x"
			}
			_ = a.Send(ctx, statechart.NewEvent(ev))
			requireRoundTrip(t, m, a.Snapshot())
		}
	})
}

// requireStrictWarnings checks the warnings of a machine compiled with
// AllowMissingGuards against Strict: every warning but a missing guard's
// is one of Strict's errors, with the same path and message, and a
// machine with no other warnings fails under Strict only for actions and
// delays that have no implementation.
func requireStrictWarnings(t *testing.T, data []byte, warnings statechart.ErrorList) {
	t.Helper()
	var want []string
	for _, w := range warnings {
		require.True(t, w.Warning, "Warnings holds an error: %v", w)
		require.NotEmpty(t, w.Msg, "warning without a message at %q", w.Path)
		if !errors.Is(w, statechart.ErrGuardNotImplemented) {
			want = append(want, w.Path+": "+w.Msg)
		}
	}
	strict, err := statechart.Compile(data, &statechart.Options{AllowMissingGuards: true, Strict: true, MaxMicrosteps: 1000})
	if err == nil {
		require.Empty(t, want, "Strict accepted a machine with warnings")
		for _, w := range strict.Warnings() {
			require.ErrorIs(t, w, statechart.ErrGuardNotImplemented, "Strict left a warning")
		}
		return
	}
	var list statechart.ErrorList
	require.ErrorAs(t, err, &list)
	got := map[string]bool{}
	for _, e := range list {
		if !e.Warning {
			got[e.Path+": "+e.Msg] = true
		} else {
			require.ErrorIs(t, e, statechart.ErrGuardNotImplemented, "Strict left a warning")
		}
	}
	for _, w := range want {
		require.True(t, got[w], "Strict did not make the warning %q an error", w)
	}
	if len(want) == 0 {
		for msg := range got {
			require.Regexp(t, `(action ".*" is not implemented|delay ".*" has no implementation)`, msg)
		}
	}
}

// requireRoundTrip reads s through every query and checks that its
// persisted form restores to the same snapshot.
func requireRoundTrip(t *testing.T, m *statechart.Machine, s *statechart.Snapshot) {
	t.Helper()
	value := s.Value()
	_ = s.Tags()
	_ = s.StateIDs()
	_ = s.Meta()
	_ = s.Pending()
	requireLegalConfiguration(t, m, s)
	data, err := s.MarshalJSON()
	require.NoError(t, err)
	r, err := m.Restore(data)
	require.NoError(t, err, "restore %s", data)
	require.Equal(t, value, r.Value())
	require.Equal(t, s.Status(), r.Status())
	again, err := r.MarshalJSON()
	require.NoError(t, err)
	require.JSONEq(t, string(data), string(again))
}

// requireLegalConfiguration checks that the active state nodes of s form a
// legal configuration of m: the root is active, so is the parent of every
// active node, an active compound node has exactly one active child, an
// active parallel node has all its regions active, and history nodes are
// never active.
func requireLegalConfiguration(t *testing.T, m *statechart.Machine, s *statechart.Snapshot) {
	t.Helper()
	nodes := m.Nodes()
	active := map[string]bool{}
	for _, id := range s.StateIDs() {
		require.False(t, active[id], "state %q is listed twice", id)
		active[id] = true
	}
	require.True(t, active[nodes[0].ID], "the root is not active: %v", s.StateIDs())
	children := map[string][]statechart.Node{}
	for _, n := range nodes {
		if n.Parent != "" {
			children[n.Parent] = append(children[n.Parent], n)
		}
	}
	for _, n := range nodes {
		if !active[n.ID] {
			continue
		}
		if n.Type == "history" && s.Status() == statechart.StatusError {
			// A machine that failed to start holds only its root, and its
			// state ids are those its value names: as in XState, an
			// initial history state as it is (random/6-3605).
			continue
		}
		require.NotEqual(t, "history", n.Type, "history state %q is active", n.ID)
		if n.Parent != "" {
			require.True(t, active[n.Parent], "%q is active but its parent %q is not", n.ID, n.Parent)
		}
		count := 0
		for _, c := range children[n.ID] {
			if active[c.ID] {
				count++
			}
		}
		switch n.Type {
		case "compound":
			// XState lets two transitions of one microstep enter two
			// children of one compound state (the corpus has such cases),
			// so only "at least one" is an invariant.
			require.GreaterOrEqual(t, count, 1, "compound state %q has no active child: %v", n.ID, s.StateIDs())
		case "parallel":
			for _, c := range children[n.ID] {
				if c.Type != "history" {
					require.True(t, active[c.ID], "region %q of active parallel state %q is not active", c.ID, n.ID)
				}
			}
		default:
			require.Zero(t, count, "%s state %q has active children", n.Type, n.ID)
		}
	}
}

// fuzzMachine is one of the machines FuzzEvents drives.
type fuzzMachine struct {
	name  string
	json  string
	impl  string   // declarative implementations
	steps []string // the alphabet: an event type, or "+<ms>" to advance the clock
}

var fuzzMachines = []fuzzMachine{
	{
		// Parallel regions with deep and shallow history, a self-repeating
		// timer that stops itself through a guard, an always chain that
		// terminates, and wildcards at several levels.
		name: "player",
		json: `{
		  "id": "player",
		  "context": {"ticks": 0, "volume": 5, "log": []},
		  "initial": "on",
		  "on": {"POWER": {"target": ".off", "actions": "logPower"}},
		  "states": {
		    "off": {"on": {"POWER": "on.hist", "*": {"actions": "logIgnored"}}},
		    "on": {
		      "type": "parallel",
		      "on": {"media.*": {"actions": "logMedia"}},
		      "states": {
		        "playback": {
		          "initial": "paused",
		          "states": {
		            "paused": {"on": {"PLAY": "playing", "media.play": "playing"}},
		            "playing": {
		              "initial": "normal",
		              "tags": ["busy"],
		              "after": {"1000": {"target": "playing", "reenter": true, "guard": "canTick", "actions": "tick"}},
		              "on": {"PAUSE": "paused", "FAST": ".fast", "SLOW": ".normal"},
		              "always": {"target": "ended", "guard": "tooManyTicks"},
		              "states": {
		                "normal": {"after": {"2500": "fast"}},
		                "fast": {"tags": "fast"},
		                "h": {"type": "history"}
		              }
		            },
		            "ended": {"type": "final"}
		          }
		        },
		        "volume": {
		          "initial": "normal",
		          "states": {
		            "normal": {
		              "on": {"VOL.up": {"actions": "louder"}, "VOL.down": {"actions": "quieter"}, "VOL.*": {"actions": "logMedia"}},
		              "always": [{"target": "muted", "guard": "silent"}]
		            },
		            "muted": {"on": {"VOL.up": {"target": "normal", "actions": "louder"}}}
		          }
		        },
		        "hist": {"type": "history", "history": "deep"}
		      },
		      "onDone": {"target": "off", "actions": "resetTicks"}
		    }
		  }
		}`,
		impl: `{
		  "guards": {
		    "canTick": {"field": "context.ticks", "op": "lt", "value": 6},
		    "tooManyTicks": {"field": "context.ticks", "op": "gte", "value": 5},
		    "silent": {"field": "context.volume", "op": "lte", "value": 0}
		  },
		  "actions": {
		    "tick": {"assign": {"ticks": {"$inc": 1}}},
		    "resetTicks": {"assign": {"ticks": 0}},
		    "louder": {"assign": {"volume": {"$inc": 1}}},
		    "quieter": {"assign": {"volume": {"$inc": -1}}},
		    "logPower": {"assign": {"log": {"$push": "power"}}},
		    "logIgnored": {"assign": {"log": {"$push": {"$ref": "event.type"}}}},
		    "logMedia": {"assign": {"log": {"$push": {"$ref": "event.type"}}}}
		  }
		}`,
		steps: []string{"POWER", "PLAY", "PAUSE", "FAST", "SLOW", "media.play", "media.stop", "VOL.up", "VOL.down", "VOL.reset", "OTHER",
			"+100", "+1000", "+2500", "+10000"},
	},
	{
		// Delayed raise and cancel by id, internal raises, named delays,
		// a guard with no implementation (status error), and a top-level
		// final state (status done).
		name: "order",
		json: `{
		  "id": "order",
		  "context": {"attempts": 0, "items": []},
		  "initial": "open",
		  "states": {
		    "open": {
		      "entry": {"type": "xstate.raise", "params": {"event": {"type": "REMIND"}, "delay": 3000, "id": "remind"}},
		      "exit": {"type": "xstate.cancel", "params": {"sendId": "remind"}},
		      "on": {
		        "ADD": {"actions": [{"type": "xstate.assign", "params": {"items": {"$push": {"$ref": "event.sku"}}}}]},
		        "REMIND": {"actions": [{"type": "xstate.raise", "params": {"event": {"type": "REMIND"}, "delay": "LATER", "id": "remind"}}]},
		        "SNOOZE": {"actions": [{"type": "xstate.cancel", "params": {"sendId": "remind"}}]},
		        "SUBMIT": [{"target": "checking", "guard": "hasItems"}, {"actions": {"type": "xstate.raise", "params": {"event": {"type": "EMPTY"}}}}],
		        "EMPTY": {"actions": {"type": "xstate.assign", "params": {"attempts": {"$inc": 1}}}},
		        "BREAK": {"target": "checking", "guard": "notImplemented"}
		      }
		    },
		    "checking": {
		      "initial": "pending",
		      "states": {
		        "pending": {
		          "after": {"LATER": "timedOut", "500": {"target": "approved", "guard": "fewItems"}},
		          "on": {"APPROVE": "approved", "REJECT": "#order.open"}
		        },
		        "timedOut": {"after": {"0": "#order.open"}},
		        "approved": {"type": "final", "output": {"ok": true}}
		      },
		      "onDone": "shipping"
		    },
		    "shipping": {
		      "type": "parallel",
		      "states": {
		        "pack": {"initial": "packing", "states": {"packing": {"on": {"PACKED": "packed"}, "after": {"2000": "packed"}}, "packed": {"type": "final"}}},
		        "label": {"initial": "printing", "states": {"printing": {"on": {"PRINTED": "printed"}}, "printed": {"type": "final"}}}
		      },
		      "onDone": "delivered"
		    },
		    "delivered": {"type": "final"}
		  },
		  "output": {"delivered": true}
		}`,
		impl: `{
		  "guards": {
		    "hasItems": {"field": "context.items.0", "op": "exists"},
		    "fewItems": {"field": "context.items.2", "op": "not_exists"}
		  },
		  "delays": {"LATER": 5000}
		}`,
		steps: []string{"ADD", "SUBMIT", "REMIND", "SNOOZE", "APPROVE", "REJECT", "PACKED", "PRINTED", "BREAK",
			"+100", "+500", "+2000", "+3000", "+5000"},
	},
	{
		// Deep hierarchy with a shallow history, reenter transitions, a
		// transition to several regions at once, eventless transitions
		// across regions and wildcards with different priorities.
		name: "editor",
		json: `{
		  "id": "ed",
		  "context": {"saves": 0, "dirty": false},
		  "type": "parallel",
		  "on": {"*": {"actions": "countUnknown"}},
		  "states": {
		    "doc": {
		      "initial": "clean",
		      "states": {
		        "clean": {"on": {"EDIT": {"target": "dirty", "actions": "markDirty"}}},
		        "dirty": {
		          "initial": "typing",
		          "on": {"SAVE": {"target": "saving", "actions": "save"}, "EDIT": {"target": "dirty", "reenter": true}},
		          "states": {
		            "typing": {"after": {"800": "idle"}, "on": {"EDIT": "typing"}},
		            "idle": {"after": {"3000": {"target": "#ed.doc.saving", "actions": "save"}}},
		            "last": {"type": "history"}
		          }
		        },
		        "saving": {
		          "always": [{"target": "clean", "guard": "savedOften", "actions": "markClean"}],
		          "after": {"200": {"target": "clean", "actions": "markClean"}}
		        },
		        "back": {"type": "history", "target": "clean"}
		      }
		    },
		    "view": {
		      "initial": "edit",
		      "states": {
		        "edit": {"on": {"PREVIEW": "preview", "ui.*": {"actions": "countUnknown"}}},
		        "preview": {
		          "on": {"PREVIEW": "edit", "ui.close": "edit", "EDIT": {"target": ["edit", "#ed.doc.dirty.last"]}},
		          "always": {"target": "edit", "guard": "isDirty"}
		        }
		      }
		    }
		  }
		}`,
		impl: `{
		  "guards": {
		    "savedOften": {"field": "context.saves", "op": "gte", "value": 3},
		    "isDirty": {"and": [{"field": "context.dirty", "op": "eq", "value": true}, {"not": {"field": "context.saves", "op": "gt", "value": 10}}]}
		  },
		  "actions": {
		    "markDirty": {"assign": {"dirty": true}},
		    "markClean": {"assign": {"dirty": false}},
		    "save": {"assign": {"saves": {"$inc": 1}}},
		    "countUnknown": {"assign": {"unknown": {"$inc": 1}}}
		  }
		}`,
		steps: []string{"EDIT", "SAVE", "PREVIEW", "ui.close", "ui.zoom", "NOPE", "+100", "+800", "+3000", "+200"},
	},
}

// fuzzMaxSteps bounds the steps of one FuzzEvents input; every step is
// replayed on a restored actor from every earlier step.
const fuzzMaxSteps = 40

// fuzzStepper runs a fuzzMachine on an Actor with a SimulatedClock.
type fuzzStepper struct {
	m     *statechart.Machine
	clock *statechart.SimulatedClock
	actor *statechart.Actor
}

func (s *fuzzStepper) step(t *testing.T, step string) {
	t.Helper()
	if ms, ok := strings.CutPrefix(step, "+"); ok {
		var d int
		_, err := fmt.Sscan(ms, &d)
		require.NoError(t, err)
		s.clock.Advance(time.Duration(d) * time.Millisecond)
		return
	}
	ev := statechart.NewEvent(step)
	if step == "ADD" {
		ev.Data = map[string]any{"sku": fmt.Sprintf("sku-%d", s.clock.Now().UnixMilli())}
	}
	err := s.actor.Send(context.Background(), ev)
	if err != nil {
		var re *statechart.RuntimeError
		require.ErrorAs(t, err, &re, "Send returned %v", err)
	}
}

// persisted is the snapshot's persisted form, the strongest comparison.
func (s *fuzzStepper) persisted(t *testing.T) string {
	t.Helper()
	data, err := json.Marshal(s.actor.Snapshot())
	require.NoError(t, err)
	return string(data)
}

// FuzzEvents drives fixed, rich machines with a fuzzed sequence of events
// and clock advances, and checks after every step that the configuration
// is legal and that an actor restored from any earlier step's persisted
// snapshot, on a clock at the same time, is in exactly the same state.
func FuzzEvents(f *testing.F) {
	machines := make([]*statechart.Machine, len(fuzzMachines))
	for i, fm := range fuzzMachines {
		impl, err := statechart.ParseImplementations([]byte(fm.impl))
		require.NoError(f, err, fm.name)
		m, err := statechart.Compile([]byte(fm.json), &statechart.Options{Implementations: impl, AllowMissingGuards: true, Strict: true})
		require.NoError(f, err, fm.name)
		machines[i] = m
		require.Less(f, len(fm.steps), 256)
	}
	f.Add(uint8(0), []byte{1, 12, 12, 3, 12, 8, 8, 8, 8, 8, 0, 0, 14, 7, 12, 2})
	f.Add(uint8(0), []byte{1, 13, 13, 13, 13, 13, 13, 13, 10, 9, 0, 6, 0, 11})
	f.Add(uint8(1), []byte{0, 0, 1, 11, 12, 4, 13, 3, 12, 5, 1, 9, 6, 7, 12})
	f.Add(uint8(1), []byte{1, 0, 1, 2, 13, 13, 13, 0, 1, 10, 6, 11, 8})
	f.Add(uint8(2), []byte{0, 7, 2, 0, 8, 1, 9, 4, 3, 2, 0, 2, 9, 5})
	f.Add(uint8(2), []byte{2, 0, 7, 8, 0, 1, 2, 1, 2, 3, 8, 8, 8, 8, 8, 9, 4, 5})

	f.Fuzz(func(t *testing.T, which uint8, input []byte) {
		fm := fuzzMachines[int(which)%len(fuzzMachines)]
		m := machines[int(which)%len(fuzzMachines)]
		if len(input) > fuzzMaxSteps {
			input = input[:fuzzMaxSteps]
		}
		steps := make([]string, len(input))
		for i, b := range input {
			steps[i] = fm.steps[int(b)%len(fm.steps)]
		}

		start := func(clock *statechart.SimulatedClock, snap *statechart.Snapshot) *fuzzStepper {
			a := statechart.NewActor(m, &statechart.ActorOptions{Clock: clock, Snapshot: snap})
			err := a.Start(context.Background())
			if snap != nil {
				require.NoError(t, err)
			}
			return &fuzzStepper{m: m, clock: clock, actor: a}
		}
		orig := start(statechart.NewSimulatedClock(), nil)
		var restored []*fuzzStepper
		for i := 0; ; i++ {
			snap := orig.actor.Snapshot()
			status := snap.Status()
			require.Contains(t, []statechart.Status{statechart.StatusActive, statechart.StatusDone, statechart.StatusError}, status)
			if status == statechart.StatusError {
				require.Error(t, snap.Err())
			}
			requireLegalConfiguration(t, m, snap)
			want := orig.persisted(t)
			last := i == len(steps)
			for j, r := range restored {
				// Every step compares what a caller sees; the last one (or
				// a difference) the whole persisted form, pending delayed
				// events and history included. Marshaling every restored
				// actor at every step would make the fuzzer quadratic in
				// JSON encoding.
				rs := r.actor.Snapshot()
				if last || !sameState(snap, rs) {
					require.Equal(t, want, r.persisted(t), "after %v (restored before step %d)", steps[:i], j)
				}
			}
			if last {
				break
			}

			// Persist, restore on a new clock at the same time, and keep
			// the restored actor alongside the original to the end.
			data, err := json.Marshal(snap)
			require.NoError(t, err)
			back, err := m.Restore(data)
			require.NoError(t, err, "restore %s", data)
			clock := statechart.NewSimulatedClock()
			clock.Advance(orig.clock.Now().Sub(clock.Now()))
			r := start(clock, back)
			require.Equal(t, want, r.persisted(t), "restore changed the snapshot before step %d", i)
			restored = append(restored, r)

			orig.step(t, steps[i])
			for _, r := range restored {
				r.step(t, steps[i])
			}
		}
	})
}

// sameState reports whether two snapshots look the same to a caller:
// status, value, context, tags and pending delayed events.
func sameState(a, b *statechart.Snapshot) bool {
	return a.Status() == b.Status() &&
		reflect.DeepEqual(a.Value(), b.Value()) &&
		reflect.DeepEqual(a.Context(), b.Context()) &&
		reflect.DeepEqual(a.Tags(), b.Tags()) &&
		reflect.DeepEqual(a.Pending(), b.Pending())
}

// TestFuzzMachinesReachEveryStatus makes sure the FuzzEvents machines are
// not vacuous: between them they reach status done and status error, fire
// delayed events, and take eventless transitions.
func TestFuzzMachinesReachEveryStatus(t *testing.T) {
	run := func(which int, steps ...string) *statechart.Snapshot {
		fm := fuzzMachines[which]
		impl, err := statechart.ParseImplementations([]byte(fm.impl))
		require.NoError(t, err)
		m, err := statechart.Compile([]byte(fm.json), &statechart.Options{Implementations: impl, AllowMissingGuards: true})
		require.NoError(t, err)
		s := &fuzzStepper{m: m, clock: statechart.NewSimulatedClock()}
		s.actor = statechart.NewActor(m, &statechart.ActorOptions{Clock: s.clock})
		require.NoError(t, s.actor.Start(context.Background()))
		for _, step := range steps {
			s.step(t, step)
			requireLegalConfiguration(t, m, s.actor.Snapshot())
		}
		return s.actor.Snapshot()
	}

	// player: six ticks end the playback region, which is not the whole
	// parallel state; the always guard then moves it to ended.
	s := run(0, "PLAY", "+1000", "+1000", "+1000", "+1000", "+1000")
	require.Equal(t, map[string]any{"on": map[string]any{"playback": "ended", "volume": "normal"}}, s.Value(), "context %v", s.Context())
	require.Equal(t, 5.0, s.Context()["ticks"])
	// Deep history brings back the fast child of playing.
	s = run(0, "PLAY", "FAST", "POWER", "OTHER", "POWER")
	require.Equal(t, map[string]any{"on": map[string]any{"playback": map[string]any{"playing": "fast"}, "volume": "normal"}}, s.Value())
	require.Equal(t, []any{"power", "OTHER"}, s.Context()["log"])
	s = run(0, "VOL.down", "VOL.down", "VOL.down", "VOL.down", "VOL.down", "VOL.reset")
	require.Equal(t, map[string]any{"on": map[string]any{"playback": "paused", "volume": "muted"}}, s.Value())

	// order: done, error, and the delayed raise that re-arms itself.
	s = run(1, "ADD", "SUBMIT", "APPROVE", "PACKED", "PRINTED")
	require.Equal(t, statechart.StatusDone, s.Status())
	require.Equal(t, map[string]any{"delivered": true}, s.Output())
	s = run(1, "BREAK")
	require.Equal(t, statechart.StatusError, s.Status())
	require.ErrorIs(t, s.Err(), statechart.ErrGuardNotImplemented)
	s = run(1, "+3000", "+5000")
	require.Equal(t, "open", s.Value())
	require.Len(t, s.Pending(), 1)
	s = run(1, "SUBMIT", "SUBMIT")
	require.Equal(t, 2.0, s.Context()["attempts"])
	s = run(1, "ADD", "SUBMIT", "+500")
	require.True(t, s.Matches("shipping"), "the 500 ms timer approved the order: %v", s.Value())

	// editor: eventless transitions across regions.
	s = run(2, "PREVIEW", "EDIT")
	require.Equal(t, map[string]any{"doc": map[string]any{"dirty": "typing"}, "view": "edit"}, s.Value())
	s = run(2, "EDIT", "SAVE", "+200", "EDIT", "SAVE", "+200", "EDIT", "SAVE")
	require.Equal(t, 3.0, s.Context()["saves"])
	require.Equal(t, map[string]any{"doc": "clean", "view": "edit"}, s.Value())
	s = run(2, "EDIT", "+800", "+3000", "+200", "ui.zoom")
	require.Equal(t, 1.0, s.Context()["unknown"])
	require.Equal(t, false, s.Context()["dirty"])
}

// restoreCase is a conformance case, as FuzzRestore reads it.
type restoreCase struct {
	Machine json.RawMessage `json:"machine"`
	Steps   []struct {
		Event   *statechart.Event `json:"event"`
		Advance *float64          `json:"advance"`
	} `json:"steps"`
}

// restoreMachines compiles the machine of every conformance case, and
// returns with them the persisted snapshots a simulated-clock actor goes
// through on the case's steps.
func restoreMachines(tb testing.TB) ([]*statechart.Machine, [][][]byte) {
	var files []string
	for _, pattern := range []string{"../conformance/cases/*.json", "../conformance/cases/*/*.json"} {
		matches, err := filepath.Glob(pattern)
		require.NoError(tb, err)
		files = append(files, matches...)
	}
	require.NotEmpty(tb, files, "no conformance cases")
	var machines []*statechart.Machine
	var snapshots [][][]byte
	ctx := context.Background()
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(tb, err)
		var c restoreCase
		require.NoError(tb, json.Unmarshal(data, &c), file)
		opts := &statechart.Options{AllowMissingGuards: true, MaxSteps: 2000}
		impl, err := statechart.ParseImplementationsWith(data, opts)
		require.NoError(tb, err, file)
		opts.Implementations = impl
		m, err := statechart.Compile(c.Machine, opts)
		if err != nil {
			continue // cases of load errors
		}
		clock := statechart.NewSimulatedClock()
		a := statechart.NewActor(m, &statechart.ActorOptions{Clock: clock})
		_ = a.Start(ctx)
		var snaps [][]byte
		add := func() {
			b, err := json.Marshal(a.Snapshot())
			require.NoError(tb, err)
			snaps = append(snaps, b)
		}
		add()
		for _, st := range c.Steps {
			if st.Event != nil {
				_ = a.Send(ctx, *st.Event)
			} else if st.Advance != nil {
				clock.Advance(time.Duration(*st.Advance * float64(time.Millisecond)))
			}
			add()
		}
		machines = append(machines, m)
		snapshots = append(snapshots, snaps)
	}
	return machines, snapshots
}

// FuzzRestore feeds Restore arbitrary snapshots for the machine of a
// conformance case, seeded with the snapshots the case goes through.
// Restore must never panic; whatever it accepts must marshal to a form it
// accepts again as the same snapshot, and must run: an event and a clock
// advance on it give snapshots that round-trip too.
func FuzzRestore(f *testing.F) {
	machines, snapshots := restoreMachines(f)
	for i, snaps := range snapshots {
		for _, s := range snaps {
			f.Add(uint16(i), s)
		}
	}
	for _, broken := range []string{
		``, `{}`, `null`, `[]`, `{"status":"active","value":"nope"}`, `{"status":"done"}`,
		`{"status":"active","value":{},"nodes":["x"]}`, `{"status":"error","error":"boom"}`,
		`{"status":"active","scheduledEvents":[{"id":"a","event":{"type":"E"},"seq":1,"keyed":true},{"id":"a","event":{"type":"E"},"seq":2,"keyed":true}]}`,
	} {
		f.Add(uint16(0), []byte(broken))
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, which uint16, data []byte) {
		m := machines[int(which)%len(machines)]
		s, err := m.Restore(data)
		if err != nil {
			require.Nil(t, s)
			require.True(t, strings.HasPrefix(err.Error(), "statechart: restore: "), err.Error())
			return
		}
		requireRestoresToItself(t, m, s)
		if s.Status() != statechart.StatusActive {
			return
		}
		for _, ev := range append(m.Events(), "OTHER")[:1] {
			next, err := m.Transition(ctx, s, statechart.NewEvent(ev), epoch)
			if err == nil || next.Status() == statechart.StatusError {
				requireRestoresToItself(t, m, next)
			}
		}
		if due, ok := s.NextDue(); ok {
			next, _ := m.Advance(ctx, s, due)
			requireRestoresToItself(t, m, next)
		}
	})
}

// requireRestoresToItself checks that s marshals to a form Restore reads
// back as the same snapshot.
func requireRestoresToItself(t *testing.T, m *statechart.Machine, s *statechart.Snapshot) {
	t.Helper()
	data, err := json.Marshal(s)
	require.NoError(t, err)
	back, err := m.Restore(data)
	require.NoError(t, err, "a snapshot does not restore: %s", data)
	again, err := json.Marshal(back)
	require.NoError(t, err)
	require.Equal(t, string(data), string(again), "the restored snapshot differs")
}
