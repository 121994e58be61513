// This file defines Open and the database file: its creation, the
// connection settings (the DSN) and the schema with its migrations.

package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, pure Go
)

// DefaultPath is where a project keeps its store, relative to the project
// folder.
const DefaultPath = ".chartgate/state.db"

// DefaultBusyTimeout is how long an operation waits for a lock held by
// another connection when Options.BusyTimeout is zero.
const DefaultBusyTimeout = 5 * time.Second

// maxConns bounds the connections of one Store: the writes keep one (see
// Store.writer), the others serve concurrent loads.
const maxConns = 4

// Options configures [Open]. The zero value (or nil) means the defaults.
type Options struct {
	// TTL is how long a record lives after its last write; a load does not
	// extend it. Zero (the default) means that records never expire. It is
	// rounded up to whole milliseconds. See the package documentation.
	TTL time.Duration
	// BusyTimeout is how long an operation waits for a lock that another
	// connection (another process, usually) holds before it fails with an
	// error that matches [ErrBusy]. Default [DefaultBusyTimeout]. It is
	// rounded up to whole milliseconds.
	BusyTimeout time.Duration
	// RelaxedSync trades durability for speed: with it, a committed write
	// survives a crash of the process but may be lost (the database stays
	// consistent) when the operating system crashes or the power fails
	// before the next checkpoint. Without it (the default) every commit is
	// on disk (fsync) before CompareAndSwap and Delete return. In SQLite
	// terms: synchronous=NORMAL instead of FULL.
	RelaxedSync bool
	// Now returns the current time, for expiry and versions; default
	// time.Now. For tests.
	Now func() time.Time
}

// Open opens the store in the SQLite database file at path, creating the
// file and its missing parent directories if needed (the file with mode
// 0600, directories 0755, both before the umask), and the schema in an
// empty file. opts may be nil. Several processes may open one file at once.
// Close the store when done.
func Open(path string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.TTL < 0 {
		return nil, fmt.Errorf("sqlitestore: opening %s: negative TTL %v", path, o.TTL)
	}
	if o.BusyTimeout < 0 {
		return nil, fmt.Errorf("sqlitestore: opening %s: negative BusyTimeout %v", path, o.BusyTimeout)
	}
	if o.BusyTimeout == 0 {
		o.BusyTimeout = DefaultBusyTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: opening %s: %w", path, err)
	}
	if err := createFile(abs); err != nil {
		return nil, fmt.Errorf("sqlitestore: opening %s: %w", abs, err)
	}
	busyMS := roundMS(o.BusyTimeout)
	// SQLite's own busy handler waits without looking at a context, so it
	// waits a slice at a time (busySlice) and retryBusy waits the rest,
	// between slices, until BusyTimeout or the context ends.
	db, err := sql.Open("sqlite", dsn(abs, min(busyMS, busySlice.Milliseconds()), o.RelaxedSync))
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: opening %s: %w", abs, err)
	}
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	s := &Store{
		db:         db,
		path:       abs,
		ttlMS:      roundMS(o.TTL),
		busy:       time.Duration(busyMS) * time.Millisecond,
		now:        o.Now,
		writer:     make(chan struct{}, 1),
		syncMode:   syncMode(o.RelaxedSync),
		splitAbove: 3 << 10,
		tailAbove:  3 << 10,
	}
	s.feed = s.newFeed()
	s.load.query = sqlLoad
	// Another process may be creating the schema at this moment: waiting
	// for it is bounded by the busy timeout (retryBusy and SQLite's).
	ctx := context.Background()
	if err := retryBusy(ctx, s.busy, func() error { return migrate(ctx, db) }); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlitestore: opening %s: %w", abs, busyError(err, s.busy))
	}
	return s, nil
}

// createFile creates the parent directories of path and an empty file at
// path with mode 0600, unless the file exists. SQLite takes an empty file
// for an empty database. Creating it here (instead of letting SQLite create
// it with 0644) keeps the workflow state private to its user; SQLite gives
// the -wal and -shm files the database's mode.
//
// The file is only ever created here, never opened: closing a descriptor of
// a database file that SQLite has locked would drop the process' POSIX
// locks on it. A file created with O_EXCL is new, so no connection of this
// process has locks on it yet.
func createFile(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}

