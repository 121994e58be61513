// This file reserves a call's place in its workflow before the tool runs:
// the call is counted against the budgets of the active limited states,
// and a call that may send an event takes the workflow's lease, a hold
// kept in the store record so that it works across server instances.
//
// While a lease is live, no other call of the workflow that may send an
// event runs: it waits for the lease to be released (then it is authorized
// again against the new state) or to expire, up to Options.BusyWait, and is
// then refused with CodeWorkflowBusy. The holder renews the lease while
// its tool runs; if its instance dies, the lease expires after
// Options.LeaseTTL. Each lease has a random id, its fencing token: the
// holder's commit checks that the record still carries its lease. Calls of
// tools that send no event take no lease and never wait. A lease is
// written without waiting for the disk when the store can
// ([gate.NoSyncStore]): it acknowledges nothing, and the commit that
// releases it is synced. The lease on the workflow of a session that only
// this process can reach (localKey: a stdio session's) is held in the
// process and not written at all, so that a call that moves it writes the
// store once, at its commit.

package core

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/chartgate/chartgate/gate"
)

// holder is a call's hold on its workflow: the lease it took and the
// newest view of the record that carries it.
type holder struct {
	t   Target
	key string
	// lease is the lease taken, which the records saved with it point
	// to: its ID and Tool are the holder's (never changed).
	lease Lease
	// local: the holder holds its workflow's lease in this process (see
	// localKey), whether or not the record carries it too.
	local bool
	// taken is when the lease was taken (the clock of the process, for
	// the renewals' timers).
	taken time.Time
	// ctx is the context of the call, for the values of its renewals; set
	// by keepAlive.
	ctx context.Context
	// prev and next link the holder into its gate's renewals while it
	// waits for its first renewal (guarded by the renewals' mutex).
	prev, next *holder
	listed     bool

	mu    sync.Mutex
	view  *View       // the newest record saved or loaded with the lease
	timer *time.Timer // the next renewal, once the first is due
	done  bool        // the call has finished: no more renewals
	ended time.Time   // when done was set
	lost  bool        // the lease was lost (expired and taken, or the record vanished)

	afterRun AfterRun // the context of the call's commit, allocated with the holder
	// tr is the transition the call's commit saved, if any (Committed.Tr
	// points to it), allocated with the holder.
	tr gate.Transition
	// idBytes hold the lease's ID, allocated with the holder, when it
	// fits; never changed once the ID is set.
	idBytes [24]byte
}

// latest returns the newest view of the holder's record.
func (h *holder) latest() *View {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.view
}

