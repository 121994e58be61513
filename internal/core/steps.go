// This file implements gate.Steps for the gate: one request on its way
// through the steps gate.Do composes, whichever front door made it. A
// front door makes a Steps value (its request translated in), calls
// gate.Do or gate.Decide, and translates what the steps left out.

package core

import (
	"context"
	"log/slog"
	"runtime"
	"time"

	"github.com/chartgate/chartgate/gate"
)

// Steps is a request as gate.Do takes it through the steps: the call,
// what each step found, and the answer for its front door.
type Steps struct {
	G *Core
	// Door is the front door whose request Resolve translates into the
	// call; nil for a caller that made the call itself (C is set).
	Door Door
	C    *Call

	v      *View // the workflow as the last step saw it (after reserve: as saved)
	Before *View // the workflow as load found it
	// cached: v is this process' cached view, not read from the store
	// (loadCall); Reserve's compare-and-swap verifies it.
	cached bool
	h      *holder
	did    ToolOutcome // what the tool did (given for a tool that already ran)
	Out    Committed

	// Res and Err are the answer: the front door's answer (the tool's
	// result), or the answer of the step that stopped the request.
	Res any
	Err error
	// Vd is the answer of the step that refused the request, if one did;
	// its front door translates it (Res is not set then).
	Vd *Verdict
	// unbound: the workflow does not gate the tool (resolve stopped).
	unbound bool
	// dropped: a job's result for a child its workflow no longer runs
	// (load stopped, or the commit changed nothing).
	dropped bool
}

var _ gate.Steps = (*Steps)(nil)

// answered reports whether a call is answered through its front door (a
// tools/call through the MCP middleware), which translates the answer;
// every other caller gets errors as they are.
func (c *Call) answered() bool { return c.Door != nil && c.Kind != CallSend }

// Resolve implements gate.Steps.
func (s *Steps) Resolve(ctx context.Context) (context.Context, bool) {
	if s.C == nil {
		ctx2, c, res, err := s.Door.Resolve(ctx)
		if c == nil {
			s.Res, s.Err = res, err // not gated, the start tool, or answered by the door
			return ctx, false
		}
		ctx, s.C = ctx2, c
	}
	if s.C.Info.Mode == ModeUnbound && s.C.Kind == CallTool {
		s.unbound = true // a caller outside MCP asked about a tool the workflow does not gate
		return ctx, false
	}
	return ctx, true
}

// Load implements gate.Steps. A front door that read the workflow for the
// same request (a hook's Workflow, an approval's pending state) sets s.v.
func (s *Steps) Load(ctx context.Context) bool {
	c := s.C
	if s.v == nil {
		c.now = s.G.Now()
		v, cached, err := s.G.loadCall(ctx, c)
		if err != nil {
			s.Res, s.Err = s.G.LoadFailed(ctx, c, err)
			return false
		}
		s.v, s.cached = v, cached
	}
	s.Before = s.v
	switch {
	case c.Kind == CallStatus:
		s.Res, s.Err = c.Door.Status(ctx, c, s.v)
		return false
	case c.Report != nil && !wantsJob(s.v.State, c.Report.Session):
		s.dropped = true
		return false
	}
	return true
}

// Authorize implements gate.Steps. A call refused in the state this
// process had cached is authorized again in the stored one.
func (s *Steps) Authorize(ctx context.Context) bool {
	vd := s.G.authorize(ctx, s.C, s.v)
	if vd != nil && s.cached {
		v, err := s.G.Load(ctx, s.C.Target)
		if err != nil {
			s.Res, s.Err = s.G.LoadFailed(ctx, s.C, err)
			return false
		}
		s.v, s.Before, s.cached = v, v, false
		vd = s.G.authorize(ctx, s.C, s.v)
	}
	return s.refused(vd)
}

// refused keeps a step's refusal, if any, as the answer, and reports
// whether the request goes on.
func (s *Steps) refused(vd *Verdict) bool {
	if vd == nil {
		return true
	}
	s.Vd, s.Err = vd, vd.Err
	return false
}

