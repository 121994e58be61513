package statesync_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/chartgate/chartgate/statesync"
)

func mustNew(t testing.TB, policies []statesync.Policy, opts *statesync.Options) *statesync.Layer {
	t.Helper()
	l, err := statesync.New(policies, opts)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

type want struct {
	cc          statesync.CacheControl
	invalidates []string
	policy      int
}

func checkResolve(t *testing.T, l *statesync.Layer, tool string, w want) {
	t.Helper()
	r := l.Resolve(tool)
	if r.CacheControl != w.cc || !slices.Equal(r.Invalidates(), w.invalidates) || r.Policy != w.policy {
		t.Errorf("Resolve(%q) = {%q %q policy %d}, want {%q %q policy %d}",
			tool, r.CacheControl, r.Invalidates(), r.Policy, w.cc, w.invalidates, w.policy)
	}
}

// TestResolveFirstMatchWins is the seed's First-Match-Wins example.
func TestResolveFirstMatchWins(t *testing.T) {
	l := mustNew(t, []statesync.Policy{
		{Match: "sprints.get", CacheControl: statesync.Immutable}, // ← wins for sprints.get
		{Match: "sprints.*", CacheControl: statesync.NoStore},     // ← wins for all other sprints.*
	}, nil)
	checkResolve(t, l, "sprints.get", want{statesync.Immutable, nil, 0})
	checkResolve(t, l, "sprints.list", want{statesync.NoStore, nil, 1})   // falls through
	checkResolve(t, l, "sprints.update", want{statesync.NoStore, nil, 1}) // falls through
	checkResolve(t, l, "tasks.get", want{"", nil, -1})                    // no match, no defaults: nothing
}

// TestResolveDefaultsFallback is the seed's Defaults Fallback example.
func TestResolveDefaultsFallback(t *testing.T) {
	l := mustNew(t, []statesync.Policy{
		{Match: "countries.*", CacheControl: statesync.Immutable}, // Override for static data
	}, &statesync.Options{Default: statesync.NoStore}) // Every tool gets no-store unless overridden
	checkResolve(t, l, "countries.list", want{statesync.Immutable, nil, 0})
	checkResolve(t, l, "sprints.list", want{statesync.NoStore, nil, -1})
	checkResolve(t, l, "anything", want{statesync.NoStore, nil, -1})
}

// TestResolveSeedQuickStart resolves every tool of the seed's domain.
func TestResolveSeedQuickStart(t *testing.T) {
	l := mustNew(t, seedPolicies(), &statesync.Options{Default: statesync.NoStore})
	checkResolve(t, l, "sprints.update", want{statesync.NoStore, []string{"sprints.*"}, 0})
	checkResolve(t, l, "sprints.create", want{statesync.NoStore, []string{"sprints.*"}, 1})
	checkResolve(t, l, "sprints.delete", want{statesync.NoStore, []string{"sprints.*"}, 2})
	checkResolve(t, l, "tasks.update", want{statesync.NoStore, []string{"tasks.*", "sprints.*"}, 3})
	checkResolve(t, l, "countries.list", want{statesync.Immutable, nil, 4})
	checkResolve(t, l, "sprints.list", want{statesync.NoStore, nil, -1})
}

// TestResolveMixedStaticAndDynamic is the seed's "Mixed Static and Dynamic"
// configuration.
func TestResolveMixedStaticAndDynamic(t *testing.T) {
	l := mustNew(t, []statesync.Policy{
		// Static → safe to cache forever
		{Match: "countries.*", CacheControl: statesync.Immutable},
		{Match: "currencies.*", CacheControl: statesync.Immutable},
		{Match: "timezones.*", CacheControl: statesync.Immutable},
		// Mutations → explicit invalidation
		{Match: "sprints.create", Invalidates: []string{"sprints.*"}},
		{Match: "sprints.update", Invalidates: []string{"sprints.*"}},
		{Match: "sprints.delete", Invalidates: []string{"sprints.*"}},
		{Match: "tasks.update", Invalidates: []string{"tasks.*", "sprints.*"}},
		// Everything else → falls through to default: no-store
	}, &statesync.Options{Default: statesync.NoStore})
	checkResolve(t, l, "currencies.list", want{statesync.Immutable, nil, 1})
	checkResolve(t, l, "timezones.get", want{statesync.Immutable, nil, 2})
	checkResolve(t, l, "sprints.create", want{statesync.NoStore, []string{"sprints.*"}, 3})
	checkResolve(t, l, "tasks.update", want{statesync.NoStore, []string{"tasks.*", "sprints.*"}, 6})
	checkResolve(t, l, "reports.generate", want{statesync.NoStore, nil, -1})
}

// TestResolveCrossDomain is the seed's Cross-Domain Invalidation policies.
func TestResolveCrossDomain(t *testing.T) {
	l := mustNew(t, []statesync.Policy{
		{Match: "tasks.update", Invalidates: []string{"tasks.*", "sprints.*"}},
		{Match: "tasks.create", Invalidates: []string{"tasks.*", "sprints.*"}},
		{Match: "tasks.delete", Invalidates: []string{"tasks.*", "sprints.*"}},
	}, nil)
	for i, tool := range []string{"tasks.update", "tasks.create", "tasks.delete"} {
		checkResolve(t, l, tool, want{"", []string{"tasks.*", "sprints.*"}, i})
	}
}

// TestResolveMatchOnlyPolicyStillWins: a policy with neither field still
// stops later policies; the tool gets the default.
func TestResolveMatchOnlyPolicyStillWins(t *testing.T) {
	l := mustNew(t, []statesync.Policy{
		{Match: "sprints.get"},
		{Match: "sprints.*", CacheControl: statesync.Immutable, Invalidates: []string{"x"}},
	}, &statesync.Options{Default: statesync.NoStore})
	checkResolve(t, l, "sprints.get", want{statesync.NoStore, nil, 0})
	checkResolve(t, l, "sprints.list", want{statesync.Immutable, []string{"x"}, 1})
	l2 := mustNew(t, []statesync.Policy{{Match: "sprints.get"}}, nil)
	checkResolve(t, l2, "sprints.get", want{"", nil, 0})
}

func TestResolveCatchAllAndEmpty(t *testing.T) {
	l := mustNew(t, []statesync.Policy{
		{Match: "**", CacheControl: statesync.NoStore},
		{Match: "countries.*", CacheControl: statesync.Immutable}, // shadowed
	}, nil)
	checkResolve(t, l, "countries.list", want{statesync.NoStore, nil, 0})
	checkResolve(t, l, "", want{statesync.NoStore, nil, 0})

	empty := mustNew(t, nil, nil)
	checkResolve(t, empty, "sprints.list", want{"", nil, -1})
	emptyDef := mustNew(t, []statesync.Policy{}, &statesync.Options{Default: statesync.Immutable})
	checkResolve(t, emptyDef, "sprints.list", want{statesync.Immutable, nil, -1})
}

func TestResolveExactVersusNearMiss(t *testing.T) {
	l := mustNew(t, []statesync.Policy{{Match: "sprints.get", CacheControl: statesync.Immutable}}, nil)
	checkResolve(t, l, "sprints.get", want{statesync.Immutable, nil, 0})
	for _, near := range []string{"sprints.getAll", "sprints.ge", "Sprints.get", "sprints.get.x", "x.sprints.get"} {
		checkResolve(t, l, near, want{"", nil, -1})
	}
}

func TestResolveDuplicatesRemoved(t *testing.T) {
	l := mustNew(t, []statesync.Policy{{Match: "a", Invalidates: []string{"b.*", "c", "b.*"}}}, nil)
	checkResolve(t, l, "a", want{"", []string{"b.*", "c"}, 0})
}

// TestResolveIsStable: repeated and concurrent resolutions agree, and
// callers cannot corrupt what the layer caches.
func TestResolveIsStable(t *testing.T) {
	l := mustNew(t, seedPolicies(), &statesync.Options{Default: statesync.NoStore, CacheSize: 8})
	first := l.Resolve("tasks_update")
	inv := first.Invalidates()
	inv[0] = "corrupted"
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				name := fmt.Sprintf("sprints_x%d", (g*500+i)%20) // more names than the cache holds
				if r := l.Resolve(name); r.CacheControl != statesync.NoStore {
					t.Errorf("Resolve(%q) = %v", name, r.CacheControl)
					return
				}
				if r := l.Resolve("tasks_update"); !slices.Equal(r.Invalidates(), []string{"tasks.*", "sprints.*"}) {
					t.Errorf("tasks_update = %v", r.Invalidates())
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestCanonicalKeys: policies are written group.action and must match the
// wire names whatever their separator. MCP Fusion's flat exposition keys
// tools/list by wire name, so "sprints.update" never matches sprints_update
// there; here it does.
func TestCanonicalKeys(t *testing.T) {
	policies := []statesync.Policy{
		{Match: "sprints.update", Invalidates: []string{"sprints.*"}},
		{Match: "tasks.move_to_sprint", Invalidates: []string{"tasks.*"}},
		{Match: "billing.invoices.*", CacheControl: statesync.Immutable},
		{Match: "countries.*", CacheControl: statesync.Immutable},
	}
	def := mustNew(t, policies, &statesync.Options{Default: statesync.NoStore})
	for _, c := range []struct {
		tool, key string
		policy    int
	}{
		{"sprints_update", "sprints.update", 0},
		{"sprints.update", "sprints.update", 0},             // already canonical
		{"tasks_move_to_sprint", "tasks.move_to_sprint", 1}, // first separator only
		{"countries_list", "countries.list", 3},
		{"billing_invoices_list", "billing.invoices_list", -1}, // needs SplitAll
		{"ping", "ping", -1},
		{"sprints.bulk_update", "sprints.bulk_update", -1}, // dotted names stay verbatim
	} {
		r := def.Resolve(c.tool)
		if r.Key != c.key || r.Policy != c.policy || r.Tool != c.tool {
			t.Errorf("default key: Resolve(%q) = key %q policy %d, want %q %d", c.tool, r.Key, r.Policy, c.key, c.policy)
		}
	}

	dash := mustNew(t, policies, &statesync.Options{Separator: "-"})
	if r := dash.Resolve("sprints-update"); r.Key != "sprints.update" || r.Policy != 0 {
		t.Errorf("Separator -: %+v", r)
	}
	if r := dash.Resolve("sprints_update"); r.Policy != -1 {
		t.Errorf("Separator -: sprints_update should not match, got policy %d", r.Policy)
	}

	all := mustNew(t, policies, &statesync.Options{Key: statesync.SplitAll("_")})
	if r := all.Resolve("billing_invoices_list"); r.Key != "billing.invoices.list" || r.Policy != 2 {
		t.Errorf("SplitAll: %+v", r)
	}

	verbatim := mustNew(t, policies, &statesync.Options{Key: func(s string) string { return s }})
	if r := verbatim.Resolve("sprints_update"); r.Policy != -1 || r.Key != "sprints_update" {
		t.Errorf("verbatim key: %+v", r)
	}

	// Unmatched names the policies no tool reaches: with verbatim keys, a
	// flat server matches nothing, which is the silent failure to catch.
	tools := []string{"sprints_update", "tasks_move_to_sprint", "countries_list"}
	if got := def.Unmatched(tools); !slices.Equal(got, []int{2}) {
		t.Errorf("Unmatched (default key) = %v, want [2]", got)
	}
	if got := verbatim.Unmatched(tools); !slices.Equal(got, []int{0, 1, 2, 3}) {
		t.Errorf("Unmatched (verbatim) = %v, want all", got)
	}
}

func TestGroupActionAndSplitAll(t *testing.T) {
	ga := statesync.GroupAction("_")
	sa := statesync.SplitAll("_")
	for _, c := range []struct{ in, ga, sa string }{
		{"sprints_list", "sprints.list", "sprints.list"},
		{"tasks_move_to_sprint", "tasks.move_to_sprint", "tasks.move.to.sprint"},
		{"ping", "ping", "ping"},
		{"a.b_c", "a.b_c", "a.b.c"},
		{"_x", ".x", ".x"},
	} {
		if got := ga(c.in); got != c.ga {
			t.Errorf("GroupAction(_)(%q) = %q, want %q", c.in, got, c.ga)
		}
		if got := sa(c.in); got != c.sa {
			t.Errorf("SplitAll(_)(%q) = %q, want %q", c.in, got, c.sa)
		}
	}
	if statesync.GroupAction("")("a_b") != "a_b" || statesync.SplitAll("")("a_b") != "a_b" {
		t.Error("empty separator should be the identity")
	}
}

func TestNilLayer(t *testing.T) {
	var l *statesync.Layer
	if r := l.Resolve("x_y"); r.CacheControl != "" || r.Policy != -1 {
		t.Errorf("nil Resolve = %+v", r)
	}
	if ov, err := l.Overlaps(); ov != nil || err != nil {
		t.Error("nil Overlaps")
	}
	if l.Unmatched([]string{"a"}) != nil {
		t.Error("nil Unmatched")
	}
	if err := l.Declare("x", statesync.Cached()); err != nil {
		t.Error(err)
	}
}
