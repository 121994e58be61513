package sqlitestore_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/internal/histrec"
	"github.com/chartgate/chartgate/internal/histrec/histrectest"
	"github.com/chartgate/chartgate/mcpbind/sqlitestore"
)

// historyRows returns the number of rows of entries in the file that
// hold key's history: those of the key, less the rows of dropped entries
// not deleted yet (at most 32, or the Store deleted them).
func historyRows(t *testing.T, path, key string) int {
	t.Helper()
	var n, dead int
	db := rawDB(t, path)
	if err := db.QueryRow("SELECT count(*) FROM entries WHERE key = ?", key).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("SELECT dead FROM workflows WHERE key = ? AND split", key).Scan(&dead); err != nil && !errors.Is(err, sql.ErrNoRows) {
		t.Fatal(err)
	}
	if dead < 0 || dead >= 32 || dead > n {
		t.Fatalf("%q: %d rows of entries, %d of them dead; want fewer than 32 dead", key, n, dead)
	}
	return n - dead
}

// TestSplitWrites: a record written split (however small) loads as its
// head with its history joined in, through a change of the stored
// history (entries dropped and appended), a whole replacement, a create,
// a plain write (which leaves no rows behind), a conflict (which changes
// nothing), a delete and an expiry; another Store on the file loads the
// same. With the tail, the newest entries stay in the record's row.
func TestSplitWrites(t *testing.T) {
	t.Parallel()
	for _, tail := range []bool{false, true} {
		t.Run(fmt.Sprintf("tail=%v", tail), func(t *testing.T) {
			t.Parallel()
			testSplitWrites(t, tail)
		})
	}
}

func testSplitWrites(t *testing.T, tail bool) {
	ctx := context.Background()
	clk := newClock()
	path := filepath.Join(t.TempDir(), "state.db")
	s := openAt(t, path, &sqlitestore.Options{TTL: time.Hour, Now: clk.Now})
	s.SetSplitAbove(0) // small records too
	if !tail {
		s.SetTailAbove(0)
	}
	other := openAt(t, path, &sqlitestore.Options{Now: clk.Now})
	h := histrectest.Entries(0, 5)
	// rows is the number of rows that hold the history; tailRows, with
	// the tail.
	check := func(what, want string, rows, tailRows int) {
		t.Helper()
		for i, st := range []*sqlitestore.Store{s, other} {
			if got, _, err := st.Load(ctx, "k"); err != nil || string(got) != want {
				t.Fatalf("%s: Store %d loads %s, %v; want %s", what, i, got, err, want)
			}
		}
		if tail {
			rows = tailRows
		}
		if n := historyRows(t, path, "k"); n != rows {
			t.Fatalf("%s: %d rows of history; want %d", what, n, rows)
		}
	}
	v, err := s.CompareAndSwapSplit(ctx, "k", 0, &histrec.Write{Head: []byte(`{"state":1}`), History: h[:3]}, true)
	if err != nil {
		t.Fatal(err)
	}
	check("created", histrectest.Joined(`{"state":1}`, h[:3]), 3, 3)
	v, err = s.CompareAndSwapSplit(ctx, "k", v, &histrec.Write{Head: []byte(`{"state":2}`), History: h[1:5], Delta: true, Dropped: 1, Appended: 2}, false)
	if err != nil {
		t.Fatal(err)
	}
	check("one dropped, two appended", histrectest.Joined(`{"state":2}`, h[1:5]), 4, 2)
	if _, err := s.CompareAndSwapSplit(ctx, "k", v-1, &histrec.Write{Head: []byte(`{"state":3}`), History: h[4:], Delta: true, Dropped: 3, Appended: 0}, true); !gate.IsConflict(err) {
		t.Fatalf("a split write against an old version: %v; want a conflict", err)
	}
	check("after a conflict", histrectest.Joined(`{"state":2}`, h[1:5]), 4, 2)
	v, err = s.CompareAndSwapSplit(ctx, "k", v, &histrec.Write{Head: []byte(`{"state":4}`), History: h[:2]}, true)
	if err != nil {
		t.Fatal(err)
	}
	check("replaced", histrectest.Joined(`{"state":4}`, h[:2]), 2, 2)
	v, err = s.CompareAndSwapSplit(ctx, "k", v, &histrec.Write{Head: []byte(`{"state":5}`), Delta: true, Dropped: 2}, true)
	if err != nil {
		t.Fatal(err)
	}
	check("every entry dropped", `{"state":5}`, 0, 0)
	v, err = s.CompareAndSwapSplit(ctx, "k", v, &histrec.Write{Head: []byte(`{"state":6}`), History: h[:1], Delta: true, Appended: 1}, true)
	if err != nil {
		t.Fatal(err)
	}
	check("one appended", histrectest.Joined(`{"state":6}`, h[:1]), 1, 0)
	plain := histrectest.Joined(`{"state":7}`, h[2:4])
	if v, err = s.CompareAndSwap(ctx, "k", v, []byte(plain)); err != nil {
		t.Fatal(err)
	}
	check("written plain", plain, 0, 0)
	// Told as a change of the head alone, a write over a record that
	// holds its history itself still gives the history its rows.
	if v, err = s.CompareAndSwapSplit(ctx, "k", v, &histrec.Write{Head: []byte(`{"state":7.5}`), History: h[2:4], Delta: true}, true); err != nil {
		t.Fatal(err)
	}
	check("the head alone, over a record written plain", histrectest.Joined(`{"state":7.5}`, h[2:4]), 2, 2)
	if v, err = s.CompareAndSwapSplit(ctx, "k", v, &histrec.Write{Head: []byte(`{"state":7.6}`), History: h[2:4], Delta: true}, true); err != nil {
		t.Fatal(err)
	}
	check("the head alone", histrectest.Joined(`{"state":7.6}`, h[2:4]), 2, 2)
	if _, err := s.CompareAndSwapSplit(ctx, "k", v-1, &histrec.Write{Head: []byte(`{"state":0}`), History: h[2:4], Delta: true}, true); !gate.IsConflict(err) {
		t.Fatalf("a write of the head alone against an old version: %v; want a conflict", err)
	}
	check("the head alone, after a conflict", histrectest.Joined(`{"state":7.6}`, h[2:4]), 2, 2)
	if v, err = s.CompareAndSwap(ctx, "k", v, []byte(plain)); err != nil {
		t.Fatal(err)
	}
	check("written plain again", plain, 0, 0)
	// A change told against a record that holds its history itself
	// replaces the history.
	if _, err = s.CompareAndSwapSplit(ctx, "k", v, &histrec.Write{Head: []byte(`{"state":8}`), History: h[2:5], Delta: true, Appended: 1}, true); err != nil {
		t.Fatal(err)
	}
	check("split again", histrectest.Joined(`{"state":8}`, h[2:5]), 3, 3)
	if err := s.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if n := historyRows(t, path, "k"); n != 0 {
		t.Fatalf("deleted: %d rows of history; want 0", n)
	}
	// An expired record created again: the new history only.
	if _, err = s.CompareAndSwapSplit(ctx, "k", 0, &histrec.Write{Head: []byte(`{"state":9}`), History: h[:4]}, true); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * time.Hour)
	if _, err = s.CompareAndSwapSplit(ctx, "k", 0, &histrec.Write{Head: []byte(`{"state":10}`), History: h[4:]}, true); err != nil {
		t.Fatal(err)
	}
	if got, _, err := s.Load(ctx, "k"); err != nil || string(got) != histrectest.Joined(`{"state":10}`, h[4:]) {
		t.Fatalf("created again after it expired: %s, %v", got, err)
	}
	if n := historyRows(t, path, "k"); n != 1 {
		t.Fatalf("created again after it expired: %d rows of history; want 1", n)
	}
}

