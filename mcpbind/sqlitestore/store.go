// This file defines Store, the gate.Store in a SQLite file: Load,
// CompareAndSwap and Delete, the expiry of records, the purge of expired
// ones, and the errors of a database that stays locked.

package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/internal/histrec"
)

// ErrBusy is matched (errors.Is) by the error of an operation that gave up
// because another connection, usually another process, held the database's
// lock for longer than Options.BusyTimeout. Such an operation changed
// nothing: it is not a conflict, and it may be retried.
var ErrBusy = errors.New("sqlitestore: database locked by another connection")

// purgeInterval is the least time between two purges of expired records by
// one Store, and purgeBatch the most records one purge deletes (so that a
// write after a long pause does not hold the write lock for long).
const (
	purgeInterval = time.Minute
	purgeBatch    = 1000
)

// Store is an [gate.Store] in a SQLite database file. It is safe for
// concurrent use, and several Stores, in one process or in several, may
// use one file at once. The zero value is not usable: call [Open].
type Store struct {
	db    *sql.DB
	path  string
	ttlMS int64 // 0: records never expire
	busy  time.Duration
	now   func() time.Time

	// writer holds a token while a write of this Store is in progress.
	// The writes of one process queue here, in Go, instead of in SQLite's
	// busy handler, which waits by sleeping; SQLite's lock orders them with
	// the writes of other processes.
	writer chan struct{}
	// nextPurge is when the next write purges expired records (the zero
	// time: at the first write). Guarded by writer.
	nextPurge time.Time
	// last is the highest version a write of this Store was given: the
	// next is above it (guarded by writer).
	last uint64
	// queue holds the writes waiting for the writer token; its holder
	// commits them together (see write).
	qmu   sync.Mutex
	queue []*writeOp

	// load is Load's statement, prepared on the pool.
	load stmt
	// w is the connection the writes run on, opened at the first write
	// and kept (guarded by writer).
	w *writeConn
	// closed is set by Close (guarded by writer).
	closed bool

	// syncMode is the synchronous setting of a durable write (FULL, or
	// NORMAL with RelaxedSync).
	syncMode string
	// splitAbove is the size from which CompareAndSwapSplit keeps a
	// record's history apart: a smaller record fits in a page of the
	// file (4 KiB) whole.
	splitAbove int
	// tailAbove is the most a split record's head and tail take (see
	// splitPlan): 3 KiB, so that its row fits in a page too.
	tailAbove int
	// splits holds the counts of the split records this Store wrote
	// (see splitPlan), by key.
	smu    sync.Mutex
	splits map[string]splitRecord

	feed *gate.Feed // the writes to the file, by any process (watch.go)
}

