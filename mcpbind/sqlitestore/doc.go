// Package sqlitestore is an [mcpbind.Store] in a SQLite database file, for
// gates whose processes run on one machine and must share the workflow
// state of their sessions: the `chartgate serve` gateway and the hook
// processes that agents start for each tool call, for example. It is
// embedded (no server to run), durable, and safe for several processes
// using one file at once. It uses modernc.org/sqlite, SQLite compiled to
// pure Go, so it needs no cgo and no C compiler.
//
// # Usage
//
//	store, err := sqlitestore.Open(sqlitestore.DefaultPath, nil) // .chartgate/state.db
//	if err != nil {
//		return err
//	}
//	defer store.Close()
//	gate, err := mcpbind.New(engine, &mcpbind.Options{Store: store})
//
// [Open] creates the file and its parent directories if they are missing,
// and the schema in a new file. Opening a file that is set up reads one
// pragma and writes nothing, so a short-lived process may open the store
// for each tool call (see the benchmarks: well under a millisecond on
// top of the process' start).
//
// # Layout
//
// The database has three tables, and its PRAGMA user_version holds the
// version of the schema (4), which Open creates or migrates in one
// transaction (several processes opening a new file at once are fine: one
// creates the schema, the others find it):
//
//	workflows (key TEXT PRIMARY KEY, version INTEGER, data BLOB, expires INTEGER, split INTEGER, tail BLOB, live INTEGER, dead INTEGER)
//	entries   (key TEXT, version INTEGER, i INTEGER, entry BLOB, PRIMARY KEY (key, version, i))
//	retired   (id INTEGER PRIMARY KEY CHECK (id = 1), last INTEGER)
//
// workflows holds one row per key, with its data, its version and its
// expiry in Unix milliseconds (0: never; a partial index on expires serves
// the purge). A workflow's record of more than 3 KiB, as the gate writes
// it, is split (split is 1): its data is the record without its run
// history, whose entries are the live rows of entries after its first
// dead ones, in order, each under the version of the write that added
// it, followed by the entries in tail (joined by commas); Load returns
// the record with its history joined in (in one statement). The newest
// entries stay in tail while the record's row holds at most 3 KiB; then
// they become rows, and the rows of dropped entries are deleted 32 at a
// time. So a call that moves a workflow whose history holds hundreds of
// entries (chartgate keeps 500, ~60 KB) changes the record's page, and
// once in a while a few more, instead of writing the whole history
// again. A record written with CompareAndSwap holds what it was given
// (split 0; a trigger removes rows of entries left over), and so do
// deleted and expired ones (another trigger). retired holds one row, at
// least the version of every record deleted. Open refuses a file whose
// schema is newer than this package knows ("upgrade chartgate"), and a
// database of some other application (tables, but user_version 0). Older
// files are migrated when they are opened: version 1's counter table,
// which held the last version handed out, becomes retired; version 2's
// records table becomes workflows, and its records keep their histories
// in their data until their next split write; version 3's history table
// becomes entries, a row of each of its split records' entries. A
// process that still has the file open with an older version fails, from
// then on, the writes that would break the new layout (version 3's also
// its loads of split records, whose rows it cannot find): restart it with
// this version. The file is in WAL
// mode, and SQLite keeps two files next to it while it is in use,
// state.db-wal and state.db-shm; a new file is created with mode 0600.
//
// # Compare-and-swap
//
// [Store.CompareAndSwap] is one statement: it writes the row, with a new
// version (see Versions), only if the row has the expected version (0:
// there is no row, or the row expired), and returns the new version (the
// statement changes no row on a conflict, and then the key's version is
// read, for the error). Run alone, the statement is its own transaction,
// which takes the database's write lock before it reads anything (as BEGIN
// IMMEDIATE does) and commits when it ends; it changes the page of the row
// and no other. SQLite lets one connection at a time hold the write lock,
// across processes, so two writers that race on one key cannot both win:
// the loser gets an error that matches [mcpbind.ErrConflict], and the gate
// reloads and applies its event again. A version is returned only once its
// transaction committed. Within one process, the writes of a Store queue
// in Go and run on one connection, kept open with their statements
// prepared, and only writes of different Stores (other processes) wait for
// SQLite's lock. Writes that queue are committed in groups: the next
// writer runs every write waiting in one BEGIN IMMEDIATE transaction and
// commits once, so that concurrent sessions share one commit (its locks,
// the write of the pages and the sync to disk) instead of taking one each;
// each write still returns only once the group's commit is done. A write
// that conflicts changes nothing (SQLite undoes a statement as a whole)
// and leaves the others be; one that fails otherwise gets its error, and
// the others are run again without it. Loads read without waiting for
// writers (WAL mode) and see the last committed write.
//
// # Versions
//
// [mcpbind.Store] requires that a version is never reused for a key, even
// after the record was deleted or expired. Each write gives the record
//
//	max(its version + 1, the time of the write in microseconds since 1970)
//
// or, for a record created (a new key, or one whose row expired or was
// deleted),
//
//	max(retired + 1, the time of the write in microseconds since 1970)
//
// where retired is at least the version of every record deleted: the
// Store's connection keeps it so with a TEMP trigger on deletions, the
// only writes that change it (a write changes no page but its row's). So
// a key's versions only grow, across deletes, expiry and every process on
// the file; and a file that was deleted and created again also starts
// above the versions the old file handed out, unless the clock went back
// or the old file took more than one write per microsecond. Within one
// Store, versions also increase across keys (a write's is above the
// Store's last); across processes they follow the clock. (Versions stay
// far below 2^63, SQLite's largest integer, until the year 294,000.)
//
// # Expiry
//
// With Options.TTL zero (the default), records never expire: a workflow's
// state lives until the gate deletes it or the file is removed. With a TTL,
// a record expires that long after its last write; a load does not extend
// it (a load is a read, and making it a write would make every load wait
// for the one writer), so choose a TTL longer than the longest time a live
// session may go without a transition. This is the expiry of
// mcpbind/redisstore, not the sliding expiry of [mcpbind.MemoryStore]. Each
// row carries its own expiry, set by the Store that last wrote it, with the
// clock of its machine.
//
// An expired row is absent at once: Load reports no record, and
// CompareAndSwap treats it as none (old version 0 creates the record
// again). Rows are purged lazily: a Store's writes delete up to 1,000
// expired rows, in the write's own transaction, at the first write of the
// Store and then at most once a minute. No goroutine runs in the
// background, so nothing outlives [Store.Close].
//
// # Durability
//
// By default (synchronous=FULL), a write that returned is on disk: SQLite
// syncs the WAL at every commit, so it survives a crash of the process,
// of the operating system or of the power (as far as the disk honours
// fsync). That costs one fsync per CompareAndSwap, well within a tool
// call. With Options.RelaxedSync (synchronous=NORMAL), a commit is synced
// only at checkpoints: it still survives a crash of the process, but the
// last writes may be lost, with the database consistent, when the machine
// crashes. A transaction that did not commit leaves nothing behind.
//
// Exactly: with RelaxedSync, a write that returned has been written to
// the WAL file (write(2), into the operating system's cache, where every
// process that opens the file reads it), and no sync has been asked. A
// process killed at any point, even by SIGKILL, loses no write that
// returned; an operating-system crash or a power loss may lose the writes
// since the last checkpoint (SQLite checkpoints when the WAL passes 1,000
// pages, and syncs the WAL and the database file then). chartgate serve
// and chartgate's other commands open the store with RelaxedSync unless
// given --durable; their kill test (TestServeKilledMidTransition in
// cmd/chartgate) kills serve in the middle of calls in both modes and
// finds every transition it acknowledged.
//
// [Store.CompareAndSwapNoSync] ([gate.NoSyncStore]) writes with
// synchronous=NORMAL whatever the options: the gate takes a call's lease
// that way, since the lease acknowledges nothing, and syncs only the
// commit that records the call, one fsync per call that moves the
// workflow instead of two. The WAL is appended in order and a synced
// commit syncs all of it, so a lease is on disk once a later write is;
// a lease lost with the machine leaves the workflow free, as it was.
// Writes without sync that queue with durable ones are committed first,
// in a group of their own, so that a session's lease does not wait for
// the sync of other sessions' commits.
//
// # Several processes
//
// Any number of processes on one machine may open one file; each should
// have its own Store (one per process is enough: a Store is safe for
// concurrent use). They see each other's writes as soon as these
// committed. When a process holds the write lock, another waits for it up
// to Options.BusyTimeout (default 5 s), or until its context ends (the
// wait is made of slices of at most 100 ms, between which the context is
// checked); if the lock is still held then,
// the operation changes nothing and fails with an error that matches
// [ErrBusy], never [mcpbind.ErrConflict]. Writes are short (a few
// statements and one fsync), so this takes something else that holds the
// lock: a process stuck in a transaction of its own, a backup tool, or a
// process that writes without pause: waiters poll for the lock (SQLite's
// backoff, 1 to 100 ms between tries), so the lock does not go to the
// one that waited longest. Open also waits, up to the busy timeout, for
// another process that is creating the schema of a new file.
//
// SQLite's locks in WAL mode rely on shared memory and POSIX advisory
// locks of the local operating system: keep the file on a local disk, not
// on a network file system, and only on a machine whose processes share
// it (use a Redis store across machines). SQLite drops a process' POSIX
// locks when the process closes any descriptor of the database file, so
// the processes that use the store must not open the file otherwise (to
// copy it, use SQLite's backup, e.g. `sqlite3 state.db .backup copy.db`).
//
// # Change feed
//
// [Store.Watch] reports the writes to the file ([mcpbind.Watcher]): those
// made through the Store at once, and those of other Stores on the file
// (other chartgate serve processes, chartgate approve from a shell) within
// a fifth of a second. While the Store has watchers it reads SQLite's
// data version on a connection of its own five times a second (which
// reads no page), and, when another connection committed meanwhile, the
// keys and versions of the records written since (those whose version is
// at least the time of the last read, less the busy timeout and a
// second), so that the gates of every process on the file tell their
// sessions of each other's transitions. A deletion is not reported.
package sqlitestore
