// This file defines Store, where a Gate keeps the workflow state of each
// session, with versioned loads and compare-and-swap, and MemoryStore, the
// bounded in-memory implementation (a sliding TTL, no eviction of live
// records).

package gate

import (
	"container/list"
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Store keeps one record per workflow (per session). Records are opaque
// bytes written by the Gate; every record has a version, and writes are
// compare-and-swap on that version, so that two calls that race in one
// workflow never overwrite each other's transition: the loser gets
// [ErrConflict], reloads, and applies its event again on the winner's state.
//
// Versions are opaque to the Gate, with two rules:
//   - 0 means "no record"; CompareAndSwap with old 0 creates the record
//     only if there is none;
//   - a version is never reused for the same key, not even after the record
//     was deleted or expired, by any instance or process sharing the
//     store: the Gate caches decoded states by version, and takes a
//     compare-and-swap that succeeded against the version it cached as
//     proof that the record was the one it cached (a call that moves a
//     workflow takes its lease so, without loading the record first).
//
// A store must never drop a record to make room for another: a workflow
// whose record vanished is refused as expired, not restarted, so a store
// that evicted live records would let one client end the workflows of
// others. A full store refuses new records instead ([ErrStoreFull]).
// Records may expire after a time without use (a TTL); a store that can
// keep the records of live sessions from expiring implements [Keeper].
//
// Implementations must be safe for concurrent use. A store shared by several
// server instances (Redis) implements CompareAndSwap atomically on the
// server side, for example with a Lua script comparing a version field and
// taking the new version from a counter.
type Store interface {
	// Load returns the record stored under key and its version. A key with
	// no record (never written, deleted or expired) gives nil, 0 and no
	// error. The returned data must not be modified.
	Load(ctx context.Context, key string) (data []byte, version uint64, err error)

	// CompareAndSwap stores data under key if the key's current version is
	// old, and returns the record's new version. If the current version is
	// not old it stores nothing and returns an error that matches
	// [ErrConflict] with errors.Is. The store keeps data: the caller must not
	// modify it afterwards.
	CompareAndSwap(ctx context.Context, key string, old uint64, data []byte) (version uint64, err error)

	// Delete removes the record under key. Deleting a missing key is not an
	// error.
	Delete(ctx context.Context, key string) error
}

// ValueStore is implemented by a [Store] that keeps its records in process
// memory and can hold a record as a Go value instead of bytes: the gate
// then saves a workflow without encoding its record and loads it without
// decoding it. [MemoryStore] implements it. A store that implements it
// serves both forms: Load returns the encoding of a record held as a
// value, and LoadValue returns a record written as bytes as [Bytes].
type ValueStore interface {
	Store
	// LoadValue is [Store.Load] for a record held as a value: it returns
	// the record under key and its version, or nil, 0 and no error if
	// there is none.
	LoadValue(ctx context.Context, key string) (v Value, version uint64, err error)
	// CompareAndSwapValue is [Store.CompareAndSwap] for a record held as a
	// value: if the key's current version is old, it stores the value
	// newValue returns for the record's new version, and returns that
	// version. newValue is called at most once, before the value is
	// stored (so that the value can hold its own version); what it returns
	// is stored only if CompareAndSwapValue succeeds.
	CompareAndSwapValue(ctx context.Context, key string, old uint64, newValue func(version uint64) Value) (version uint64, err error)
}

// Value is a record a [ValueStore] holds. It must not change once stored.
type Value interface {
	// Size returns the length of the record's encoding, which the store's
	// bounds count.
	Size() int
	// Encode returns the record's encoding, which [Store.Load] returns.
	// The caller must not modify it.
	Encode() []byte
}

// Bytes is a record held as the bytes it was written as: a [Value].
type Bytes []byte

// Size implements [Value].
func (b Bytes) Size() int { return len(b) }

// Encode implements [Value].
func (b Bytes) Encode() []byte { return b }

// Keeper is implemented by a [Store] that can keep a record from expiring
// while the session it belongs to lives. The gate calls Keep with the key
// of a session's workflow when the session first needs one, and deletes
// the record when the session ends. [MemoryStore] implements it. A store
// shared by several server instances (Redis) relies on its TTL instead: an
// instance that dies cannot delete its sessions' records.
type Keeper interface {
	Keep(key string)
}

// NoSyncStore is implemented by a [Store] that syncs each write to disk
// before CompareAndSwap returns and can also write without waiting for the
// disk. The gate writes a call's lease that way: the lease is no
// transition, nothing is acknowledged with it, and the commit that ends
// the call is synced (a lease lost with the machine leaves the workflow
// as it was, free).
type NoSyncStore interface {
	Store
	// CompareAndSwapNoSync is [Store.CompareAndSwap] except that its write,
	// visible to every reader once it returns and kept if the process
	// crashes, may be lost if the operating system crashes or the power
	// fails before a later write is synced. Writes reach the disk in the
	// order they were made: a CompareAndSwap that returned made every
	// earlier write durable too.
	CompareAndSwapNoSync(ctx context.Context, key string, old uint64, data []byte) (version uint64, err error)
}

// Lister is implemented by a [Store] that can list its keys (the
// records that are there, not expired). [Gate.Workflows] (behind
// `chartgate status`) uses it.
type Lister interface {
	// Keys returns the keys that start with prefix, sorted.
	Keys(ctx context.Context, prefix string) ([]string, error)
}

// ErrConflict is matched (errors.Is) by the error of a
// [Store.CompareAndSwap] whose expected version is not the current one.
var ErrConflict = errors.New("mcpbind: store: version conflict")

// ErrStoreFull is matched (errors.Is) by the error of a
// [Store.CompareAndSwap] that would create a record in a store that holds
// as many as it may. The gate then refuses the call that would have
// started a workflow; the workflows the store holds are not affected.
var ErrStoreFull = errors.New("mcpbind: store: full")

// MemoryStoreOptions configures [NewMemoryStore]. The zero value (or nil)
// means the defaults.
type MemoryStoreOptions struct {
	// MaxEntries bounds the number of records. No record is evicted to
	// make room for another: once the store is full (after the expired
	// records are dropped), creating a record fails with an error that
	// matches [ErrStoreFull]. Default 100,000.
	MaxEntries int
	// MaxBytes bounds the total size of the records' data in the same way:
	// a record that would take the store past it is not created. (An
	// existing record may still grow; the gate bounds each record.)
	// Default 256 MiB.
	MaxBytes int64
	// TTL is how long a record lives after it was last loaded or written
	// (a sliding expiry), except the records of live sessions
	// ([MemoryStore.Keep]), which live until they are deleted. A negative
	// TTL keeps every record until it is deleted. Default 24 hours.
	TTL time.Duration
	// Now returns the current time; default time.Now. For tests.
	Now func() time.Time
}

// MemoryStore is a [Store] in process memory, bounded in records and bytes,
// with a sliding TTL. It suits stdio and single-instance servers; servers
// behind several instances need a shared store. It is a [ValueStore]: a
// gate keeps its records there decoded, and their size in bytes is that of
// their encoding. The zero value is not usable; call [NewMemoryStore].
type MemoryStore struct {
	mu       sync.Mutex
	max      int
	maxBytes int64
	ttl      time.Duration // < 0: no expiry
	now      func() time.Time
	seq      uint64 // last version handed out, for every key: versions are never reused
	bytes    int64
	entries  map[string]*memEntry
	kept     map[string]bool
	byUse    list.List // of *memEntry that may expire, most recently used at the front
	feed     Feed      // its writes, for Watch
}

type memEntry struct {
	key     string
	val     Value
	size    int // val.Size(), as counted in MemoryStore.bytes
	version uint64
	expires time.Time
	el      *list.Element // in byUse; nil for kept records
}

var (
	_ Keeper      = (*MemoryStore)(nil)
	_ Lister      = (*MemoryStore)(nil)
	_ ValueStore  = (*MemoryStore)(nil)
	_ Watcher     = (*MemoryStore)(nil)
	_ FuncWatcher = (*MemoryStore)(nil)
)

// NewMemoryStore returns an empty MemoryStore. opts may be nil.
func NewMemoryStore(opts *MemoryStoreOptions) *MemoryStore {
	var o MemoryStoreOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = 100_000
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = 256 << 20
	}
	if o.TTL == 0 {
		o.TTL = 24 * time.Hour
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &MemoryStore{max: o.MaxEntries, maxBytes: o.MaxBytes, ttl: o.TTL, now: o.Now, entries: map[string]*memEntry{}, kept: map[string]bool{}}
}

// expired reports whether e has expired at now.
func (s *MemoryStore) expired(e *memEntry, now time.Time) bool {
	return e.el != nil && s.ttl >= 0 && !now.Before(e.expires)
}

// used refreshes e's expiry at now.
func (s *MemoryStore) used(e *memEntry, now time.Time) {
	if e.el != nil {
		e.expires = now.Add(s.ttl)
		s.byUse.MoveToFront(e.el)
	}
}

// Load implements [Store]. A hit refreshes the record's expiry.
func (s *MemoryStore) Load(ctx context.Context, key string) ([]byte, uint64, error) {
	v, ver, err := s.LoadValue(ctx, key)
	if v == nil {
		return nil, ver, err
	}
	return v.Encode(), ver, nil
}

// LoadValue implements [ValueStore]. A hit refreshes the record's expiry.
func (s *MemoryStore) LoadValue(_ context.Context, key string) (Value, uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[key]
	if !ok {
		return nil, 0, nil
	}
	now := s.now()
	if s.expired(e, now) {
		s.remove(e)
		return nil, 0, nil
	}
	s.used(e, now)
	return e.val, e.version, nil
}

// CompareAndSwap implements [Store]. Creating a record in a full store
// fails with an error that matches [ErrStoreFull].
func (s *MemoryStore) CompareAndSwap(ctx context.Context, key string, old uint64, data []byte) (uint64, error) {
	return s.CompareAndSwapValue(ctx, key, old, func(uint64) Value { return Bytes(data) })
}

// CompareAndSwapValue implements [ValueStore]. Creating a record in a full
// store fails with an error that matches [ErrStoreFull].
func (s *MemoryStore) CompareAndSwapValue(_ context.Context, key string, old uint64, newValue func(uint64) Value) (uint64, error) {
	return s.swap(key, old, stampFunc(newValue))
}

// stampFunc is CompareAndSwapValue's newValue as a [Stamped]'s Stamp.
type stampFunc func(uint64) Value

func (f stampFunc) Stamp(ver uint64) Value { return f(ver) }

// stamper is what MemoryStore.swap stores: what Stamp returns for the
// record's new version.
type stamper interface{ Stamp(ver uint64) Value }

// swap is CompareAndSwapValue, with the value to store taken from v.Stamp:
// a Core passes its record as it is, where a method value v.Stamp would be
// allocated on every write.
func (s *MemoryStore) swap(key string, old uint64, v stamper) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	e, ok := s.entries[key]
	if ok && s.expired(e, now) {
		s.remove(e)
		ok = false
	}
	var cur uint64
	if ok {
		cur = e.version
	}
	if cur != old {
		return 0, ErrConflict
	}
	if !ok {
		s.dropExpired(now)
		if len(s.entries) >= s.max {
			return 0, ErrStoreFull
		}
	}
	ver := s.seq + 1
	val := v.Stamp(ver)
	size := val.Size()
	if ok {
		s.bytes += int64(size - e.size)
		e.val, e.size, e.version = val, size, ver
		s.seq = ver
		s.used(e, now)
		s.feed.Publish(Change{Key: key, Version: ver})
		return ver, nil
	}
	if s.bytes+int64(size) > s.maxBytes {
		return 0, ErrStoreFull // ver was handed to no stored record: it may be handed out again
	}
	s.seq = ver
	e = &memEntry{key: key, val: val, size: size, version: ver, expires: now.Add(s.ttl)}
	if !s.kept[key] && s.ttl >= 0 {
		e.el = s.byUse.PushFront(e)
	}
	s.entries[key] = e
	s.bytes += int64(size)
	s.feed.Publish(Change{Key: key, Version: ver})
	return ver, nil
}

