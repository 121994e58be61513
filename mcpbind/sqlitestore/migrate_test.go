package sqlitestore_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chartgate/chartgate/internal/histrec"
	"github.com/chartgate/chartgate/internal/histrec/histrectest"
	"github.com/chartgate/chartgate/mcpbind/sqlitestore"
)

// The file testdata/v1.db was written by the store at schema version 1:
// "kept" written twice, "gone" written twice and deleted. Its counter
// holds the last version handed out, gone's second.
const (
	v1Kept     = 1795938419304585 // kept's version
	v1Gone     = 1795938419311120 // gone's last version, before its delete
	v1KeptData = "kept 2"
)

// v1Swap is the compare-and-swap of a process that opened the file at
// schema version 1, with its connection's triggers: it takes its version
// from the counter.
var v1Swap = []string{
	`CREATE TEMP TRIGGER records_version_update AFTER UPDATE OF version ON main.records
	BEGIN UPDATE counter SET last = NEW.version WHERE id = 1; END`,
	`UPDATE records SET version = (SELECT max(last + 1, ?) FROM counter WHERE id = 1), data = ? WHERE key = ? AND version = ?`,
}

// oldFile copies testdata/name, a file of an older schema version, to a
// temporary file, and returns its path, a pool on it and a connection
// that the pool keeps open (as a process that opened the file before it
// was migrated does).
func oldFile(t *testing.T, name string) (string, *sql.DB, *sql.Conn) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, path)
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return path, db, conn
}

// checkSchema fails t unless the file of db has the current schema
// version.
func checkSchema(t *testing.T, db *sql.DB) {
	t.Helper()
	var schema int
	if err := db.QueryRow("PRAGMA user_version").Scan(&schema); err != nil || schema != 4 {
		t.Fatalf("schema version %d, %v; want 4", schema, err)
	}
}

// TestMigrateV1File: a file of schema version 1 is brought to the
// current version when it is opened: its records keep their data and versions, a write
// gives a version above the record's, a key deleted under version 1 and
// created again gets a version above those it had (even with the clock
// behind them), and a process that still has the file open at version 1
// can no longer write (its writes would take versions from a counter no
// longer kept).
func TestMigrateV1File(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path, old, v1 := oldFile(t, "v1.db")
	if _, err := v1.ExecContext(ctx, v1Swap[0]); err != nil {
		t.Fatal(err)
	}
	behind := func() time.Time { return time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC) } // before every version of the file
	s := openAt(t, path, &sqlitestore.Options{Now: behind})
	checkSchema(t, old)
	got, v, err := s.Load(ctx, "kept")
	if err != nil || string(got) != v1KeptData || v != v1Kept {
		t.Fatalf("kept: %q, version %d, %v; want %q, version %d", got, v, err, v1KeptData, uint64(v1Kept))
	}
	if v, err = s.CompareAndSwap(ctx, "kept", v1Kept, []byte("kept 3")); err != nil || v <= v1Kept {
		t.Fatalf("kept written again: version %d, %v; want above %d", v, err, uint64(v1Kept))
	}
	if v, err = s.CompareAndSwap(ctx, "gone", 0, []byte("gone 3")); err != nil || v <= v1Gone {
		t.Fatalf("gone created again: version %d, %v; want above %d", v, err, uint64(v1Gone))
	}
	// A key deleted under version 2 and created again by another Store,
	// whose writes have handed out nothing yet, with the clock behind.
	if err := s.Delete(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	other := openAt(t, path, &sqlitestore.Options{Now: behind})
	if nv, err := other.CompareAndSwap(ctx, "gone", 0, []byte("gone 4")); err != nil || nv <= v {
		t.Fatalf("gone created again after a delete: version %d, %v; want above %d", nv, err, v)
	}
	_, err = v1.ExecContext(ctx, v1Swap[1], 1, "x", "kept", v1Kept)
	if err == nil || !strings.Contains(err.Error(), "no such table") {
		t.Fatalf("a write of version 1 after the migration: %v; want an error about a table gone", err)
	}
}

// The file testdata/v2.db was written by the store at schema version 2:
// "kept" written twice, the second time with a history, "gone" written
// and deleted.
const (
	v2Kept     = 1795991884006294 // kept's version
	v2Gone     = 1795991884006859 // gone's version, before its delete
	v2KeptData = `{"state":{"value":"a"},"history":[{"tool":"one"},{"tool":"two"}]}`
)

