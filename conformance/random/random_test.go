package random

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/chartgate/chartgate/statechart"
)

func compiles(t *testing.T, m *Machine, what string) {
	t.Helper()
	data := m.CaseJSON(m.Name(), "")
	if !json.Valid(data) {
		t.Fatalf("%s: %s: invalid JSON", m.Name(), what)
	}
	var c struct {
		Machine json.RawMessage `json:"machine"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	impl, err := statechart.ParseImplementationsWith(data, &statechart.Options{AllowMissingGuards: true})
	if err != nil {
		t.Fatalf("%s: %s: implementations: %v", m.Name(), what, err)
	}
	if _, err := statechart.Compile(c.Machine, &statechart.Options{Implementations: impl, AllowMissingGuards: true}); err != nil {
		t.Fatalf("%s: %s: does not compile: %v\n%s", m.Name(), what, err, data)
	}
}

// TestShrinkMutationsKeepMachinesValid applies random shrinking steps to
// generated machines: each result must still compile, and the machine it
// was cloned from must not change.
func TestShrinkMutationsKeepMachinesValid(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 15
	if testing.Short() {
		n = 5
	}
	for i := 0; i < n; i++ {
		m := Generate(11, i)
		for round := 0; round < 20; round++ {
			before := m.CaseJSON(m.Name(), "")
			c := m.Clone()
			mut := mutations[r.IntN(len(mutations))]
			if !mut(c, r.IntN(30)) {
				continue
			}
			if !bytes.Equal(before, m.CaseJSON(m.Name(), "")) {
				t.Fatalf("%s: a mutation of a clone changed the original", m.Name())
			}
			compiles(t, c, "after a shrinking step")
			m = c
		}
		// Keep removing states until only the root is left.
		for removeState(m, 0) {
			compiles(t, m, "after removing a state")
		}
	}
}

// TestCloneIsDeep checks that a clone renders identically and shares no
// state nodes with the original.
func TestCloneIsDeep(t *testing.T) {
	m := Generate(3, 5)
	c := m.Clone()
	if !bytes.Equal(m.CaseJSON("x", ""), c.CaseJSON("x", "")) {
		t.Fatal("a clone renders differently")
	}
	orig := map[*State]bool{}
	for _, s := range m.States() {
		orig[s] = true
	}
	for _, s := range c.States() {
		if orig[s] {
			t.Fatalf("state %q is shared between a machine and its clone", s.Key)
		}
	}
}

// TestTargetStrings checks the written forms of targets: relative forms
// when possible, escaped dots, custom ids.
func TestTargetStrings(t *testing.T) {
	root := &State{Kind: Compound}
	a := &State{Key: "a", Kind: Compound, Parent: root}
	a1 := &State{Key: "x.y", Parent: a}
	b := &State{Key: "b", ID: "id.b", Parent: root}
	b1 := &State{Key: "b1", Parent: b}
	root.Children = []*State{a, b}
	a.Children = []*State{a1}
	b.Children = []*State{b1}
	m := &Machine{ID: "m", Root: root}
	for _, tc := range []struct {
		src, t *State
		style  int
		want   string
	}{
		{a, a1, 0, `#m.a.x\.y`},
		{a, a1, 1, `.x\.y`},
		{a1, a1, 1, `x\.y`},
		{a, b1, 1, `b.b1`},
		{a, b1, 2, `#id\.b.b1`},
		{a1, b, 0, `#id\.b`},
		{root, a, 1, `.a`},
		{root, root, 1, `#m`},
	} {
		if got := m.targetString(tc.src, tc.t, tc.style); got != tc.want {
			t.Errorf("target from %q to %q, style %d: got %s, want %s", tc.src.Key, tc.t.Key, tc.style, got, tc.want)
		}
	}
}
