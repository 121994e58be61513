// This file holds the tests of the store in one process: the Store
// contract, persistence, versions, expiry and purge, Open's checks, and
// the errors of a locked database.

package sqlitestore_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/mcpbind/sqlitestore"
	"github.com/chartgate/chartgate/mcpbind/storetest"
)

// open opens a store in a new file of the test's temporary directory and
// closes it at the end of the test.
func open(t testing.TB, opts *sqlitestore.Options) *sqlitestore.Store {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "state.db"), opts)
}

func openAt(t testing.TB, path string, opts *sqlitestore.Options) *sqlitestore.Store {
	t.Helper()
	s, err := sqlitestore.Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// rawDB opens the file with the driver alone, to look at what the store
// wrote or to hold its locks.
func rawDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// clock is a settable clock for Options.Now.
type clock struct{ unixNano atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.unixNano.Store(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano())
	return c
}

func (c *clock) Now() time.Time          { return time.Unix(0, c.unixNano.Load()) }
func (c *clock) Advance(d time.Duration) { c.unixNano.Add(int64(d)) }

// TestContract: the Store contract (storetest), each subtest in its own
// file.
func TestContract(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) mcpbind.Store { return open(t, nil) })
}

// TestContractTwoStores runs the contract on two Stores of one file,
// taking turns call by call: what one writes the other must see, and their
// compare-and-swaps exclude each other through SQLite's lock, as those of
// two processes do.
func TestContractTwoStores(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) mcpbind.Store {
		path := filepath.Join(t.TempDir(), "state.db")
		return &alternate{stores: [2]*sqlitestore.Store{openAt(t, path, nil), openAt(t, path, nil)}}
	})
}

// TestLoadAfterOtherWrites: a Store loads on the connection of its own
// writes while they are idle; what another Store of the file (another
// process) wrote since is what it reads, not the pages its connection
// still has of its own last write.
func TestLoadAfterOtherWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	a, b := openAt(t, path, nil), openAt(t, path, nil)
	v, err := a.CompareAndSwap(ctx, "k", 0, []byte("from a"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		want := "from b " + strconv.Itoa(i)
		if v, err = b.CompareAndSwap(ctx, "k", v, []byte(want)); err != nil {
			t.Fatal(err)
		}
		if d, got, err := a.Load(ctx, "k"); string(d) != want || got != v || err != nil {
			t.Fatalf("a loads after b's write %d: %q, version %d, %v; want %q, %d", i, d, got, err, want, v)
		}
	}
	if _, err := a.CompareAndSwap(ctx, "k", v-1, []byte("stale")); !errors.Is(err, mcpbind.ErrConflict) {
		t.Fatalf("a writes against an older version: err = %v, want a conflict", err)
	}
}

// alternate is an mcpbind.Store that sends each call to the next of its
// stores.
type alternate struct {
	stores [2]*sqlitestore.Store
	n      atomic.Uint32
}

func (a *alternate) next() *sqlitestore.Store { return a.stores[a.n.Add(1)%2] }

func (a *alternate) Load(ctx context.Context, key string) ([]byte, uint64, error) {
	return a.next().Load(ctx, key)
}

func (a *alternate) CompareAndSwap(ctx context.Context, key string, old uint64, data []byte) (uint64, error) {
	return a.next().CompareAndSwap(ctx, key, old, data)
}

func (a *alternate) Delete(ctx context.Context, key string) error { return a.next().Delete(ctx, key) }

