package pgstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/internal/histrec"
	"github.com/chartgate/chartgate/internal/histrec/histrectest"
	"github.com/chartgate/chartgate/mcpbind/pgstore"
)

// query runs a query of one int64 on the server, outside any store.
func query(t testing.TB, sql string, args ...any) int64 {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int64
	if err := conn.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// historyRows returns the number of rows of key's history, and how many
// of them the write of version wrote.
func historyRows(t testing.TB, schema, key string, version uint64) (all, of int64) {
	t.Helper()
	q := "SELECT count(*) FROM " + pgx.Identifier{schema}.Sanitize() + ".history WHERE key = $1"
	return query(t, q, []byte(key)), query(t, q+" AND version = $2", []byte(key), int64(version))
}

// TestSplitWrites: a record written split (however small) loads as its
// head with its history joined in, through a change of the stored
// history (entries dropped and appended, whose kept rows are not written
// again), the head alone, a whole replacement, a create, a plain write
// (which leaves no rows behind), a conflict (which changes nothing) and
// a delete; another Store on the schema loads the same.
func TestSplitWrites(t *testing.T) {
	ctx := context.Background()
	s := open(t, nil)
	s.SetSplitAbove(0) // small records too
	schema := s.Schema()
	other := openAt(t, &pgstore.Options{Schema: schema})
	h := histrectest.Entries(0, 5)
	check := func(what, want string, rows int64) {
		t.Helper()
		for i, st := range []*pgstore.Store{s, other} {
			if got, _, err := st.Load(ctx, "k"); err != nil || string(got) != want {
				t.Fatalf("%s: Store %d loads %s, %v; want %s", what, i, got, err, want)
			}
		}
		if n, _ := historyRows(t, schema, "k", 0); n != rows {
			t.Fatalf("%s: %d rows of history; want %d", what, n, rows)
		}
	}
	created, err := s.CompareAndSwapSplit(ctx, "k", 0, &histrec.Write{Head: []byte(`{"state":1}`), History: h[:3]}, true)
	if err != nil {
		t.Fatal(err)
	}
	check("created", histrectest.Joined(`{"state":1}`, h[:3]), 3)

	v, err := s.CompareAndSwapSplit(ctx, "k", created, &histrec.Write{Head: []byte(`{"state":2}`), History: h[1:5], Delta: true, Dropped: 1, Appended: 2}, true)
	if err != nil {
		t.Fatal(err)
	}
	check("one dropped, two appended", histrectest.Joined(`{"state":2}`, h[1:5]), 4)
	if _, kept := historyRows(t, schema, "k", created); kept != 2 {
		t.Fatalf("%d rows of the first write left after a change; want the 2 kept (not written again)", kept)
	}

	v, err = s.CompareAndSwapSplit(ctx, "k", v, &histrec.Write{Head: []byte(`{"state":3}`), History: h[1:5], Delta: true}, true)
	if err != nil {
		t.Fatal(err)
	}
	check("head alone", histrectest.Joined(`{"state":3}`, h[1:5]), 4)

	if _, err := s.CompareAndSwapSplit(ctx, "k", created, &histrec.Write{Head: []byte(`{"state":9}`), History: h[:1], Delta: true, Appended: 1}, true); !gate.IsConflict(err) {
		t.Fatalf("write at an old version: %v; want a conflict", err)
	}
	check("after the conflict", histrectest.Joined(`{"state":3}`, h[1:5]), 4)

	v, err = s.CompareAndSwapSplit(ctx, "k", v, &histrec.Write{Head: []byte(`{"state":4}`), History: h[3:4]}, true)
	if err != nil {
		t.Fatal(err)
	}
	check("replaced", histrectest.Joined(`{"state":4}`, h[3:4]), 1)

	v, err = s.CompareAndSwapSplit(ctx, "k", v, &histrec.Write{Head: []byte(`{"state":5}`), History: nil, Delta: true, Dropped: 1}, true)
	if err != nil {
		t.Fatal(err)
	}
	check("every entry dropped", `{"state":5}`, 0)

	v, err = s.CompareAndSwapSplit(ctx, "k", v, &histrec.Write{Head: []byte(`{"state":6}`), History: h[:2], Delta: true, Appended: 2}, true)
	if err != nil {
		t.Fatal(err)
	}
	check("appended to none", histrectest.Joined(`{"state":6}`, h[:2]), 2)

	if _, err = s.CompareAndSwap(ctx, "k", v, []byte(`{"plain":true}`)); err != nil {
		t.Fatal(err)
	}
	check("written whole", `{"plain":true}`, 0)

	if _, err := s.CompareAndSwapSplit(ctx, "j", 0, &histrec.Write{Head: []byte(`{"state":1}`), History: h}, true); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "j"); err != nil {
		t.Fatal(err)
	}
	if n, _ := historyRows(t, schema, "j", 0); n != 0 {
		t.Fatalf("%d rows of a deleted record's history; want none", n)
	}
}

