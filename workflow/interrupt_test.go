// This file mirrors the interrupt tests of Statewright's interrupt.rs
// (its glob tests are in glob_test.go): reading interrupts, matching a
// file to the first interrupt by name, and the interrupt transitions of the
// compiled machine.

package workflow_test

import (
	"testing"

	"github.com/tidwall/gjson"

	"github.com/chartgate/chartgate/workflow"
)

const twoInterrupts = `{
	"id": "test", "initial": "working",
	"states": {
		"working": {"on": {"DONE": "completed"}},
		"pb_validating": {"on": {"VALIDATED": "$return"}},
		"env_checking": {"on": {"CHECKED": "$return"}},
		"completed": {"type": "final"}
	},
	"guards": {},
	"interrupts": {
		"pb_check": {"trigger": {"file_pattern": "site/pb/**/*.js"}, "target": "pb_validating"},
		"env_audit": {"trigger": {"file_pattern": "**/*.env*"}, "target": "env_checking"}
	}
}`

func TestInterrupts(t *testing.T) {
	w := mustLoad(t, twoInterrupts, nil)
	t.Run("interrupt_def_deserializes_from_json", func(t *testing.T) {
		want := []workflow.Interrupt{
			{Name: "env_audit", FilePattern: "**/*.env*", Event: "chartgate.interrupt.env_audit"},
			{Name: "pb_check", FilePattern: "site/pb/**/*.js", Event: "chartgate.interrupt.pb_check"},
		}
		if len(w.Interrupts) != len(want) {
			t.Fatalf("Interrupts %v", w.Interrupts)
		}
		for i := range want {
			if w.Interrupts[i] != want[i] {
				t.Errorf("Interrupts[%d] = %+v, want %+v (sorted by name)", i, w.Interrupts[i], want[i])
			}
		}
	})
	t.Run("machine_definition_without_interrupts_defaults_empty", func(t *testing.T) {
		w := mustLoad(t, `{"id": "simple", "initial": "start", "states": {"start": {"on": {"GO": "end"}}, "end": {"type": "final"}}, "guards": {}}`, nil)
		if len(w.Interrupts) != 0 {
			t.Fatalf("Interrupts %v", w.Interrupts)
		}
		if _, ok := w.MatchInterrupt("any/file.rs"); ok {
			t.Fatal("match_interrupts_empty_when_no_interrupts_defined: matched")
		}
	})
	for _, tc := range []struct {
		name, path, want string
	}{
		{"match_interrupts_returns_matching_interrupt", "site/pb/hooks/auth.pb.js", "pb_check"},
		{"match_interrupts_returns_empty_for_no_match", "src/components/App.vue", ""},
		{"match_interrupts_can_match_multiple", "config/.env.local", "env_audit"},
		// Both match: the first by name wins, as in Statewright's gateway.
		{"the first interrupt by name wins", "site/pb/.env.js", "env_audit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, ok := w.MatchInterrupt(tc.path)
			if in.Name != tc.want || ok != (tc.want != "") {
				t.Fatalf("MatchInterrupt(%q) = %q, %v; want %q", tc.path, in.Name, ok, tc.want)
			}
		})
	}
	t.Run("every working state detours, handlers and final states do not", func(t *testing.T) {
		for _, st := range []string{"working", "pb_validating", "env_checking", "completed"} {
			on := gjson.GetBytes(w.JSON, "states."+st+".on.chartgate\\.interrupt\\.env_audit")
			if want := st == "working"; on.Exists() != want {
				t.Errorf("state %s has the interrupt transition: %v, want %v", st, on.Exists(), want)
			}
		}
	})
	t.Run("an interrupt during a handler is skipped", func(t *testing.T) {
		r := start(t, w)
		r.gate("chartgate.interrupt.env_audit")
		r.want("env_checking")
		// In a handler nothing handles the other interrupt...
		if r.gate("chartgate.interrupt.pb_check") {
			t.Fatal("an interrupt was handled in an interrupt handler")
		}
		r.send("CHECKED", nil)
		r.want("working")
	})
	t.Run("a state left from a handler does not detour until $return", func(t *testing.T) {
		// Statewright skips an interrupt while _interrupt_return is set.
		w := mustLoad(t, `{
			"id": "t", "initial": "a",
			"states": {
				"a": {"on": {"NEXT": "b"}},
				"b": {"on": {"END": "z"}},
				"check": {"on": {"OK": "$return", "SKIP": "b"}},
				"z": {"type": "final"}
			},
			"interrupts": {"i": {"trigger": {"file_pattern": "*"}, "target": "check"}}
		}`, nil)
		r := start(t, w)
		r.gate("chartgate.interrupt.i")
		r.send("SKIP", nil)
		r.want("b")
		if r.gate("chartgate.interrupt.i") {
			t.Fatal("an interrupt fired while _interrupt_return was still set")
		}
	})
}
