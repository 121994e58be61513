package statesync

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// refMatch is the obvious recursive definition of the glob language, for
// differential tests; it is exponential on purpose-built inputs.
func refMatch(pat, name []string) bool {
	if len(pat) == 0 {
		return len(name) == 0
	}
	switch pat[0] {
	case "**":
		for k := 0; k <= len(name); k++ {
			if refMatch(pat[1:], name[k:]) {
				return true
			}
		}
		return false
	case "*":
		return len(name) > 0 && refMatch(pat[1:], name[1:])
	}
	return len(name) > 0 && name[0] == pat[0] && refMatch(pat[1:], name[1:])
}

func randPattern(r *rand.Rand, maxSegs int, lits []string) string {
	n := 1 + r.IntN(maxSegs)
	segs := make([]string, n)
	for i := range segs {
		switch k := r.IntN(len(lits) + 2); k {
		case len(lits):
			segs[i] = "*"
		case len(lits) + 1:
			segs[i] = "**"
		default:
			segs[i] = lits[k]
		}
	}
	return strings.Join(segs, ".")
}

func randName(r *rand.Rand, maxSegs int, alphabet []string) string {
	n := 1 + r.IntN(maxSegs)
	segs := make([]string, n)
	for i := range segs {
		segs[i] = alphabet[r.IntN(len(alphabet))]
	}
	return strings.Join(segs, ".")
}

func TestMatchAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	lits := []string{"a", "b"}
	alphabet := []string{"a", "b", "c", ""}
	for range 20000 {
		p := randPattern(r, 6, lits)
		n := randName(r, 7, alphabet)
		g, err := CompileGlob(p)
		if err != nil {
			t.Fatal(err)
		}
		want := refMatch(strings.Split(p, "."), strings.Split(n, "."))
		if got := g.Match(n); got != want {
			t.Fatalf("Match(%q, %q) = %v, reference says %v", p, n, got, want)
		}
		if got := g.matchWide(n); got != want {
			t.Fatalf("matchWide(%q, %q) = %v, reference says %v", p, n, got, want)
		}
	}
}

func FuzzMatch(f *testing.F) {
	f.Add("sprints.*", "sprints.get")
	f.Add("**.a.*", "x.a.y")
	f.Add("a.**.b.*.**", "a.b.c.b.d")
	f.Fuzz(func(t *testing.T, pattern, name string) {
		g, err := CompileGlob(pattern)
		if err != nil || strings.Count(pattern, "**") > 6 || strings.Count(name, ".") > 12 {
			return // keep the exponential reference tractable
		}
		want := refMatch(strings.Split(pattern, "."), strings.Split(name, "."))
		if got := g.Match(name); got != want {
			t.Fatalf("Match(%q, %q) = %v, reference says %v", pattern, name, got, want)
		}
	})
}

func TestLRUEvictsLeastRecentlyUsed(t *testing.T) {
	c := newLRU(3)
	for _, k := range []string{"a", "b", "c"} {
		c.put(k, &entry{res: Resolution{Tool: k}})
	}
	if _, ok := c.get("a"); !ok { // a becomes most recent
		t.Fatal("a missing")
	}
	c.put("d", &entry{res: Resolution{Tool: "d"}}) // evicts b, the least recent
	if got, want := c.keys(), []string{"d", "a", "c"}; !slices.Equal(got, want) {
		t.Fatalf("keys = %v, want %v", got, want)
	}
	if _, ok := c.get("b"); ok {
		t.Fatal("b should have been evicted")
	}
	c.put("c", &entry{res: Resolution{Tool: "c2"}}) // update refreshes without growing
	if got, want := c.keys(), []string{"c", "d", "a"}; !slices.Equal(got, want) || c.len() != 3 {
		t.Fatalf("keys = %v (len %d), want %v", got, c.len(), want)
	}
	if r, _ := c.get("c"); r.res.Tool != "c2" {
		t.Fatalf("c = %v, want updated", r.res.Tool)
	}
	c.remove("d")
	c.remove("zz")
	if got, want := c.keys(), []string{"c", "a"}; !slices.Equal(got, want) {
		t.Fatalf("keys after remove = %v, want %v", got, want)
	}
	c.purge()
	if c.len() != 0 || len(c.keys()) != 0 {
		t.Fatal("purge left entries")
	}
}

