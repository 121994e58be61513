// This file defines the change feed of a store (Watcher, Change, Feed) and
// how a gate follows it: when a workflow's record is written by another
// instance (or, here, outside the session's own call: an approval, a
// Gate.Send), the sessions of this instance whose workflow it is get
// notifications/tools/list_changed if their tools changed.

package mcpbind

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Watcher is implemented by a [Store] that can report the writes of its
// records: [MemoryStore] and the SQLite store report the writes made
// through themselves (in process), the Redis and Postgres stores those of
// every instance on their backend (pub/sub, LISTEN/NOTIFY). A gate whose
// store is a Watcher follows it once attached to a server (see "Several
// instances" in the package documentation).
type Watcher interface {
	// Watch returns a channel that receives a [Change] for each record
	// whose key starts with prefix that is written (created or updated;
	// not deleted) from now on, until ctx ends; then the channel is
	// closed. Delivery is best effort: a watcher that falls behind, or a
	// backend connection that was lost meanwhile, misses changes.
	Watch(ctx context.Context, prefix string) (<-chan Change, error)
}

// Change is a write of a record that a [Watcher] reports.
type Change struct {
	Key     string
	Version uint64 // the record's new version; 0 if the store does not say
}

// ErrFeedClosed is matched by the error of [Feed.Watch] after
// [Feed.Close].
var ErrFeedClosed = errors.New("mcpbind: the change feed is closed")

// feedBuffer is how many changes a watcher may fall behind by before it
// misses some.
const feedBuffer = 1024

// FeedReadyWait bounds how long [Feed.Watch] waits for the listen function
// of a [NewFeed] to receive the backend's changes: past it (the backend is
// unreachable, say), Watch returns, and the changes are reported once the
// listen function gets through.
const FeedReadyWait = 5 * time.Second

// Feed fans the changes of a store out to its watchers: a store
// implements [Watcher] with it. An in-process store calls [Feed.Publish]
// after each write; a store shared by several instances passes
// [NewFeed] a listen function that brings in the changes its backend
// reports. The zero value is an in-process feed, ready to use. A Feed is
// safe for concurrent use.
type Feed struct {
	listen func(ctx context.Context, publish func(Change), ready func())
	n      atomic.Int32 // len(subs), read without mu by Publish

	mu     sync.Mutex
	subs   map[*feedSub]struct{}
	closed bool
	stop   context.CancelFunc // ends the running listen, if any
	done   chan struct{}      // closed when it returned
	ready  chan struct{}      // closed when it listens
}

type feedSub struct {
	prefix string
	ch     chan Change
}

// NewFeed returns a feed whose changes come from listen, which runs
// while the feed has watchers: it is started (on its own goroutine) by the
// first Watch, and its context is cancelled once the last watch has ended.
// It calls ready once it receives the backend's changes (Watch waits for
// that, up to [FeedReadyWait]), publish for each change, and returns when
// its context ends.
func NewFeed(listen func(ctx context.Context, publish func(Change), ready func())) *Feed {
	return &Feed{listen: listen}
}

// Watch implements [Watcher]. With a listen function, it returns once
// that receives the backend's changes, or after [FeedReadyWait].
func (f *Feed) Watch(ctx context.Context, prefix string) (<-chan Change, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w := &feedSub{prefix: prefix, ch: make(chan Change, feedBuffer)}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil, ErrFeedClosed
	}
	if f.subs == nil {
		f.subs = map[*feedSub]struct{}{}
	}
	f.subs[w] = struct{}{}
	f.n.Add(1)
	if f.listen != nil && f.stop == nil {
		lctx, cancel := context.WithCancel(context.Background())
		done, ready := make(chan struct{}), make(chan struct{})
		f.stop, f.done, f.ready = cancel, done, ready
		var once sync.Once
		go func() {
			defer close(done)
			f.listen(lctx, f.Publish, func() { once.Do(func() { close(ready) }) })
		}()
	}
	ready := f.ready
	f.mu.Unlock()
	context.AfterFunc(ctx, func() { f.unwatch(w) })
	if ready != nil {
		t := time.NewTimer(FeedReadyWait)
		defer t.Stop()
		select {
		case <-ready:
		case <-t.C:
		case <-ctx.Done():
		}
	}
	return w.ch, nil
}