// dropExpired removes the expired records. The expiry is sliding, so the
// least recently used records are the first to expire: they are at the
// back.
func (s *MemoryStore) dropExpired(now time.Time) {
	for s.byUse.Len() > 0 {
		e := s.byUse.Back().Value.(*memEntry)
		if !s.expired(e, now) {
			return
		}
		s.remove(e)
	}
}

// Delete implements [Store]. It also ends a [MemoryStore.Keep].
func (s *MemoryStore) Delete(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.entries[key]; ok {
		s.remove(e)
	}
	delete(s.kept, key)
	return nil
}

// Keep implements [Keeper]: the record under key (now or once it is
// created) does not expire until it is deleted.
func (s *MemoryStore) Keep(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.kept[key] = true
	if e, ok := s.entries[key]; ok && e.el != nil {
		s.byUse.Remove(e.el)
		e.el = nil
	}
}

// Keys implements [Lister].
func (s *MemoryStore) Keys(_ context.Context, prefix string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	var out []string
	for k, e := range s.entries {
		if strings.HasPrefix(k, prefix) && !s.expired(e, now) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Len returns the number of records held, expired ones not yet dropped
// included.
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}

func (s *MemoryStore) remove(e *memEntry) {
	delete(s.entries, e.key)
	if e.el != nil {
		s.byUse.Remove(e.el)
	}
	s.bytes -= int64(e.size)
}

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

// FuncWatcher is implemented by a [Watcher] that can also hand its changes
// to a function: the watcher then learns of each write without a
// goroutine of its own being woken for it. [MemoryStore] implements it,
// and so do the stores of mcpbind/sqlitestore, mcpbind/redisstore and
// mcpbind/pgstore.
type FuncWatcher interface {
	Watcher
	// WatchFunc calls fn with each change Watch would send, from now on
	// until ctx ends. fn is called on the goroutine that reports the
	// change (for a store in process, the writer's, while the write holds
	// the store's lock): it must return quickly and not use the store.
	WatchFunc(ctx context.Context, prefix string, fn func(Change)) error
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

	mu sync.Mutex
	// subs are the watchers, in the order they came: a slice, which
	// Publish ranges over at every write without a map's iterator.
	subs   []*feedSub
	closed bool
	stop   context.CancelFunc // ends the running listen, if any
	done   chan struct{}      // closed when it returned
	ready  chan struct{}      // closed when it listens
}

type feedSub struct {
	prefix string
	ch     chan Change  // for Watch
	fn     func(Change) // for WatchFunc
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
	w := &feedSub{prefix: prefix, ch: make(chan Change, feedBuffer)}
	if err := f.watch(ctx, w); err != nil {
		return nil, err
	}
	return w.ch, nil
}

// WatchFunc implements [FuncWatcher]: fn is called by Publish, which
// holds the feed's lock (and an in-process store's) meanwhile. With a
// listen function, it returns once that receives the backend's changes,
// or after [FeedReadyWait].
func (f *Feed) WatchFunc(ctx context.Context, prefix string, fn func(Change)) error {
	return f.watch(ctx, &feedSub{prefix: prefix, fn: fn})
}

// watch adds w to the feed's watchers until ctx ends.
func (f *Feed) watch(ctx context.Context, w *feedSub) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return ErrFeedClosed
	}
	f.subs = append(f.subs, w)
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
	return nil
}

