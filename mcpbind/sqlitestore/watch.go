package sqlitestore

// This file defines how a Store learns of the writes of other processes
// on its file: while it has watchers, it polls SQLite's data version of
// a connection of its own, which every commit of another connection
// moves, and then reports the records written since.

import (
	"context"
	"database/sql"
	"time"

	"github.com/chartgate/chartgate/gate"
)

// watchInterval is how often a watched Store reads the data version.
const watchInterval = 200 * time.Millisecond

// watchSlack is how far before its commit a write may have taken its
// version, beyond the busy timeout it may wait for the lock: the version
// of a write is at least the time, in microseconds, at which its group
// began, which precedes its commit by the wait for the lock and the run
// of the group.
const watchSlack = time.Second

const (
	sqlDataVersion  = `PRAGMA data_version`
	sqlWrittenSince = `SELECT key, version FROM workflows WHERE version >= ? ORDER BY version`
)

// poll is the listen function of the Store's feed: from when it starts
// until ctx ends, it publishes the records written to the file (by any
// Store, in any process) after it started. The writes through this Store
// are also published as they are made; the gates take a change of a
// version they know once.
//
// A write's version is at least the time of the write in microseconds,
// so the records written since a time t are among those whose version is
// at least t (minus the time a write may take to commit: the busy timeout
// and watchSlack): each scan reads those, and publishes those it has not
// published yet. Versions follow the clock of the machine, which the
// processes on the file share; if it goes back, writes may be missed
// (delivery is best effort).
func (s *Store) poll(ctx context.Context, publish func(gate.Change), ready func()) {
	w := &watch{s: s, seen: map[string]uint64{}}
	for err := w.start(ctx); err != nil; err = w.start(ctx) { // the file is busy or failing: try again
		select {
		case <-ctx.Done():
			return
		case <-time.After(watchInterval):
		}
	}
	defer w.conn.Close()
	ready()
	tick := time.NewTicker(watchInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		w.next(ctx, publish)
	}
}

// watch is the state of a Store's poll.
type watch struct {
	s    *Store
	conn *sql.Conn // whose data version is read
	data int64     // the data version at the last scan
	// since is the least version the next scan reads (Unix microseconds)
	// and seen the versions of the records published with a version at
	// least since.
	since int64
	seen  map[string]uint64
}

// margin is how long before its commit a write may have taken its
// version.
func (w *watch) margin() time.Duration { return w.s.busy + watchSlack }

// start takes the watch's connection and reads what was written before
// the watch began, to publish none of it.
func (w *watch) start(ctx context.Context) error {
	conn, err := w.s.db.Conn(ctx)
	if err != nil {
		return err
	}
	w.conn = conn
	now := w.s.now()
	w.since = now.Add(-w.margin()).UnixMicro()
	if err := w.scan(ctx, now, nil); err != nil {
		w.conn = nil
		conn.Close()
		return err
	}
	return nil
}

// next publishes the records written since the last scan, if the data
// version moved.
func (w *watch) next(ctx context.Context, publish func(gate.Change)) {
	var data int64
	if err := w.conn.QueryRowContext(ctx, sqlDataVersion).Scan(&data); err != nil || data == w.data {
		return
	}
	w.scan(ctx, w.s.now(), publish)
}

// scan reads the data version, then the records whose version is at
// least since, and publishes (with publish, if not nil) those not
// published yet; then it moves since to now, the time before the scan
// began, minus the margin.
func (w *watch) scan(ctx context.Context, now time.Time, publish func(gate.Change)) error {
	var data int64
	if err := w.conn.QueryRowContext(ctx, sqlDataVersion).Scan(&data); err != nil {
		return err
	}
	changes, err := w.written(ctx)
	if err != nil {
		return err
	}
	for _, c := range changes {
		w.seen[c.Key] = c.Version
		if publish != nil {
			publish(c)
		}
	}
	w.data = data
	w.since = now.Add(-w.margin()).UnixMicro()
	for k, v := range w.seen {
		if int64(v) < w.since {
			delete(w.seen, k)
		}
	}
	return nil
}

// written returns the records whose version is at least since and that
// were not published with that version.
func (w *watch) written(ctx context.Context) ([]gate.Change, error) {
	rows, err := w.conn.QueryContext(ctx, sqlWrittenSince, w.since)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var changes []gate.Change
	for rows.Next() {
		var c gate.Change
		if err := rows.Scan(&c.Key, &c.Version); err != nil {
			return nil, err
		}
		if w.seen[c.Key] != c.Version {
			changes = append(changes, c)
		}
	}
	return changes, rows.Err()
}

// newFeed returns the Store's change feed, which polls while watched.
func (s *Store) newFeed() *gate.Feed { return gate.NewFeed(s.poll) }
