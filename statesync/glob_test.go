package statesync_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chartgate/chartgate/statesync"
)

// TestMatchSeedTable is the "Glob Pattern Matching" table of MCP Fusion's
// State Sync page, row by row: pattern, matches, does not match.
func TestMatchSeedTable(t *testing.T) {
	rows := []struct {
		pattern string
		matches []string
		not     []string
	}{
		{"sprints.get", []string{"sprints.get"}, []string{"sprints.list"}},
		{"sprints.*", []string{"sprints.get", "sprints.update"}, []string{"sprints.tasks.get"}},
		{"sprints.**", []string{"sprints.get", "sprints.tasks.get"}, []string{"tasks.get"}},
		{"**", []string{"sprints.get", "sprints.tasks.get", "tasks", "a.b.c.d.e", "anything.at.all"}, nil}, // "Everything"
		{"*.get", []string{"sprints.get", "tasks.get"}, []string{"sprints.tasks.get"}},
		{"**.get", []string{"sprints.get", "a.b.c.get"}, []string{"sprints.update"}},
	}
	for _, r := range rows {
		for _, n := range r.matches {
			if !statesync.Match(r.pattern, n) {
				t.Errorf("Match(%q, %q) = false, want true", r.pattern, n)
			}
		}
		for _, n := range r.not {
			if statesync.Match(r.pattern, n) {
				t.Errorf("Match(%q, %q) = true, want false", r.pattern, n)
			}
		}
	}
}

// TestMatchSeedCalls are the matchGlob calls of the seed's API reference.
func TestMatchSeedCalls(t *testing.T) {
	if !statesync.Match("sprints.*", "sprints.get") {
		t.Error(`Match("sprints.*", "sprints.get") = false, want true`)
	}
	if statesync.Match("sprints.*", "sprints.tasks.get") {
		t.Error(`Match("sprints.*", "sprints.tasks.get") = true, want false`)
	}
	if !statesync.Match("**", "anything.at.all") {
		t.Error(`Match("**", "anything.at.all") = false, want true`)
	}
}

// TestMatchRules mirrors MCP Fusion's GlobMatcher tests and pins the edge
// cases of the language: "*" is one segment (possibly empty), "**" zero or
// more, literals are case-sensitive.
func TestMatchRules(t *testing.T) {
	cases := []struct {
		pattern, name string
		want          bool
	}{
		{"sprints.*.get", "sprints.tasks.get", true},
		{"sprints.*.get", "sprints.get", false},
		{"**", "", true},
		{"**", "sprints", true},
		{"**", "a.b.c.d", true},
		{"a.**.z", "a.z", true},
		{"a.**.z", "a.b.z", true},
		{"a.**.z", "a.b.c.z", true},
		{"a.**.z", "a.b.c", false},
		{"**.**", "a", true},
		{"**.**", "a.b", true},
		{"a.b", "a.b.c", false},
		{"a.b.c", "a.b", false},
		{"*", "", true},                 // one empty segment
		{"sprints.*", "sprints.", true}, // "*" takes the empty segment
		{"sprints.*", "sprints", false}, // but not no segment
		{"sprints.**", "sprints", true}, // "**" takes none
		{"**.get", "get", true},         // zero segments before
		{"Sprints.get", "sprints.get", false},
		{"sprints.get", "sprints.getAll", false},
		{"sprints.get", "sprints.ge", false},
		{"*.*", "a.b", true},
		{"*.*", "a", false},
		{"**.a.*", "x.a.y", true},
		{"**.a.*", "a.a.a", true},
		{"**.a.*", "a.y.a", false},
		{"a.**.b.**.c", "a.x.b.y.b.c", true},
		{"a.**.b.**.c", "a.c.b", false},
	}
	for _, c := range cases {
		if got := statesync.Match(c.pattern, c.name); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.pattern, c.name, got, c.want)
		}
	}
}

func TestCompileGlobErrors(t *testing.T) {
	cases := []struct{ pattern, want string }{
		{"", "pattern must be a non-empty string"},
		{"sp*", `pattern "sp*" has invalid segment "sp*". Allowed: alphanumeric, "_", "-", "*", "**"`},
		{"a..b", `pattern "a..b" has invalid segment "". Allowed: alphanumeric, "_", "-", "*", "**"`},
		{"sprints.***", `pattern "sprints.***" has invalid segment "***". Allowed: alphanumeric, "_", "-", "*", "**"`},
		{"a.", `pattern "a." has invalid segment ""`},
		{".a", `pattern ".a" has invalid segment ""`},
		{"sp ace", `pattern "sp ace" has invalid segment "sp ace"`},
		{"a/b", `pattern "a/b" has invalid segment "a/b"`},
	}
	for _, c := range cases {
		_, err := statesync.CompileGlob(c.pattern)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("CompileGlob(%q) error = %v, want prefix %q", c.pattern, err, c.want)
		}
		if statesync.Match(c.pattern, c.pattern) {
			t.Errorf("Match(%q, ...) = true for an invalid pattern", c.pattern)
		}
		if statesync.ValidatePattern(c.pattern) == nil {
			t.Errorf("ValidatePattern(%q) = nil", c.pattern)
		}
	}
	g, err := statesync.CompileGlob("a-b_C9.*.**")
	if err != nil || g.String() != "a-b_C9.*.**" {
		t.Fatalf("CompileGlob(valid) = %v, %v", g, err)
	}
}

// TestMatchLongNames: fifty-segment names, and patterns past the 63
// positions the one-word fast path holds.
func TestMatchLongNames(t *testing.T) {
	segs := make([]string, 50)
	for i := range segs {
		segs[i] = "s"
	}
	name := strings.Join(segs, ".")
	for _, c := range []struct {
		pattern string
		want    bool
	}{
		{"**", true},
		{"s.**", true},
		{"**.s", true},
		{"s.**.s.**.s", true},
		{strings.Join(segs, "."), true},
		{strings.Repeat("*.", 49) + "*", true},
		{strings.Repeat("*.", 50) + "*", false},
		{strings.Repeat("*.", 70) + "*", false},
		{strings.Repeat("*.**.", 40) + "s", true},
		{strings.Repeat("*.**.", 60) + "s", false},
		{strings.Repeat("s.", 60) + "**", false},
	} {
		if got := statesync.Match(c.pattern, name); got != c.want {
			t.Errorf("Match(%d-segment pattern, 50 segments) = %v, want %v", strings.Count(c.pattern, ".")+1, got, c.want)
		}
	}
	wide := strings.Repeat("*.", 99) + "s" // 100 segments, 101 positions
	if !statesync.Match(wide, strings.Repeat("x.", 99)+"s") || statesync.Match(wide, strings.Repeat("x.", 99)+"t") {
		t.Error("wide pattern mismatch")
	}
}

// TestMatchAdversarial: patterns that make a backtracking matcher
// exponential stay linear here, with no iteration cap and so no false
// negatives (MCP Fusion gives up after 1024 iterations and answers false).
func TestMatchAdversarial(t *testing.T) {
	stars := strings.TrimSuffix(strings.Repeat("**.", 50), ".")
	pattern := strings.Repeat("**.a.", 30) + "b" // needs 30 a's then a b
	name := strings.TrimSuffix(strings.Repeat("a.", 10000), ".")
	start := time.Now()
	if !statesync.Match(stars, name) {
		t.Error("** run should match everything")
	}
	if statesync.Match(pattern, name) {
		t.Error("pattern needing a final b matched a name without one")
	}
	if !statesync.Match(pattern, name+".b") {
		t.Error("false negative on a 10,001-segment name")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("adversarial matching took %v", d)
	}
}
