// This file exposes internals to the tests of package sqlitestore_test.

package sqlitestore

import (
	"context"
	"database/sql"
	"time"
)

// DB returns the store's connection pool, for checks of the connections'
// settings.
func (s *Store) DB() *sql.DB { return s.db }

// WriteSynchronous runs a write (durable or not) that changes nothing and
// returns the synchronous setting its transaction ran with (2 FULL, 1
// NORMAL).
func (s *Store) WriteSynchronous(ctx context.Context, durable bool) (int, error) {
	var mode int
	err := s.write(ctx, durable, func(w *writeConn, _ time.Time) error {
		return w.scan("PRAGMA synchronous", nil, &mode)
	})
	return mode, err
}

// HoldWriter takes the writer token, so that writes queue until release.
func (s *Store) HoldWriter() (release func()) {
	s.writer <- struct{}{}
	return func() { <-s.writer }
}

// Queued returns the number of writes waiting in the queue.
func (s *Store) Queued() int {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	return len(s.queue)
}

// WriteFailing runs a write whose statement fails when it runs (it breaks
// a constraint of the retired table) and returns its error.
func (s *Store) WriteFailing(ctx context.Context) error {
	return s.write(ctx, true, func(w *writeConn, _ time.Time) error {
		return w.exec("INSERT INTO retired (id, last) VALUES (2, 0)")
	})
}

// SetSplitAbove sets the size from which CompareAndSwapSplit keeps a
// record's history apart (0: always).
func (s *Store) SetSplitAbove(n int) { s.splitAbove = n }

// SetTailAbove sets the most a split record's head and tail take.
func (s *Store) SetTailAbove(n int) { s.tailAbove = n }