// The statements' SQL.
const (
	// sqlLoad reads a record, with the entries of its history joined by
	// commas if it was written split (see splitPlan): its rows of
	// entries but the dead ones, then its tail. In one statement, so that
	// head and history are of one version.
	sqlLoad = `SELECT version, data, expires,
		CASE WHEN split THEN concat_ws(',',
			(SELECT group_concat(entry, ',' ORDER BY version, i) FROM (SELECT version, i, entry FROM entries WHERE key = ?1
				ORDER BY version, i LIMIT -1 OFFSET (SELECT dead FROM workflows WHERE key = ?1))),
			tail) END
		FROM workflows WHERE key = ?1`
	sqlCurrent = `SELECT version, expires FROM workflows WHERE key = ?`
	// sqlSwap replaces the record of key ?3 if it has version ?4 and has
	// not expired at ?5, giving it version ?6, which the Store computes:
	// above ?4 and never below the time in microseconds (see "Versions"
	// in the package documentation); it changes no row on a conflict.
	// sqlCreate writes the record of key ?1 if there is none or it
	// expired at ?4, and returns its new version (no row on a conflict):
	// above the record's (if there is a row) and every deleted record's
	// (retired, which only deletions write), and never below ?5, the
	// time in microseconds or the Store's last version + 1. Each is one
	// statement that compares and writes, and changes the record's page
	// only. sqlSwap returns no row: SQLite gathers the rows of RETURNING
	// in a table of their own, a cost on every moving call. Both clear
	// split (?7): the record holds its history itself, if it has one.
	// With ?7 set they write a split record's head instead, whose
	// history will be ?8 rows of entries (no tail, no dead rows).
	// sqlSwapKept replaces the head of a record already split, and
	// sqlSwapTail also its tail (?7) and counts of rows (live ?8, dead
	// ?9); sqlSplit reads these counts.
	sqlSwap = `UPDATE workflows
		SET version = ?6, data = ?1, expires = ?2, split = ?7, tail = NULL, live = ?8, dead = 0
		WHERE key = ?3 AND version = ?4 AND (expires = 0 OR expires > ?5)`
	sqlSwapKept = `UPDATE workflows
		SET version = ?6, data = ?1, expires = ?2
		WHERE key = ?3 AND version = ?4 AND (expires = 0 OR expires > ?5) AND split`
	sqlSwapTail = `UPDATE workflows
		SET version = ?6, data = ?1, expires = ?2, tail = ?7, live = ?8, dead = ?9
		WHERE key = ?3 AND version = ?4 AND (expires = 0 OR expires > ?5) AND split`
	sqlSplit = `SELECT live, dead FROM workflows
		WHERE key = ?1 AND version = ?2 AND (expires = 0 OR expires > ?3) AND split`
	sqlCreate = `INSERT INTO workflows (key, version, data, expires, split, live)
		VALUES (?1, (SELECT max(last + 1, ?5) FROM retired WHERE id = 1), ?2, ?3, ?6, ?7)
		ON CONFLICT (key) DO UPDATE SET version = max(excluded.version, version + 1), data = excluded.data, expires = excluded.expires,
			split = excluded.split, tail = NULL, live = excluded.live, dead = 0
		WHERE expires > 0 AND expires <= ?4
		RETURNING version`
	sqlRemove = `DELETE FROM workflows WHERE key = ?`
	sqlPurge  = `DELETE FROM workflows WHERE key IN
		(SELECT key FROM workflows WHERE expires > 0 AND expires <= ? LIMIT ?)`
	// The rows of entries of a split record: the first ?2 deleted (with a
	// bound LIMIT instead of OFFSET, SQLite would prepare the statement
	// again at each run; some row must follow them), all of them, an
	// entry added.
	sqlHistoryDrop = `DELETE FROM entries WHERE key = ?1 AND (version, i) <
		(SELECT version, i FROM entries WHERE key = ?1 ORDER BY version, i LIMIT 1 OFFSET ?2)`
	sqlHistoryClear = `DELETE FROM entries WHERE key = ?`
	sqlHistoryAdd   = `INSERT INTO entries (key, version, i, entry) VALUES (?, ?, ?, ?)`
)

// versionTriggers keep retired.last at or above the version of every
// record the writes' connection deletes (Delete and the purge), so that
// a record created again under its key takes a version above those it
// had. It is a TEMP trigger, which lives in the connection, not in the
// file.
var versionTriggers = [...]string{
	`CREATE TEMP TRIGGER IF NOT EXISTS workflows_retire AFTER DELETE ON main.workflows
	BEGIN UPDATE retired SET last = max(last, OLD.version) WHERE id = 1; END`,
}

// stmt is a statement prepared at its first use, then reused: preparing
// (parsing) these statements costs about as much as running them.
// database/sql prepares it again on each connection of the pool that has
// not got it.
type stmt struct {
	query  string
	ready  atomic.Pointer[sql.Stmt]
	mu     sync.Mutex // held while preparing or closing
	closed bool
}

var errClosed = errors.New("sqlitestore: the store is closed")

// get returns the prepared statement, preparing it on db the first time.
func (st *stmt) get(ctx context.Context, db *sql.DB) (*sql.Stmt, error) {
	if p := st.ready.Load(); p != nil {
		return p, nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return nil, errClosed
	}
	if p := st.ready.Load(); p != nil {
		return p, nil
	}
	p, err := db.PrepareContext(ctx, st.query)
	if err != nil {
		return nil, err
	}
	st.ready.Store(p)
	return p, nil
}

// close closes the statement, if it was prepared, and makes get fail from
// now on (a statement left open would keep its connection, and so the
// file, open).
func (st *stmt) close() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.closed = true
	if p := st.ready.Swap(nil); p != nil {
		return p.Close()
	}
	return nil
}

