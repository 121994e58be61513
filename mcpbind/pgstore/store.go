// This file defines Store, the gate.Store in PostgreSQL: Open and the
// schema, Load, CompareAndSwap (and CompareAndSwapSplit, for a record
// whose history is kept apart), Delete, Keys, and the purge of expired
// records.

package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/internal/histrec"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultSchema is the schema of the store's tables when Options.Schema is
// empty.
const DefaultSchema = "chartgate"

// schemaVersion is the version of the tables this package writes, kept
// in the meta table.
const schemaVersion = 2

// splitAbove is the size of a record's encoding from which
// CompareAndSwapSplit keeps its history apart: PostgreSQL moves a value
// of more than about 2 KB out of its row (TOAST) and writes it whole,
// compressed, on every update.
const splitAbove = 3 << 10

// purgeInterval is the least time between two purges of expired records by
// one Store, and purgeBatch the most records one purge deletes.
const (
	purgeInterval = time.Minute
	purgeBatch    = 1000
)

// maxNotifiedKey is the longest key whose writes are notified: a
// notification's payload (the version and the key in hex) must stay under
// PostgreSQL's 8,000 bytes.
const maxNotifiedKey = 3900

// maxSchema is the longest schema name: the channel's name, the schema's
// and ".changes", must fit PostgreSQL's 63 bytes.
const maxSchema = 63 - len(".changes")

// Options configures [Open]. The zero value (or nil) means the defaults.
type Options struct {
	// Schema is the PostgreSQL schema of the store's tables; Open creates
	// it if it is missing. Several applications (or test runs) on one
	// database use different schemas. Default [DefaultSchema].
	Schema string
	// TTL is how long a record lives after its last write; a load does not
	// extend it. Zero (the default) means that records never expire. It is
	// rounded up to whole milliseconds. Expiry is measured by the server's
	// clock.
	TTL time.Duration
	// MaxConns bounds the connections of the store's pool. Default: the
	// larger of 4 and the number of CPUs (pgxpool's default), or the
	// pool_max_conns of the connection string.
	MaxConns int32
}

// Store is an [gate.Store] in a PostgreSQL database. It is safe for
// concurrent use, and any number of Stores, in one process or on many
// machines, may use one database and schema at once. The zero value is not
// usable: call [Open].
type Store struct {
	pool       *pgxpool.Pool
	schema     string
	ttlMS      int64 // 0: records never expire
	splitAbove int

	// The statements, with the schema's quoted name in them.
	sqlLoad, sqlCreate, sqlUpdate, sqlDelete, sqlKeys, sqlPurge string
	sqlCreateSplit, sqlUpdateSplit, sqlUpdateDelta              string
	channel                                                     string // the notification channel (see Watch)

	mu        sync.Mutex
	nextPurge time.Time // when a write next purges expired records
	feed      *gate.Feed
	closed    bool
}

var (
	_ gate.Store       = (*Store)(nil)
	_ gate.Lister      = (*Store)(nil)
	_ gate.Watcher     = (*Store)(nil)
	_ gate.FuncWatcher = (*Store)(nil)
	_ histrec.Store    = (*Store)(nil)
)

// Open connects to the database that dsn names (a PostgreSQL connection
// string: postgres://user:password@host:port/database?sslmode=..., or
// key=value pairs, as [pgxpool.ParseConfig] reads) and makes sure the
// store's schema is there: it creates it if it is missing, in one
// transaction under an advisory lock, so that several processes opening a
// new database at once are fine. opts may be nil. Close the store when
// done.
func Open(ctx context.Context, dsn string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.TTL < 0 {
		return nil, fmt.Errorf("pgstore: opening: negative TTL %v", o.TTL)
	}
	if o.MaxConns < 0 {
		return nil, fmt.Errorf("pgstore: opening: negative MaxConns %d", o.MaxConns)
	}
	if o.Schema == "" {
		o.Schema = DefaultSchema
	}
	if len(o.Schema) > maxSchema {
		return nil, fmt.Errorf("pgstore: opening: schema name %q is longer than %d bytes (its notification channel, SCHEMA.changes, must fit PostgreSQL's 63)", o.Schema, maxSchema)
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("pgstore: opening: %w", err)
	}
	if o.MaxConns > 0 {
		cfg.MaxConns = o.MaxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: opening: %w", err)
	}
	s := newStore(pool, o)
	if err := s.setUp(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("pgstore: opening %s on %s: %w", s.schema, cfg.ConnConfig.Host, err)
	}
	return s, nil
}