// TestSplitChanges: two Stores on one file write one split record in
// turn, at random, each write a change of the history the writer loaded
// (up to 3 entries dropped and 3 appended, 40 kept at most), with a tail
// of about 3 entries: through the tail's entries becoming rows, the rows
// of dropped entries deleted in turn, and writes by the Store that did
// not write the record last (which reads its counts), the record loads
// as written, and its rows of entries hold no more than its history.
func TestSplitChanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	stores := []*sqlitestore.Store{openAt(t, path, nil), openAt(t, path, nil)}
	for _, s := range stores {
		s.SetSplitAbove(0)
		s.SetTailAbove(500)
	}
	head := `{"state":1}`
	all := histrectest.Entries(0, 2000)
	next := 10
	hist := all[:next]
	v, err := stores[0].CompareAndSwapSplit(ctx, "k", 0, &histrec.Write{Head: []byte(head), History: hist}, true)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 400 {
		s := stores[r.IntN(2)]
		added := r.IntN(4)
		h := append(hist[:len(hist):len(hist)], all[next:next+added]...)
		next += added
		dropped := max(0, len(h)-40)
		if r.IntN(4) == 0 {
			dropped = min(len(h), dropped+r.IntN(4))
		}
		h = h[dropped:]
		if v, err = s.CompareAndSwapSplit(ctx, "k", v, &histrec.Write{Head: []byte(head), History: h, Delta: true, Dropped: dropped, Appended: added}, i%2 == 0); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		hist = h
		for j, o := range stores {
			if got, _, err := o.Load(ctx, "k"); err != nil || string(got) != histrectest.Joined(head, hist) {
				t.Fatalf("write %d (%d dropped, %d appended): Store %d loads %.200s…, %v; want %d entries", i, dropped, added, j, got, err, len(hist))
			}
		}
		if n := historyRows(t, path, "k"); n > len(hist) {
			t.Fatalf("write %d: %d rows of entries for a history of %d", i, n, len(hist))
		}
	}
}

