package flat_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/statechart/flat"
	"github.com/tidwall/gjson"
)

// FuzzCompile feeds arbitrary documents to Compile and IsFlat, which must
// not panic and must agree. Whenever a document compiles it is checked
// against the full interpreter: statechart.Compile must accept it too,
// describe the same nodes, and reach the same states, statuses, Can answers
// and persisted JSON on a sequence of events derived from the input.
func FuzzCompile(f *testing.F) {
	for _, seed := range []string{
		job,
		`{"initial": "a", "states": {"a": {}}}`,
		`{"id": "m", "initial": "a", "states": {"a": {"on": {"GO": "#m.b", "1": "a"}}, "b": {"type": "final"}}}`,
		`{"initial": "a.b", "states": {"a.b": {"on": {"GO": "a\\.b", "X": "#(machine).a\\.b"}}}}`,
		`{"initial": "a", "states": {"a": {"on": {"GO": {"target": "b"}}}, "b": {"on": {"GO": "a"}}, "10": {}}}`,
		`{"initial": "a", "states": {"a": {"states": {}}}}`,
		`{"initial": "a", "states": {"a": {"on": {"GO": ".x"}}}}`,
	} {
		f.Add([]byte(seed))
	}
	if paths, err := filepath.Glob("../../conformance/cases/flat/*.json"); err == nil {
		for _, p := range paths {
			if b, err := os.ReadFile(p); err == nil {
				f.Add([]byte(gjson.GetBytes(b, "machine").Raw))
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := flat.Compile(data)
		if isFlat := flat.IsFlat(data); isFlat != (err == nil) {
			t.Fatalf("IsFlat = %v but Compile returned %v", isFlat, err)
		}
		if err != nil {
			if _, ok := err.(statechart.ErrorList); !ok {
				t.Fatalf("error %T is not a statechart.ErrorList", err)
			}
			return
		}
		full, err := statechart.Compile(data, nil)
		if err != nil {
			t.Fatalf("flat accepted a config the full interpreter rejects: %v", err)
		}
		compareEngines(t, m, full.Engine(), data)
	})
}

// compareEngines runs a pseudo-random event sequence drawn from seed on
// both engines and fails on the first difference.
func compareEngines(t *testing.T, m *flat.Machine, e statechart.Engine, seed []byte) {
	t.Helper()
	if m.ID() != e.ID() {
		t.Fatalf("ID %q, full interpreter %q", m.ID(), e.ID())
	}
	gotNodes, _ := json.Marshal(m.Nodes())
	wantNodes, _ := json.Marshal(e.Nodes())
	if string(gotNodes) != string(wantNodes) {
		t.Fatalf("Nodes\n got %s\nwant %s", gotNodes, wantNodes)
	}
	events := append(m.Events(), "NOT_HANDLED")
	s, err := m.Start(bg, now)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := e.Start(bg, now)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		sameState(t, i, s, fs)
		for _, ev := range events {
			a, err1 := m.Can(bg, s, statechart.NewEvent(ev))
			b, err2 := e.Can(bg, fs, statechart.NewEvent(ev))
			if a != b || err1 != nil || err2 != nil {
				t.Fatalf("step %d: Can(%q) = %v, %v; full interpreter %v, %v", i, ev, a, err1, b, err2)
			}
		}
		if i >= len(seed) || i >= 64 {
			break
		}
		ev := statechart.NewEvent(events[int(seed[i])%len(events)])
		if s, err = m.Send(bg, s, ev, now); err != nil {
			t.Fatal(err)
		}
		if fs, err = e.Send(bg, fs, ev, now); err != nil {
			t.Fatal(err)
		}
	}
}

func sameState(t *testing.T, step int, s, fs statechart.State) {
	t.Helper()
	got, _ := json.Marshal(s)
	want, _ := json.Marshal(fs)
	if string(got) != string(want) {
		t.Fatalf("step %d: persisted\n got %s\nwant %s", step, got, want)
	}
	if s.Value() != fs.Value() || s.Status() != fs.Status() {
		t.Fatalf("step %d: %v (%s), full interpreter %v (%s)", step, s.Value(), s.Status(), fs.Value(), fs.Status())
	}
	gi, _ := json.Marshal(s.StateIDs())
	wi, _ := json.Marshal(fs.StateIDs())
	if string(gi) != string(wi) {
		t.Fatalf("step %d: StateIDs %s, full interpreter %s", step, gi, wi)
	}
	m := s.(*flat.State).Machine()
	back, err := m.Restore(want)
	if err != nil || back != s {
		t.Fatalf("step %d: Restore(%s) = %v, %v; want the same state", step, want, back, err)
	}
}

// FuzzRestore feeds Restore arbitrary documents for the machine of a flat
// conformance case (or the job machine), seeded with the persisted form of
// every state of those machines. Restore must not panic; a state it
// accepts must marshal to a form it reads back as the same state, which
// the full interpreter reads as the same snapshot too.
func FuzzRestore(f *testing.F) {
	sources := []string{job}
	if paths, err := filepath.Glob("../../conformance/cases/flat/*.json"); err == nil {
		for _, p := range paths {
			if b, err := os.ReadFile(p); err == nil {
				sources = append(sources, gjson.GetBytes(b, "machine").Raw)
			}
		}
	}
	var machines []*flat.Machine
	var fulls []*statechart.Machine
	for _, src := range sources {
		m, err := flat.Compile([]byte(src))
		if err != nil {
			continue
		}
		full, err := statechart.Compile([]byte(src), nil)
		if err != nil {
			f.Fatalf("the full interpreter rejects a flat machine: %v", err)
		}
		i := uint8(len(machines))
		machines, fulls = append(machines, m), append(fulls, full)
		for _, n := range m.Nodes()[1:] {
			for _, status := range []string{"active", "done", "stopped"} {
				f.Add(i, []byte(fmt.Sprintf(`{"status":%q,"value":%q,"nodes":[%q,%q]}`, status, n.Key, m.ID(), n.ID)))
			}
		}
		s, err := m.Start(bg, now)
		if err != nil {
			f.Fatal(err)
		}
		for _, ev := range m.Events() {
			if s, err = m.Send(bg, s, statechart.NewEvent(ev), now); err != nil {
				f.Fatal(err)
			}
			b, err := json.Marshal(s)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(i, b)
		}
	}
	for _, seed := range []string{``, `[]`, `{"value":"idle","value":"running"}`, `{"value":"idle","context":{"n":1}}`, `{"value":"idle","nodes":"job"}`} {
		f.Add(uint8(0), []byte(seed))
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		i := int(which) % len(machines)
		m := machines[i]
		st, err := m.Restore(data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "flat: restore: ") {
				t.Fatalf("error %q does not say where it comes from", err)
			}
			return
		}
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		back, err := m.Restore(b)
		if err != nil {
			t.Fatalf("Restore rejects its own %s: %v", b, err)
		}
		again, _ := json.Marshal(back)
		if string(again) != string(b) || back.Value() != st.Value() || back.Status() != st.Status() {
			t.Fatalf("Restore(%s) gives %s", b, again)
		}
		full, err := fulls[i].Restore(b)
		if err != nil {
			t.Fatalf("the full interpreter rejects %s: %v", b, err)
		}
		fb, _ := json.Marshal(full)
		if string(fb) != string(b) {
			t.Fatalf("the full interpreter re-saves %s as %s", b, fb)
		}
	})
}
