package statesync_test

import (
	"bytes"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/chartgate/chartgate/statesync"
)

func policiesOf(matches ...string) []statesync.Policy {
	out := make([]statesync.Policy, len(matches))
	for i, m := range matches {
		out[i] = statesync.Policy{Match: m}
	}
	return out
}

func detect(t *testing.T, matches ...string) []statesync.Overlap {
	t.Helper()
	ov, err := statesync.DetectOverlaps(policiesOf(matches...))
	if err != nil {
		t.Fatal(err)
	}
	return ov
}

// TestDetectOverlapsSeedExample is the seed's detectOverlaps example, with
// MCP Fusion's message.
func TestDetectOverlapsSeedExample(t *testing.T) {
	ov, err := statesync.DetectOverlaps([]statesync.Policy{
		{Match: "sprints.*", CacheControl: statesync.NoStore},
		{Match: "sprints.update", Invalidates: []string{"sprints.*"}}, // shadowed!
	})
	if err != nil || len(ov) != 1 {
		t.Fatalf("got %v, %v; want one finding", ov, err)
	}
	o := ov[0]
	if o.Kind != statesync.Shadowed || o.Policy != 1 || !slices.Equal(o.By, []int{0}) || o.Union {
		t.Errorf("finding = %+v", o)
	}
	want := `policy[0] (match: "sprints.*") shadows policy[1] (match: "sprints.update"). The later policy will never match because first-match-wins applies.`
	if o.String() != want {
		t.Errorf("message =\n%s\nwant\n%s", o.String(), want)
	}
}

// TestDetectOverlapsFusionCases mirrors MCP Fusion's detectOverlaps tests.
// Fusion counts one warning per (shadowing, shadowed) pair; here each
// shadowed policy is one finding listing every single shadowing policy, so
// the pair count is the sum of len(By).
func TestDetectOverlapsFusionCases(t *testing.T) {
	pairs := func(ov []statesync.Overlap) int {
		n := 0
		for _, o := range ov {
			if o.Kind == statesync.Shadowed {
				n += len(o.By)
			}
		}
		return n
	}
	for _, c := range []struct {
		matches []string
		pairs   int
	}{
		{[]string{"sprints.*", "sprints.update"}, 1},
		{[]string{"**", "sprints.update"}, 1},
		{[]string{"**", "billing.*", "billing.pay"}, 3},
		{[]string{"sprints.*", "tasks.*"}, 0},           // disjoint
		{[]string{"sprints.*"}, 0},                      // single
		{nil, 0},                                        // empty
		{[]string{"sprints.update", "sprints.*"}, 0},    // narrow first is fine
		{[]string{"sprints.get", "sprints.get"}, 1},     // duplicate
		{[]string{"sprints.**", "sprints.a.b.c"}, 1},    // deep
		{[]string{"*.get", "sprints.get"}, 1},           // wildcard group
		{[]string{"**.get", "a.b.get", "a.b.set"}, 1},   // only the .get one
		{[]string{"a.**", "a.*.**", "a.*", "a.b.*"}, 5}, // 1: by 0; 2 and 3: by 0 and by 1
	} {
		ov := detect(t, c.matches...)
		if got := pairs(ov); got != c.pairs {
			t.Errorf("%q: %d shadowing pairs, want %d: %v", c.matches, got, c.pairs, ov)
		}
	}
	ov := detect(t, "**", "billing.*", "billing.pay")
	if len(ov) != 2 || !slices.Equal(ov[0].By, []int{0}) || ov[1].Policy != 2 || !slices.Equal(ov[1].By, []int{0, 1}) {
		t.Errorf("findings = %+v", ov)
	}
	if !strings.HasPrefix(ov[1].String(), `policy[0] (match: "**"), policy[1] (match: "billing.*") each shadow policy[2]`) {
		t.Errorf("message = %s", ov[1])
	}
}

// TestDetectOverlapsCover: a later policy is shadowed only when earlier
// ones match every name it matches, on the languages themselves: literals
// never cover a pattern, and "*" takes dots too.
func TestDetectOverlapsCover(t *testing.T) {
	if ov := detect(t, "a.x", "a.y", "a.*"); len(ov) != 0 {
		t.Errorf("a.* should be live: %v", ov)
	}
	// "*.get" and "*.set" never cover "sprints.*": two partial overlaps.
	if ov := detect(t, "*.get", "*.set", "sprints.*"); len(ov) != 2 || ov[0].Kind != statesync.Partial || ov[1].Kind != statesync.Partial {
		t.Errorf("findings = %v", ov)
	}
	// "sprints.*" takes sprints.tasks.get: a deeper policy after it is
	// shadowed, as is "sprints.**" ("**" is "*").
	ov := detect(t, "sprints.*", "sprints.tasks.get", "sprints.**", "sprints*.*")
	if len(ov) != 2 || ov[0].Policy != 1 || ov[1].Policy != 2 || !slices.Equal(ov[1].By, []int{0}) {
		t.Errorf("findings = %v", ov)
	}
	// Every earlier policy that covers the later one alone is listed.
	ov = detect(t, "*", "a*", "a.b")
	if len(ov) != 2 || ov[1].Policy != 2 || !slices.Equal(ov[1].By, []int{0, 1}) || ov[1].Union {
		t.Errorf("findings = %+v", ov)
	}
}

