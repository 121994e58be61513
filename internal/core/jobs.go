// This file defines the jobs of a gate: the promise children that the
// states of a workflow invoke, which the gate runs off the request
// goroutine, claims in the workflow's record with a lease (so that another
// instance resumes them if this one dies), and whose results it sends back
// to the workflow through the steps of a call: load, reserve, commit,
// notify.

package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/statechart"
)

// jobSpec is an active promise child of a workflow state that the gate
// can run: its logic is a Go [statechart.Promise].
type jobSpec struct {
	session, id, src string
	logic            statechart.Promise
	input            any
}

// wantedJobs returns the jobs a state asks for: its active promise
// children with Go logic, those of its child machines included, in the
// order of the snapshot's children.
func wantedJobs(s statechart.State) []jobSpec {
	snap, ok := s.(*statechart.Snapshot)
	if !ok {
		return nil
	}
	var out []jobSpec
	var walk func(*statechart.Snapshot)
	walk = func(snap *statechart.Snapshot) {
		for _, c := range snap.Children() {
			if c.Status != statechart.StatusActive {
				continue
			}
			if c.Snapshot != nil {
				walk(c.Snapshot)
				continue
			}
			if p, ok := c.Logic.(statechart.Promise); ok && p != nil {
				out = append(out, jobSpec{session: c.Session, id: c.ID, src: c.Src, logic: p, input: c.Input})
			}
		}
	}
	walk(snap)
	return out
}

// wantsJob reports whether a state still runs the job of a child session.
func wantsJob(s statechart.State, session string) bool {
	return slices.ContainsFunc(wantedJobs(s), func(w jobSpec) bool { return w.session == session })
}

func leaseIndex(leases []JobLease, session string) int {
	return slices.IndexFunc(leases, func(l JobLease) bool { return l.Session == session })
}

// jobStart is a job that a save claimed, to be started once the save
// succeeded.
type jobStart struct {
	spec  jobSpec
	claim string
}

// planJobs returns the job leases of a record whose state is s, from the
// leases of the record it replaces: the leases of the jobs s still runs
// are kept, the others dropped, and each job that has no live lease (a new
// child, or one whose instance died) is claimed by this gate, to be
// started if the save succeeds. A closed gate claims nothing.
func (g *Core) planJobs(leases []JobLease, s statechart.State) ([]JobLease, []jobStart) {
	if g.jobs == nil {
		return leases, nil
	}
	want := wantedJobs(s)
	if len(want) == 0 {
		return nil, nil
	}
	now, closed := g.Now(), g.jobs.isClosed()
	out := make([]JobLease, 0, len(want))
	var starts []jobStart
	for _, w := range want {
		if i := leaseIndex(leases, w.session); i >= 0 && (closed || now.Before(leases[i].Until)) {
			out = append(out, leases[i])
			continue
		}
		if closed {
			continue
		}
		l := JobLease{Session: w.session, ID: g.newLeaseID(), Until: now.Add(g.leaseTTL)}
		out = append(out, l)
		starts = append(starts, jobStart{spec: w, claim: l.ID})
	}
	return out, starts
}

// jobRunner holds the jobs running in a gate.
type jobRunner struct {
	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	closed  bool
	running map[string]map[*job]struct{} // by store key
}

func (r *jobRunner) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// job is one job running in this gate.
type job struct {
	jobSpec
	key    string
	claim  string // the ID of its lease
	ctx    context.Context
	cancel context.CancelFunc
	poke   chan struct{} // the workflow was saved: check that the job should still run
}

// jobsSaved is called after the gate saved a record under key: it starts the
// jobs the save claimed, and asks the other jobs of the workflow running
// here to check that they still should (the state may have stopped their
// child).
func (g *Core) jobsSaved(key string, starts []jobStart) {
	r := g.jobs
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for j := range r.running[key] {
		select {
		case j.poke <- struct{}{}:
		default:
		}
	}
	if r.closed || len(starts) == 0 {
		return
	}
	set := r.running[key]
	if set == nil {
		set = map[*job]struct{}{}
		r.running[key] = set
	}
	for _, s := range starts {
		ctx, cancel := context.WithCancel(r.ctx)
		j := &job{jobSpec: s.spec, key: key, claim: s.claim, ctx: ctx, cancel: cancel, poke: make(chan struct{}, 1)}
		set[j] = struct{}{}
		r.wg.Add(1)
		go g.runJob(j)
	}
}

// pokeJobs asks the jobs of a workflow running here to check that they
// still should.
func (g *Core) pokeJobs(key string) { g.jobsSaved(key, nil) }