var (
	_ gate.Store       = (*Store)(nil)
	_ gate.Watcher     = (*Store)(nil)
	_ gate.FuncWatcher = (*Store)(nil)
	_ gate.NoSyncStore = (*Store)(nil)
	_ histrec.Store    = (*Store)(nil)
)

// Path returns the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// TTL returns the expiry of records after rounding (0: they never expire).
func (s *Store) TTL() time.Duration { return time.Duration(s.ttlMS) * time.Millisecond }

// Close closes the database. It waits for the operations in progress;
// operations started after it fail.
func (s *Store) Close() error {
	s.feed.Close()
	errs := []error{s.load.close()}
	s.writer <- struct{}{} // the write in progress ends first
	s.closed = true
	if s.w != nil {
		errs = append(errs, s.w.close())
		s.w = nil
	}
	<-s.writer
	if err := errors.Join(append(errs, s.db.Close())...); err != nil {
		return fmt.Errorf("sqlitestore: closing %s: %w", s.path, err)
	}
	return nil
}

// Watch implements [gate.Watcher]: the writes made through this Store
// at once, and those of other Stores and processes on the file within
// watchInterval (see watch.go).
func (s *Store) Watch(ctx context.Context, prefix string) (<-chan gate.Change, error) {
	return s.feed.Watch(ctx, prefix)
}

// WatchFunc implements [gate.FuncWatcher]: fn is called by the writer
// once its write is committed, and by the Store's poll for the writes of
// others.
func (s *Store) WatchFunc(ctx context.Context, prefix string, fn func(gate.Change)) error {
	return s.feed.WatchFunc(ctx, prefix, fn)
}

// Load implements [gate.Store]. A missing key, a deleted record and an
// expired one give nil, 0 and no error. Load only reads: it neither waits
// for writers nor extends the record's expiry.
//
// While no write is in progress, Load reads on the writes' connection:
// its cache holds the pages the last write changed, which another
// connection would read again from the file.
func (s *Store) Load(ctx context.Context, key string) ([]byte, uint64, error) {
	var (
		data, history []byte
		version       uint64
		expires       int64
	)
	err, done := s.loadIdle(key, &version, &data, &expires, &history)
	if !done {
		var load *sql.Stmt
		if load, err = s.load.get(ctx, s.db); err == nil {
			err = load.QueryRowContext(ctx, key).Scan(&version, &data, &expires, &history)
		}
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, s.fail(ctx, "loading", key, err)
	}
	if expired(expires, s.now()) {
		return nil, 0, nil
	}
	if version == 0 {
		return nil, 0, fmt.Errorf("sqlitestore: loading %q: bad version 0 in the record", key)
	}
	if data == nil {
		data = []byte{} // an empty record, not a missing one
	}
	return histrec.Join(data, history), version, nil
}

// loadIdle runs Load's query on the writes' connection if it is open and
// no write is in progress (it waits for none), and reports whether it
// did.
func (s *Store) loadIdle(key string, dest ...any) (err error, done bool) {
	select {
	case s.writer <- struct{}{}:
	default:
		return nil, false
	}
	defer func() { <-s.writer }()
	if s.w == nil {
		return nil, false
	}
	return s.w.scan(sqlLoad, []any{key}, dest...), true
}

