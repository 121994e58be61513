package sqlitestore

// This file defines how a Store learns of the writes of other processes
// on its file: while it has watchers, it polls the version counter, which
// every write moves, and reports the records written since.

import (
	"context"
	"time"

	"github.com/chartgate/chartgate/gate"
)

// watchInterval is how often a watched Store reads the version counter.
const watchInterval = 200 * time.Millisecond

const (
	sqlLastVersion  = `SELECT last FROM counter WHERE id = 1`
	sqlWrittenSince = `SELECT key, version FROM records WHERE version > ? AND version <= ? ORDER BY version`
)

// poll is the listen function of the Store's feed: from when it starts
// until ctx ends, it publishes the records written to the file (by any
// Store, in any process) after the counter it read first. The writes
// through this Store are also published as they are made; the gates take
// a change of a version they know once.
func (s *Store) poll(ctx context.Context, publish func(gate.Change), ready func()) {
	last, err := s.lastVersion(ctx)
	for err != nil { // the file is busy or failing: try again
		select {
		case <-ctx.Done():
			return
		case <-time.After(watchInterval):
		}
		last, err = s.lastVersion(ctx)
	}
	ready()
	tick := time.NewTicker(watchInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		cur, err := s.lastVersion(ctx)
		if err != nil || cur == last {
			continue
		}
		if err := s.writtenSince(ctx, last, cur, publish); err == nil {
			last = cur
		}
	}
}

// lastVersion reads the last version handed out.
func (s *Store) lastVersion(ctx context.Context) (uint64, error) {
	var v uint64
	err := s.db.QueryRowContext(ctx, sqlLastVersion).Scan(&v)
	return v, err
}

// writtenSince publishes the records whose version is in (from, to].
func (s *Store) writtenSince(ctx context.Context, from, to uint64, publish func(gate.Change)) error {
	rows, err := s.db.QueryContext(ctx, sqlWrittenSince, from, to)
	if err != nil {
		return err
	}
	defer rows.Close()
	var changes []gate.Change
	for rows.Next() {
		var c gate.Change
		if err := rows.Scan(&c.Key, &c.Version); err != nil {
			return err
		}
		changes = append(changes, c)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, c := range changes {
		publish(c)
	}
	return nil
}

// newFeed returns the Store's change feed, which polls while watched.
func (s *Store) newFeed() *gate.Feed { return gate.NewFeed(s.poll) }