// jobOutcome is what a job's function returned.
type jobOutcome struct {
	out any
	err error
}

// runJob runs a job: its function in its own goroutine, while this one
// renews the job's lease every third of LeaseTTL and checks, when the
// workflow is saved, that the job should still run. The function's result
// is sent to the workflow, unless the job was cancelled meanwhile: its
// child was stopped, another instance took it over, or the gate closed.
func (g *Core) runJob(j *job) {
	r := g.jobs
	defer r.wg.Done()
	defer func() {
		j.cancel()
		r.mu.Lock()
		if set := r.running[j.key]; set != nil {
			delete(set, j)
			if len(set) == 0 {
				delete(r.running, j.key)
			}
		}
		r.mu.Unlock()
	}()
	done := make(chan jobOutcome, 1)
	go func() {
		out, err := callPromise(j.ctx, j.logic, j.input)
		done <- jobOutcome{out, err}
	}()
	tick := time.NewTicker(max(g.leaseTTL/3, time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case o := <-done:
			if j.ctx.Err() == nil {
				g.deliverJob(j, o)
			}
			return
		case <-tick.C:
			g.tendJob(j, true)
		case <-j.poke:
			g.tendJob(j, false)
		case <-j.ctx.Done():
			<-done // the function returns when its ctx is cancelled; its result is dropped
			return
		}
	}
}

// callPromise calls a job's function; a panic becomes its error.
func callPromise(ctx context.Context, p statechart.Promise, input any) (out any, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("the job panicked: %v", v)
		}
	}()
	return p(ctx, input)
}

// jobTarget is the target of the workflow stored under key, for a job:
// a workflow that no longer has a record is not started again.
func (g *Core) jobTarget(key string) Target {
	t := Target{Key: key, existing: true}
	if id, ok := strings.CutPrefix(key, g.prefix+"wf:"); ok {
		t.Handle = id
	}
	return t
}

// tendJob checks that a job should still run: its workflow still runs its
// child, and its lease is still this job's. If not, the job is cancelled.
// With renew, it also extends the lease.
func (g *Core) tendJob(j *job, renew bool) {
	ctx, cancel := context.WithTimeout(g.jobs.ctx, g.Timeout)
	defer cancel()
	t := g.jobTarget(j.key)
	for attempt := 0; attempt <= g.retries; attempt++ {
		v, err := g.Load(ctx, t)
		if errors.Is(err, gate.ErrUnknownWorkflow) {
			j.cancel() // the workflow is gone
			return
		}
		if err != nil {
			if j.ctx.Err() == nil {
				g.Log.Warn("mcpbind: checking a job", "key", Fingerprint(j.key), "src", j.src, "error", err)
			}
			return // try again at the next renewal
		}
		i := leaseIndex(v.Rec.Jobs, j.session)
		if i < 0 || v.Rec.Jobs[i].ID != j.claim || !wantsJob(v.State, j.session) {
			j.cancel() // its child was stopped, or another instance took it over
			return
		}
		if !renew {
			return
		}
		snap, err := v.snapshot()
		if err != nil {
			return
		}
		rec := v.Rec
		rec.Snap = snap
		rec.Jobs = slices.Clone(v.Rec.Jobs)
		rec.Jobs[i].Until = g.Now().Add(g.leaseTTL)
		if _, err = g.Save(ctx, t, v, v.State, rec); err == nil {
			return
		}
		if !gate.IsConflict(err) {
			if j.ctx.Err() == nil {
				g.Log.Warn("mcpbind: renewing a job's lease", "key", Fingerprint(j.key), "src", j.src, "error", err)
			}
			return
		}
		backoff(ctx, attempt)
	}
}

