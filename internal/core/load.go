// This file defines how the gate loads a workflow: the view of a decoded
// store record (delayed transitions applied), the start of new
// workflows, the caches of decoded records, and the Workflow accessors.

package core

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/statechart"
)

// View is a decoded workflow record. It is what a [ValueStore] holds of
// the workflow; it never changes once made (but for its caches).
type View struct {
	gate    *Core            // the gate that made it (another gate sharing the store decodes the record: its engine may not read state)
	Key     string           // store key; "" for a session that has none yet
	State   statechart.State // after Advance
	Rec     Record           // as loaded (rec.snap is older than state if Advance moved it)
	Version uint64           // 0: no record
	// advanced: delayed transitions moved state since rec.snap was saved.
	advanced bool
	Active   Bitset // active nodes of state
	Sig      atomic.Pointer[SigCache]
}

// withKey returns a copy of v under another store key.
func (v *View) withKey(key string) *View {
	return &View{gate: v.gate, Key: key, State: v.State, Rec: v.Rec, Version: v.Version, Active: v.Active, advanced: v.advanced}
}

// Size implements [Value]: the length of the record's encoding.
func (v *View) Size() int { return v.Rec.Size() }

// Encode implements [Value]: the record's encoding, for [Store.Load].
func (v *View) Encode() []byte { return v.Rec.Encode() }

// SigCache is the signature of a view under some rules (a view's state
// never changes, so neither does its signature).
type SigCache struct {
	Rules *Rules
	Bits  Bitset
}

// snapshot returns the persisted form of v's state: the stored one unless
// delayed transitions moved it.
func (v *View) snapshot() ([]byte, error) {
	if !v.advanced && v.Rec.Snap != nil {
		return v.Rec.Snap, nil
	}
	return v.State.MarshalJSON()
}

// NewView decodes a workflow state. A nil rec.snap is computed from s.
func (g *Core) NewView(key string, s statechart.State, rec Record, version uint64) (*View, error) {
	if rec.Snap == nil {
		b, err := s.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("mcpbind: marshaling state: %w", err)
		}
		rec.Snap = b
	}
	v := &View{gate: g, Key: key, State: s, Rec: rec, Version: version, Active: NewBitset(len(g.Nodes))}
	for _, id := range s.StateIDs() {
		if i, ok := g.byID[id]; ok {
			v.Active.Set(i)
		}
	}
	return v, nil
}

// Load returns the current state of a workflow. For a handle with no
// record it returns ErrUnknownWorkflow.
func (g *Core) Load(ctx context.Context, t Target) (*View, error) {
	return g.LoadAt(ctx, t, g.Now())
}

// LoadAt is Load at the time now (Core.Now's), as a call's steps read it
// once.
func (g *Core) LoadAt(ctx context.Context, t Target, now time.Time) (*View, error) {
	key := g.storeKey(t)
	var sess *session
	if key == "" {
		key, sess = g.keyOf(t.Ss)
	}
	var v *View
	if key == "" {
		v = g.Initial
	} else {
		// Whether the session had saved is read before the record: a save
		// of a concurrent call that lands after the read below began is
		// not a record that vanished (that call's save conflicts with
		// this one's, which then loads again).
		saved := sess != nil && sess.saved.Load()
		own, data, ver, err := g.fetch(ctx, key)
		if err != nil {
			return nil, err
		}
		switch {
		case ver == 0 && (t.Handle != "" || t.existing):
			return nil, gate.ErrUnknownWorkflow
		case ver == 0 && saved:
			// Never silently restarted: the workflow had moved, and
			// whatever it had allowed once would be allowed again.
			return nil, gate.ErrWorkflowExpired
		case ver == 0:
			v = g.Initial.withKey(key)
		case own != nil:
			v = own
		default:
			if t.Handle != "" {
				v = g.handled.Get(key, ver)
			} else if c, ok := g.decoded.Load(key); ok && c.(*View).Version == ver {
				v = c.(*View)
			}
			if v != nil {
				break
			}
			if v, err = g.decode(key, data, ver); err != nil {
				return nil, err
			}
			if sess != nil {
				// Only for sessions the gate will forget when they end.
				g.cacheDecoded(key, v)
			} else if t.Handle != "" {
				g.handled.Put(key, v)
			}
		}
	}
	if v.Version == 0 && g.initialTimers {
		// Delayed events of the initial state run from when the session
		// began, so the session needs its own initial state, saved.
		return g.startSession(ctx, t)
	}
	return g.advance(ctx, v, now)
}