func newStore(pool *pgxpool.Pool, o Options) *Store {
	q := pgx.Identifier{o.Schema}.Sanitize()
	workflows, history := q+".workflows", q+".history"
	live := `(expires IS NULL OR expires > now())`
	// expires is computed from $4, the TTL in milliseconds (0: none).
	expires := `CASE WHEN $4::bigint > 0 THEN now() + $4::bigint * interval '1 millisecond' END`
	// notify sends "version hexkey" on the channel ($5) for keys short
	// enough; a notification is delivered when the write commits.
	notify := `CASE WHEN length(w.key) <= ` + fmt.Sprint(maxNotifiedKey) + ` THEN pg_notify($5, w.version || ' ' || encode(w.key, 'hex')) END`
	next := `nextval('` + escapeLiteral(q) + `.versions')`
	// A write of a split record (w: its key and new version) adds the
	// entries $6 as rows under the new version, in the same statement.
	addRows := `, a AS (INSERT INTO ` + history + ` (key, version, i, entry)
		SELECT w.key, w.version, t.i, t.entry FROM w, unnest($6::bytea[]) WITH ORDINALITY AS t(entry, i))`
	// One that replaces its history removes the rows the record had
	// first: sub-statements of WITH see the rows as they were before it,
	// and the rows of a version are never written twice. (A record
	// written whole, split false, loses its rows by the trigger
	// workflows_unsplit.)
	replaceRows := `, d AS (DELETE FROM ` + history + ` h USING w WHERE h.key = w.key)` + addRows
	s := &Store{
		pool:       pool,
		schema:     o.Schema,
		ttlMS:      int64((o.TTL + time.Millisecond - 1) / time.Millisecond),
		splitAbove: splitAbove,
		channel:    o.Schema + ".changes",
		feed:       nil,
	}
	// A split record's history comes with it from the same snapshot,
	// its entries joined by commas (histrec.Join adds them back).
	s.sqlLoad = `SELECT version, data, CASE WHEN split THEN
		(SELECT string_agg(entry, ','::bytea ORDER BY version, i) FROM ` + history + ` h WHERE h.key = r.key) END
		FROM ` + workflows + ` r WHERE key = $1 AND ` + live
	// Creates the record if there is none, or only an expired one.
	create := func(split, rows string) string {
		return `WITH w AS (INSERT INTO ` + workflows + ` AS r (key, version, data, expires, split)
		VALUES ($1, ` + next + `, $3, ` + expires + `, ` + split + `)
		ON CONFLICT (key) DO UPDATE SET version = excluded.version, data = excluded.data, expires = excluded.expires, split = excluded.split
		WHERE r.expires IS NOT NULL AND r.expires <= now() AND $2::bigint = 0
		RETURNING r.key, r.version)` + rows + `
		SELECT w.version, ` + notify + ` FROM w`
	}
	update := func(split, rows string) string {
		return `WITH w AS (UPDATE ` + workflows + ` SET version = ` + next + `, data = $3, expires = ` + expires + `, split = ` + split + `
		WHERE key = $1 AND version = $2 AND ` + live + `
		RETURNING key, version)` + rows + `
		SELECT w.version, ` + notify + ` FROM w`
	}
	s.sqlCreate, s.sqlUpdate = create("false", ""), update("false", "")
	s.sqlCreateSplit, s.sqlUpdateSplit = create("true", replaceRows), update("true", replaceRows)
	// Updates a split record's head, removes the first $7 entries of its
	// history and adds $6.
	s.sqlUpdateDelta = `WITH w AS (UPDATE ` + workflows + ` SET version = ` + next + `, data = $3, expires = ` + expires + `
		WHERE key = $1 AND version = $2 AND ` + live + ` AND split
		RETURNING key, version),
		d AS (DELETE FROM ` + history + ` h USING w WHERE h.key = w.key AND (h.version, h.i) IN
			(SELECT version, i FROM ` + history + ` WHERE key = $1 ORDER BY version, i LIMIT $7))` + addRows + `
		SELECT w.version, ` + notify + ` FROM w`
	// A record's history rows go with it (ON DELETE CASCADE).
	s.sqlDelete = `DELETE FROM ` + workflows + ` WHERE key = $1`
	s.sqlKeys = `SELECT key FROM ` + workflows + ` WHERE key >= $1 AND ($2::bytea IS NULL OR key < $2) AND ` + live + ` ORDER BY key`
	// The outer condition on expires is checked again on a row that a
	// concurrent write created anew: it is not deleted.
	s.sqlPurge = `DELETE FROM ` + workflows + ` WHERE key IN
		(SELECT key FROM ` + workflows + ` WHERE expires <= now() LIMIT ` + fmt.Sprint(purgeBatch) + `) AND expires <= now()`
	s.feed = gate.NewFeed(s.listen)
	return s
}

