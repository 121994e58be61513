// This file follows the store's change feed: which changes are the
// gate's own writes, and what the sessions of a changed key last saw.

package core

import (
	"context"
	"sync"

	"github.com/chartgate/chartgate/gate"
)

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
	last map[string]*View
}

// ownWrite is a record this gate wrote: by a session's own call (ss, which
// was told of its tools in the call), or settled: every session of this
// instance was told (a job's result) or needs not be (a new workflow, in
// its initial state).
type ownWrite struct {
	view    *View
	ss      Conn
	settled bool
	// quiet: nobody is left to tell of it (settled, or the workflow is
	// its session's own: Options.SessionKey does not name it).
	quiet bool
}

// ownChange handles the pending change of key if it reports the gate's
// own newest write of key and nobody is left to tell of that: the
// sessions of key are up to date with it, as changed would find, without
// waking the watch's goroutine. It reports whether it did. w.mu is held.
func (w *gateWatch) ownChange(key string) bool {
	version, ok := w.pending[key]
	own := w.own[key]
	if !ok || !own.quiet || own.view == nil || version == 0 || own.view.Version != version {
		return false
	}
	delete(w.pending, key)
	if _, ok := w.last[key]; ok {
		w.last[key] = own.view
	}
	return true
}

// watchWrite is a write of the gate in progress, for its watch.
type watchWrite struct {
	w       *gateWatch
	key     string
	ss      Conn
	settled bool
	quiet   bool
}

// writing tells the gate's watch, if it has one, that the gate writes
// key's record; done must be called once the write returned.
func (g *Core) writing(key string, ss Conn, settled bool) watchWrite {
	w := g.watch.Load()
	if w == nil {
		return watchWrite{}
	}
	w.mu.Lock()
	w.writing[key]++
	w.mu.Unlock()
	return watchWrite{w: w, key: key, ss: ss, settled: settled, quiet: settled || (ss != nil && g.Named == nil)}
}

// done ends a write of v, which failed with err or else has its new
// version.
func (ww watchWrite) done(v *View, err error) {
	if ww.w == nil {
		return
	}
	w := ww.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if err == nil && v != nil && v.Version != 0 {
		if len(w.own) >= maxWatched && w.own[ww.key].view == nil { // keys of sessions gone, and changes never reported
			clear(w.own)
		}
		w.own[ww.key] = ownWrite{view: v, ss: ww.ss, settled: ww.settled, quiet: ww.quiet}
	}
	if w.writing[ww.key]--; w.writing[ww.key] <= 0 {
		delete(w.writing, ww.key)
		if _, ok := w.pending[ww.key]; ok && !w.ownChange(ww.key) {
			w.poke()
		}
	}
}

// poke wakes the watch's goroutine. w.mu is held.
func (w *gateWatch) poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// StartWatch starts following the store's changes, if it reports them and
// the gate does not follow them yet.
func (g *Core) StartWatch() {
	st, ok := g.store.(gate.Watcher)
	if !ok || g.watch.Load() != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &gateWatch{cancel: cancel, done: make(chan struct{}), wake: make(chan struct{}, 1),
		pending: map[string]uint64{}, writing: map[string]int{}, own: map[string]ownWrite{}, last: map[string]*View{}}
	if !g.watch.CompareAndSwap(nil, w) {
		cancel()
		return
	}
	// A store that hands its changes to a function does so on the
	// writer's goroutine: the gate's own writes, most changes, wake none.
	var ch <-chan gate.Change
	var err error
	if fw, ok := st.(gate.FuncWatcher); ok {
		err = fw.WatchFunc(ctx, g.prefix, w.note)
	} else {
		ch, err = st.Watch(ctx, g.prefix)
	}
	if err != nil {
		g.Log.Warn("mcpbind: watching the store: sessions learn of changes made elsewhere at their next request only", "error", err)
		cancel()
		close(w.done)
		return
	}
	go g.follow(ctx, w, ch)
}

// stopWatch stops following the store and waits for the goroutine.
func (g *Core) stopWatch() {
	if w := g.watch.Load(); w != nil {
		w.cancel()
		<-w.done
	}
}

// follow handles the pending changes until ctx ends, and meanwhile
// notes those of ch, if the store sends them on a channel.
func (g *Core) follow(ctx context.Context, w *gateWatch, ch <-chan gate.Change) {
	defer close(w.done)
	if ch == nil {
		g.handle(ctx, w)
		return
	}
	handled := make(chan struct{})
	go func() { // the handling, so that ch is drained while a change is handled
		defer close(handled)
		g.handle(ctx, w)
	}()
	for c := range ch {
		w.note(c)
	}
	<-handled
}

// handle handles the pending changes as it is woken, until ctx ends.
func (g *Core) handle(ctx context.Context, w *gateWatch) {
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
}

// note adds a change the store reported to pending, and wakes the
// handling unless the gate writes the key (its write's end sees to the
// change) or the change is the gate's own quiet write.
func (w *gateWatch) note(c gate.Change) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if old, ok := w.pending[c.Key]; !ok || old != 0 {
		w.pending[c.Key] = c.Version
	}
	if w.writing[c.Key] == 0 && !w.ownChange(c.Key) {
		w.poke()
	}
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
// sessions of this instance whose workflow it is are told (Options.Watchers)
// of the state they were last brought up to date with and the new one, but
// for a session whose own call wrote it (told by the call).
func (g *Core) changed(ctx context.Context, w *gateWatch, key string, version uint64) {
	w.mu.Lock()
	own, before := w.own[key], w.last[key]
	w.mu.Unlock()
	// mine reports whether a version is the gate's newest own write of
	// the key. A change may report an older one (its own write too, or
	// not), or none: the version loaded then tells.
	mine := func(v uint64) bool { return own.view != nil && v != 0 && own.view.Version == v }
	// settled: nobody else to tell of the gate's own write (a session's
	// workflow is its own when SessionKey does not name it).
	settled := func() bool { return own.quiet }
	var after *View
	switch {
	case mine(version):
		after = own.view
		if settled() {
			w.handledOwn(key, after)
			return
		}
	case before != nil && version != 0 && before.Version == version:
		return
	}
	var tell Teller
	if g.watchers != nil {
		tell = g.watchers(key)
	}
	if tell == nil {
		w.forget(key)
		return
	}
	if after == nil {
		lctx, cancel := context.WithTimeout(ctx, g.Timeout)
		v, err := g.fetchView(lctx, key)
		cancel()
		if err != nil {
			if lctx.Err() == nil && ctx.Err() == nil {
				g.Log.Debug("mcpbind: loading a workflow that changed elsewhere", "key", Fingerprint(key), "error", err)
			}
			return
		}
		if mine(v.Version) {
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
			before = d.(*View)
		} else {
			before = g.Initial
		}
	}
	w.remember(key, after)
	if before.Version == after.Version && before.Version != 0 {
		return
	}
	tell(ctx, before, after, own.ss)
}

// maxWatched bounds the keys a watch remembers a state of; past it, it
// forgets them all (and falls back on the gate's cache of decoded records,
// or the initial state, as what the sessions last saw).
const maxWatched = 10_000

// remember records the state the sessions of key were brought up to date
// with.
func (w *gateWatch) remember(key string, v *View) {
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
func (w *gateWatch) handledOwn(key string, v *View) {
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