// TestPersistence: records, and the versions after them, survive closing
// and opening the file again.
func TestPersistence(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := sqlitestore.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	v1, err := s.CompareAndSwap(ctx, "k", 0, []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	vd, err := s.CompareAndSwap(ctx, "gone", 0, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openAt(t, path, nil)
	if d, v, err := s.Load(ctx, "k"); string(d) != "a" || v != v1 || err != nil {
		t.Fatalf("Load after reopening = %q, %d, %v; want a, %d", d, v, err, v1)
	}
	if d, v, err := s.Load(ctx, "gone"); d != nil || v != 0 || err != nil {
		t.Fatalf("Load of a deleted key after reopening = %q, %d, %v; want nil, 0, nil", d, v, err)
	}
	v2, err := s.CompareAndSwap(ctx, "gone", 0, []byte("y"))
	if err != nil || v2 <= vd || v2 <= v1 {
		t.Fatalf("create after reopening = %d, %v; want a version above %d and %d", v2, err, v1, vd)
	}
}

// TestVersions: versions increase across keys, deletes and reopening, and
// are at least the time of the write in microseconds, so that a file
// created again after it was removed starts above the old one's versions.
func TestVersions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := newClock()
	dir := t.TempDir()
	path := filepath.Join(dir, "state.db")
	s, err := sqlitestore.Open(path, &sqlitestore.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	// A write, a second key, a delete and the key again, the clock still or
	// moving: each version is above the one before and the clock.
	var last uint64
	for i, step := range []struct {
		key     string
		old     bool // write from the key's last version, else create
		advance time.Duration
	}{
		{"k", false, 0}, {"k", true, 0}, {"other", false, time.Millisecond}, {"k", true, 0},
		{"", false, 0}, // the delete of k
		{"k", false, 0}, {"k", true, time.Hour},
	} {
		clk.Advance(step.advance)
		if step.key == "" {
			if err := s.Delete(ctx, "k"); err != nil {
				t.Fatal(err)
			}
			continue
		}
		var old uint64
		if step.old {
			_, old, _ = s.Load(ctx, step.key)
		}
		v, err := s.CompareAndSwap(ctx, step.key, old, []byte(strconv.Itoa(i)))
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		if v <= last {
			t.Fatalf("write %d: version %d after %d", i, v, last)
		}
		if now := uint64(clk.Now().UnixMicro()); v < now {
			t.Fatalf("write %d: version %d is below the time in microseconds (%d)", i, v, now)
		}
		last = v
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"state.db", "state.db-wal", "state.db-shm"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
	clk.Advance(time.Microsecond)
	s = openAt(t, path, &sqlitestore.Options{Now: clk.Now})
	v, err := s.CompareAndSwap(ctx, "k", 0, []byte("new file"))
	if err != nil || v <= last {
		t.Fatalf("first write in a new file = %d, %v; want a version above the old file's %d", v, err, last)
	}
}

// TestTTL: a record expires TTL after its last write; loads do not extend
// it; an expired record is absent for Load and CompareAndSwap.
func TestTTL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := newClock()
	const ttl = time.Minute
	s := open(t, &sqlitestore.Options{TTL: ttl, Now: clk.Now})
	if s.TTL() != ttl {
		t.Fatalf("TTL() = %v, want %v", s.TTL(), ttl)
	}
	v1, err := s.CompareAndSwap(ctx, "k", 0, []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(ttl / 2)
	v2, err := s.CompareAndSwap(ctx, "k", v1, []byte("b")) // the expiry is now ttl from here
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(ttl - time.Millisecond)
	if d, v, err := s.Load(ctx, "k"); string(d) != "b" || v != v2 || err != nil {
		t.Fatalf("Load 1 ms before the expiry = %q, %d, %v; want b, %d (a write must set the expiry again)", d, v, err, v2)
	}
	clk.Advance(time.Millisecond) // loads did not extend it
	if d, v, err := s.Load(ctx, "k"); d != nil || v != 0 || err != nil {
		t.Fatalf("Load at the expiry = %q, %d, %v; want nil, 0, nil", d, v, err)
	}
	if _, err := s.CompareAndSwap(ctx, "k", v2, []byte("c")); !errors.Is(err, mcpbind.ErrConflict) {
		t.Fatalf("update of an expired record: err = %v, want ErrConflict", err)
	}
	v3, err := s.CompareAndSwap(ctx, "k", 0, []byte("c"))
	if err != nil || v3 <= v2 {
		t.Fatalf("create after expiry = %d, %v; versions must never be reused (had %d)", v3, err, v2)
	}
	if d, v, err := s.Load(ctx, "k"); string(d) != "c" || v != v3 || err != nil {
		t.Fatalf("Load after re-creating = %q, %d, %v; want c, %d", d, v, err, v3)
	}
}

// TestNoTTL: without a TTL records never expire, and a store without TTL
// still honours the expiry another store (another process) wrote.
func TestNoTTL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := newClock()
	path := filepath.Join(t.TempDir(), "state.db")
	forever := openAt(t, path, &sqlitestore.Options{Now: clk.Now})
	short := openAt(t, path, &sqlitestore.Options{TTL: time.Hour, Now: clk.Now})
	if forever.TTL() != 0 {
		t.Fatalf("default TTL() = %v, want 0", forever.TTL())
	}
	vf, err := forever.CompareAndSwap(ctx, "forever", 0, []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := short.CompareAndSwap(ctx, "short", 0, []byte("b")); err != nil {
		t.Fatal(err)
	}
	clk.Advance(100 * 365 * 24 * time.Hour)
	for _, s := range []*sqlitestore.Store{forever, short} {
		if d, v, err := s.Load(ctx, "forever"); string(d) != "a" || v != vf || err != nil {
			t.Fatalf("Load of a record written without TTL, a century later = %q, %d, %v; want a, %d", d, v, err, vf)
		}
		if d, v, err := s.Load(ctx, "short"); d != nil || v != 0 || err != nil {
			t.Fatalf("Load of a record written with a TTL of an hour, a century later = %q, %d, %v; want nil, 0, nil", d, v, err)
		}
	}
}

// TestPurge: writes delete expired rows from the file, at the first write
// of a Store and then at most once a minute; live rows stay.
func TestPurge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := newClock()
	path := filepath.Join(t.TempDir(), "state.db")
	s := openAt(t, path, &sqlitestore.Options{TTL: 10 * time.Second, Now: clk.Now})
	raw := rawDB(t, path)
	rows := func() []string {
		t.Helper()
		r, err := raw.Query("SELECT key FROM workflows ORDER BY key")
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var keys []string
		for r.Next() {
			var k string
			if err := r.Scan(&k); err != nil {
				t.Fatal(err)
			}
			keys = append(keys, k)
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		return keys
	}
	for i := range 3 {
		if _, err := s.CompareAndSwap(ctx, "old"+strconv.Itoa(i), 0, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(20 * time.Second) // the old rows expired, but the next purge is due in 40 s
	if _, err := s.CompareAndSwap(ctx, "new1", 0, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(rows(), " "), "new1 old0 old1 old2"; got != want {
		t.Fatalf("rows 20 s after the first write = %s; want %s (no purge yet)", got, want)
	}
	clk.Advance(41 * time.Second)
	if _, err := s.CompareAndSwap(ctx, "new2", 0, []byte("x")); err != nil {
		t.Fatal(err)
	}
	// new1 expired too (it was written 41 s ago).
	if got, want := strings.Join(rows(), " "), "new2"; got != want {
		t.Fatalf("rows after a purge = %s; want %s", got, want)
	}

	// A new Store purges at its first write, a delete included.
	if _, err := s.CompareAndSwap(ctx, "new3", 0, []byte("x")); err != nil {
		t.Fatal(err)
	}
	clk.Advance(5 * time.Second)
	if _, err := s.CompareAndSwap(ctx, "new4", 0, []byte("x")); err != nil {
		t.Fatal(err)
	}
	clk.Advance(6 * time.Second) // new2 and new3 expired, new4 is live
	other := openAt(t, path, &sqlitestore.Options{Now: clk.Now})
	if err := other.Delete(ctx, "missing"); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(rows(), " "), "new4"; got != want {
		t.Fatalf("rows after a new store's first delete = %s; want %s", got, want)
	}
}

// TestData: data is copied in and out: the caller may reuse its buffer
// after CompareAndSwap, and nil data is stored as an empty record.
func TestData(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := open(t, nil)
	buf := []byte("first")
	v, err := s.CompareAndSwap(ctx, "k", 0, buf)
	if err != nil {
		t.Fatal(err)
	}
	copy(buf, "XXXXX")
	if d, _, _ := s.Load(ctx, "k"); string(d) != "first" {
		t.Fatalf("Load = %q after the caller changed its buffer; want first", d)
	}
	if _, err := s.CompareAndSwap(ctx, "k", v, nil); err != nil {
		t.Fatal(err)
	}
	if d, v2, err := s.Load(ctx, "k"); d == nil || len(d) != 0 || v2 == 0 || err != nil {
		t.Fatalf("Load of nil data = %q (nil: %v), %d, %v; want an empty record", d, d == nil, v2, err)
	}
	// Keys are bytes: any string is a key of its own.
	for _, k := range []string{"", " ", "a'b", "ключ", "\x00\xff"} {
		if _, err := s.CompareAndSwap(ctx, k, 0, []byte(k+"!")); err != nil {
			t.Fatalf("key %q: %v", k, err)
		}
	}
	for _, k := range []string{"", " ", "a'b", "ключ", "\x00\xff"} {
		if d, _, err := s.Load(ctx, k); string(d) != k+"!" || err != nil {
			t.Fatalf("Load(%q) = %q, %v", k, d, err)
		}
	}
}

// TestOpenCreates: Open creates missing directories and a private file, at
// exactly the path given, whatever characters it has, in WAL mode.
func TestOpenCreates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "a b", "c?d#e%20f")
	path := filepath.Join(dir, "state.db")
	s := openAt(t, path, nil)
	if s.Path() != path {
		t.Errorf("Path() = %s, want %s", s.Path(), path)
	}
	if _, err := s.CompareAndSwap(ctx, "k", 0, []byte("a")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("the file's mode is %v, want 0600", fi.Mode().Perm())
	}
	// The file, its WAL (the file is in WAL mode) and nothing else.
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if got, want := strings.Join(names, " "), "state.db state.db-shm state.db-wal"; got != want {
		t.Errorf("files in %s = %s; want %s", dir, got, want)
	}
	if entries, _ := os.ReadDir(filepath.Dir(dir)); len(entries) != 1 {
		t.Errorf("%s has %d entries, want 1", filepath.Dir(dir), len(entries))
	}
	var mode string
	if err := s.DB().QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal mode = %q, %v; want wal", mode, err)
	}
}

// TestOpenRelative: a relative path is taken from the working directory and
// made absolute.
func TestOpenRelative(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	s := openAt(t, filepath.Join(".chartgate", "state.db"), nil)
	if want := filepath.Join(dir, ".chartgate", "state.db"); s.Path() != want {
		t.Errorf("Path() of a relative path = %s, want %s", s.Path(), want)
	}
	if _, err := os.Stat(s.Path()); err != nil {
		t.Error(err)
	}
}

// TestOpenErrors: files Open must not use, and bad options, give errors
// that name the file and say what is wrong.
func TestOpenErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, sqlText string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(sqlText); err != nil {
			t.Fatal(err)
		}
		return path
	}
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, []byte(strings.Repeat("not a database ", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		opts       *sqlitestore.Options
		want       string
	}{
		{"newer schema", write("newer.db", "PRAGMA user_version = 99"), nil, "schema version 99, newer than"},
		{"foreign database", write("foreign.db", "CREATE TABLE notes (x)"), nil, "not a chartgate store"},
		{"not a database", garbage, nil, "not a database"},
		{"a directory", dir, nil, dir},
		{"parent is a file", filepath.Join(notDir, "state.db"), nil, "not a directory"},
		{"negative TTL", filepath.Join(dir, "ttl.db"), &sqlitestore.Options{TTL: -time.Second}, "negative TTL"},
		{"negative busy timeout", filepath.Join(dir, "busy.db"), &sqlitestore.Options{BusyTimeout: -time.Second}, "negative BusyTimeout"},
	} {
		s, err := sqlitestore.Open(tc.path, tc.opts)
		if err == nil {
			s.Close()
			t.Errorf("%s: Open(%s) succeeded", tc.name, tc.path)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("%s: Open(%s) error = %q; want one naming the file and containing %q", tc.name, tc.path, err, tc.want)
		}
	}
	// The foreign database was left alone.
	var n int
	if err := rawDB(t, filepath.Join(dir, "foreign.db")).QueryRow("SELECT count(*) FROM sqlite_schema").Scan(&n); err != nil || n != 1 {
		t.Errorf("the foreign database has %d objects (%v); want its 1 table only", n, err)
	}
}

// lockWrites takes the write lock of the file at path on a connection of
// its own, as another process would, and returns the function that
// releases it.
func lockWrites(t *testing.T, path string) (release func()) {
	t.Helper()
	conn, err := rawDB(t, path).Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
				t.Error(err)
			}
			conn.Close()
		})
	}
	t.Cleanup(release)
	return release
}