// ReserveCall saves what a call takes from its workflow before its tool runs:
// a count against active budgets and, for a call that may send an event,
// the lease. It returns the view as saved and the holder of the lease
// (nil if the call takes none), or a verdict if, once the workflow was
// free, the call was no longer allowed.
func (g *Core) ReserveCall(ctx context.Context, c *Call, v *View) (*View, *holder, *Verdict, error) {
	serial := c.serialised()
	if !serial && !g.counts(ctx, c, v) {
		return v, nil, nil, nil
	}
	key, _ := g.keyFor(c.Target)
	start := g.processTime(c)
	deadline := start.Add(g.busyWait)
	for attempt := 0; ; attempt++ {
		if v.Key != key {
			v = v.withKey(key)
		}
		if serial && (v.Rec.Lease.Live(g.callTime(c)) || g.heldLocally(key)) {
			var vd *Verdict
			var err error
			if v, vd, err = g.awaitLease(ctx, c, key, v, deadline); vd != nil || err != nil {
				return nil, nil, vd, err
			}
			continue
		}
		snap, err := v.snapshot() // with the delayed transitions since it was saved
		if err != nil {
			return nil, nil, nil, fmt.Errorf("marshaling the state: %w", err)
		}
		rec := Record{Snap: snap, Calls: v.Rec.Calls, History: v.Rec.History, Lease: v.Rec.Lease, Jobs: v.Rec.Jobs, hist: v.Rec.hist}
		counted := g.counts(ctx, c, v)
		if counted {
			rec.Calls = make(map[string]int, len(v.Rec.Calls)+1)
			for id, n := range v.Rec.Calls {
				rec.Calls[id] = n
			}
			for _, l := range g.Limits(v) {
				rec.Calls[l.StateID] = l.Calls + 1
			}
		}
		var h *holder
		if serial {
			taken := start
			if attempt > 0 {
				taken = time.Now() // after a wait for the workflow
			}
			h = &holder{t: c.Target, key: key, taken: taken}
			h.lease = Lease{ID: g.newLeaseIDIn(h.idBytes[:]), Tool: c.Name, Until: g.callTime(c).Add(g.leaseTTL)}
			rec.Lease = &h.lease // one allocation; a lease is never changed
			if g.localKey(key) {
				if !g.leases.takeLocal(h, g.abandonAfter()) {
					continue // taken since the check above: wait for it
				}
				h.local = true
				if !counted && g.current(key, v) {
					// Nothing to save: the lease is this process' alone.
					nv := &View{gate: g, Key: key, State: v.State, Rec: rec, Version: v.Version, Active: v.Active, advanced: v.advanced}
					h.view = nv
					return nv, h, nil, nil
				}
			}
		}
		// A write that only takes the lease acknowledges nothing: it need
		// not wait for the disk (the commit that ends the call does).
		nv, err := g.saveDurable(ctx, c.Target, v, v.State, rec, !serial || counted)
		if err == nil {
			if h != nil {
				h.view = nv
			}
			return nv, h, nil, nil
		}
		if h != nil {
			g.leases.release(h)
		}
		if !gate.IsConflict(err) {
			return nil, nil, nil, err
		}
		switch {
		case serial && time.Now().After(deadline):
			// Every conflict of a call that takes the lease is another
			// call's save (a lease taken, a step committed): the workflow
			// moves, so the wait is bounded by BusyWait, as a wait for a
			// lease is, not by the retries.
			return nil, nil, g.refuseBusy(ctx, c, v), nil
		case !serial && attempt >= g.retries:
			return nil, nil, nil, fmt.Errorf("reserving the call: gave up after %d conflicts: %w", attempt+1, err)
		}
		wait := attempt
		if serial {
			wait = min(attempt, 3) // later losers are not pushed to the back of the queue
		}
		backoff(ctx, wait)
		c.now = time.Time{} // it waited
		if v, err = g.Load(ctx, c.Target); err != nil {
			vd, err := g.LoadFailed(ctx, c, err)
			return nil, nil, &Verdict{Answer: vd, Err: err}, nil
		}
		if vd := g.authorize(ctx, c, v); vd != nil {
			return nil, nil, vd, nil
		}
	}
}

// counts reports whether a call is counted against the budgets of the
// active limited states: some are active, none is used up (a call that
// runs past a used-up budget leaves its state), and the server has the
// tool (calls of names it does not have are not counted).
func (g *Core) counts(ctx context.Context, c *Call, v *View) bool {
	if c.Kind != CallTool {
		return false // the workflow tools do not count
	}
	lims := g.Limits(v)
	if len(lims) == 0 || len(usedUp(lims)) > 0 {
		return false
	}
	if c.Door == nil {
		return true // a caller outside MCP reports a tool that ran
	}
	tools, err := g.ToolNames(ctx, c)
	return err != nil || slices.Contains(tools, c.Name)
}

// awaitLease waits until the lease on a workflow is released or expires,
// then returns the workflow's newest state, if the call is still allowed
// there. Past the deadline it refuses the call with CodeWorkflowBusy.
func (g *Core) awaitLease(ctx context.Context, c *Call, key string, v *View, deadline time.Time) (*View, *Verdict, error) {
	for i := 0; ; i++ {
		w := g.leases.watch(key) // before the check, so that no release is missed
		l := v.Rec.Lease
		now := g.Now()
		local := g.heldLocally(key)
		if !l.Live(now) && !local {
			g.leases.unwatch(key, w)
			return v, nil, nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			g.leases.unwatch(key, w)
			return nil, g.refuseBusy(ctx, c, v), nil
		}
		// A release in this process wakes the call at once; a lease held
		// by another instance is polled, more slowly each time.
		wait := min(time.Millisecond<<min(i, 6), left)
		if l.Live(now) && !local {
			wait = min(wait, l.Until.Sub(now))
		}
		t := time.NewTimer(wait)
		select {
		case <-w:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
		g.leases.unwatch(key, w)
		c.now = time.Time{} // it waited
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		var err error
		if v, err = g.Load(ctx, c.Target); err != nil {
			res, err := g.LoadFailed(ctx, c, err)
			return nil, &Verdict{Answer: res, Err: err}, nil
		}
		if vd := g.authorize(ctx, c, v); vd != nil {
			return nil, vd, nil
		}
	}
}

// keepAlive renews a holder's lease every third of Options.LeaseTTL while
// the call runs, until the holder's stopRenewals. Most calls end well
// before their first renewal is due: the holder only joins the gate's
// renewals, whose one timer starts the renewals of the calls that run
// that long.
func (g *Core) keepAlive(ctx context.Context, h *holder) {
	if h.local {
		return // held in this process, for as long as the call runs
	}
	h.ctx = ctx
	g.renewals.add(g, h)
}

// stopRenewals stops the renewals keepAlive started.
func (g *Core) stopRenewals(h *holder) {
	g.renewals.remove(h)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.done, h.ended = true, time.Now()
	if h.timer != nil {
		h.timer.Stop()
	}
}

// renewals are the holders of a gate whose first renewal is not due yet,
// in the order they took their leases, and the timer that starts the
// renewals of those whose first one comes due. The zero value is ready to
// use.
type renewals struct {
	mu         sync.Mutex
	head, tail *holder
	timer      *time.Timer // made at the first add
	armed      bool        // the timer will fire
}

// add lists a holder, and arms the timer for it if it is not armed.
func (r *renewals) add(g *Core, h *holder) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h.prev, h.next, h.listed = r.tail, nil, true
	if r.tail != nil {
		r.tail.next = h
	} else {
		r.head = h
	}
	r.tail = h
	if !r.armed {
		r.arm(g, time.Until(h.taken.Add(g.leaseTTL/3)))
	}
}