// loadCall returns the state of the workflow a call is for, as Load
// does, and whether it was taken from this process' cache without asking
// the store: then it is the last record this process saved or decoded of
// the workflow, which is current only if no other writer (another call of
// this process, another process or instance on the store) saved one
// since. That is the case for a call through a front door that may send
// an event (gate.Do takes it on to Reserve): the lease it takes is a
// compare-and-swap against the cached version, which succeeds only if
// that is still the record's version, and versions are never reused for
// a key, so that the record is the one cached; on a conflict
// ReserveCall loads the record and authorizes the call again. A caller
// that acts on a cached view otherwise (a refusal) loads it first.
// Stores that hold values are read as cheaply as the cache: they are
// always read.
func (g *Core) loadCall(ctx context.Context, c *Call) (v *View, cached bool, err error) {
	if g.values == nil && c.Door != nil && c.serialised() {
		if v := g.cachedView(c.Target); v != nil {
			v, err := g.advance(ctx, v, c.now)
			return v, err == nil, err
		}
	}
	v, err = g.LoadAt(ctx, c.Target, c.now)
	return v, false, err
}

// cachedView returns the view this process last saved or decoded of the
// workflow t names, if it keeps one: that of a session's workflow or of
// a handle's.
func (g *Core) cachedView(t Target) *View {
	key := g.storeKey(t)
	if t.Handle != "" {
		return g.handled.Latest(key)
	}
	if key != "" {
		return nil // a name's: not cached
	}
	key, sess := g.keyOf(t.Ss)
	if sess == nil || key == "" {
		return nil
	}
	if c, ok := g.decoded.Load(key); ok && c.(*View).Version != 0 {
		return c.(*View)
	}
	return nil
}

// cacheDecoded keeps v as the last record of a session's workflow this
// process saved or decoded, unless it keeps a newer one: a load that
// read the record before a concurrent save does not put back the older
// record (see current, which trusts this cache for keys that only this
// process writes).
func (g *Core) cacheDecoded(key string, v *View) {
	for {
		old, loaded := g.decoded.LoadOrStore(key, v)
		if !loaded || old == v || old.(*View).Version > v.Version || g.decoded.CompareAndSwap(key, old, v) {
			return
		}
	}
}

// advance applies to v the delayed transitions due at now since it was
// saved.
func (g *Core) advance(ctx context.Context, v *View, now time.Time) (*View, error) {
	s, err := g.engine.Advance(ctx, v.State, now)
	if err != nil {
		g.Log.Warn("mcpbind: delayed transition failed", "key", Fingerprint(v.Key), "error", err)
		return v, nil
	}
	if s != v.State {
		nv, err := g.NewView(v.Key, s, v.Rec, v.Version)
		if err != nil {
			return nil, err
		}
		nv.advanced = true
		return nv, nil
	}
	return v, nil
}

// startSession saves a fresh initial state for a session, or a named
// workflow (machines whose initial state schedules delayed events).
func (g *Core) startSession(ctx context.Context, t Target) (*View, error) {
	key, sess := g.keyFor(t)
	v, err := g.Create(ctx, key)
	if err == nil {
		if sess != nil {
			sess.saved.Store(true)
		}
		return v, nil
	}
	if !gate.IsConflict(err) {
		return nil, err
	}
	// Another request of the session saved it first.
	return g.fetchView(ctx, key)
}

