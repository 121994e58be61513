package redisstore_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/internal/histrec"
	"github.com/chartgate/chartgate/internal/histrec/histrectest"
	"github.com/chartgate/chartgate/internal/redistest"
	"github.com/chartgate/chartgate/mcpbind/redisstore"
)

// entryFields returns the fields of a record's hash that hold history
// entries, sorted.
func entryFields(t *testing.T, client *redis.Client, key string) []string {
	t.Helper()
	fields, err := client.HKeys(context.Background(), key).Result()
	if err != nil {
		t.Fatal(err)
	}
	fields = slices.DeleteFunc(fields, func(f string) bool { return !strings.HasPrefix(f, "h") })
	slices.Sort(fields)
	return fields
}

// TestSplitWrites: a record written split (however small) loads as its
// head with its history joined in, through a change of the stored
// history (entries dropped and appended, the kept ones left where they
// were), the head alone, a conflict (which changes nothing), a whole
// replacement, every entry dropped, a plain write (which leaves no entry
// fields behind) and a delete (which leaves the version alone); another
// Store loads the same.
func TestSplitWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := redistest.Start(t)
	s := redisstore.New(client, &redisstore.Options{Prefix: "p:"})
	s.SetSplitAbove(0) // small records too
	other := redisstore.New(client, &redisstore.Options{Prefix: "p:"})
	h := histrectest.Entries(0, 5)
	check := func(what, want string, fields ...string) {
		t.Helper()
		for i, st := range []*redisstore.Store{s, other} {
			if got, _, err := st.Load(ctx, "k"); err != nil || string(got) != want {
				t.Fatalf("%s: Store %d loads %s, %v; want %s", what, i, got, err, want)
			}
		}
		if got := entryFields(t, client, "p:k"); !slices.Equal(got, fields) {
			t.Fatalf("%s: entry fields %q; want %q", what, got, fields)
		}
	}
	created, err := s.CompareAndSwapSplit(ctx, "k", 0, &histrec.Write{Head: []byte(`{"state":1}`), History: h[:3]}, true)
	if err != nil {
		t.Fatal(err)
	}
	check("created", histrectest.Joined(`{"state":1}`, h[:3]), "h0", "h1", "h2")

	v, err := s.CompareAndSwapSplit(ctx, "k", created, &histrec.Write{Head: []byte(`{"state":2}`), History: h[1:5], Delta: true, Dropped: 1, Appended: 2}, true)
	if err != nil {
		t.Fatal(err)
	}
	check("one dropped, two appended", histrectest.Joined(`{"state":2}`, h[1:5]), "h1", "h2", "h3", "h4")

	v, err = s.CompareAndSwapSplit(ctx, "k", v, &histrec.Write{Head: []byte(`{"state":3}`), History: h[1:5], Delta: true}, true)
	if err != nil {
		t.Fatal(err)
	}
	check("head alone", histrectest.Joined(`{"state":3}`, h[1:5]), "h1", "h2", "h3", "h4")

	if _, err := s.CompareAndSwapSplit(ctx, "k", created, &histrec.Write{Head: []byte(`{"state":9}`), History: h[:1], Delta: true, Appended: 1}, true); !gate.IsConflict(err) {
		t.Fatalf("write at an old version: %v; want a conflict", err)
	}
	check("after the conflict", histrectest.Joined(`{"state":3}`, h[1:5]), "h1", "h2", "h3", "h4")

	v, err = s.CompareAndSwapSplit(ctx, "k", v, &histrec.Write{Head: []byte(`{"state":4}`), History: h[3:4]}, true)
	if err != nil {
		t.Fatal(err)
	}
	check("replaced", histrectest.Joined(`{"state":4}`, h[3:4]), "h0")

	v, err = s.CompareAndSwapSplit(ctx, "k", v, &histrec.Write{Head: []byte(`{"state":5}`), Delta: true, Dropped: 1}, true)
	if err != nil {
		t.Fatal(err)
	}
	check("every entry dropped", `{"state":5}`)

	v, err = s.CompareAndSwapSplit(ctx, "k", v, &histrec.Write{Head: []byte(`{"state":6}`), History: h[:2], Delta: true, Appended: 2}, true)
	if err != nil {
		t.Fatal(err)
	}
	check("appended to none", histrectest.Joined(`{"state":6}`, h[:2]), "h1", "h2")

	v, err = s.CompareAndSwap(ctx, "k", v, []byte(`{"plain":true}`))
	if err != nil {
		t.Fatal(err)
	}
	check("written whole", `{"plain":true}`)

	v, err = s.CompareAndSwapSplit(ctx, "k", v, &histrec.Write{Head: []byte(`{"state":7}`), History: h[:2], Delta: true, Appended: 2}, true)
	if err != nil {
		t.Fatal(err)
	}
	check("a change of a record written whole", histrectest.Joined(`{"state":7}`, h[:2]), "h0", "h1")

	if err := s.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if got := entryFields(t, client, "p:k"); len(got) != 0 {
		t.Fatalf("entry fields %q of a deleted record; want none", got)
	}
	if d, ver, err := s.Load(ctx, "k"); d != nil || ver != 0 || err != nil {
		t.Fatalf("a deleted record loads %s at %d, %v", d, ver, err)
	}
	next, err := s.CompareAndSwapSplit(ctx, "k", 0, &histrec.Write{Head: []byte(`{"state":8}`), History: h[:1]}, true)
	if err != nil || next <= v {
		t.Fatalf("created again at %d, %v; want above %d", next, err, v)
	}
	check("created again", histrectest.Joined(`{"state":8}`, h[:1]), "h0")
}

