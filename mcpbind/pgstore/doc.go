// Package pgstore is an [mcpbind.Store] in PostgreSQL (on
// github.com/jackc/pgx/v5 and its pool), for gates that run on several
// machines and must share the workflow state of their sessions, on the
// database a team already operates. It also reports the writes of every
// instance to the others ([Store.Watch], with LISTEN/NOTIFY), so that a
// gate tells its sessions when another instance moved their workflow.
//
// # Usage
//
//	store, err := pgstore.Open(ctx, "postgres://chartgate:secret@db:5432/app", nil)
//	if err != nil {
//		return err
//	}
//	defer store.Close()
//	gate, err := mcpbind.New(engine, &mcpbind.Options{Store: store})
//
// `chartgate serve`, `chartgate hook` and the commands that act on
// workflows take the same connection string: --store postgres://...
// (or postgresql://...).
//
// # Layout
//
// [Open] creates what is missing, idempotently, in Options.Schema
// (default "chartgate"), in one transaction under an advisory lock (several
// processes opening a new database at once are fine: one creates the
// schema, the others find it). Opening a schema that is set up reads one
// row; a schema of an older version is brought up to date the same way.
// The schema holds
//
//	workflows (key bytea PRIMARY KEY, version bigint, data bytea, expires timestamptz, split boolean)
//	history   (key bytea REFERENCES workflows ON DELETE CASCADE, version bigint, i bigint, entry bytea)
//	versions  (a sequence: the versions handed out)
//	meta      (the schema's version, 2)
//
// A record the gate writes through [Store.CompareAndSwapSplit] (what
// package internal/histrec describes) once it takes more than 3 KiB is
// split: workflows holds its head, and history its run history, an entry
// a row, so that a call that appends an entry adds a row and removes the
// oldest instead of writing the whole history (tens of kilobytes, which
// PostgreSQL keeps out of the row and writes whole) again. [Store.Load]
// reads head and rows in one statement and returns them joined. Version
// 1 named the table of records "records": the upgrade renames it, so
// that a process still running with version 1 fails to write instead of
// writing a record over a split one and leaving its rows.
//
// Keys are stored as bytes, so any key works (text or not). Open refuses a
// schema whose version is newer than this package knows, and a schema
// with a table of records but no meta table (another application's). The
// role in the connection string needs CREATE on the database the first
// time (to create the schema), then SELECT, INSERT, UPDATE and DELETE on
// the tables and USAGE on the sequence.
//
// # Compare-and-swap
//
// [Store.CompareAndSwap] is one statement: an UPDATE of the key's row
// where its version is the expected one (and it has not expired), or, for
// version 0, an INSERT ... ON CONFLICT that replaces only an expired row.
// PostgreSQL checks the condition again on the newest row when two
// writers race on one key (READ COMMITTED re-evaluates it after waiting
// for the other's lock), so only one of them writes: the other gets no
// row back and an error that matches [mcpbind.ErrConflict], and the gate
// reloads and applies its event again. A write returns once it
// committed: it is as durable as the server's settings make commits.
//
// # Versions
//
// [mcpbind.Store] requires that a version is never reused for a key, even
// after the record was deleted or expired. Every write takes its version
// from the schema's sequence, which outlives every record and never hands
// out a number twice (numbers taken by writes that did not commit are
// skipped, not reused). The sequence starts at the time of the schema's
// creation in microseconds since 1970, so that a schema dropped and
// created again starts above the versions the old one handed out, unless
// the clock went back or the old one took more than one write per
// microsecond.
//
// # Expiry
//
// With Options.TTL zero (the default), records never expire: a workflow's
// state lives until the gate deletes it. With a TTL, a record expires that
// long after its last write, by the database server's clock (one clock
// for every instance); a load does not extend it, as in
// mcpbind/sqlitestore, so choose a TTL longer than the longest time a
// live session may go without a transition. An expired row is absent at
// once (Load, Keys and CompareAndSwap ignore it); rows are purged lazily:
// a Store's writes delete up to 1,000 expired rows at its first write and
// then at most once a minute.
//
// # Change feed
//
// Every write notifies, when it commits, the channel "SCHEMA.changes"
// with the new version and the key (in hex). [Store.Watch] listens on it
// over one connection of its own, outside the pool, while the store has
// watchers, and connects again if that connection fails (changes made
// while it was down are missed: sessions then learn of them at their next
// request). A gate attached to a server watches its store (see
// "Several instances" in mcpbind's documentation). Notifications are
// delivered only to sessions connected to the same database; a key longer
// than 3,900 bytes is written without one. Each notifying commit takes
// PostgreSQL's notification queue lock briefly; see BenchmarkCompareAndSwap.
package pgstore
