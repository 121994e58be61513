package sqlitestore_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/internal/histrec"
	"github.com/chartgate/chartgate/internal/histrec/histrectest"
	"github.com/chartgate/chartgate/mcpbind/sqlitestore"
)

// historyRows returns the number of rows of key's history in the file.
func historyRows(t *testing.T, path, key string) int {
	t.Helper()
	var n int
	if err := rawDB(t, path).QueryRow("SELECT count(*) FROM history WHERE key = ?", key).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSplitWrites: a record written split (however small) loads as its
// head with its history joined in, through a change of the stored history (entries
// dropped and appended), a whole replacement, a create, a plain write
// (which leaves no rows behind), a conflict (which changes nothing), a
// delete and an expiry; another Store on the file loads the same.
func TestSplitWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := newClock()
	path := filepath.Join(t.TempDir(), "state.db")
	s := openAt(t, path, &sqlitestore.Options{TTL: time.Hour, Now: clk.Now})
	s.SetSplitAbove(0) // small records too
	other := openAt(t, path, &sqlitestore.Options{Now: clk.Now})
	h := histrectest.Entries(0, 5)
	check := func(what, want string, rows int) {
		t.Helper()
		for i, st := range []*sqlitestore.Store{s, other} {
			if got, _, err := st.Load(ctx, "k"); err != nil || string(got) != want {
				t.Fatalf("%s: Store %d loads %s, %v; want %s", what, i, got, err, want)
			}
		}
		if n := historyRows(t, path, "k"); n != rows {
			t.Fatalf("%s: %d rows of history; want %d", what, n, rows)
		}
	}
	v, err := s.CompareAndSwapSplit(ctx, "k", 0, &histrec.Write{Head: []byte(`{"state":1}`), History: h[:3]}, true)
	if err != nil {
		t.Fatal(err)
	}
	check("created", histrectest.Joined(`{"state":1}`, h[:3]), 3)
	v, err = s.CompareAndSwapSplit(ctx, "k", v, &histrec.Write{Head: []byte(`{"state":2}`), History: h[1:5], Delta: true, Dropped: 1, Appended: 2}, false)
	if err != nil {
		t.Fatal(err)
	}
	check("one dropped, two appended", histrectest.Joined(`{"state":2}`, h[1:5]), 4)
	if _, err := s.CompareAndSwapSplit(ctx, "k", v-1, &histrec.Write{Head: []byte(`{"state":3}`), History: h[4:], Delta: true, Dropped: 3, Appended: 0}, true); !gate.IsConflict(err) {
		t.Fatalf("a split write against an old version: %v; want a conflict", err)
	}
	check("after a conflict", histrectest.Joined(`{"state":2}`, h[1:5]), 4)
	v, err = s.CompareAndSwapSplit(ctx, "k", v, &histrec.Write{Head: []byte(`{"state":4}`), History: h[:2]}, true)
	if err != nil {
		t.Fatal(err)
	}
	check("replaced", histrectest.Joined(`{"state":4}`, h[:2]), 2)
	v, err = s.CompareAndSwapSplit(ctx, "k", v, &histrec.Write{Head: []byte(`{"state":5}`), Delta: true, Dropped: 2}, true)
	if err != nil {
		t.Fatal(err)
	}
	check("every entry dropped", `{"state":5}`, 0)
	v, err = s.CompareAndSwapSplit(ctx, "k", v, &histrec.Write{Head: []byte(`{"state":6}`), History: h[:1], Delta: true, Appended: 1}, true)
	if err != nil {
		t.Fatal(err)
	}
	check("one appended", histrectest.Joined(`{"state":6}`, h[:1]), 1)
	plain := histrectest.Joined(`{"state":7}`, h[2:4])
	if v, err = s.CompareAndSwap(ctx, "k", v, []byte(plain)); err != nil {
		t.Fatal(err)
	}
	check("written plain", plain, 0)
	// Told as a change of the head alone, a write over a record that
	// holds its history itself still gives the history its rows.
	if v, err = s.CompareAndSwapSplit(ctx, "k", v, &histrec.Write{Head: []byte(`{"state":7.5}`), History: h[2:4], Delta: true}, true); err != nil {
		t.Fatal(err)
	}
	check("the head alone, over a record written plain", histrectest.Joined(`{"state":7.5}`, h[2:4]), 2)
	if v, err = s.CompareAndSwapSplit(ctx, "k", v, &histrec.Write{Head: []byte(`{"state":7.6}`), History: h[2:4], Delta: true}, true); err != nil {
		t.Fatal(err)
	}
	check("the head alone", histrectest.Joined(`{"state":7.6}`, h[2:4]), 2)
	if _, err := s.CompareAndSwapSplit(ctx, "k", v-1, &histrec.Write{Head: []byte(`{"state":0}`), History: h[2:4], Delta: true}, true); !gate.IsConflict(err) {
		t.Fatalf("a write of the head alone against an old version: %v; want a conflict", err)
	}
	check("the head alone, after a conflict", histrectest.Joined(`{"state":7.6}`, h[2:4]), 2)
	if v, err = s.CompareAndSwap(ctx, "k", v, []byte(plain)); err != nil {
		t.Fatal(err)
	}
	check("written plain again", plain, 0)
	// A change told against a record that holds its history itself
	// replaces the history.
	if _, err = s.CompareAndSwapSplit(ctx, "k", v, &histrec.Write{Head: []byte(`{"state":8}`), History: h[2:5], Delta: true, Appended: 1}, true); err != nil {
		t.Fatal(err)
	}
	check("split again", histrectest.Joined(`{"state":8}`, h[2:5]), 3)
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

// TestSplitWriteChangesFewPages: a split write that drops an entry from a
// history of 500 (~60 KB, as the chartgate command keeps) and appends one
// changes a few pages of the file (the head's, the first and the last of
// the history's, about 3.7 on average), where a plain write of the same
// record changes every page it spans.
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
	if total > 400 {
		t.Fatalf("100 split writes changed %d pages; want at most 4 each on average", total)
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
