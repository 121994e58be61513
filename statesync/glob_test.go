package statesync_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chartgate/chartgate/statesync"
)

// TestMatchTable is the "Glob Pattern Matching" table of MCP Fusion's
// State Sync page, read in chartgate's one tool-pattern language: "*"
// matches any run of characters, dots included, so "sprints.*" and
// "*.get" also take names Fusion's one-segment "*" leaves out
// (sprints.tasks.get), which for an invalidation is the safe direction;
// "**" is the same as "*".
func TestMatchTable(t *testing.T) {
	rows := []struct {
		pattern string
		matches []string
		not     []string
	}{
		{"sprints.get", []string{"sprints.get"}, []string{"sprints.list", "sprints.getAll", "Sprints.get"}},
		{"sprints.*", []string{"sprints.get", "sprints.update", "sprints.tasks.get", "sprints."}, []string{"sprints", "tasks.get", "sprintsX"}},
		{"sprints.**", []string{"sprints.get", "sprints.tasks.get"}, []string{"tasks.get", "sprints"}},
		{"*", []string{"sprints.get", "sprints.tasks.get", "tasks", "a.b.c.d.e", ""}, nil},
		{"**", []string{"anything.at.all"}, nil},
		{"*.get", []string{"sprints.get", "tasks.get", "sprints.tasks.get", ".get"}, []string{"get", "sprints.getAll"}},
		{"sprints_*", []string{"sprints_get", "sprints_"}, []string{"sprints.get"}},
		{"a*b*c", []string{"abc", "a.x.b.y.c"}, []string{"acb", "ab"}},
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

func TestCompileGlobErrors(t *testing.T) {
	cases := []struct{ pattern, want string }{
		{"", "a tool name must not be empty"},
		{"sp ace", `"sp ace" is not a tool name or pattern: use letters, digits, "_", "-", "." and "*"`},
		{"a/b", `"a/b" is not a tool name or pattern: use letters, digits, "_", "-", "." and "*"`},
		{"a?", `"a?" is not a tool name or pattern: use letters, digits, "_", "-", "." and "*"`},
		{strings.Repeat("a", 129), `"` + strings.Repeat("a", 129) + `" is longer than 128 characters`},
	}
	for _, c := range cases {
		_, err := statesync.CompileGlob(c.pattern)
		if err == nil || err.Error() != c.want {
			t.Errorf("CompileGlob(%q) error = %v, want %q", c.pattern, err, c.want)
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

// TestMatchAdversarial: patterns that make a backtracking matcher
// exponential stay linear here, with no iteration cap and so no false
// negatives (MCP Fusion gives up after 1024 iterations and answers false).
func TestMatchAdversarial(t *testing.T) {
	pattern := strings.Repeat("*a", 60) + "*b" // needs 60 a's then a b
	name := strings.Repeat("a", 100000)
	start := time.Now()
	if statesync.Match(pattern, name) {
		t.Error("pattern needing a final b matched a name without one")
	}
	if !statesync.Match(pattern, name+"b") {
		t.Error("false negative on a 100,001-character name")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("adversarial matching took %v", d)
	}
}