// escapeLiteral doubles the single quotes of s, for a string literal.
func escapeLiteral(s string) string { return strings.ReplaceAll(s, "'", "''") }

// setUp checks the schema: it creates it if it is missing and brings it
// up to schemaVersion if it is older.
func (s *Store) setUp(ctx context.Context) error {
	q := pgx.Identifier{s.schema}.Sanitize()
	var v int
	err := s.pool.QueryRow(ctx, `SELECT schema_version FROM `+q+`.meta WHERE id = 1`).Scan(&v)
	if err == nil && v >= schemaVersion {
		return checkVersion(v)
	}
	var pe *pgconn.PgError
	if err != nil && (!errors.As(err, &pe) || (pe.Code != "42P01" && pe.Code != "3F000")) { // undefined_table, invalid_schema_name
		return fmt.Errorf("reading the schema version: %w", err)
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// One creator (or upgrader) at a time (CREATE ... IF NOT EXISTS
		// races with itself); the others then find the schema.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(1667326324, hashtext($1))`, s.schema); err != nil {
			return fmt.Errorf("locking the schema: %w", err)
		}
		var meta, records bool
		err := tx.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL, to_regclass($2) IS NOT NULL OR to_regclass($3) IS NOT NULL`,
			q+".meta", q+".records", q+".workflows").Scan(&meta, &records)
		if err != nil {
			return fmt.Errorf("looking for the tables: %w", err)
		}
		v := 0
		switch {
		case meta:
			if err := tx.QueryRow(ctx, `SELECT schema_version FROM `+q+`.meta WHERE id = 1`).Scan(&v); err != nil {
				return fmt.Errorf("reading the schema version: %w", err)
			}
			if err := checkVersion(v); err != nil {
				return err
			}
		case records:
			return fmt.Errorf("schema %s has a table of records but no meta table: it belongs to something else (choose another Options.Schema)", s.schema)
		}
		for ; v < schemaVersion; v++ {
			for _, st := range migrations(q)[v] {
				if _, err := tx.Exec(ctx, st); err != nil {
					return fmt.Errorf("bringing the schema to version %d: %w", v+1, err)
				}
			}
		}
		return nil
	})
}

// migrations returns, at index v, the statements that bring the schema
// q (quoted) from version v to v+1; from 0, they create it.
func migrations(q string) [schemaVersion][]string {
	return [schemaVersion][]string{
		// Versions start at the time in microseconds, so that a schema
		// created again starts above the versions the old one handed
		// out (see "Versions" in the package documentation).
		{
			`CREATE SCHEMA IF NOT EXISTS ` + q,
			`CREATE TABLE ` + q + `.records (key bytea PRIMARY KEY, version bigint NOT NULL, data bytea NOT NULL, expires timestamptz)`,
			`CREATE INDEX records_expires ON ` + q + `.records (expires) WHERE expires IS NOT NULL`,
			fmt.Sprintf(`CREATE SEQUENCE IF NOT EXISTS %s.versions AS bigint START WITH %d`, q, max(time.Now().UnixMicro(), 1)),
			`CREATE TABLE ` + q + `.meta (id int PRIMARY KEY CHECK (id = 1), schema_version int NOT NULL)`,
			`INSERT INTO ` + q + `.meta VALUES (1, 1)`,
		},
		// 1 -> 2: a record written split (CompareAndSwapSplit) keeps its
		// run history as rows of history, one an entry, and its head in
		// data. The table of records is renamed, so that a process that
		// opened the schema at version 1, and would write a record over
		// a split one without removing its rows, fails instead.
		{
			`ALTER TABLE ` + q + `.records RENAME TO workflows`,
			`ALTER INDEX ` + q + `.records_expires RENAME TO workflows_expires`,
			`ALTER TABLE ` + q + `.workflows ADD COLUMN split boolean NOT NULL DEFAULT false`,
			`CREATE TABLE ` + q + `.history (
				key     bytea NOT NULL REFERENCES ` + q + `.workflows (key) ON DELETE CASCADE,
				version bigint NOT NULL, -- of the write that added the entry
				i       bigint NOT NULL, -- its place among that write's entries
				entry   bytea NOT NULL,
				PRIMARY KEY (key, version, i))`,
			// A record written whole over a split one loses its rows.
			`CREATE FUNCTION ` + q + `.workflows_unsplit() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN DELETE FROM ` + q + `.history WHERE key = OLD.key; RETURN NULL; END $$`,
			`CREATE TRIGGER workflows_unsplit AFTER UPDATE OF split ON ` + q + `.workflows
				FOR EACH ROW WHEN (OLD.split AND NOT NEW.split) EXECUTE FUNCTION ` + q + `.workflows_unsplit()`,
			`UPDATE ` + q + `.meta SET schema_version = 2`,
		},
	}
}

func checkVersion(v int) error {
	if v > schemaVersion {
		return fmt.Errorf("the schema's version is %d, newer than this chartgate knows (%d): upgrade chartgate", v, schemaVersion)
	}
	return nil
}

// Schema returns the PostgreSQL schema of the store's tables.
func (s *Store) Schema() string { return s.schema }

// TTL returns the expiry of records after rounding (0: they never expire).
func (s *Store) TTL() time.Duration { return time.Duration(s.ttlMS) * time.Millisecond }

// Close ends the store's watches and closes its connections. It waits for
// the operations in progress; operations started after it fail.
func (s *Store) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.feed.Close()
	s.pool.Close()
	return nil
}

// Load implements [gate.Store]. A missing key, a deleted record and an
// expired one give nil, 0 and no error. Load only reads: it does not extend
// the record's expiry.
func (s *Store) Load(ctx context.Context, key string) ([]byte, uint64, error) {
	var (
		version       int64
		data, history []byte
	)
	err := s.pool.QueryRow(ctx, s.sqlLoad, []byte(key)).Scan(&version, &data, &history)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("pgstore: loading %q: %w", key, err)
	}
	if version <= 0 {
		return nil, 0, fmt.Errorf("pgstore: loading %q: bad version %d in the record", key, version)
	}
	if data == nil {
		data = []byte{} // an empty record, not a missing one
	}
	return histrec.Join(data, history), uint64(version), nil
}

// CompareAndSwap implements [gate.Store] in one statement: an UPDATE of
// the key's row if its version is old (and it has not expired), or for old
// 0 an INSERT that replaces only an expired row. The new version comes
// from the schema's sequence. If no row was written the error matches
// [gate.ErrConflict]. The write notifies the store's watchers (see
// [Store.Watch]) when it commits.
func (s *Store) CompareAndSwap(ctx context.Context, key string, old uint64, data []byte) (uint64, error) {
	return s.compareAndSwap(ctx, key, old, data, nil, false)
}

// CompareAndSwapSplit implements histrec.Store, through which the gate
// writes its workflows' records: CompareAndSwap for a record given as its
// head and history, which it keeps apart, an entry a row, once the record
// takes more than 3 KiB (a smaller one is written whole). A write whose
// history is a change of the stored one (w.Delta) removes the dropped
// entries' rows and adds the appended ones, instead of writing the whole
// history again; another replaces the rows. Each is one statement. Every
// write is durable: durable is not read.
func (s *Store) CompareAndSwapSplit(ctx context.Context, key string, old uint64, w *histrec.Write, durable bool) (uint64, error) {
	if data, ok := w.Whole(s.splitAbove); ok {
		return s.CompareAndSwap(ctx, key, old, data)
	}
	head := w.Head
	if head == nil {
		head = []byte{}
	}
	if dropped, appended, ok := w.Change(); ok && old != 0 && old <= 1<<63-1 {
		var version int64
		err := s.pool.QueryRow(ctx, s.sqlUpdateDelta, []byte(key), int64(old), head, s.ttlMS, s.channel,
			rows(appended), int64(dropped)).Scan(&version, nil)
		if err == nil {
			s.maybePurge(ctx)
			return uint64(version), nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return 0, fmt.Errorf("pgstore: compare-and-swap of %q: %w", key, err)
		}
		// Not split yet, or a conflict: the write below tells which.
	}
	return s.compareAndSwap(ctx, key, old, head, w.History, true)
}

// SplitAbove implements histrec.Store: 3 KiB.
func (s *Store) SplitAbove() int { return s.splitAbove }

// rows returns entries as the rows of history take them.
func rows(entries []json.RawMessage) [][]byte {
	out := make([][]byte, len(entries))
	for i, e := range entries {
		out[i] = e
	}
	return out
}

// compareAndSwap writes data (with split, the head of a record whose
// history is kept apart, history's entries as its rows) in one
// statement: an UPDATE of the key's row if its version is old (and it
// has not expired), or for old 0 an INSERT that replaces only an expired
// row; either removes the rows of the history the record had.
func (s *Store) compareAndSwap(ctx context.Context, key string, old uint64, data []byte, history []json.RawMessage, split bool) (uint64, error) {
	if old > 1<<63-1 {
		return 0, fmt.Errorf("pgstore: compare-and-swap of %q: expected version %d, which no record has: %w", key, old, gate.ErrConflict)
	}
	if data == nil {
		data = []byte{}
	}
	args := []any{[]byte(key), int64(old), data, s.ttlMS, s.channel}
	var q string
	switch {
	case split && old == 0:
		q, args = s.sqlCreateSplit, append(args, rows(history))
	case split:
		q, args = s.sqlUpdateSplit, append(args, rows(history))
	case old == 0:
		q = s.sqlCreate
	default:
		q = s.sqlUpdate
	}
	var version int64
	err := s.pool.QueryRow(ctx, q, args...).Scan(&version, nil)
	var pe *pgconn.PgError
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		if old == 0 {
			return 0, fmt.Errorf("pgstore: compare-and-swap of %q: expected no record, there is one: %w", key, gate.ErrConflict)
		}
		return 0, fmt.Errorf("pgstore: compare-and-swap of %q: expected version %d, the record has another or is gone: %w", key, old, gate.ErrConflict)
	case errors.As(err, &pe) && pe.Code == "23505" && old == 0: // unique_violation: a concurrent create won
		return 0, fmt.Errorf("pgstore: compare-and-swap of %q: expected no record, another was created at once: %w", key, gate.ErrConflict)
	case err != nil:
		return 0, fmt.Errorf("pgstore: compare-and-swap of %q: %w", key, err)
	}
	s.maybePurge(ctx)
	return uint64(version), nil
}

// maybePurge deletes up to purgeBatch expired records, at most once per
// purgeInterval per Store, when records expire. Its failure is not the
// write's: the next one tries again.
func (s *Store) maybePurge(ctx context.Context) {
	if s.ttlMS == 0 {
		return
	}
	now := time.Now()
	s.mu.Lock()
	due := !now.Before(s.nextPurge)
	if due {
		s.nextPurge = now.Add(purgeInterval)
	}
	s.mu.Unlock()
	if due {
		_, _ = s.pool.Exec(ctx, s.sqlPurge)
	}
}

// Delete implements [gate.Store]. It removes the record; the versions
// it had are never handed out again, since they come from a sequence that
// outlives every record. Deleting a missing key is not an error.
func (s *Store) Delete(ctx context.Context, key string) error {
	if _, err := s.pool.Exec(ctx, s.sqlDelete, []byte(key)); err != nil {
		return fmt.Errorf("pgstore: deleting %q: %w", key, err)
	}
	return nil
}

// Keys implements [gate.Lister]: the keys of the records that start
// with prefix and have not expired, in byte order (a range scan of the
// primary key).
func (s *Store) Keys(ctx context.Context, prefix string) ([]string, error) {
	rows, err := s.pool.Query(ctx, s.sqlKeys, []byte(prefix), prefixEnd([]byte(prefix)))
	if err != nil {
		return nil, fmt.Errorf("pgstore: listing %q: %w", prefix, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var k []byte
		err := r.Scan(&k)
		return string(k), err
	})
	if err != nil {
		return nil, fmt.Errorf("pgstore: listing %q: %w", prefix, err)
	}
	return out, nil
}

// prefixEnd returns the least byte string above every string that starts
// with p, or nil if there is none (p is empty or all 0xff).
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}
