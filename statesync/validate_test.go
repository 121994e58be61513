package statesync_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/chartgate/chartgate/statesync"
)

// seedPolicies is the Quick Start configuration of MCP Fusion's State Sync
// page (also the registry-level example of the second page).
func seedPolicies() []statesync.Policy {
	return []statesync.Policy{
		// Mutations that invalidate related domains
		{Match: "sprints.update", Invalidates: []string{"sprints.*"}},
		{Match: "sprints.create", Invalidates: []string{"sprints.*"}},
		{Match: "sprints.delete", Invalidates: []string{"sprints.*"}},
		{Match: "tasks.update", Invalidates: []string{"tasks.*", "sprints.*"}},
		// Static reference data
		{Match: "countries.*", CacheControl: statesync.Immutable},
	}
}

func TestValidateAcceptsValidConfigs(t *testing.T) {
	for name, c := range map[string]struct {
		policies []statesync.Policy
		def      statesync.CacheControl
	}{
		"seed quick start":   {seedPolicies(), statesync.NoStore},
		"no directive":       {[]statesync.Policy{{Match: "reports.*"}}, ""},
		"both directives":    {[]statesync.Policy{{Match: "a.b", CacheControl: statesync.NoStore, Invalidates: []string{"a.*"}}}, ""},
		"immutable default":  {nil, statesync.Immutable},
		"undefined defaults": {[]statesync.Policy{{Match: "**", CacheControl: statesync.NoStore}}, ""},
		"globs everywhere":   {[]statesync.Policy{{Match: "**.get", Invalidates: []string{"**", "a.**.b", "*"}}}, ""},
	} {
		if err := statesync.Validate(c.policies, c.def); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if _, err := statesync.New(c.policies, &statesync.Options{Default: c.def}); err != nil {
			t.Errorf("%s: New: %v", name, err)
		}
	}
}

// TestValidateMessages mirrors MCP Fusion's PolicyValidator tests, one bad
// field at a time, with the exact message.
func TestValidateMessages(t *testing.T) {
	cases := []struct {
		name   string
		policy statesync.Policy
		field  string
		want   string
	}{
		{"empty match", statesync.Policy{Match: ""}, "match",
			`policy[0]: 'match' must be a non-empty string`},
		{"space", statesync.Policy{Match: "sp ace"}, "match",
			`policy[0]: 'match' "sp ace" is not a tool name or pattern: use letters, digits, "_", "-", "." and "*"`},
		{"slash", statesync.Policy{Match: "a/b"}, "match",
			`policy[0]: 'match' "a/b" is not a tool name or pattern: use letters, digits, "_", "-", "." and "*"`},
		{"too long", statesync.Policy{Match: strings.Repeat("a", 129)}, "match",
			`policy[0]: 'match' "` + strings.Repeat("a", 129) + `" is longer than 128 characters`},
		{"max-age", statesync.Policy{Match: "a", CacheControl: "max-age=60"}, "cacheControl",
			`policy[0]: invalid cacheControl "max-age=60". Allowed: "no-store", "immutable"`},
		{"empty invalidates entry", statesync.Policy{Match: "a", Invalidates: []string{"b.*", ""}}, "invalidates[1]",
			`policy[0]: 'invalidates' entries must be non-empty strings. Entry 1 is empty`},
		{"bad invalidates entry", statesync.Policy{Match: "a", Invalidates: []string{"b?"}}, "invalidates[0]",
			`policy[0]: 'invalidates' entry 0: "b?" is not a tool name or pattern: use letters, digits, "_", "-", "." and "*"`},
	}
	for _, c := range cases {
		err := statesync.Validate([]statesync.Policy{c.policy}, "")
		var ce *statesync.ConfigError
		if !errors.As(err, &ce) || len(ce.Problems) != 1 {
			t.Errorf("%s: err = %v, want one problem", c.name, err)
			continue
		}
		p := ce.Problems[0]
		if p.String() != c.want || p.Index != 0 || p.Field != c.field {
			t.Errorf("%s:\n got %d %s %q\nwant 0 %s %q", c.name, p.Index, p.Field, p.String(), c.field, c.want)
		}
		if err.Error() != "statesync: "+c.want {
			t.Errorf("%s: Error() = %q", c.name, err.Error())
		}
	}
}

func TestValidateDefault(t *testing.T) {
	for _, ok := range []statesync.CacheControl{"", statesync.NoStore, statesync.Immutable} {
		if err := statesync.Validate(nil, ok); err != nil {
			t.Errorf("default %q: %v", ok, err)
		}
	}
	err := statesync.Validate(nil, "public")
	want := `statesync: default cacheControl "public" is invalid. Allowed: "no-store", "immutable"`
	var ce *statesync.ConfigError
	if !errors.As(err, &ce) || err.Error() != want || ce.Problems[0].Index != -1 || ce.Problems[0].Field != "Default" {
		t.Fatalf("err = %v, want %q", err, want)
	}
}

// TestNewReportsEveryProblem: all bad policies at once, each with its
// index, in order, then the options; MCP Fusion stops at the first.
func TestNewReportsEveryProblem(t *testing.T) {
	policies := []statesync.Policy{
		{Match: "sprints.update", Invalidates: []string{"sprints.*"}}, // fine
		{Match: ""},
		{Match: "sp ace", CacheControl: "public"},
		{Match: "tasks.update", Invalidates: []string{"tasks.*", "a/b", ""}},
		{Match: "countries.*", CacheControl: statesync.Immutable}, // fine
	}
	_, err := statesync.New(policies, &statesync.Options{Default: "max-age=1", URIScheme: "1bad", Separator: "."})
	var ce *statesync.ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want *ConfigError", err)
	}
	want := []struct {
		index int
		field string
	}{
		{1, "match"}, {2, "match"}, {2, "cacheControl"}, {3, "invalidates[1]"}, {3, "invalidates[2]"},
		{-1, "Default"}, {-1, "URIScheme"}, {-1, "Separator"},
	}
	if len(ce.Problems) != len(want) {
		t.Fatalf("got %d problems:\n%v", len(ce.Problems), err)
	}
	for i, w := range want {
		if p := ce.Problems[i]; p.Index != w.index || p.Field != w.field {
			t.Errorf("problem %d = %d %s, want %d %s", i, p.Index, p.Field, w.index, w.field)
		}
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) || lines[0] != "statesync: policy[1]: 'match' must be a non-empty string" {
		t.Errorf("Error() =\n%s", err)
	}
}

func TestCacheControlValid(t *testing.T) {
	if !statesync.NoStore.Valid() || !statesync.Immutable.Valid() {
		t.Fatal("the two directives must be valid")
	}
	for _, bad := range []statesync.CacheControl{"", "public", "max-age=60", "No-Store"} {
		if bad.Valid() {
			t.Errorf("%q.Valid() = true", bad)
		}
	}
}