// TestSmallRecordWrittenWhole: under 3 KiB a split write stores the
// record whole, with no entry fields.
func TestSmallRecordWrittenWhole(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := redistest.Start(t)
	s := redisstore.New(client, nil)
	h := histrectest.Entries(0, 3)
	if _, err := s.CompareAndSwapSplit(ctx, "k", 0, &histrec.Write{Head: []byte(`{"state":1}`), History: h}, true); err != nil {
		t.Fatal(err)
	}
	if got, _, err := s.Load(ctx, "k"); err != nil || string(got) != histrectest.Joined(`{"state":1}`, h) {
		t.Fatalf("loaded %s, %v", got, err)
	}
	if got := entryFields(t, client, "k"); len(got) != 0 {
		t.Fatalf("entry fields %q for a small record; want none", got)
	}
}

// TestGateKeepsHistoryApart: a gate on the store writes its records split
// (the threshold set to 0), and another Store loads the workflow with the
// newest entries of its history.
func TestGateKeepsHistoryApart(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t)
	store := redisstore.New(client, nil)
	store.SetSplitAbove(0)
	key := histrectest.GateHistory(t, store, redisstore.New(client, nil))
	if got := entryFields(t, client, key); len(got) != 3 {
		t.Fatalf("entry fields %q; want 3", got)
	}
}

// TestSplitRecordWrittenByOldVersion: a process of an earlier chartgate
// writes a split record whole, as it knows records ("v" and "d", the
// entry fields left alone): Load returns what it wrote, without the
// entries, and the next split write replaces them.
func TestSplitRecordWrittenByOldVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := redistest.Start(t)
	s := redisstore.New(client, nil)
	s.SetSplitAbove(0)
	h := histrectest.Entries(0, 3)
	v, err := s.CompareAndSwapSplit(ctx, "k", 0, &histrec.Write{Head: []byte(`{"state":1}`), History: h}, true)
	if err != nil {
		t.Fatal(err)
	}
	// The earlier version's script: the next version, and the record.
	old := histrectest.Joined(`{"state":"old"}`, h[:1])
	next := strconv.FormatUint(v+1, 10)
	if err := client.HSet(ctx, "k", "v", next, "d", old).Err(); err != nil {
		t.Fatal(err)
	}
	if got, ver, err := s.Load(ctx, "k"); err != nil || string(got) != old || ver != v+1 {
		t.Fatalf("loaded %s at %d, %v; want %s at %d", got, ver, err, old, v+1)
	}
	if _, err := s.CompareAndSwapSplit(ctx, "k", v+1, &histrec.Write{Head: []byte(`{"state":2}`), History: h[1:], Delta: true, Dropped: 2, Appended: 1}, true); err != nil {
		t.Fatal(err)
	}
	if got, _, err := s.Load(ctx, "k"); err != nil || string(got) != histrectest.Joined(`{"state":2}`, h[1:]) {
		t.Fatalf("after a split write: %s, %v; want %s", got, err, histrectest.Joined(`{"state":2}`, h[1:]))
	}
	if got := entryFields(t, client, "k"); !slices.Equal(got, []string{"h0", "h1"}) {
		t.Fatalf("entry fields %q; want the history replaced: h0, h1", got)
	}
}

// TestSplitConcurrent: writers on one Redis write one split record at
// once, each write a change of the history it loaded: none is lost or
// doubled.
func TestSplitConcurrent(t *testing.T) {
	t.Parallel()
	s := redisstore.New(redistest.Start(t), nil)
	s.SetSplitAbove(0)
	histrectest.Concurrent(t, s, 4, 50)
}