// Keys implements [gate.Lister]: the keys of the records that start
// with prefix and have not expired, sorted.
func (s *Store) Keys(ctx context.Context, prefix string) ([]string, error) {
	rows, err := s.db.QueryContext(ctx,
		`SELECT key FROM workflows WHERE substr(key, 1, ?) = ? AND (expires = 0 OR expires > ?) ORDER BY key`,
		len(prefix), prefix, s.now().UnixMilli())
	if err != nil {
		return nil, s.fail(ctx, "listing", prefix, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, s.fail(ctx, "listing", prefix, err)
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail(ctx, "listing", prefix, err)
	}
	return out, nil
}

// CompareAndSwap implements [gate.Store]. In one transaction that holds
// the database's write lock, it reads the key's current version (0 if there
// is no record or it expired), and only if that is old writes data, a new
// version above the key's earlier ones and, with a TTL, a new expiry.
// Otherwise the error matches [gate.ErrConflict]. It returns the new
// version only once the transaction committed.
func (s *Store) CompareAndSwap(ctx context.Context, key string, old uint64, data []byte) (uint64, error) {
	return s.compareAndSwap(ctx, key, old, data, true)
}

// CompareAndSwapNoSync implements [gate.NoSyncStore]: CompareAndSwap in a
// transaction committed with synchronous=NORMAL, which in WAL mode does
// not sync the WAL. The commit is in the operating system's cache at once
// (other connections see it, a crash of the process keeps it) and reaches
// the disk at the next synced commit, which syncs the whole WAL, or at a
// checkpoint. Queued with durable writes, it is committed before them,
// in a group of its own, and does not wait for their sync.
func (s *Store) CompareAndSwapNoSync(ctx context.Context, key string, old uint64, data []byte) (uint64, error) {
	return s.compareAndSwap(ctx, key, old, data, false)
}

func (s *Store) compareAndSwap(ctx context.Context, key string, old uint64, data []byte, durable bool) (uint64, error) {
	if data == nil {
		data = []byte{}
	}
	var cur, version uint64
	err := s.write(ctx, durable, func(w *writeConn, now time.Time) error {
		// One statement takes a version, compares and writes; only a
		// conflict reads the current version, for its error.
		var found bool
		var err error
		expires := s.expiry(now)
		if old == 0 {
			found, err = w.returning(sqlCreate, []any{key, data, expires, now.UnixMilli(), s.nextVersion(0, now), false, 0}, &version)
		} else {
			version = s.nextVersion(old, now)
			var changed int64
			changed, err = w.execChanged(sqlSwap, data, expires, key, old, now.UnixMilli(), version, false, 0)
			found = err == nil && changed == 1
		}
		if found {
			s.last = max(s.last, version)
		}
		if err != nil || found {
			return err
		}
		cur, err = s.current(w, key, now)
		return err
	})
	return s.swapped(ctx, key, old, cur, version, err)
}

// CompareAndSwapSplit implements histrec.Store, through which the gate
// writes its workflows' records: CompareAndSwap for a record given as its
// head and history, which it keeps apart once the record takes more than
// 3 KiB (a smaller one is written whole). A split record's row holds its
// head and its newest entries (its tail) while these fit in 3 KiB, and
// older entries are rows of entries (see splitPlan). A write whose
// history is a change of the stored one (w.Delta) that this Store wrote
// last changes the record's row alone, most of the time; another reads
// the record's counts of rows first, or replaces its rows. The head, its
// rows and the version change in one transaction. With durable false it
// is CompareAndSwapNoSync.
func (s *Store) CompareAndSwapSplit(ctx context.Context, key string, old uint64, w *histrec.Write, durable bool) (uint64, error) {
	if data, ok := w.Whole(s.splitAbove); ok {
		// A small record is written whole, in one statement: split, its
		// head and its history would take a page each.
		return s.compareAndSwap(ctx, key, old, data, durable)
	}
	head := w.Head
	if head == nil {
		head = []byte{}
	}
	dropped, appended, change := w.Change()
	var cur, version uint64
	if old != 0 && change {
		// A write of the head alone (a lease taken or released), or one
		// whose history changes only the record's row: one statement, if
		// the record is split as this Store knows it; else (or on a
		// conflict) the write below finds out.
		headOnly := dropped == 0 && len(appended) == 0
		rec, known := s.splitOf(key, old)
		p, one := splitPlan{live: rec.live, dead: rec.dead}, headOnly
		if !headOnly && known {
			p, one = s.plan(rec, len(head), w.History, dropped)
			one = one && p.rowOnly()
		}
		if one {
			var kept bool
			err := s.write(ctx, durable, func(c *writeConn, now time.Time) error {
				version = s.nextVersion(old, now)
				var changed int64
				var err error
				if headOnly {
					changed, err = c.execChanged(sqlSwapKept, head, s.expiry(now), key, old, now.UnixMilli(), version)
				} else {
					changed, err = c.execChanged(sqlSwapTail, head, s.expiry(now), key, old, now.UnixMilli(), version, p.tailArg(), p.live, p.dead)
				}
				if kept = err == nil && changed == 1; kept {
					s.last = max(s.last, version)
				}
				return err
			})
			if kept && known {
				s.remember(key, splitRecord{version: version, live: p.live, dead: p.dead})
			}
			if err != nil || kept {
				return s.swapped(ctx, key, old, 0, version, err)
			}
		}
	}
	var rec splitRecord
	err := s.writeMulti(ctx, durable, func(c *writeConn, now time.Time) error {
		expires := s.expiry(now)
		var found bool
		var err error
		rec = splitRecord{live: len(w.History)}
		if old == 0 {
			found, err = c.returning(sqlCreate, []any{key, head, expires, now.UnixMilli(), s.nextVersion(0, now), true, len(w.History)}, &version)
		} else {
			version = s.nextVersion(old, now)
			if change {
				var stored splitRecord
				if err := c.scan(sqlSplit, []any{key, old, now.UnixMilli()}, &stored.live, &stored.dead); err == nil {
					if p, ok := s.plan(stored, len(head), w.History, dropped); ok {
						if err := c.exec(sqlSwapTail, head, expires, key, old, now.UnixMilli(), version, p.tailArg(), p.live, p.dead); err != nil {
							return err
						}
						s.last = max(s.last, version)
						rec = splitRecord{live: p.live, dead: p.dead}
						return c.changeRows(key, version, p)
					}
				} else if !errors.Is(err, sql.ErrNoRows) {
					return err
				}
			}
			// Not split yet (or no delta): the rows are replaced.
			var changed int64
			changed, err = c.execChanged(sqlSwap, head, expires, key, old, now.UnixMilli(), version, true, len(w.History))
			found = err == nil && changed == 1
		}
		if err != nil {
			return err
		}
		if found {
			s.last = max(s.last, version)
			return c.replaceHistory(key, version, w.History)
		}
		cur, err = s.current(c, key, now)
		return err
	})
	if err == nil {
		rec.version = version
		s.remember(key, rec)
	}
	return s.swapped(ctx, key, old, cur, version, err)
}

// deadRows is the number of dropped entries' rows from which a write
// deletes them: deleting them one at a time, as they are dropped, would
// change the first page of the history (and, as it empties, its
// neighbours') on every write.
const deadRows = 32

// splitRecord is what a write knows of a split record: the number of its
// rows of entries that hold its history (live), after the first dead
// ones, which hold dropped entries; and, in a Store's cache, the version
// it wrote the record at.
type splitRecord struct {
	version    uint64
	live, dead int
}

// splitPlan is how a write keeps a split record's history, given as a
// change of the stored one (some first entries dropped, some appended):
// the history is the record's live rows of entries (in the order of
// their version and place), then the entries of its tail, a field of the
// record's row. The dropped entries leave the live rows first (their
// rows become dead) and then the tail; the appended ones join the tail.
// Once the head and the tail would take more than 3 KiB, the tail's
// entries become rows, and once deadRows rows are dead (or none is live)
// those are deleted. So most writes change the record's row alone (one
// page of the file, one statement), and the others add a page's worth of
// rows or delete one.
type splitPlan struct {
	tail       []byte            // the entries after the live rows, joined; empty if none
	live, dead int               // the counts of rows after the write
	drop       int               // the first rows to delete (those dead before)
	clear      bool              // delete every row (none stays live)
	add        []json.RawMessage // entries that become rows
}

// plan returns the plan of a write of history h, with the first dropped
// entries of the stored one gone, over a record of rec's counts; false if
// the counts do not fit h (the rows are then replaced).
func (s *Store) plan(rec splitRecord, headLen int, h []json.RawMessage, dropped int) (splitPlan, bool) {
	gone := min(dropped, rec.live)
	p := splitPlan{live: rec.live - gone, dead: rec.dead + gone}
	if rec.live < 0 || rec.dead < 0 || p.live > len(h) {
		return splitPlan{}, false
	}
	if p.dead >= deadRows || (p.live == 0 && p.dead > 0) {
		p.drop, p.clear, p.dead = p.dead, p.live == 0, 0
	}
	rest := h[p.live:]
	if n := histrec.EntriesLen(rest); headLen+n > s.tailAbove {
		p.add, p.live = rest, len(h)
	} else if n > 0 {
		p.tail = histrec.AppendEntries(make([]byte, 0, n), rest)
	}
	return p, true
}

// rowOnly reports whether the plan changes the record's row alone.
func (p *splitPlan) rowOnly() bool { return p.drop == 0 && len(p.add) == 0 }

// tailArg is the tail as a statement's argument: NULL if empty.
func (p *splitPlan) tailArg() any {
	if len(p.tail) == 0 {
		return nil
	}
	return p.tail
}

// changeRows deletes and adds the rows of entries the plan says, the
// added ones under version.
func (c *writeConn) changeRows(key string, version uint64, p splitPlan) error {
	switch {
	case p.clear:
		if err := c.exec(sqlHistoryClear, key); err != nil {
			return err
		}
	case p.drop > 0:
		if err := c.exec(sqlHistoryDrop, key, p.drop); err != nil {
			return err
		}
	}
	return c.addHistory(key, version, p.add)
}

// maxSplits bounds the split records a Store remembers.
const maxSplits = 4096

// splitOf returns the counts of the split record of key at version old,
// if this Store wrote it last.
func (s *Store) splitOf(key string, old uint64) (splitRecord, bool) {
	s.smu.Lock()
	defer s.smu.Unlock()
	rec, ok := s.splits[key]
	return rec, ok && rec.version == old
}

// remember keeps the counts of the split record of key that this Store
// wrote. A version is never written twice, so a record another Store
// wrote since is not found by splitOf.
func (s *Store) remember(key string, rec splitRecord) {
	s.smu.Lock()
	defer s.smu.Unlock()
	if s.splits == nil || len(s.splits) >= maxSplits {
		s.splits = make(map[string]splitRecord)
	}
	s.splits[key] = rec
}

// SplitAbove implements histrec.Store: 3 KiB.
func (s *Store) SplitAbove() int { return s.splitAbove }

// expiry returns the expiry of a record written at now (Unix
// milliseconds; 0: never).
func (s *Store) expiry(now time.Time) int64 {
	if s.ttlMS == 0 {
		return 0
	}
	return now.UnixMilli() + s.ttlMS
}

// nextVersion returns the version a write at now gives the record at
// version old; for a new record (old 0), the least version it may take
// (the statement takes one above the key's earlier ones). See "Versions";
// versions stay below 2^63.
func (s *Store) nextVersion(old uint64, now time.Time) uint64 {
	return max(old+1, uint64(now.UnixMicro()), s.last+1)
}

// replaceHistory makes history the rows of key's history, under version.
func (c *writeConn) replaceHistory(key string, version uint64, history []json.RawMessage) error {
	if err := c.exec(sqlHistoryClear, key); err != nil {
		return err
	}
	return c.addHistory(key, version, history)
}

// addHistory adds the entries to key's history under version.
func (c *writeConn) addHistory(key string, version uint64, entries []json.RawMessage) error {
	for i, e := range entries {
		if err := c.exec(sqlHistoryAdd, key, version, i, []byte(e)); err != nil {
			return err
		}
	}
	return nil
}

// current returns the version of the record of key at now (0 if there is
// none) and gate.ErrConflict, for a write that lost; or another error.
func (s *Store) current(w *writeConn, key string, now time.Time) (uint64, error) {
	var cur uint64
	var expires int64
	err := w.scan(sqlCurrent, []any{key}, &cur, &expires)
	switch {
	case errors.Is(err, sql.ErrNoRows), err == nil && expired(expires, now):
		return 0, gate.ErrConflict
	case err != nil:
		return 0, err
	}
	return cur, gate.ErrConflict
}

// swapped ends a compare-and-swap of key against old: it returns the new
// version and tells the watchers, or the write's error (a conflict's
// naming cur, the version found).
func (s *Store) swapped(ctx context.Context, key string, old, cur, version uint64, err error) (uint64, error) {
	switch {
	case err == gate.ErrConflict:
		if cur == 0 {
			return 0, fmt.Errorf("sqlitestore: compare-and-swap of %q: expected version %d, there is no record: %w", key, old, err)
		}
		return 0, fmt.Errorf("sqlitestore: compare-and-swap of %q: expected version %d, the record has %d: %w", key, old, cur, err)
	case err != nil:
		return 0, s.fail(ctx, "compare-and-swap of", key, err)
	}
	s.feed.Publish(gate.Change{Key: key, Version: version})
	return version, nil
}

// Delete implements [gate.Store]. It removes the record; the versions
// it had are never handed out again: the retired row, which outlives
// every record, keeps the highest, and a record created again gets a
// version above it. Deleting a missing key is not an error.
func (s *Store) Delete(ctx context.Context, key string) error {
	err := s.write(ctx, true, func(w *writeConn, _ time.Time) error {
		return w.exec(sqlRemove, key)
	})
	if err != nil {
		return s.fail(ctx, "deleting", key, err)
	}
	s.smu.Lock()
	delete(s.splits, key)
	s.smu.Unlock()
	return nil
}

// writeOp is one write waiting to be committed with others.
type writeOp struct {
	ctx     context.Context
	durable bool // synced before it returns
	multi   bool // fn makes several write statements: it needs a transaction
	fn      func(w *writeConn, now time.Time) error
	err     error
	done    chan struct{} // closed once err is set
	taken   bool          // by a group; guarded by Store.qmu
}

// write runs fn, which makes one write statement (and reads), in a
// transaction that holds the database's write lock, purges expired
// records when a purge is due, and commits; it returns once the commit is
// done (on disk, unless RelaxedSync or not durable). now is the time of
// the write. fn returns [gate.ErrConflict] itself for a write that lost
// (its statement changed nothing).
//
// A write alone runs as its statement's own transaction (SQLite's
// autocommit, which takes the write lock before it reads, as BEGIN
// IMMEDIATE does). Writes of one Store that wait for each other are
// committed in groups: the write that gets the writer token takes every
// write queued and runs them in one transaction, then commits once, so
// that concurrent sessions share the commit (its locks, its WAL frames
// and its sync) instead of queueing for one each. SQLite undoes a
// statement that fails as a whole, so a write that conflicts changes
// nothing and leaves the others be; one that fails otherwise rolls the
// group back, gets its error, and the others run again without it. A
// write still queued when ctx ends is dropped; one taken into a group
// waits for the group's commit. fn's statements run without a context
// (ending a statement's context would make SQLite roll back the whole
// group's transaction); the wait for the lock is bounded by BusyTimeout.
func (s *Store) write(ctx context.Context, durable bool, fn func(w *writeConn, now time.Time) error) error {
	return s.enqueue(&writeOp{ctx: ctx, durable: durable, fn: fn, done: make(chan struct{})})
}

// writeMulti is write for an fn that makes several write statements (and
// returns gate.ErrConflict only before the first changed anything).
func (s *Store) writeMulti(ctx context.Context, durable bool, fn func(w *writeConn, now time.Time) error) error {
	return s.enqueue(&writeOp{ctx: ctx, durable: durable, multi: true, fn: fn, done: make(chan struct{})})
}

// enqueue queues op and waits until it is committed (see write).
func (s *Store) enqueue(op *writeOp) error {
	ctx := op.ctx
	s.qmu.Lock()
	s.queue = append(s.queue, op)
	s.qmu.Unlock()
	select {
	case s.writer <- struct{}{}:
		for !op.finished() {
			s.commitGroup()
		}
		<-s.writer
		return op.err
	case <-op.done:
		return op.err
	case <-ctx.Done():
		s.qmu.Lock()
		if !op.taken {
			s.queue = slices.DeleteFunc(s.queue, func(o *writeOp) bool { return o == op })
			s.qmu.Unlock()
			return ctx.Err()
		}
		s.qmu.Unlock()
		<-op.done
		return op.err
	}
}

func (op *writeOp) finished() bool {
	select {
	case <-op.done:
		return true
	default:
		return false
	}
}

// commitGroup takes the queued writes and commits them in one
// transaction. The caller holds the writer token.
func (s *Store) commitGroup() {
	s.qmu.Lock()
	group := s.queue
	s.queue = nil
	for _, op := range group {
		op.taken = true
	}
	s.qmu.Unlock()
	live := group[:0:0]
	for _, op := range group {
		if err := op.ctx.Err(); err != nil {
			op.err = err
			close(op.done)
			continue
		}
		live = append(live, op)
	}
	// In a durable store, the writes that need no sync are committed
	// first, in a group of their own, and return without waiting for the
	// sync of the durable ones (which then syncs theirs too).
	var nosync []*writeOp
	if s.syncMode != "NORMAL" {
		durable := live[:0]
		for _, op := range live {
			if op.durable {
				durable = append(durable, op)
			} else {
				nosync = append(nosync, op)
			}
		}
		live = durable
	}
	for _, g := range [2][]*writeOp{nosync, live} {
		if len(g) == 0 {
			continue
		}
		err := s.runGroup(g)
		for _, op := range g {
			if op.err == nil {
				op.err = err
			}
			close(op.done)
		}
	}
}

// runGroup runs the writes in one transaction and commits it. Each
// write gets its own error in op.err; the error returned is the
// transaction's, for the writes without one. The caller holds the writer
// token.
func (s *Store) runGroup(group []*writeOp) (err error) {
	if s.closed {
		return errClosed
	}
	ctx := context.Background()
	if s.w == nil {
		if s.w, err = s.openWriter(ctx); err != nil {
			return err
		}
	}
	w := s.w
	now := s.now()
	mode := "NORMAL"
	if slices.ContainsFunc(group, func(op *writeOp) bool { return op.durable }) {
		mode = s.syncMode
	}
	if err := w.setSync(mode); err != nil {
		return err
	}
	purge := !now.Before(s.nextPurge)
	if len(group) == 1 && !purge && !group[0].multi {
		// Its statement is its transaction, which waits for the write
		// lock in slices, up to the busy timeout or until the write's
		// context ends, and changes nothing while it waits.
		op := group[0]
		op.err = retryBusy(op.ctx, s.busy, func() error { return op.fn(w, now) })
		return op.err
	}
	// BEGIN IMMEDIATE waits for the write lock: in slices, up to the busy
	// timeout, or until the context of a write alone ends.
	wait := ctx
	if len(group) == 1 {
		wait = group[0].ctx
	}
	if err := retryBusy(wait, s.busy, func() error { return w.exec("BEGIN IMMEDIATE") }); err != nil {
		return err
	}
	committed := false
	defer func() {
		if !committed {
			// A failed COMMIT may leave the transaction open; the error
			// of a failed operation is the one to report.
			w.exec("ROLLBACK")
		}
	}()
	for i, op := range group {
		if op.err = op.fn(w, now); op.err == nil || op.err == gate.ErrConflict {
			continue
		}
		if len(group) == 1 {
			return op.err
		}
		// Some errors make SQLite roll back the whole transaction: start
		// again without the write that failed.
		w.exec("ROLLBACK")
		committed = true
		rest := slices.Concat(group[:i], group[i+1:])
		return s.runGroup(rest)
	}
	if purge {
		if err := w.exec(sqlPurge, now.UnixMilli(), purgeBatch); err != nil {
			return fmt.Errorf("purging expired records: %w", err)
		}
	}
	if err := w.exec("COMMIT"); err != nil {
		return err
	}
	committed = true
	if purge {
		s.nextPurge = now.Add(purgeInterval)
	}
	return nil
}

// expired reports whether a record with the given expiry (Unix
// milliseconds, 0 for none) has expired at now.
func expired(expires int64, now time.Time) bool {
	return expires != 0 && expires <= now.UnixMilli()
}

// fail wraps an error of an operation on key: what the operation was, and
// whether the database was locked for the whole busy timeout.
func (s *Store) fail(ctx context.Context, what, key string, err error) error {
	err = busyError(err, s.busy)
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		// The driver may report a wait that the context ended as a
		// plain SQLite error.
		err = fmt.Errorf("%w: %w", cerr, err)
	}
	return fmt.Errorf("sqlitestore: %s %q: %w", what, key, err)
}

// busyError makes err match [ErrBusy] if it is SQLite's SQLITE_BUSY or
// SQLITE_LOCKED (with any extended code), which SQLite returns once the
// busy timeout has passed.
func busyError(err error, waited time.Duration) error {
	if isBusy(err) {
		return fmt.Errorf("%w (waited up to %v): %w", ErrBusy, waited, err)
	}
	return err
}

// isBusy reports whether err is SQLite's SQLITE_BUSY or SQLITE_LOCKED,
// with any extended code.
func isBusy(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return true
	}
	return false
}