// Reserve implements gate.Steps.
func (s *Steps) Reserve(ctx context.Context) bool {
	v, h, vd, err := s.G.ReserveCall(ctx, s.C, s.v)
	if err != nil {
		s.Res, s.Err = nil, err
		if s.C.answered() {
			s.Err = s.C.Door.StoreFailed(err)
		}
		return false
	}
	if !s.refused(vd) {
		return false
	}
	s.v, s.h = v, h
	return true
}

// Run implements gate.Steps: the front door runs the tool, while the
// lease the call holds (if any) is kept alive. A workflow_transition and
// Send have no tool: the event is their effect.
func (s *Steps) Run(ctx context.Context) {
	c := s.C
	if c.ran || c.Kind != CallTool {
		return
	}
	if s.h != nil {
		s.G.keepAlive(ctx, s.h)
		defer s.G.stopRenewals(s.h)
	}
	s.Res, s.did, s.Err = c.Door.Run(ctx, c)
}

// Commit implements gate.Steps.
func (s *Steps) Commit(ctx context.Context) {
	s.commit(ctx)
	c := s.C
	if s.h == nil && c.Kind == CallTool {
		s.G.auditCall(ctx, c, s.v, s.did.word()) // a call that held nothing: recorded on its own
	}
	if c.answered() && c.Kind == CallTool {
		s.followUps(ctx)
	}
}

// commit records the call (CommitCall). It and followUps are not inlined
// into Commit: the Committed values they pass and return by value would
// take room in Commit's frame, below which the commit's deepest work runs
// (the history entry), and push the request's goroutine past its stack
// (which is then copied to one twice as large, on every moving call).
//
//go:noinline
func (s *Steps) commit(ctx context.Context) {
	s.Out = s.G.CommitCall(ctx, s.C, s.h, s.v, s.did)
}

// followUps adds what the front door does after a commit.
//
//go:noinline
func (s *Steps) followUps(ctx context.Context) {
	s.Out = s.C.Door.FollowUps(ctx, s.C, s.v, s.Out, s.Res, s.Err)
}

// Notify implements gate.Steps: the front door tells its client; for
// every other caller, the transition is logged and reported to
// Options.OnTransition and, for a job's result, to the sessions whose
// workflow it moved.
func (s *Steps) Notify(ctx context.Context) {
	g, c := s.G, s.C
	if c.answered() {
		s.Res, s.Err = c.Door.Notify(ctx, c, s.Before, s.Out, s.Res, s.Err)
		return
	}
	tr := s.Out.Tr
	switch {
	case s.Out.Err != nil:
		return
	case tr == nil:
		s.dropped = c.Report != nil // the child was over by the time its result was processed
		return
	case c.Kind == CallTool && g.invalidated != nil:
		g.invalidated(ctx, c.Name, c.Info)
	}
	g.Transitioned(ctx, *tr)
	if c.Report != nil && g.moved != nil {
		g.moved(ctx, c, s.Out)
	}
}

// Transitioned reports a saved transition: a log record and OnTransition.
// The record is what Logger.LogAttrs makes, but for its time, the
// transition's when it was read from the process' clock, and its source,
// read once.
func (g *Core) Transitioned(ctx context.Context, tr gate.Transition) {
	if h := g.Log.Handler(); h.Enabled(ctx, slog.LevelInfo) {
		pc := g.transitionPC.Load()
		if pc == 0 {
			var pcs [1]uintptr
			runtime.Callers(1, pcs[:])
			pc = pcs[0]
			g.transitionPC.Store(pc)
		}
		t := tr.Time
		if !g.realClock || t.IsZero() {
			t = time.Now()
		}
		r := slog.NewRecord(t, slog.LevelInfo, "mcpbind: transition", pc)
		r.AddAttrs(slog.String("key", g.prints.of(tr.Key)), slog.String("tool", tr.Tool), slog.String("event", tr.Event.Type),
			slog.Any("from", tr.From), slog.Any("to", tr.To))
		_ = h.Handle(ctx, r) // as Logger's methods do
	}
	if g.onTrans != nil {
		g.onTrans(ctx, tr)
	}
}