// TestDetectOverlapsPartial: policies that compete for some names are
// reported separately from shadowing, with a shortest example name.
func TestDetectOverlapsPartial(t *testing.T) {
	ov := detect(t, "*.get", "sprints.*")
	if len(ov) != 1 {
		t.Fatalf("findings = %v", ov)
	}
	o := ov[0]
	if o.Kind != statesync.Partial || o.Policy != 1 || !slices.Equal(o.By, []int{0}) || o.Example != "sprints.get" {
		t.Errorf("finding = %+v", o)
	}
	want := `policy[0] (match: "*.get") partially overlaps policy[1] (match: "sprints.*"): a name such as "sprints.get" matches both and goes to policy[0] because first-match-wins applies.`
	if o.String() != want {
		t.Errorf("message =\n%s\nwant\n%s", o, want)
	}

	// An exception written before its rule is not an overlap to report.
	if ov := detect(t, "sprints.get", "sprints.*"); len(ov) != 0 {
		t.Errorf("exception reported: %v", ov)
	}
	if ov := detect(t, "sprints.*.get", "sprints.**"); len(ov) != 0 {
		t.Errorf("glob exception reported: %v", ov)
	}
	// What both match is already taken by an earlier policy: nothing to
	// report between the later two.
	if ov := detect(t, "a*.b", "a*b", "*.b"); len(ov) != 0 {
		t.Errorf("findings = %v", ov)
	}
	// The example is a shortest name.
	ov = detect(t, "a.*", "*.b")
	if len(ov) != 1 || ov[0].Example != "a.b" {
		t.Errorf("findings = %+v", ov)
	}
	ov = detect(t, "x*x", "*.x")
	if len(ov) != 1 || ov[0].Example != "x.x" {
		t.Errorf("findings = %+v", ov)
	}
	ov = detect(t, "ab*", "a*b")
	if len(ov) != 1 || ov[0].Example != "ab" {
		t.Errorf("findings = %+v", ov)
	}
	ov = detect(t, "*.a.*", "*.b", "x.*.*")
	for _, o := range ov {
		if o.Kind != statesync.Partial {
			t.Errorf("unexpected %v", o)
		}
		if !statesync.Match(policiesOf("*.a.*", "*.b", "x.*.*")[o.Policy].Match, o.Example) {
			t.Errorf("example %q does not match the later policy", o.Example)
		}
	}
	if len(ov) != 3 {
		t.Errorf("want 3 partial overlaps, got %v", ov)
	}
}

func TestDetectOverlapsInvalid(t *testing.T) {
	ov, err := statesync.DetectOverlaps(policiesOf("a", "b c"))
	var ce *statesync.ConfigError
	if !errors.As(err, &ce) || ov != nil || ce.Problems[0].Index != 1 {
		t.Errorf("got %v, %v", ov, err)
	}
}

func TestDetectOverlapsTooComplex(t *testing.T) {
	// Policy 4 (13 a's, then 13 b's, c's and d's) is covered by each of
	// the others, but deciding it means following how many a, b, c and d
	// a name has, up to 13 each, at once.
	var matches []string
	last := "*"
	for _, c := range "abcd" {
		matches = append(matches, "*"+strings.Repeat(string(c)+"*", 13))
		last += strings.Repeat(string(c)+"*", 13)
	}
	ov, err := statesync.DetectOverlaps(policiesOf(append(matches, last)...))
	if !errors.Is(err, statesync.ErrTooComplex) {
		t.Fatalf("err = %v", err)
	}
	for _, o := range ov {
		if o.Kind == statesync.Shadowed && o.Policy == 4 {
			t.Errorf("an undecided policy was reported shadowed: %v", o)
		}
	}
}

// TestNewRunsOverlapDetection: New logs every finding and keeps them.
func TestNewRunsOverlapDetection(t *testing.T) {
	var logs bytes.Buffer
	l, err := statesync.New([]statesync.Policy{
		{Match: "sprints.*", CacheControl: statesync.NoStore},
		{Match: "sprints.update", Invalidates: []string{"sprints.*"}},
		{Match: "*.get"},
	}, &statesync.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ov, err := l.Overlaps()
	if err != nil || len(ov) != 2 || ov[0].Kind != statesync.Shadowed || ov[1].Kind != statesync.Partial {
		t.Fatalf("overlaps = %v, %v", ov, err)
	}
	out := logs.String()
	if strings.Count(out, "level=WARN") != 2 || !strings.Contains(out, "shadows policy[1]") || !strings.Contains(out, "partially overlaps") {
		t.Errorf("logs:\n%s", out)
	}
	if statesync.Shadowed.String() != "shadowed" || statesync.Partial.String() != "partial" {
		t.Error("kind names")
	}
}

func TestSeedConfigHasNoOverlaps(t *testing.T) {
	ov, err := statesync.DetectOverlaps(seedPolicies())
	if err != nil || len(ov) != 0 {
		t.Errorf("seed policies: %v, %v", ov, err)
	}
}
