package statesync

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// randString returns 1 to max characters drawn from alphabet.
func randString(r *rand.Rand, max int, alphabet string) string {
	b := make([]byte, 1+r.IntN(max))
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
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

// bruteWitness reports whether some name over alphabet with at most maxLen
// characters matches all of must and none of mustNot, and returns a
// shortest one.
func bruteWitness(must, mustNot []*Glob, alphabet string, maxLen int) (string, bool) {
	level := []string{""}
	for range maxLen {
		var next []string
		for _, prefix := range level {
			for i := range len(alphabet) {
				n := prefix + alphabet[i:i+1]
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
				next = append(next, n)
			}
		}
		level = next
	}
	return "", false
}

// TestSearchAgainstBruteForce checks the exact language analysis against an
// enumeration of short names: a witness it returns must be one, as short as
// any, and when it says there is none, no short name may be one either.
func TestSearchAgainstBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 3000 {
		var must, mustNot []*Glob
		for range 1 + r.IntN(2) {
			g, _ := CompileGlob(randString(r, 5, "ab.*"))
			must = append(must, g)
		}
		for range r.IntN(3) {
			g, _ := CompileGlob(randString(r, 5, "ab.*"))
			mustNot = append(mustNot, g)
		}
		w, found, err := search(must, mustNot)
		if err != nil {
			t.Fatal(err)
		}
		bw, bfound := bruteWitness(must, mustNot, "ab.x", 6)
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
			if bfound && len(bw) < len(w) {
				t.Fatalf("witness %q is longer than %q", w, bw)
			}
		} else if bfound {
			t.Fatalf("search(%v, %v) found nothing; %q is a witness", must, mustNot, bw)
		}
	}
}

func TestSearchBudget(t *testing.T) {
	// No name matches these four patterns and not "*", but finding that
	// out means visiting every combination of how many a, b, c and d have
	// been read so far, up to 13 each: 14^4 states.
	var hard []*Glob
	for _, c := range "abcd" {
		g, _ := CompileGlob("*" + strings.Repeat(string(c)+"*", 13))
		hard = append(hard, g)
	}
	all, _ := CompileGlob("*")
	_, _, err := search(hard, []*Glob{all})
	if err != ErrTooComplex {
		t.Fatalf("err = %v, want ErrTooComplex", err)
	}
}