// TestSmallRecordWrittenWhole: under 3 KiB a split write stores the
// record whole, with no rows.
func TestSmallRecordWrittenWhole(t *testing.T) {
	ctx := context.Background()
	s := open(t, nil)
	h := histrectest.Entries(0, 3)
	if _, err := s.CompareAndSwapSplit(ctx, "k", 0, &histrec.Write{Head: []byte(`{"state":1}`), History: h}, true); err != nil {
		t.Fatal(err)
	}
	if got, _, err := s.Load(ctx, "k"); err != nil || string(got) != histrectest.Joined(`{"state":1}`, h) {
		t.Fatalf("loaded %s, %v", got, err)
	}
	if n, _ := historyRows(t, s.Schema(), "k", 0); n != 0 {
		t.Fatalf("%d rows of history for a small record; want none", n)
	}
}

// TestMigrateV1 opens a schema that version 1 of this package made, with
// a record in it: the record loads as it was, the schema is at version 2,
// a write through version 1's table fails, and split writes work.
func TestMigrateV1(t *testing.T) {
	ctx := context.Background()
	schema := newSchema(t)
	q := pgx.Identifier{schema}.Sanitize()
	// The statements version 1 created its schema with.
	for _, st := range []string{
		`CREATE SCHEMA ` + q,
		`CREATE TABLE ` + q + `.records (key bytea PRIMARY KEY, version bigint NOT NULL, data bytea NOT NULL, expires timestamptz)`,
		`CREATE INDEX records_expires ON ` + q + `.records (expires) WHERE expires IS NOT NULL`,
		`CREATE SEQUENCE ` + q + `.versions AS bigint START WITH 1000`,
		`CREATE TABLE ` + q + `.meta (id int PRIMARY KEY CHECK (id = 1), schema_version int NOT NULL)`,
		`INSERT INTO ` + q + `.meta VALUES (1, 1)`,
		`INSERT INTO ` + q + `.records VALUES ('\x6b', nextval('` + q + `.versions'), '{"state":"old"}', NULL)`,
	} {
		exec(t, st)
	}
	// A process of version 1, with its statement prepared on its
	// connection before the upgrade.
	old, err := pgx.Connect(ctx, dsn(t))
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close(ctx)
	oldWrite := `UPDATE ` + q + `.records SET data = $1 WHERE key = $2`
	if _, err := old.Exec(ctx, oldWrite, []byte(`{"state":"old"}`), []byte("k")); err != nil {
		t.Fatal(err)
	}

	s := openAt(t, &pgstore.Options{Schema: schema})
	data, v, err := s.Load(ctx, "k")
	if err != nil || string(data) != `{"state":"old"}` || v != 1000 {
		t.Fatalf("loaded %s at %d, %v; want version 1's record at 1000", data, v, err)
	}
	if n := query(t, `SELECT schema_version FROM `+q+`.meta`); n != 2 {
		t.Fatalf("schema version %d after opening; want 2", n)
	}
	if _, err := old.Exec(ctx, oldWrite, []byte(`{"state":"lost"}`), []byte("k")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("a write of version 1 after the upgrade: %v; want it to fail on the missing table", err)
	}
	s.SetSplitAbove(0)
	h := histrectest.Entries(0, 2)
	if _, err := s.CompareAndSwapSplit(ctx, "k", v, &histrec.Write{Head: []byte(`{"state":"new"}`), History: h, Delta: true, Appended: 2}, true); err != nil {
		t.Fatal(err)
	}
	if got, _, err := openAt(t, &pgstore.Options{Schema: schema}).Load(ctx, "k"); err != nil || string(got) != histrectest.Joined(`{"state":"new"}`, h) {
		t.Fatalf("loaded %s, %v after a split write", got, err)
	}
}

// TestGateKeepsHistoryApart: a gate on the store writes its records split
// (the threshold set to 0), and another Store loads the workflow with the
// newest entries of its history.
func TestGateKeepsHistoryApart(t *testing.T) {
	store := open(t, nil)
	store.SetSplitAbove(0)
	key := histrectest.GateHistory(t, store, openAt(t, &pgstore.Options{Schema: store.Schema()}))
	if n, _ := historyRows(t, store.Schema(), key, 0); n != 3 {
		t.Fatalf("%d rows of history; want 3", n)
	}
}

// TestSplitConcurrent: writers on one schema write one split record at
// once, each write a change of the history it loaded: none is lost or
// doubled.
func TestSplitConcurrent(t *testing.T) {
	s := open(t, nil)
	s.SetSplitAbove(0)
	histrectest.Concurrent(t, s, 4, 50)
}