// dsn is the driver's data source name for the file at path: a file: URI
// (so that any character may appear in path) with the per-connection
// settings, which the driver applies to every connection it opens:
// _txlock=immediate makes every transaction begun through database/sql (a
// migration's) BEGIN IMMEDIATE, so that it takes the database's write lock
// (or waits for it) before it reads the schema version. The writes begin
// theirs themselves (Store.runGroup).
func dsn(path string, busyMS int64, relaxed bool) string {
	p := filepath.ToSlash(path)
	if p[0] != '/' {
		p = "/" + p // C:/x -> /C:/x: SQLite drops the slash before a drive letter
	}
	q := url.Values{
		"_pragma": {
			"busy_timeout(" + strconv.FormatInt(busyMS, 10) + ")",
			"synchronous(" + syncMode(relaxed) + ")",
		},
		"_txlock": {"immediate"},
	}
	u := url.URL{Scheme: "file", Path: p, RawQuery: q.Encode()}
	return u.String()
}

// syncMode is the synchronous setting of a durable write.
func syncMode(relaxed bool) string {
	if relaxed {
		return "NORMAL"
	}
	return "FULL"
}

// roundMS returns d in whole milliseconds, rounded up.
func roundMS(d time.Duration) int64 {
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

// schemaVersion is the version of the schema this package writes, kept in
// the file's PRAGMA user_version. 0 is an empty (or foreign) file.
const schemaVersion = len(migrations)

// migrations[i] brings the schema from version i to version i+1. Released
// migrations are never edited; a new schema is a new entry.
var migrations = [...]string{
	// 0 -> 1: the records and the version counter.
	`CREATE TABLE records (
		key     TEXT PRIMARY KEY NOT NULL,
		version INTEGER NOT NULL,
		data    BLOB NOT NULL,
		expires INTEGER NOT NULL -- Unix milliseconds; 0: never
	);
	CREATE INDEX records_expires ON records (expires) WHERE expires > 0;
	CREATE TABLE counter (
		id   INTEGER PRIMARY KEY CHECK (id = 1),
		last INTEGER NOT NULL -- the last version handed out
	);
	INSERT INTO counter (id, last) VALUES (1, 0);`,
	// 1 -> 2: a write takes its version from the record it replaces
	// (sqlSwap, sqlCreate), so that it changes no page but the record's;
	// the counter gives way to retired, which only deletions write (the
	// writes' TEMP trigger records_retire). Dropping counter also makes
	// the writes of a process that opened the file at version 1, whose
	// statements and triggers use it, fail instead of handing out
	// versions from a counter no longer kept.
	`CREATE TABLE retired (
		id   INTEGER PRIMARY KEY CHECK (id = 1),
		last INTEGER NOT NULL -- at least the version of every record deleted
	);
	INSERT INTO retired (id, last) SELECT id, last FROM counter WHERE id = 1;
	DROP TABLE counter;`,
	// 2 -> 3: a record written split (CompareAndSwapSplit) keeps its run
	// history's entries in history, a row each, so that a write adds and
	// removes entries instead of writing the whole history again; split
	// says which records do (a plain write clears it, and the trigger
	// workflows_unsplit their rows). Renaming records makes the writes of a
	// process that opened the file at version 2, which would leave split
	// set under a record that holds its history itself, fail.
	`ALTER TABLE records RENAME TO workflows;
	ALTER TABLE workflows ADD COLUMN split INTEGER NOT NULL DEFAULT 0;
	CREATE TABLE history (
		key     TEXT NOT NULL,
		version INTEGER NOT NULL, -- of the write that added the entry
		i       INTEGER NOT NULL, -- its place among that write's entries
		entry   BLOB NOT NULL,
		PRIMARY KEY (key, version, i)
	) WITHOUT ROWID;
	CREATE TRIGGER workflows_deleted AFTER DELETE ON workflows
	BEGIN DELETE FROM history WHERE key = OLD.key; END;
	CREATE TRIGGER workflows_unsplit AFTER UPDATE OF split ON workflows WHEN OLD.split AND NOT NEW.split
	BEGIN DELETE FROM history WHERE key = OLD.key; END;`,
	// 3 -> 4: a split record keeps its newest entries in its own row
	// (tail) and the rows of its dropped entries until deadRows are dead,
	// so that most writes change its row alone (see splitPlan); live and
	// dead count its rows of entries. Renaming history (the triggers
	// follow) makes the writes of a process that opened the file at
	// version 3, which would drop and add rows without the counts, fail.
	`ALTER TABLE history RENAME TO entries;
	ALTER TABLE workflows ADD COLUMN tail BLOB; -- the newest entries, joined by commas
	ALTER TABLE workflows ADD COLUMN live INTEGER NOT NULL DEFAULT 0; -- rows of entries in the history
	ALTER TABLE workflows ADD COLUMN dead INTEGER NOT NULL DEFAULT 0; -- rows of entries dropped, before those
	UPDATE workflows SET live = (SELECT count(*) FROM entries WHERE entries.key = workflows.key) WHERE split;`,
}

// migrate brings the schema of the file up to schemaVersion. In the common
// case, a file some process already set up, it reads one pragma and writes
// nothing. Otherwise it switches the file to WAL mode and runs the missing
// migrations in one BEGIN IMMEDIATE transaction, after reading the version
// again under the write lock: when several processes open a new file at
// once, one creates the schema and the others find it done.
func migrate(ctx context.Context, db *sql.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	v, err := userVersion(ctx, conn)
	if err != nil || v == schemaVersion {
		return err
	}
	if v > schemaVersion {
		return fmt.Errorf("the file has schema version %d, newer than this version of chartgate knows (%d): upgrade chartgate", v, schemaVersion)
	}
	if v == 0 {
		// The journal mode persists in the file; it cannot change inside a
		// transaction.
		var mode string
		if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode); err != nil {
			return fmt.Errorf("setting WAL mode: %w", err)
		}
		if mode != "wal" {
			return fmt.Errorf("the file cannot be put in WAL mode (journal mode %q): is it on a network file system?", mode)
		}
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() // a no-op after Commit; the error of a failed operation is the one to report
	if v, err = userVersion(ctx, tx); err != nil || v == schemaVersion {
		return err
	}
	if v == 0 {
		var tables int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&tables); err != nil {
			return err
		}
		if tables > 0 {
			return errors.New("not a chartgate store: the database has tables but no schema version (PRAGMA user_version is 0)")
		}
	}
	for ; v < schemaVersion; v++ {
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			return fmt.Errorf("migrating the schema from version %d to %d: %w", v, v+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, "PRAGMA user_version = "+strconv.Itoa(schemaVersion)); err != nil {
		return err
	}
	return tx.Commit()
}

// busySlice is the longest SQLite's busy handler waits at once.
const busySlice = 100 * time.Millisecond

// retryBusy calls fn again while it fails with SQLITE_BUSY, for up to
// wait, after pauses that double from 1 ms to at most 50 ms (each shortened
// at random, so that processes that collided once do not collide again).
// SQLite's busy timeout does not cover every lock: switching a new file to
// WAL mode needs the exclusive lock, and a connection that holds a shared
// lock fails at once with SQLITE_BUSY instead of waiting, since waiting
// could deadlock with another connection doing the same.
func retryBusy(ctx context.Context, wait time.Duration, fn func() error) error {
	deadline := time.Now().Add(wait)
	pause := time.Millisecond
	for {
		err := fn()
		if !isBusy(err) || time.Now().Add(pause).After(deadline) {
			return err
		}
		t := time.NewTimer(pause/2 + rand.N(pause/2+1))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
		pause = min(2*pause, 50*time.Millisecond)
	}
}

func userVersion(ctx context.Context, q interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}) (int, error) {
	var v int
	err := q.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
	return v, err
}