// TestBusy: when another connection holds the write lock for longer than
// the busy timeout, writes fail with ErrBusy (not a conflict) and change
// nothing; loads go on; after the lock is released, writes succeed.
func TestBusy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s := openAt(t, path, &sqlitestore.Options{BusyTimeout: 30 * time.Millisecond})
	v1, err := s.CompareAndSwap(ctx, "k", 0, []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	release := lockWrites(t, path)
	_, err = s.CompareAndSwap(ctx, "k", v1, []byte("b"))
	if !errors.Is(err, sqlitestore.ErrBusy) || errors.Is(err, mcpbind.ErrConflict) {
		t.Fatalf("compare-and-swap while another connection holds the lock: err = %v; want ErrBusy and not ErrConflict", err)
	}
	if !strings.Contains(err.Error(), `compare-and-swap of "k"`) {
		t.Errorf("error %q does not say which operation failed", err)
	}
	if err := s.Delete(ctx, "k"); !errors.Is(err, sqlitestore.ErrBusy) {
		t.Fatalf("Delete while another connection holds the lock: err = %v; want ErrBusy", err)
	}
	if d, v, err := s.Load(ctx, "k"); string(d) != "a" || v != v1 || err != nil {
		t.Fatalf("Load while another connection holds the lock = %q, %d, %v; want a, %d", d, v, err, v1)
	}
	release()
	if _, err := s.CompareAndSwap(ctx, "k", v1, []byte("b")); err != nil {
		t.Fatalf("compare-and-swap after the lock was released, from the version before the failed one: %v", err)
	}
}