// unwatch ends a watch, and the listen function after the last one.
func (f *Feed) unwatch(w *feedSub) {
	f.mu.Lock()
	i := slices.Index(f.subs, w)
	if i < 0 {
		f.mu.Unlock()
		return
	}
	f.subs = slices.Delete(f.subs, i, i+1)
	f.n.Add(-1)
	if w.ch != nil {
		close(w.ch)
	}
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
// never blocks (but for the functions of WatchFunc): a watcher whose
// channel is full misses it.
func (f *Feed) Publish(c Change) {
	if f.n.Load() == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, w := range f.subs {
		if !strings.HasPrefix(c.Key, w.prefix) {
			continue
		}
		if w.fn != nil {
			w.fn(c)
		} else {
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
	subs := slices.Clone(f.subs)
	f.mu.Unlock()
	for _, w := range subs {
		f.unwatch(w)
	}
}

// Watch implements [Watcher]: the writes made through this store.
func (s *MemoryStore) Watch(ctx context.Context, prefix string) (<-chan Change, error) {
	return s.feed.Watch(ctx, prefix)
}

// WatchFunc implements [FuncWatcher]: fn is called by the writer, under
// the store's lock.
func (s *MemoryStore) WatchFunc(ctx context.Context, prefix string, fn func(Change)) error {
	return s.feed.WatchFunc(ctx, prefix, fn)
}
