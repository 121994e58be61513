// This file holds the tests of the store on a real PostgreSQL server: the
// Store contract and the jobs of gates on it, the schema, versions,
// expiry and purge, Open's checks, and the change feed.

package pgstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/chartgate/chartgate/internal/pgtest"
	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/mcpbind/pgstore"
	"github.com/chartgate/chartgate/mcpbind/storetest"
)

// The package's server, started at the first test that needs one (so that
// a run of the fuzz target alone starts none) and stopped by TestMain.
var (
	serverOnce sync.Once
	server     string // "" when none is available
	serverErr  error
	stopServer func()
)

// startServer starts the package's server once, and returns its
// connection string: "" (and no error) if none is available.
func startServer() (string, error) {
	serverOnce.Do(func() {
		dsn, stop, err := pgtest.Launch()
		switch {
		case errors.Is(err, pgtest.ErrUnavailable):
		case err != nil:
			serverErr = err
		default:
			server, stopServer = dsn, stop
		}
	})
	return server, serverErr
}

func TestMain(m *testing.M) {
	code := m.Run()
	if stopServer != nil {
		stopServer()
	}
	os.Exit(code)
}

// dsn returns the server's connection string, or skips the test.
func dsn(t testing.TB) string {
	t.Helper()
	d, err := startServer()
	if err != nil {
		t.Fatal(err)
	}
	if d == "" {
		t.Skip(pgtest.SkipMessage)
	}
	return d
}

// newSchema returns a schema name no other test uses, and drops the
// schema at the end of the test.
func newSchema(t testing.TB) string {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "t_" + hex.EncodeToString(b[:])
	d := dsn(t)
	t.Cleanup(func() {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, d)
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{name}.Sanitize()+" CASCADE"); err != nil {
			t.Error(err)
		}
	})
	return name
}

// open opens a store in a new schema and closes it at the end of the
// test.
func open(t testing.TB, opts *pgstore.Options) *pgstore.Store {
	t.Helper()
	var o pgstore.Options
	if opts != nil {
		o = *opts
	}
	if o.Schema == "" {
		o.Schema = newSchema(t)
	}
	return openAt(t, &o)
}

func openAt(t testing.TB, opts *pgstore.Options) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(context.Background(), dsn(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) mcpbind.Store { return open(t, nil) })
}

func TestContractWithTTL(t *testing.T) {
	storetest.Run(t, func(t *testing.T) mcpbind.Store { return open(t, &pgstore.Options{TTL: time.Hour}) })
}

// TestJobs runs the jobs of gates on two stores, two pools on one schema,
// as two instances on two machines would have.
func TestJobs(t *testing.T) {
	storetest.RunJobs(t, func(t *testing.T) (a, b mcpbind.Store) {
		schema := newSchema(t)
		return openAt(t, &pgstore.Options{Schema: schema}), openAt(t, &pgstore.Options{Schema: schema})
	})
}

