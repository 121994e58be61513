// This file defines Store, where a Gate keeps the workflow state of each
// session, with versioned loads and compare-and-swap, and MemoryStore, the
// bounded in-memory implementation (LRU plus a sliding TTL).

package mcpbind

import (
	"container/list"
	"context"
	"errors"
	"sync"
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
//     was deleted or expired (the Gate caches decoded states by version).
//
// Implementations must be safe for concurrent use. A store shared by several
// server instances (Redis) implements CompareAndSwap atomically on the
// server side, for example with a Lua script comparing a version field and
// taking the new version from a counter.
type Store interface {
	// Load returns the record stored under key and its version. A key with
	// no record (never written, deleted, expired or evicted) gives nil, 0
	// and no error. The returned data must not be modified.
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

// ErrConflict is matched (errors.Is) by the error of a
// [Store.CompareAndSwap] whose expected version is not the current one.
var ErrConflict = errors.New("mcpbind: store: version conflict")

// MemoryStoreOptions configures [NewMemoryStore]. The zero value (or nil)
// means the defaults.
type MemoryStoreOptions struct {
	// MaxEntries bounds the number of records; when a new record would
	// exceed it, the least recently used record is evicted. Default 10,000
	// (MCP Fusion's bound).
	MaxEntries int
	// TTL is how long a record lives after it was last loaded or written
	// (a sliding expiry). Default one hour. Choose it longer than the
	// longest idle time of a live session: an expired record is gone, and
	// the session's workflow starts again from the initial state.
	TTL time.Duration
	// Now returns the current time; default time.Now. For tests.
	Now func() time.Time
}

// MemoryStore is a [Store] in process memory: bounded (LRU) with a sliding
// TTL. It suits stdio and single-instance servers; servers behind several
// instances need a shared store. The zero value is not usable; call
// [NewMemoryStore].
type MemoryStore struct {
	mu      sync.Mutex
	max     int
	ttl     time.Duration
	now     func() time.Time
	seq     uint64 // last version handed out, for every key: versions are never reused
	entries map[string]*list.Element
	lru     list.List // of *memEntry, most recently used at the front
}

type memEntry struct {
	key     string
	data    []byte
	version uint64
	expires time.Time
}

// NewMemoryStore returns an empty MemoryStore. opts may be nil.
func NewMemoryStore(opts *MemoryStoreOptions) *MemoryStore {
	var o MemoryStoreOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = 10_000
	}
	if o.TTL <= 0 {
		o.TTL = time.Hour
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &MemoryStore{max: o.MaxEntries, ttl: o.TTL, now: o.Now, entries: map[string]*list.Element{}}
}

// Load implements [Store]. A hit refreshes the record's expiry and makes it
// the most recently used.
func (s *MemoryStore) Load(_ context.Context, key string) ([]byte, uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	el, ok := s.entries[key]
	if !ok {
		return nil, 0, nil
	}
	e := el.Value.(*memEntry)
	now := s.now()
	if !now.Before(e.expires) {
		s.remove(el)
		return nil, 0, nil
	}
	e.expires = now.Add(s.ttl)
	s.lru.MoveToFront(el)
	return e.data, e.version, nil
}

// CompareAndSwap implements [Store].
func (s *MemoryStore) CompareAndSwap(_ context.Context, key string, old uint64, data []byte) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	el, ok := s.entries[key]
	if ok && !now.Before(el.Value.(*memEntry).expires) {
		s.remove(el)
		ok = false
	}
	var cur uint64
	if ok {
		cur = el.Value.(*memEntry).version
	}
	if cur != old {
		return 0, ErrConflict
	}
	s.seq++
	if ok {
		e := el.Value.(*memEntry)
		e.data, e.version, e.expires = data, s.seq, now.Add(s.ttl)
		s.lru.MoveToFront(el)
		return s.seq, nil
	}
	s.entries[key] = s.lru.PushFront(&memEntry{key: key, data: data, version: s.seq, expires: now.Add(s.ttl)})
	// The expiry is sliding, so the least recently used records are also
	// the first to expire: drop expired ones from the back, then evict.
	for s.lru.Len() > 0 {
		back := s.lru.Back()
		if s.lru.Len() <= s.max && now.Before(back.Value.(*memEntry).expires) {
			break
		}
		s.remove(back)
	}
	return s.seq, nil
}

// Delete implements [Store].
func (s *MemoryStore) Delete(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.entries[key]; ok {
		s.remove(el)
	}
	return nil
}

// Len returns the number of records held, expired ones not yet dropped
// included.
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lru.Len()
}

func (s *MemoryStore) remove(el *list.Element) {
	delete(s.entries, el.Value.(*memEntry).key)
	s.lru.Remove(el)
}
