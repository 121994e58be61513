// This file defines how the gate loads a workflow: the view of a decoded
// store record (delayed transitions applied), the start of new
// workflows, the caches of decoded records, and the Workflow accessors.

package mcpbind

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/chartgate/chartgate/internal/core"
	"github.com/chartgate/chartgate/statechart"
)

// view is a decoded workflow record. It is what a [ValueStore] holds of
// the workflow; it never changes once made (but for its caches).
type view struct {
	gate    *gateCore        // the gate that made it (another gate sharing the store decodes the record: its engine may not read state)
	key     string           // store key; "" for a session that has none yet
	state   statechart.State // after Advance
	rec     core.Record      // as loaded (rec.snap is older than state if Advance moved it)
	version uint64           // 0: no record
	// advanced: delayed transitions moved state since rec.snap was saved.
	advanced bool
	active   core.Bitset // active nodes of state
	sig      atomic.Pointer[sigCache]
}

// withKey returns a copy of v under another store key.
func (v *view) withKey(key string) *view {
	return &view{gate: v.gate, key: key, state: v.state, rec: v.rec, version: v.version, active: v.active, advanced: v.advanced}
}

// Size implements [Value]: the length of the record's encoding.
func (v *view) Size() int { return v.rec.Size() }

// Encode implements [Value]: the record's encoding, for [Store.Load].
func (v *view) Encode() []byte { return v.rec.Encode() }

// sigCache is the signature of a view under some rules (a view's state
// never changes, so neither does its signature).
type sigCache struct {
	rules *rules
	bits  core.Bitset
}

// snapshot returns the persisted form of v's state: the stored one unless
// delayed transitions moved it.
func (v *view) snapshot() ([]byte, error) {
	if !v.advanced && v.rec.Snap != nil {
		return v.rec.Snap, nil
	}
	return v.state.MarshalJSON()
}

// newView decodes a workflow state. A nil rec.snap is computed from s.
func (g *gateCore) newView(key string, s statechart.State, rec core.Record, version uint64) (*view, error) {
	if rec.Snap == nil {
		b, err := s.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("mcpbind: marshaling state: %w", err)
		}
		rec.Snap = b
	}
	v := &view{gate: g, key: key, state: s, rec: rec, version: version, active: core.NewBitset(len(g.nodes))}
	for _, id := range s.StateIDs() {
		if i, ok := g.byID[id]; ok {
			v.active.Set(i)
		}
	}
	return v, nil
}

// load returns the current state of a workflow. For a handle with no
// record it returns ErrUnknownWorkflow.
func (g *gateCore) load(ctx context.Context, t target) (*view, error) {
	key := g.storeKey(t)
	var sess *session
	if key == "" {
		key, sess = g.keyOf(t.ss)
	}
	var v *view
	if key == "" {
		v = g.initial
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
		case ver == 0 && (t.handle != "" || t.existing):
			return nil, ErrUnknownWorkflow
		case ver == 0 && saved:
			// Never silently restarted: the workflow had moved, and
			// whatever it had allowed once would be allowed again.
			return nil, ErrWorkflowExpired
		case ver == 0:
			v = g.initial.withKey(key)
		case own != nil:
			v = own
		default:
			if t.handle != "" {
				v = g.handled.get(key, ver)
			} else if c, ok := g.decoded.Load(key); ok && c.(*view).version == ver {
				v = c.(*view)
			}
			if v != nil {
				break
			}
			if v, err = g.decode(key, data, ver); err != nil {
				return nil, err
			}
			if sess != nil {
				// Only for sessions the gate will forget when they end.
				g.decoded.Store(key, v)
			} else if t.handle != "" {
				g.handled.put(key, v)
			}
		}
	}
	if v.version == 0 && g.initialTimers {
		// Delayed events of the initial state run from when the session
		// began, so the session needs its own initial state, saved.
		return g.startSession(ctx, t)
	}
	s, err := g.engine.Advance(ctx, v.state, g.now())
	if err != nil {
		g.log.Warn("mcpbind: delayed transition failed", "key", fingerprint(v.key), "error", err)
		return v, nil
	}
	if s != v.state {
		nv, err := g.newView(v.key, s, v.rec, v.version)
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
func (g *gateCore) startSession(ctx context.Context, t target) (*view, error) {
	key, sess := g.keyFor(t)
	v, err := g.create(ctx, key)
	if err == nil {
		if sess != nil {
			sess.saved.Store(true)
		}
		return v, nil
	}
	if !isConflict(err) {
		return nil, err
	}
	// Another request of the session saved it first.
	return g.fetchView(ctx, key)
}

// fetch loads the record under key: the gate's own view if the store
// holds it as a value, else its encoding; version 0 if there is none.
func (g *gateCore) fetch(ctx context.Context, key string) (own *view, data []byte, version uint64, err error) {
	var val Value
	if val, version, err = g.records.Load(ctx, key); val != nil {
		if own, _ = val.(*view); own == nil || own.gate != g {
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
func (g *gateCore) fetchView(ctx context.Context, key string) (*view, error) {
	own, data, ver, err := g.fetch(ctx, key)
	switch {
	case err != nil:
		return nil, err
	case ver == 0:
		return nil, fmt.Errorf("mcpbind: the workflow state of key %s vanished", fingerprint(key))
	case own != nil:
		return own, nil
	}
	return g.decode(key, data, ver)
}

// decode reads a stored record into a view.
func (g *gateCore) decode(key string, data []byte, ver uint64) (*view, error) {
	rec, err := core.DecodeRecord(data)
	if err != nil {
		return nil, err
	}
	s, err := g.engine.Restore(rec.Snap)
	if err := g.checkVersion(key, rec, err); err != nil {
		return nil, err
	}
	return g.newView(key, s, rec, ver)
}

// Workflow is [Gate.Workflow].
func (g *gateCore) Workflow(ctx context.Context, id string) (*Workflow, error) {
	if !validHandle(id) {
		return nil, fmt.Errorf("mcpbind: %q is not a workflow id: %w", id, ErrUnknownWorkflow)
	}
	return g.workflow(ctx, g.handleTarget(id))
}

func (g *gateCore) workflow(ctx context.Context, t target) (*Workflow, error) {
	v, err := g.load(ctx, t)
	if err != nil {
		return nil, err
	}
	return g.workflowOf(v), nil
}

// workflowOf describes a view.
func (g *gateCore) workflowOf(v *view) *Workflow {
	return &Workflow{Key: v.key, State: v.state, Limits: g.limits(v), History: core.DecodeHistory(v.rec.History, v.key), Pending: g.pendingOf(v), Snapshot: v}
}

// viewCache keeps the last decoded view of the most recently stored
// workflows named by handles, at most maxHandleViews of them (the oldest
// entry goes first): handles do not end in the process, so unlike the
// sessions' cache it must be bounded. The zero value is ready to use.
type viewCache struct {
	mu    sync.Mutex
	views map[string]*view
	ring  []string // keys in insertion order, circular
	next  int
}

const maxHandleViews = 4096

// get returns the cached view of key if it has version ver.
func (c *viewCache) get(key string, ver uint64) *view {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v := c.views[key]; v != nil && v.version == ver {
		return v
	}
	return nil
}

func (c *viewCache) put(key string, v *view) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.views == nil {
		c.views = map[string]*view{}
	}
	if _, ok := c.views[key]; !ok {
		if len(c.ring) < maxHandleViews {
			c.ring = append(c.ring, key)
		} else {
			delete(c.views, c.ring[c.next])
			c.ring[c.next] = key
			c.next = (c.next + 1) % maxHandleViews
		}
	}
	c.views[key] = v
}