// unwatch ends a watch, and the listen function after the last one.
func (f *Feed) unwatch(w *feedSub) {
	f.mu.Lock()
	if _, ok := f.subs[w]; !ok {
		f.mu.Unlock()
		return
	}
	delete(f.subs, w)
	f.n.Add(-1)
	close(w.ch)
	var stop context.CancelFunc
	var done chan struct{}
	if len(f.subs) == 0 && f.stop != nil {
		stop, done = f.stop, f.done
		f.stop, f.done, f.ready = nil, nil, nil
	}
	f.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// Publish hands a change to the watchers whose prefix its key has. It
// never blocks: a watcher whose channel is full misses it.
func (f *Feed) Publish(c Change) {
	if f.n.Load() == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for w := range f.subs {
		if strings.HasPrefix(c.Key, w.prefix) {
			select {
			case w.ch <- c:
			default:
			}
		}
	}
}

// Close ends every watch (their channels are closed) and the listen
// function, and makes Watch fail from now on.
func (f *Feed) Close() {
	f.mu.Lock()
	f.closed = true
	subs := make([]*feedSub, 0, len(f.subs))
	for w := range f.subs {
		subs = append(subs, w)
	}
	f.mu.Unlock()
	for _, w := range subs {
		f.unwatch(w)
	}
}

// Watch implements [Watcher]: the writes made through this store.
func (s *MemoryStore) Watch(ctx context.Context, prefix string) (<-chan Change, error) {
	return s.feed.Watch(ctx, prefix)
}

// gateWatch is a gate's watch of its store: the changes it was told of
// and not yet handled, and what it knows of the workflows of its sessions.
type gateWatch struct {
	cancel context.CancelFunc
	done   chan struct{}
	wake   chan struct{} // cap 1: pending has keys

	mu      sync.Mutex
	pending map[string]uint64 // key -> newest version reported (0: unknown)
	// writing counts the writes of this gate in progress per key: the
	// change of such a key waits for them, so that it is known as the
	// gate's own.
	writing map[string]int
	own     map[string]ownWrite // the newest write of this gate per key
	// last is, per key, the state the sessions of this instance were
	// last brought up to date with.
	last map[string]*view
}

// ownWrite is a record this gate wrote: by a session's own call (ss, which
// was told of its tools in the call), or settled: every session of this
// instance was told (a job's result) or needs not be (a new workflow, in
// its initial state).
type ownWrite struct {
	view    *view
	ss      *mcp.ServerSession
	settled bool
}

// watchWrite is a write of the gate in progress, for its watch.
type watchWrite struct {
	w       *gateWatch
	key     string
	ss      *mcp.ServerSession
	settled bool
}

// writing tells the gate's watch, if it has one, that the gate writes
// key's record; done must be called once the write returned.
func (g *Gate) writing(key string, ss *mcp.ServerSession, settled bool) watchWrite {
	w := g.watch.Load()
	if w == nil {
		return watchWrite{}
	}
	w.mu.Lock()
	w.writing[key]++
	w.mu.Unlock()
	return watchWrite{w: w, key: key, ss: ss, settled: settled}
}

// done ends a write of v, which failed with err or else has its new
// version.
func (ww watchWrite) done(v *view, err error) {
	if ww.w == nil {
		return
	}
	w := ww.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.writing[ww.key]--; w.writing[ww.key] <= 0 {
		delete(w.writing, ww.key)
		if _, ok := w.pending[ww.key]; ok {
			w.poke()
		}
	}
	if err == nil && v != nil && v.version != 0 {
		if len(w.own) >= maxWatched && w.own[ww.key].view == nil { // keys of sessions gone, and changes never reported
			clear(w.own)
		}
		w.own[ww.key] = ownWrite{view: v, ss: ww.ss, settled: ww.settled}
	}
}

// poke wakes the watch's goroutine. w.mu is held.
func (w *gateWatch) poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// startWatch starts following the store's changes, if it reports them and
// the gate does not follow them yet.
func (g *Gate) startWatch() {
	st, ok := g.store.(Watcher)
	if !ok || g.watch.Load() != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &gateWatch{cancel: cancel, done: make(chan struct{}), wake: make(chan struct{}, 1),
		pending: map[string]uint64{}, writing: map[string]int{}, own: map[string]ownWrite{}, last: map[string]*view{}}
	if !g.watch.CompareAndSwap(nil, w) {
		cancel()
		return
	}
	ch, err := st.Watch(ctx, g.prefix)
	if err != nil {
		g.log.Warn("mcpbind: watching the store: sessions learn of changes made elsewhere at their next request only", "error", err)
		cancel()
		close(w.done)
		return
	}
	go g.follow(ctx, w, ch)
}

// stopWatch stops following the store and waits for the goroutine.
func (g *Gate) stopWatch() {
	if w := g.watch.Load(); w != nil {
		w.cancel()
		<-w.done
	}
}

// follow takes the store's changes from ch into pending, and handles
// them, until ctx ends.
func (g *Gate) follow(ctx context.Context, w *gateWatch, ch <-chan Change) {
	defer close(w.done)
	handled := make(chan struct{})
	go func() { // the handling, so that ch is drained while a change is handled
		defer close(handled)
		for {
			select {
			case <-ctx.Done():
				return
			case <-w.wake:
			}
			for _, k := range w.take() {
				g.changed(ctx, w, k.key, k.version)
			}
		}
	}()
	for c := range ch {
		w.mu.Lock()
		if old, ok := w.pending[c.Key]; !ok || old != 0 {
			w.pending[c.Key] = c.Version
		}
		if w.writing[c.Key] == 0 {
			w.poke()
		}
		w.mu.Unlock()
	}
	<-handled
}

type pendingChange struct {
	key     string
	version uint64
}

// take removes and returns the pending changes of keys that the gate is
// not writing.
func (w *gateWatch) take() []pendingChange {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []pendingChange
	for k, v := range w.pending {
		if w.writing[k] == 0 {
			out = append(out, pendingChange{k, v})
			delete(w.pending, k)
		}
	}
	return out
}

// changed handles a change of key's record (version 0: unknown): the
// sessions of this instance whose workflow it is get list_changed if their
// tools differ between the state they were last brought up to date with
// and the new one, but for a session whose own call wrote it (told by the
// call).
func (g *Gate) changed(ctx context.Context, w *gateWatch, key string, version uint64) {
	w.mu.Lock()
	own, before := w.own[key], w.last[key]
	w.mu.Unlock()
	// mine reports whether a version is the gate's newest own write of
	// the key. A change may report an older one (its own write too, or
	// not), or none: the version loaded then tells.
	mine := func(v uint64) bool { return own.view != nil && v != 0 && own.view.version == v }
	// settled: nobody else to tell of the gate's own write (a session's
	// workflow is its own when SessionKey does not name it).
	settled := func() bool { return own.settled || (own.ss != nil && g.named == nil) }
	var after *view
	switch {
	case mine(version):
		after = own.view
		if settled() {
			w.handledOwn(key, after)
			return
		}
	case before != nil && version != 0 && before.version == version:
		return
	}
	sessions := g.sessionsOfKey(key)
	if len(sessions) == 0 {
		w.forget(key)
		return
	}
	if after == nil {
		lctx, cancel := context.WithTimeout(ctx, g.timeout)
		v, err := g.fetchView(lctx, key)
		cancel()
		if err != nil {
			if lctx.Err() == nil && ctx.Err() == nil {
				g.log.Debug("mcpbind: loading a workflow that changed elsewhere", "key", fingerprint(key), "error", err)
			}
			return
		}
		if mine(v.version) {
			after = own.view
			if settled() {
				w.handledOwn(key, after)
				return
			}
		} else {
			after, own = v, ownWrite{}
		}
	}
	if before == nil {
		if d, ok := g.decoded.Load(key); ok {
			before = d.(*view)
		} else {
			before = g.initial
		}
	}
	w.remember(key, after)
	if before.version == after.version && before.version != 0 {
		return
	}
	r := g.rules.Load()
	if g.signature(ctx, r, before).equal(g.signature(ctx, r, after)) {
		return
	}
	for _, st := range sessions {
		if st.ss == own.ss || st.a.send == nil || !listsVary(st.ss) {
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, g.timeout)
		n := &mcp.ServerRequest[*mcp.ToolListChangedParams]{Session: st.ss, Params: &mcp.ToolListChangedParams{}}
		if _, err := st.a.send(sctx, "notifications/tools/list_changed", n); err != nil && ctx.Err() == nil {
			g.log.Warn("mcpbind: sending notifications/tools/list_changed", "error", err)
		}
		cancel()
	}
}

// maxWatched bounds the keys a watch remembers a state of; past it, it
// forgets them all (and falls back on the gate's cache of decoded records,
// or the initial state, as what the sessions last saw).
const maxWatched = 10_000

// remember records the state the sessions of key were brought up to date
// with.
func (w *gateWatch) remember(key string, v *view) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.last) >= maxWatched {
		clear(w.last)
	}
	w.last[key] = v
}

// handledOwn records that the sessions of key are up to date with the
// gate's own write v, which nobody else needed telling of. The write stays
// known as the gate's (w.own), for the changes that report it again (or
// an older version, whose load finds it).
func (w *gateWatch) handledOwn(key string, v *view) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.last[key]; ok {
		w.last[key] = v
	}
}

// forget drops what the watch knows of a key that no session of this
// instance has.
func (w *gateWatch) forget(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.last, key)
	if w.writing[key] == 0 {
		delete(w.own, key)
	}
}