// arm sets the timer to fire after d. r.mu is held.
func (r *renewals) arm(g *Core, d time.Duration) {
	r.armed = true
	if r.timer == nil {
		r.timer = time.AfterFunc(d, func() { r.due(g) })
	} else {
		r.timer.Reset(d)
	}
}

// remove unlists a holder, if it is listed.
func (r *renewals) remove(h *holder) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !h.listed {
		return
	}
	if h.prev != nil {
		h.prev.next = h.next
	} else {
		r.head = h.next
	}
	if h.next != nil {
		h.next.prev = h.prev
	} else {
		r.tail = h.prev
	}
	h.prev, h.next, h.listed = nil, nil, false
}

// due starts the renewals of the listed holders whose first renewal is
// due (each then renews on its own timer), and arms the timer for the
// next one.
func (r *renewals) due(g *Core) {
	every := g.leaseTTL / 3
	r.mu.Lock()
	defer r.mu.Unlock()
	r.armed = false
	now := time.Now()
	for h := r.head; h != nil; h = r.head {
		if at := h.taken.Add(every); at.After(now) {
			r.arm(g, at.Sub(now))
			return
		}
		r.head = h.next
		if r.head != nil {
			r.head.prev = nil
		} else {
			r.tail = nil
		}
		h.prev, h.next, h.listed = nil, nil, false
		go g.renew(context.WithoutCancel(h.ctx), h, every)
	}
}

// renew extends a holder's lease, and schedules the next renewal.
func (g *Core) renew(base context.Context, h *holder, every time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done || h.lost {
		return
	}
	ctx, cancel := context.WithTimeout(base, g.Timeout)
	defer cancel()
	cur := h.view
	for attempt := 0; attempt < 10; attempt++ {
		if cur.Rec.Lease == nil || cur.Rec.Lease.ID != h.lease.ID {
			h.lost = true
			g.Log.Warn("mcpbind: a call lost its hold on the workflow while its tool ran (the lease expired and another call took it)",
				"key", Fingerprint(h.key), "tool", h.lease.Tool)
			return
		}
		rec := cur.Rec
		l := *cur.Rec.Lease
		l.Until = g.Now().Add(g.leaseTTL)
		rec.Lease = &l
		nv, err := g.saveDurable(ctx, h.t, cur, cur.State, rec, false) // a lease, as reserve's
		if err == nil {
			h.view = nv
			break
		}
		if !gate.IsConflict(err) {
			g.Log.Warn("mcpbind: renewing a call's hold on the workflow", "key", Fingerprint(h.key), "tool", h.lease.Tool, "error", err)
			break // try again at the next renewal
		}
		if cur, err = g.Load(ctx, h.t); err != nil {
			h.lost = true
			g.Log.Warn("mcpbind: the workflow of a running call vanished", "key", Fingerprint(h.key), "tool", h.lease.Tool, "error", err)
			return
		}
	}
	h.timer = time.AfterFunc(every, func() { g.renew(base, h, every) })
}

// newLeaseID returns a lease id no other lease of any instance has: the
// gate's random instance id and a count. (It is a fencing token, not a
// secret: only what can write the store sees it.)
func (g *Core) newLeaseID() string { return g.newLeaseIDIn(nil) }