// TestSplitWriteChangesFewPages: a split write that drops an entry from a
// history of 500 (~60 KB, as the chartgate command keeps) and appends one
// changes the record's page alone, most of the time (1.4 pages on
// average: every 20 writes or so the tail becomes rows, every 32 the
// dropped entries' rows go), where a plain write of the same record
// changes every page it spans.
func TestSplitWriteChangesFewPages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s := openAt(t, path, &sqlitestore.Options{RelaxedSync: true})
	walFrames := walFrames(t, path)
	frames := func(write func()) int64 {
		t.Helper()
		n, _ := walFrames(write)
		return n
	}
	h := histrectest.Entries(0, 600)
	head := []byte(`{"state":{"value":"a","context":{"n":1}}}`)
	v, err := s.CompareAndSwapSplit(ctx, "k", 0, &histrec.Write{Head: head, History: h[:500]}, true)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := s.CompareAndSwap(ctx, "p", 0, []byte(histrectest.Joined(string(head), h[:500])))
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for i := 1; i <= 100; i++ {
		n := frames(func() {
			v, err = s.CompareAndSwapSplit(ctx, "k", v, &histrec.Write{Head: head, History: h[i : 500+i], Delta: true, Dropped: 1, Appended: 1}, true)
			if err != nil {
				t.Fatal(err)
			}
		})
		total += n
		if n > 10 { // a leaf page split, a page freed
			t.Fatalf("split write %d changed %d pages; want at most 10", i, n)
		}
	}
	if total > 200 {
		t.Fatalf("100 split writes changed %d pages; want at most 2 each on average", total)
	}
	if got, _, err := s.Load(ctx, "k"); err != nil || string(got) != histrectest.Joined(string(head), h[100:600]) {
		t.Fatalf("after 100 split writes: %.200s…, %v", got, err)
	}
	// A write that changes the head only (a lease) changes its page.
	leased := []byte(`{"state":{"value":"a","context":{"n":1}},"lease":{"id":"x","tool":"t","until":"2026-11-29T23:00:00Z"}}`)
	if n := frames(func() {
		v, err = s.CompareAndSwapSplit(ctx, "k", v, &histrec.Write{Head: leased, History: h[100:600], Delta: true}, false)
		if err != nil {
			t.Fatal(err)
		}
	}); n != 1 {
		t.Fatalf("a write of the head alone changed %d pages; want 1", n)
	}
	if got, _, err := s.Load(ctx, "k"); err != nil || string(got) != histrectest.Joined(string(leased), h[100:600]) {
		t.Fatalf("after a write of the head: %.200s…, %v", got, err)
	}
	n := frames(func() {
		if _, err := s.CompareAndSwap(ctx, "p", plain, []byte(histrectest.Joined(string(head), h[1:501]))); err != nil {
			t.Fatal(err)
		}
	})
	if n < 10 {
		t.Fatalf("a plain write of the record changed %d pages; want its ~16", n)
	}
}

// TestSmallRecordWrittenWhole: a record of less than 3 KiB given split is
// written whole (one page either way, and one statement); once it grows
// past that its history is kept apart, and when it shrinks again its rows
// go.
func TestSmallRecordWrittenWhole(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s := openAt(t, path, nil)
	h := histrectest.Entries(0, 40) // ~130 bytes each
	head := `{"state":1}`
	v := uint64(0)
	for _, c := range []struct {
		history []json.RawMessage
		rows    int
	}{{h[:3], 0}, {h[:30], 30}, {h[:10], 0}} {
		var err error
		v, err = s.CompareAndSwapSplit(ctx, "k", v, &histrec.Write{Head: []byte(head), History: c.history}, true)
		if err != nil {
			t.Fatal(err)
		}
		if got, _, err := s.Load(ctx, "k"); err != nil || string(got) != histrectest.Joined(head, c.history) {
			t.Fatalf("%d entries: loads %.100s…, %v", len(c.history), got, err)
		}
		if n := historyRows(t, path, "k"); n != c.rows {
			t.Fatalf("%d entries: %d rows of history; want %d", len(c.history), n, c.rows)
		}
	}
}

// TestSplitConcurrent: stores on one file write one split record at
// once, each write a change of the history it loaded: none is lost or
// doubled.
func TestSplitConcurrent(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.db")
	s := openAt(t, path, &sqlitestore.Options{RelaxedSync: true})
	s.SetSplitAbove(0)
	histrectest.Concurrent(t, s, 4, 50)
}