// TestSharedAcrossStores checks that two stores on one schema see each
// other's writes and conflict with each other, and that a record is kept
// in the database, not the store: a store opened later finds it.
func TestSharedAcrossStores(t *testing.T) {
	ctx := context.Background()
	schema := newSchema(t)
	a := openAt(t, &pgstore.Options{Schema: schema})
	b := openAt(t, &pgstore.Options{Schema: schema})
	v1, err := a.CompareAndSwap(ctx, "k", 0, []byte("from a"))
	if err != nil {
		t.Fatal(err)
	}
	if d, v, err := b.Load(ctx, "k"); string(d) != "from a" || v != v1 || err != nil {
		t.Fatalf("b.Load = %q, %d, %v; want a's write, %d", d, v, err, v1)
	}
	if _, err := b.CompareAndSwap(ctx, "k", 0, []byte("from b")); !errors.Is(err, mcpbind.ErrConflict) {
		t.Fatalf("b creating a's key: %v, want a conflict", err)
	}
	v2, err := b.CompareAndSwap(ctx, "k", v1, []byte("from b"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.CompareAndSwap(ctx, "k", v1, []byte("stale")); !errors.Is(err, mcpbind.ErrConflict) {
		t.Fatalf("a writing from a stale version: %v, want a conflict", err)
	}
	a.Close()
	c := openAt(t, &pgstore.Options{Schema: schema})
	if d, v, err := c.Load(ctx, "k"); string(d) != "from b" || v != v2 || err != nil {
		t.Fatalf("a new store's Load = %q, %d, %v; want b's write, %d", d, v, err, v2)
	}
}

// TestConcurrentOpen opens one new schema from many goroutines at once:
// one creates it, the others find it.
func TestConcurrentOpen(t *testing.T) {
	schema := newSchema(t)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := pgstore.Open(context.Background(), dsn(t), &pgstore.Options{Schema: schema})
			if err == nil {
				_, err = s.CompareAndSwap(context.Background(), fmt.Sprint("k", i), 0, []byte("x"))
				s.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

// TestVersionsAboveOldSchema checks that a schema dropped and created again
// starts its versions above those of the old one (they start at the time
// in microseconds).
func TestVersionsAboveOldSchema(t *testing.T) {
	ctx := context.Background()
	schema := newSchema(t)
	a := openAt(t, &pgstore.Options{Schema: schema})
	v1, err := a.CompareAndSwap(ctx, "k", 0, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	if min := uint64(time.Now().Add(-time.Hour).UnixMicro()); v1 < min {
		t.Fatalf("first version %d, want at least the time in microseconds (%d an hour ago)", v1, min)
	}
	a.Close()
	exec(t, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
	b := openAt(t, &pgstore.Options{Schema: schema})
	v2, err := b.CompareAndSwap(ctx, "k", 0, []byte("y"))
	if err != nil || v2 <= v1 {
		t.Fatalf("version in the new schema = %d, %v; want above %d", v2, err, v1)
	}
}

// exec runs a statement on the server, outside any store.
func exec(t testing.TB, sql string, args ...any) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql, args...); err != nil {
		t.Fatal(err)
	}
}

// TestExpiry checks that a record expires TTL after its last write (by the
// server's clock), that a load does not extend it, that an expired record
// is absent and can be created again, and that writes purge expired rows.
func TestExpiry(t *testing.T) {
	ctx := context.Background()
	const ttl = 300 * time.Millisecond
	s := open(t, &pgstore.Options{TTL: ttl})
	if s.TTL() != ttl {
		t.Fatalf("TTL() = %v, want %v", s.TTL(), ttl)
	}
	v1, err := s.CompareAndSwap(ctx, "old", 0, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CompareAndSwap(ctx, "kept", 0, []byte("y")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(ttl)
	for time.Now().Before(deadline) { // loads do not keep it alive
		if _, v, err := s.Load(ctx, "old"); err != nil || (v != v1 && v != 0) {
			t.Fatalf("Load = %d, %v", v, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	if d, v, err := s.Load(ctx, "old"); d != nil || v != 0 || err != nil {
		t.Fatalf("Load of an expired record = %q, %d, %v; want nil, 0, nil", d, v, err)
	}
	if keys, err := s.Keys(ctx, ""); err != nil || len(keys) != 0 {
		t.Fatalf("Keys with every record expired = %q, %v; want none", keys, err)
	}
	if _, err := s.CompareAndSwap(ctx, "old", v1, []byte("z")); !errors.Is(err, mcpbind.ErrConflict) {
		t.Fatalf("update of an expired record: %v, want a conflict", err)
	}
	v2, err := s.CompareAndSwap(ctx, "old", 0, []byte("again"))
	if err != nil || v2 <= v1 {
		t.Fatalf("re-create of an expired record = %d, %v; want a version above %d", v2, err, v1)
	}
	if d, v, err := s.Load(ctx, "old"); string(d) != "again" || v != v2 || err != nil {
		t.Fatalf("Load = %q, %d, %v", d, v, err)
	}
	// The first write of a Store purged nothing then, and the Store does
	// not purge again within a minute: "kept" is still a row. A new
	// Store's first write purges it.
	if !hasRow(t, s.Schema(), "kept") {
		t.Fatal("the expired row was purged before a purge was due")
	}
	s2 := openAt(t, &pgstore.Options{Schema: s.Schema(), TTL: time.Hour})
	if _, err := s2.CompareAndSwap(ctx, "new", 0, []byte("n")); err != nil {
		t.Fatal(err)
	}
	if hasRow(t, s.Schema(), "kept") || !hasRow(t, s.Schema(), "new") {
		t.Fatal("after a purge: the expired row is still there, or the new one is not")
	}
}

// hasRow reports whether the schema's workflows table has a row for key,
// expired or not.
func hasRow(t *testing.T, schema, key string) bool {
	t.Helper()
	return query(t, "SELECT count(*) FROM "+pgx.Identifier{schema}.Sanitize()+".workflows WHERE key = $1", []byte(key)) == 1
}

// TestKeysAnyBytes checks keys that are not text: NUL bytes, invalid
// UTF-8, a prefix of 0xff bytes.
func TestKeysAnyBytes(t *testing.T) {
	ctx := context.Background()
	s := open(t, nil)
	keys := []string{"a\x00b", "a\xff", "a\xffz", "a\xff\xff", "b", "\xff\xff"} // in byte order
	for _, k := range keys {
		if _, err := s.CompareAndSwap(ctx, k, 0, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	for prefix, want := range map[string]string{
		"a":         "a\x00b|a\xff|a\xffz|a\xff\xff",
		"a\xff":     "a\xff|a\xffz|a\xff\xff",
		"a\xff\xff": "a\xff\xff",
		"\xff":      "\xff\xff",
		"":          "a\x00b|a\xff|a\xffz|a\xff\xff|b|\xff\xff",
	} {
		got, err := s.Keys(ctx, prefix)
		if err != nil || strings.Join(got, "|") != want {
			t.Errorf("Keys(%q) = %q, %v; want %q", prefix, got, err, strings.Split(want, "|"))
		}
	}
	if d, _, err := s.Load(ctx, "a\x00b"); string(d) != "a\x00b" || err != nil {
		t.Fatalf("Load of a key with a NUL = %q, %v", d, err)
	}
}

// TestOpenErrors checks Open's refusals: bad options, a schema of
// another application, a schema newer than this package, a server that
// is not there.
func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	d := dsn(t)
	if _, err := pgstore.Open(ctx, d, &pgstore.Options{TTL: -time.Second}); err == nil || !strings.Contains(err.Error(), "negative TTL") {
		t.Errorf("negative TTL: %v", err)
	}
	if _, err := pgstore.Open(ctx, d, &pgstore.Options{Schema: strings.Repeat("s", 56)}); err == nil || !strings.Contains(err.Error(), "longer than 55 bytes") {
		t.Errorf("long schema name: %v", err)
	}
	if _, err := pgstore.Open(ctx, "postgres://nobody@[::1", nil); err == nil || !strings.Contains(err.Error(), "pgstore: opening") {
		t.Errorf("bad connection string: %v", err)
	}

	foreign := newSchema(t)
	exec(t, "CREATE SCHEMA "+pgx.Identifier{foreign}.Sanitize())
	exec(t, "CREATE TABLE "+pgx.Identifier{foreign}.Sanitize()+".records (id int)")
	if _, err := pgstore.Open(ctx, d, &pgstore.Options{Schema: foreign}); err == nil || !strings.Contains(err.Error(), "belongs to something else") {
		t.Errorf("a schema with another application's records table: %v", err)
	}

	newer := newSchema(t)
	openAt(t, &pgstore.Options{Schema: newer}).Close()
	exec(t, "UPDATE "+pgx.Identifier{newer}.Sanitize()+".meta SET schema_version = 99")
	if _, err := pgstore.Open(ctx, d, &pgstore.Options{Schema: newer}); err == nil || !strings.Contains(err.Error(), "newer than this chartgate knows") {
		t.Errorf("a newer schema: %v", err)
	}

	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := pgstore.Open(cctx, "postgres://postgres@127.0.0.1:1/postgres?sslmode=disable&connect_timeout=2", nil); err == nil || !strings.Contains(err.Error(), "pgstore: opening") {
		t.Errorf("no server: %v", err)
	}
}

// TestWatch checks the change feed: a write through one store reaches
// the watchers of another on the same schema (LISTEN/NOTIFY), with its
// version, filtered by prefix; a watch ends with its context.
func TestWatch(t *testing.T) {
	ctx := context.Background()
	schema := newSchema(t)
	a := openAt(t, &pgstore.Options{Schema: schema})
	b := openAt(t, &pgstore.Options{Schema: schema})
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch, err := b.Watch(wctx, "app:")
	if err != nil {
		t.Fatal(err)
	}
	// Watch returned: b listens.
	v, err := a.CompareAndSwap(ctx, "app:k", 0, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-ch:
		if c != (mcpbind.Change{Key: "app:k", Version: v}) {
			t.Fatalf("change %+v, want app:k at version %d", c, v)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no change reported within 10 s")
	}
	if _, err := a.CompareAndSwap(ctx, "other:k", 0, []byte("x")); err != nil {
		t.Fatal(err)
	}
	v2, err := a.CompareAndSwap(ctx, "app:k", v, []byte("y"))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-ch:
		if c != (mcpbind.Change{Key: "app:k", Version: v2}) {
			t.Fatalf("change %+v, want app:k at version %d (other:k is not under the prefix)", c, v2)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no change reported within 10 s")
	}
	cancel()
	for range ch { // closed once the watch ended
	}
}

// TestWatchGates runs two gates on two stores of one schema, as on two
// machines: a transition through one gives list_changed to the sessions
// of that workflow on the other.
func TestWatchGates(t *testing.T) {
	storetest.RunWatch(t, func(t *testing.T) (a, b mcpbind.Store) {
		schema := newSchema(t)
		return openAt(t, &pgstore.Options{Schema: schema}), openAt(t, &pgstore.Options{Schema: schema})
	})
}