// deliverJob sends a job's result to its workflow, as Send sends an
// event: it waits for a call that holds the workflow, and the done (or
// error) event is processed, saved with compare-and-swap and retried on
// conflict, kept in the run history (By "actor:<id>"), logged, passed to
// OnTransition, and the sessions of this process whose workflow it is get
// list_changed if their tools changed. A result for a child that no
// longer runs (stopped, or already delivered by another instance that ran
// it too) changes nothing: each child moves its workflow once.
func (g *Core) deliverJob(j *job, o jobOutcome) {
	rep := statechart.Report{Session: j.session}
	var ev statechart.Event
	out, err := jsonValue(o.out)
	switch {
	case o.err != nil:
		rep.Kind, rep.Error = statechart.ReportError, o.err
		ev = statechart.Event{Type: "xstate.error.actor." + j.id, Data: map[string]any{"error": o.err.Error()}}
	case err != nil:
		err = fmt.Errorf("the job's output is not JSON: %w", err)
		rep.Kind, rep.Error = statechart.ReportError, err
		ev = statechart.Event{Type: "xstate.error.actor." + j.id, Data: map[string]any{"error": err.Error()}}
	default:
		rep.Kind, rep.Output = statechart.ReportDone, out
		ev = statechart.Event{Type: "xstate.done.actor." + j.id, Data: map[string]any{"output": out}}
	}
	ctx, cancel := context.WithTimeout(g.jobs.ctx, g.busyWait+g.Timeout)
	defer cancel()
	t := g.jobTarget(j.key)
	by := "actor:" + j.id
	s := &Steps{G: g, C: &Call{Kind: CallSend, Rules: g.Rules.Load(), Info: UnboundInfo, Target: t, Event: ev, By: by, Report: &rep}}
	gate.Do(ctx, s)
	switch {
	case s.Out.Err != nil || s.Err != nil && !errors.Is(s.Err, gate.ErrUnknownWorkflow) && g.jobs.ctx.Err() == nil:
		err := s.Err
		if err == nil {
			err = s.Out.Err
		}
		g.Log.Error("mcpbind: a job's result was not recorded; another run of the job will be started when its lease expires",
			"key", Fingerprint(j.key), "src", j.src, "event", ev.Type, "error", err)
	case s.Err == nil && (s.dropped || s.Vd != nil):
		// The child no longer runs, or was over by the time the result was
		// processed (a result changes the child's status).
		g.dropped(j)
	}
}

// dropped logs the result of a job whose child no longer runs: it was
// stopped, or another run of it (in another instance) landed first.
func (g *Core) dropped(j *job) {
	g.Log.Info("mcpbind: a job's result was dropped: its child no longer runs (stopped, or another run of it landed first)",
		"key", Fingerprint(j.key), "src", j.src, "id", j.id)
}

// jsonValue returns v as a JSON value (what encoding/json decodes into).
func jsonValue(v any) (any, error) {
	if v == nil || jsonShaped(v, 0) {
		return v, nil
	}
	if raw, ok := v.(json.RawMessage); ok {
		var out any
		err := json.Unmarshal(raw, &out)
		return out, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	err = json.Unmarshal(b, &out)
	return out, err
}

// ResumeJobs implements mcpbind's Gate.ResumeJobs.
func (g *Core) ResumeJobs(ctx context.Context) (int, error) {
	if g.jobs == nil {
		return 0, nil
	}
	l, ok := g.store.(gate.Lister)
	if !ok {
		return 0, gate.ErrNoListing
	}
	keys, err := l.Keys(ctx, g.prefix)
	if err != nil {
		return 0, fmt.Errorf("mcpbind: listing the workflows: %w", err)
	}
	n := 0
	for _, key := range keys {
		if rest, ok := strings.CutPrefix(key, g.prefix+"local:"); ok && !strings.HasPrefix(rest, g.instance+":") {
			continue // a session of another process without an id: nobody can reach its workflow any more
		}
		k, err := g.resumeKey(ctx, key)
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// resumeKey claims and starts the jobs of one workflow that no instance
// runs.
func (g *Core) resumeKey(ctx context.Context, key string) (int, error) {
	t := g.jobTarget(key)
	v, err := g.Load(ctx, t)
	if errors.Is(err, gate.ErrUnknownWorkflow) {
		return 0, nil // gone since it was listed
	}
	if err != nil {
		return 0, err
	}
	n := 0
	_, err = g.Rewrite(ctx, t, v, func(v *View, snap []byte) (Record, bool, error) {
		_, starts := g.planJobs(v.Rec.Jobs, v.State)
		n = len(starts)
		rec := v.Rec
		rec.Snap = snap
		return rec, n == 0, nil // save claims the jobs planJobs gives
	})
	switch {
	case errors.Is(err, gate.ErrUnknownWorkflow):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("mcpbind: claiming the jobs of workflow %s: %w", Fingerprint(key), err)
	}
	return n, nil
}

// resumeLoop calls ResumeJobs every interval until the gate closes.
func (g *Core) resumeLoop(every time.Duration) {
	defer g.jobs.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if _, err := g.ResumeJobs(g.jobs.ctx); err != nil && g.jobs.ctx.Err() == nil {
			g.Log.Warn("mcpbind: resuming jobs", "error", err)
		}
		select {
		case <-g.jobs.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Close implements mcpbind's Gate.Close.
func (g *Core) Close() error {
	g.stopWatch()
	r := g.jobs
	if r == nil {
		return nil
	}
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.cancel()
	r.wg.Wait()
	return nil
}