// TestBusyWaits: a write waits for a lock that is released within the busy
// timeout, and a context that ends the wait ends the write.
func TestBusyWaits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s := openAt(t, path, &sqlitestore.Options{BusyTimeout: time.Minute})
	release := lockWrites(t, path)
	done := make(chan error, 1)
	go func() {
		_, err := s.CompareAndSwap(ctx, "k", 0, []byte("a"))
		done <- err
	}()
	time.Sleep(20 * time.Millisecond) // let it start waiting (if it does not, the test still passes)
	release()
	if err := <-done; err != nil {
		t.Fatalf("compare-and-swap waiting for the lock: %v", err)
	}

	lockWrites(t, path)
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := s.CompareAndSwap(cctx, "k", 0, []byte("b")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("compare-and-swap whose context ends while it waits: err = %v; want context.DeadlineExceeded", err)
	}
}

// TestCancelled: operations with a cancelled context fail with its error;
// operations after Close fail.
func TestCancelled(t *testing.T) {
	t.Parallel()
	s, err := sqlitestore.Open(filepath.Join(t.TempDir(), "state.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := s.Load(ctx, "k"); !errors.Is(err, context.Canceled) {
		t.Errorf("Load: err = %v, want context.Canceled", err)
	}
	if _, err := s.CompareAndSwap(ctx, "k", 0, []byte("a")); !errors.Is(err, context.Canceled) {
		t.Errorf("CompareAndSwap: err = %v, want context.Canceled", err)
	}
	if err := s.Delete(ctx, "k"); !errors.Is(err, context.Canceled) {
		t.Errorf("Delete: err = %v, want context.Canceled", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	bg := context.Background()
	if _, _, err := s.Load(bg, "k"); err == nil {
		t.Error("Load after Close: no error")
	}
	if _, err := s.CompareAndSwap(bg, "k", 0, []byte("a")); err == nil || errors.Is(err, mcpbind.ErrConflict) {
		t.Errorf("CompareAndSwap after Close: err = %v, want an error other than a conflict", err)
	}
}

// TestConnectionSettings: every connection of the pool has the busy
// timeout (SQLite's busy handler waits at most a 100 ms slice at once;
// the store waits the rest, between slices) and the synchronous mode of
// the options.
func TestConnectionSettings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		opts        *sqlitestore.Options
		busy, synch int
	}{
		{nil, 100, 2}, // FULL
		{&sqlitestore.Options{BusyTimeout: 1500 * time.Microsecond, RelaxedSync: true}, 2, 1}, // NORMAL
	} {
		s := open(t, tc.opts)
		var conns []*sql.Conn
		for range 2 { // two connections at once: two different ones
			c, err := s.DB().Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
		}
		for i, c := range conns {
			var busy, synch int
			if err := c.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy); err != nil {
				t.Fatal(err)
			}
			if err := c.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&synch); err != nil {
				t.Fatal(err)
			}
			if busy != tc.busy || synch != tc.synch {
				t.Errorf("options %+v, connection %d: busy_timeout %d, synchronous %d; want %d, %d", tc.opts, i, busy, synch, tc.busy, tc.synch)
			}
			c.Close()
		}
	}
}

// TestJobs: the jobs of gates on two Stores of one file (two processes)
// resume when the instance that ran them is closed, and move their
// workflow once (storetest.RunJobs).
func TestJobs(t *testing.T) {
	t.Parallel()
	storetest.RunJobs(t, func(t *testing.T) (mcpbind.Store, mcpbind.Store) {
		path := filepath.Join(t.TempDir(), "state.db")
		return openAt(t, path, nil), openAt(t, path, nil)
	})
}

// TestWatchGates: two gates on one Store (two servers of one process); a
// transition through one gives list_changed to the sessions of that
// workflow on the other (storetest.RunWatch). The feed is in process: it
// reports the writes made through the Store.
func TestWatchGates(t *testing.T) {
	t.Parallel()
	storetest.RunWatch(t, func(t *testing.T) (mcpbind.Store, mcpbind.Store) {
		s := open(t, nil)
		return s, s
	})
}
