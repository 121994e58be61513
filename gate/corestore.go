// This file holds a gate's access to its store: the raw load and
// compare-and-swap of a workflow's record (as a value when the store
// holds values, else as bytes; without waiting for the disk when the
// caller allows it and the store can) and the retries, with backoff,
// of a write that lost a conflict.

package gate

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/chartgate/chartgate/internal/histrec"
)

// CoreOptions configures a [Core].
type CoreOptions struct {
	// Store holds the workflows' records. Default a new MemoryStore.
	Store Store
	// MaxRetries bounds the attempts of a write that loses conflicts.
	// Default 100.
	MaxRetries int
}

// Core is a gate's access to its store, shared by every step that reads
// or writes a workflow's record. It is safe for concurrent use.
type Core struct {
	store   Store
	values  ValueStore    // store, if it can hold records as values
	splits  histrec.Store // store, if it can keep histories apart
	retries int
}

// NewCore returns a Core for o (nil: the defaults).
func NewCore(o *CoreOptions) *Core {
	var c Core
	if o != nil {
		c.store, c.retries = o.Store, o.MaxRetries
	}
	if c.store == nil {
		c.store = NewMemoryStore(nil)
	}
	c.values, _ = c.store.(ValueStore)
	c.splits, _ = c.store.(histrec.Store)
	if c.retries <= 0 {
		c.retries = 100
	}
	return &c
}

// Store returns the store the Core writes to.
func (c *Core) Store() Store { return c.store }

// Values returns the store as a [ValueStore], or nil if it holds bytes
// only.
func (c *Core) Values() ValueStore { return c.values }

// MaxRetries returns the bound on the attempts of a write that loses
// conflicts.
func (c *Core) MaxRetries() int { return c.retries }

// Load reads the record under key: its value if the store holds values,
// else its encoding as [Bytes]; a nil Value and version 0 if there is
// none.
func (c *Core) Load(ctx context.Context, key string) (Value, uint64, error) {
	if c.values != nil {
		return c.values.LoadValue(ctx, key)
	}
	data, ver, err := c.store.Load(ctx, key)
	if err != nil || ver == 0 {
		return nil, ver, err
	}
	return Bytes(data), ver, nil
}

// Stamped is a record that takes the version it is stored under.
type Stamped interface {
	Value
	// Stamp records ver, the version the record is stored under, and
	// returns the record to store.
	Stamp(ver uint64) Value
}

// Swap writes v under key if the key's version is still old, and returns
// the new version, which it passes to v.Stamp first: for a store that
// holds values, before v is shared. A store that holds bytes gets v's
// encoding, or v split in head and history if both can (see package
// internal/histrec); with durable false, a [NoSyncStore] need not wait
// for the disk. On a conflict the error matches [ErrConflict].
func (c *Core) Swap(ctx context.Context, key string, old uint64, v Stamped, durable bool) (uint64, error) {
	if ms, ok := c.values.(*MemoryStore); ok {
		return ms.swap(key, old, v)
	}
	if c.values != nil {
		return c.values.CompareAndSwapValue(ctx, key, old, v.Stamp)
	}
	var ver uint64
	var err error
	sp, split := v.(histrec.Splitter)
	switch ns, nosync := c.store.(NoSyncStore); {
	case split && c.splits != nil:
		ver, err = c.splits.CompareAndSwapSplit(ctx, key, old, sp.Split(), durable)
	case nosync && !durable:
		ver, err = ns.CompareAndSwapNoSync(ctx, key, old, v.Encode())
	default:
		ver, err = c.store.CompareAndSwap(ctx, key, old, v.Encode())
	}
	if err == nil {
		v.Stamp(ver)
	}
	return ver, err
}

// Retry makes the attempts of a write until one does not lose a
// conflict: attempt reports whether its write lost one (its error then
// matches [ErrConflict]) and its error, which ends the retries
// otherwise. Between attempts Retry waits ([Backoff]) and calls reload,
// whose error ends them as it is. After MaxRetries+1 lost attempts it
// returns an error that matches ErrConflict.
func (c *Core) Retry(ctx context.Context, attempt func() (lost bool, err error), reload func() error) error {
	for n := 0; ; n++ {
		lost, err := attempt()
		if !lost {
			return err
		}
		if n >= c.retries {
			return fmt.Errorf("saving the workflow state: gave up after %d conflicts: %w", n+1, err)
		}
		Backoff(ctx, n)
		if err := reload(); err != nil {
			return err
		}
	}
}

// IsConflict reports whether err is a lost compare-and-swap
// ([ErrConflict]).
func IsConflict(err error) bool { return errors.Is(err, ErrConflict) }

// Backoff sleeps a little before the next attempt of a write that lost a
// conflict, more after each (attempt counts from 0), with jitter; it
// returns early when ctx ends.
func Backoff(ctx context.Context, attempt int) {
	d := 20 * time.Microsecond << min(attempt, 9)
	d = d/2 + rand.N(d)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