// TestResolutionCacheIsLRU: a Layer keeps the most recently used names when
// it is full, rather than flushing everything as MCP Fusion does.
func TestResolutionCacheIsLRU(t *testing.T) {
	l, err := New([]Policy{{Match: "sprints.*", CacheControl: NoStore}}, &Options{CacheSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	l.Resolve("sprints_a")
	l.Resolve("sprints_b")
	l.Resolve("sprints_a")
	l.Resolve("sprints_c")
	if got, want := l.cache.keys(), []string{"sprints_c", "sprints_a"}; !slices.Equal(got, want) {
		t.Fatalf("cached = %v, want %v", got, want)
	}
	l.Resolve("reports_x") // misses are cached too
	if got, want := l.cache.keys(), []string{"reports_x", "sprints_c"}; !slices.Equal(got, want) {
		t.Fatalf("cached = %v, want %v", got, want)
	}
	if r := l.Resolve("sprints_b"); r.CacheControl != NoStore || r.Key != "sprints.b" {
		t.Fatalf("after eviction: %+v", r)
	}
	off, _ := New(nil, &Options{CacheSize: -1, Default: NoStore})
	if off.cache != nil || off.Resolve("x").CacheControl != NoStore {
		t.Fatal("CacheSize < 0 should disable the cache and still resolve")
	}
}

// TestDeclarePurgesCachedResolution: declaring options after a resolution
// was cached takes effect at once.
func TestDeclarePurgesCachedResolution(t *testing.T) {
	l, _ := New(nil, &Options{Default: NoStore})
	if r := l.Resolve("countries_list"); r.CacheControl != NoStore {
		t.Fatal(r)
	}
	if err := l.Declare("countries_list", Cached()); err != nil {
		t.Fatal(err)
	}
	if r := l.Resolve("countries_list"); r.CacheControl != Immutable {
		t.Fatalf("after Declare: %v", r.CacheControl)
	}
}

// bruteWitness reports whether some name over alphabet with at most maxSegs
// segments matches all of must and none of mustNot.
func bruteWitness(must, mustNot []*Glob, alphabet []string, maxSegs int) (string, bool) {
	var rec func(prefix []string) (string, bool)
	rec = func(prefix []string) (string, bool) {
		if len(prefix) > 0 {
			n := strings.Join(prefix, ".")
			ok := true
			for _, g := range must {
				ok = ok && g.Match(n)
			}
			for _, g := range mustNot {
				ok = ok && !g.Match(n)
			}
			if ok {
				return n, true
			}
		}
		if len(prefix) == maxSegs {
			return "", false
		}
		for _, s := range alphabet {
			if w, ok := rec(append(prefix, s)); ok {
				return w, true
			}
		}
		return "", false
	}
	return rec(nil)
}

// TestSearchAgainstBruteForce checks the exact language analysis against an
// enumeration of short names: a witness it returns must be one, and when it
// says there is none, no short name may be one either.
func TestSearchAgainstBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	lits := []string{"a", "b"}
	alphabet := []string{"a", "b", "x"}
	for range 3000 {
		var must, mustNot []*Glob
		for range 1 + r.IntN(2) {
			g, _ := CompileGlob(randPattern(r, 4, lits))
			must = append(must, g)
		}
		for range r.IntN(3) {
			g, _ := CompileGlob(randPattern(r, 4, lits))
			mustNot = append(mustNot, g)
		}
		w, found, err := search(must, mustNot)
		if err != nil {
			t.Fatal(err)
		}
		bw, bfound := bruteWitness(must, mustNot, alphabet, 6)
		if found {
			for _, g := range must {
				if !g.Match(w) {
					t.Fatalf("witness %q does not match %s", w, g)
				}
			}
			for _, g := range mustNot {
				if g.Match(w) {
					t.Fatalf("witness %q matches excluded %s", w, g)
				}
			}
			if bfound && strings.Count(bw, ".") < strings.Count(w, ".") {
				t.Fatalf("witness %q is longer than %q", w, bw)
			}
		} else if bfound {
			t.Fatalf("search(%v, %v) found nothing; %q is a witness", must, mustNot, bw)
		}
	}
}

func TestSearchBudget(t *testing.T) {
	// "the 16th segment from the end is a" needs 2^16 states to decide.
	hard, _ := CompileGlob("**.a" + strings.Repeat(".*", 15))
	other, _ := CompileGlob("**.b" + strings.Repeat(".*", 15))
	_, _, err := search([]*Glob{hard}, []*Glob{other})
	if err != ErrTooComplex {
		t.Fatalf("err = %v, want ErrTooComplex", err)
	}
}