// TestMigrateV2File: a file of schema version 2 is brought to the current version
// when it is opened: its records keep their data (their histories
// included) and versions; a split write replaces a record's history
// whole the first time (the record held its history itself) and then
// changes it; a key deleted under version 2 and created again gets a
// version above it; and a process that still has the file open at
// version 2 can no longer write (it would write a record with its history
// inside over one whose history is kept apart).
func TestMigrateV2File(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path, old, v2 := oldFile(t, "v2.db")
	v2Swap := `UPDATE records SET version = ?, data = ? WHERE key = ? AND version = ?`
	if _, err := v2.ExecContext(ctx, "SELECT count(*) FROM records"); err != nil {
		t.Fatal(err)
	}
	behind := func() time.Time { return time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC) }
	s := openAt(t, path, &sqlitestore.Options{Now: behind})
	s.SetSplitAbove(0) // the small records of the file too
	checkSchema(t, old)
	got, v, err := s.Load(ctx, "kept")
	if err != nil || string(got) != v2KeptData || v != v2Kept {
		t.Fatalf("kept: %s, version %d, %v; want %s, version %d", got, v, err, v2KeptData, uint64(v2Kept))
	}
	// The gate's write of its next record: one entry dropped, one added,
	// told as a change of the history it loaded.
	two, three := json.RawMessage(`{"tool":"two"}`), json.RawMessage(`{"tool":"three"}`)
	v, err = s.CompareAndSwapSplit(ctx, "kept", v2Kept, &histrec.Write{Head: []byte(`{"state":{"value":"b"}}`),
		History: []json.RawMessage{two, three}, Delta: true, Dropped: 1, Appended: 1}, true)
	if err != nil || v <= v2Kept {
		t.Fatalf("kept written split: version %d, %v; want above %d", v, err, uint64(v2Kept))
	}
	want := `{"state":{"value":"b"},"history":[{"tool":"two"},{"tool":"three"}]}`
	if got, _, err := s.Load(ctx, "kept"); err != nil || string(got) != want {
		t.Fatalf("kept after a split write: %s, %v; want %s", got, err, want)
	}
	if n := historyRows(t, path, "kept"); n != 2 {
		t.Fatalf("kept after a split write: %d rows of history; want 2", n)
	}
	if nv, err := s.CompareAndSwap(ctx, "gone", 0, []byte("gone 2")); err != nil || nv <= v2Gone {
		t.Fatalf("gone created again: version %d, %v; want above %d", nv, err, uint64(v2Gone))
	}
	_, err = v2.ExecContext(ctx, v2Swap, v+1, `{"state":{}}`, "kept", v)
	if err == nil || !strings.Contains(err.Error(), "no such table: records") {
		t.Fatalf("a write of version 2 after the migration: %v; want an error about the table records", err)
	}
}

// The file testdata/v3.db was written by the store at schema version 3:
// "kept" written split with 30 entries (v3Entry 0 to 29), then with the
// first two dropped and two appended; "gone" written and deleted.
const (
	v3Kept = 1796012160862445 // kept's version
	v3Gone = 1796012160863000 // gone's version, before its delete
	v3Head = `{"state":{"value":"b"}}`
)

