// This file defines the store's change feed: LISTEN on one connection of
// its own, while the store has watchers.

package pgstore

import (
	"context"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/chartgate/chartgate/gate"
	"github.com/jackc/pgx/v5"
)

// Watch implements [gate.Watcher]: the writes of every Store on this
// database and schema, through PostgreSQL's LISTEN/NOTIFY. Every write
// notifies "VERSION HEXKEY" on the channel "SCHEMA.changes" when it
// commits (but for keys longer than 3,900 bytes, which no notification
// can carry). The store listens on one connection of its own (outside
// its pool) while it has watchers; Watch returns once it listens (or
// after [gate.FeedReadyWait]). If the connection is lost it connects
// again, and the changes made meanwhile are missed.
func (s *Store) Watch(ctx context.Context, prefix string) (<-chan gate.Change, error) {
	return s.feed.Watch(ctx, prefix)
}

// WatchFunc implements [gate.FuncWatcher]: fn is called with each
// change Watch would send, by the goroutine that receives the
// notifications.
func (s *Store) WatchFunc(ctx context.Context, prefix string, fn func(gate.Change)) error {
	return s.feed.WatchFunc(ctx, prefix, fn)
}

// listen receives the notifications of the store's channel and publishes
// them, until ctx ends, connecting again (after a pause growing up to 5
// s) when the connection fails.
func (s *Store) listen(ctx context.Context, publish func(gate.Change), ready func()) {
	pause := 50 * time.Millisecond
	for ctx.Err() == nil {
		if s.listenOnce(ctx, publish, ready) {
			pause = 50 * time.Millisecond // it was up: the failure is new
		}
		select {
		case <-ctx.Done():
		case <-time.After(pause):
		}
		pause = min(2*pause, 5*time.Second)
	}
}

// listenOnce connects, listens and publishes until the connection fails or
// ctx ends. It reports whether it was listening.
func (s *Store) listenOnce(ctx context.Context, publish func(gate.Change), ready func()) bool {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig)
	if err != nil {
		return false
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{s.channel}.Sanitize()); err != nil {
		return false
	}
	ready()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true
		}
		if c, ok := parseChange(n.Payload); ok {
			publish(c)
		}
	}
}

// parseChange reads a notification's payload: the version, a space, the
// key in hex.
func parseChange(p string) (gate.Change, bool) {
	vs, hk, ok := strings.Cut(p, " ")
	if !ok {
		return gate.Change{}, false
	}
	v, err1 := strconv.ParseUint(vs, 10, 64)
	k, err2 := hex.DecodeString(hk)
	if err1 != nil || err2 != nil {
		return gate.Change{}, false
	}
	return gate.Change{Key: string(k), Version: v}, true
}