// newLeaseIDIn is newLeaseID, its bytes in dst if they fit: dst is not
// changed again while the id is in use.
func (g *Core) newLeaseIDIn(dst []byte) string {
	var buf [64]byte
	b := append(append(buf[:0], g.instance...), '.')
	b = strconv.AppendUint(b, g.seq.Add(1), 36)
	if len(b) > len(dst) {
		return string(b)
	}
	n := copy(dst, b)
	return unsafe.String(&dst[0], n)
}

// leaseWatchers lets calls waiting for a workflow's lease in this process
// be woken when a call of this process releases it. The zero value is
// ready to use.
type leaseWatchers struct {
	mu sync.Mutex
	m  map[string]*leaseWatch
	// local holds the holders of the leases on workflows of localKey
	// keys, by key: this process' calls are the only ones that may move
	// those, and this map orders them.
	local map[string]*holder
}

type leaseWatch struct {
	ch chan struct{}
	n  int // waiters
}

// watch returns a channel closed at the next release of key's lease.
func (lw *leaseWatchers) watch(key string) chan struct{} {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.m == nil {
		lw.m = map[string]*leaseWatch{}
	}
	w := lw.m[key]
	if w == nil {
		w = &leaseWatch{ch: make(chan struct{})}
		lw.m[key] = w
	}
	w.n++
	return w.ch
}

// unwatch ends a watch of key.
func (lw *leaseWatchers) unwatch(key string, ch chan struct{}) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if w := lw.m[key]; w != nil && w.ch == ch {
		if w.n--; w.n == 0 {
			delete(lw.m, key)
		}
	}
}

// release ends h's lease in this process, if it holds it, and wakes the
// calls waiting for the lease of h's workflow.
func (lw *leaseWatchers) release(h *holder) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if h.local && lw.local[h.key] == h {
		delete(lw.local, h.key)
	}
	if w := lw.m[h.key]; w != nil {
		close(w.ch)
		delete(lw.m, h.key)
	}
}

// takeLocal gives h the lease of its workflow in this process, unless
// another holder has it (one abandoned for abandon counts as none).
func (lw *leaseWatchers) takeLocal(h *holder, abandon time.Duration) bool {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if o := lw.local[h.key]; o != nil && !o.abandoned(abandon) {
		return false
	}
	if lw.local == nil {
		lw.local = map[string]*holder{}
	}
	lw.local[h.key] = h
	return true
}

// heldLocally reports whether a call of this process holds the lease of
// key's workflow in the process (and has not abandoned it).
func (g *Core) heldLocally(key string) bool {
	lw := &g.leases
	lw.mu.Lock()
	defer lw.mu.Unlock()
	h := lw.local[key]
	return h != nil && !h.abandoned(g.abandonAfter())
}

// holdsLocally reports whether h holds its workflow's lease in this
// process.
func (lw *leaseWatchers) holdsLocally(h *holder) bool {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return h.local && lw.local[h.key] == h
}

// abandonAfter is how long after its tool ended a call that holds a lease
// in the process and has not committed is taken to have abandoned it (its
// commit, which the tool's end starts at once, is bounded by
// Options.StoreTimeout): a tool that panicked through a recovering
// middleware, which skipped the commit. A lease in the store expires
// after LeaseTTL in that case.
func (g *Core) abandonAfter() time.Duration { return g.leaseTTL + g.Timeout }

// abandoned reports whether h's tool ended more than d ago.
func (h *holder) abandoned(d time.Duration) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.done && time.Since(h.ended) > d
}

// localKey reports whether the workflow stored under key is one only
// this process' calls may move, so that its lease need not be written to
// the store: the workflow of a session without an id (stdio) of this
// gate, whose key no other instance or process has (their keys carry
// their own instance id, and a Ref cannot name it), when the gate holds
// such leases in the process (localLeases: a machine without jobs, which
// would send events to it from outside the session, and a store of
// encoded records that never expire).
func (g *Core) localKey(key string) bool {
	if !g.localLeases {
		return false
	}
	rest, ok := strings.CutPrefix(key, g.prefix+"local:")
	return ok && len(rest) > len(g.instance) && rest[:len(g.instance)] == g.instance && rest[len(g.instance)] == ':'
}

// current reports whether v is the newest record of key's workflow that
// this process saved or loaded: for a localKey, whose every save this
// process makes, the record in the store.
func (g *Core) current(key string, v *View) bool {
	c, ok := g.decoded.Load(key)
	return ok && c.(*View).Version == v.Version
}