// v3Entry is entry i of kept's history in testdata/v3.db.
func v3Entry(i int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"tool":"t%02d","event":{"type":"E","input":{"text":"hello"}},"from":"a","to":"a","time":"2026-11-30T04:00:00Z"}`, i))
}

// TestMigrateV3File: a file of schema version 3 is brought to version 4
// when it is opened: a split record keeps its history and version, and
// the next change of it keeps its newest entries in its row, as the
// version-4 writes do; a key deleted under version 3 and created again
// gets a version above it; and a process that still has the file open at
// version 3 can no longer write rows of entries (it would leave the
// record's counts of rows wrong) nor load a split record.
func TestMigrateV3File(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path, old, v3 := oldFile(t, "v3.db")
	v3Add := `INSERT INTO history (key, version, i, entry) VALUES (?, ?, ?, ?)`
	v3Load := `SELECT CASE WHEN split THEN (SELECT group_concat(entry, ',' ORDER BY version, i) FROM history WHERE history.key = workflows.key) END
		FROM workflows WHERE key = ?`
	if _, err := v3.ExecContext(ctx, "SELECT count(*) FROM history"); err != nil {
		t.Fatal(err)
	}
	s := openAt(t, path, nil)
	checkSchema(t, old)
	var hist []json.RawMessage
	for i := 2; i < 32; i++ {
		hist = append(hist, v3Entry(i))
	}
	got, v, err := s.Load(ctx, "kept")
	if err != nil || string(got) != histrectest.Joined(v3Head, hist) || v != v3Kept {
		t.Fatalf("kept: %.200s…, version %d, %v; want its 30 entries, version %d", got, v, err, uint64(v3Kept))
	}
	if n := historyRows(t, path, "kept"); n != 30 {
		t.Fatalf("kept: %d rows of history; want 30", n)
	}
	hist = append(hist[3:], v3Entry(32))
	if v, err = s.CompareAndSwapSplit(ctx, "kept", v, &histrec.Write{Head: []byte(v3Head), History: hist, Delta: true, Dropped: 3, Appended: 1}, true); err != nil {
		t.Fatal(err)
	}
	if got, _, err := s.Load(ctx, "kept"); err != nil || string(got) != histrectest.Joined(v3Head, hist) {
		t.Fatalf("kept after a change: %.200s…, %v; want %d entries", got, err, len(hist))
	}
	if n := historyRows(t, path, "kept"); n != 27 {
		t.Fatalf("kept after a change: %d rows of history; want 27 (the entry appended in the record's row)", n)
	}
	if nv, err := s.CompareAndSwap(ctx, "gone", 0, []byte("gone 2")); err != nil || nv <= v3Gone {
		t.Fatalf("gone created again: version %d, %v; want above %d", nv, err, uint64(v3Gone))
	}
	_, err = v3.ExecContext(ctx, v3Add, "kept", v+1, 0, `{}`)
	if err == nil || !strings.Contains(err.Error(), "no such table: history") {
		t.Fatalf("a write of version 3 after the migration: %v; want an error about the table history", err)
	}
	var joined []byte
	err = v3.QueryRowContext(ctx, v3Load, "kept").Scan(&joined)
	if err == nil || !strings.Contains(err.Error(), "no such table: history") {
		t.Fatalf("a load of version 3 after the migration: %s, %v; want an error about the table history", joined, err)
	}
}

// TestWriteChangesOnePage: a compare-and-swap of a record changes its
// page and no other: it appends one frame to the WAL (the page and the
// frame's header), whatever the number of records. Before schema version
// 2, each write also changed the page of the version counter.
func TestWriteChangesOnePage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s := openAt(t, path, &sqlitestore.Options{RelaxedSync: true})
	frames := walFrames(t, path)
	versions := map[string]uint64{}
	for _, key := range []string{"a", "b", "c"} {
		v, err := s.CompareAndSwap(ctx, key, 0, []byte(key))
		if err != nil {
			t.Fatal(err)
		}
		versions[key] = v
	}
	for i, key := range []string{"a", "b", "a", "c"} {
		n, exact := frames(func() {
			v, err := s.CompareAndSwapNoSync(ctx, key, versions[key], []byte(key+"!"))
			if err != nil {
				t.Fatal(err)
			}
			versions[key] = v
		})
		if n != 1 || !exact {
			t.Fatalf("write %d (%s): the WAL grew by %d frames (whole: %v); want one", i, key, n, exact)
		}
	}
}

// walFrames returns a function that runs write and returns the number of
// frames (a page and its header) it appended to the WAL of the file at
// path, and whether it grew by whole frames.
func walFrames(t *testing.T, path string) func(write func()) (int64, bool) {
	t.Helper()
	var pageSize int64
	if err := rawDB(t, path).QueryRow("PRAGMA page_size").Scan(&pageSize); err != nil {
		t.Fatal(err)
	}
	size := func() int64 {
		t.Helper()
		fi, err := os.Stat(path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	return func(write func()) (int64, bool) {
		t.Helper()
		before := size()
		write()
		grew := size() - before
		return grew / (pageSize + 24), grew%(pageSize+24) == 0
	}
}