// fetch loads the record under key: the gate's own view if the store
// holds it as a value, else its encoding; version 0 if there is none.
func (g *Core) fetch(ctx context.Context, key string) (own *View, data []byte, version uint64, err error) {
	var val gate.Value
	if val, version, err = g.records.Load(ctx, key); val != nil {
		if own, _ = val.(*View); own == nil || own.gate != g {
			own, data = nil, val.Encode() // written as bytes, or by another gate
		}
	}
	if err != nil {
		return nil, nil, 0, fmt.Errorf("mcpbind: loading the workflow state: %w", err)
	}
	return own, data, version, nil
}

// fetchView returns the view of the record under key, which must have
// one.
func (g *Core) fetchView(ctx context.Context, key string) (*View, error) {
	own, data, ver, err := g.fetch(ctx, key)
	switch {
	case err != nil:
		return nil, err
	case ver == 0:
		return nil, fmt.Errorf("mcpbind: the workflow state of key %s vanished", Fingerprint(key))
	case own != nil:
		return own, nil
	}
	return g.decode(key, data, ver)
}

// decode reads a stored record into a view.
func (g *Core) decode(key string, data []byte, ver uint64) (*View, error) {
	rec, err := DecodeRecord(data)
	if err != nil {
		return nil, err
	}
	s, err := g.engine.Restore(rec.Snap)
	if err := g.checkVersion(key, rec, err); err != nil {
		return nil, err
	}
	return g.NewView(key, s, rec, ver)
}

// Workflow implements mcpbind's Gate.Workflow.
func (g *Core) Workflow(ctx context.Context, id string) (*gate.Workflow, error) {
	if !ValidHandle(id) {
		return nil, fmt.Errorf("mcpbind: %q is not a workflow id: %w", id, gate.ErrUnknownWorkflow)
	}
	return g.WorkflowAt(ctx, g.handleTarget(id))
}

// WorkflowAt returns the workflow at t as callers read it.
func (g *Core) WorkflowAt(ctx context.Context, t Target) (*gate.Workflow, error) {
	v, err := g.Load(ctx, t)
	if err != nil {
		return nil, err
	}
	return g.WorkflowOfView(v), nil
}

// WorkflowOfView describes a view.
func (g *Core) WorkflowOfView(v *View) *gate.Workflow {
	return &gate.Workflow{Key: v.Key, State: v.State, Limits: g.Limits(v), History: DecodeHistory(v.Rec.History, v.Key), Pending: g.PendingOf(v), Snapshot: v}
}

// ViewCache keeps the last decoded view of the most recently stored
// workflows named by handles, at most maxHandleViews of them (the oldest
// entry goes first): handles do not end in the process, so unlike the
// sessions' cache it must be bounded. The zero value is ready to use.
type ViewCache struct {
	mu    sync.Mutex
	Views map[string]*View
	ring  []string // keys in insertion order, circular
	next  int
}

const MaxHandleViews = 4096

// Get returns the cached view of key if it has version ver.
func (c *ViewCache) Get(key string, ver uint64) *View {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v := c.Views[key]; v != nil && v.Version == ver {
		return v
	}
	return nil
}

// Latest returns the cached view of key, whatever its version, or nil.
func (c *ViewCache) Latest(key string) *View {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v := c.Views[key]; v != nil && v.Version != 0 {
		return v
	}
	return nil
}

// Put keeps v as the last decoded record of key.
func (c *ViewCache) Put(key string, v *View) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.Views == nil {
		c.Views = map[string]*View{}
	}
	if _, ok := c.Views[key]; !ok {
		if len(c.ring) < MaxHandleViews {
			c.ring = append(c.ring, key)
		} else {
			delete(c.Views, c.ring[c.next])
			c.ring[c.next] = key
			c.next = (c.next + 1) % MaxHandleViews
		}
	}
	c.Views[key] = v
}
