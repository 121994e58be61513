// This file decides whether a gated call may run in the workflow's
// current state: its arguments are within bounds, the tool is visible, no
// used-up budget stops it, and the workflow can take its event. Everything
// that could fail once the tool has run is checked here, before it runs.

package core

import (
	"context"
	"fmt"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/internal/histrec"
	"github.com/chartgate/chartgate/internal/jsonx"
	"github.com/chartgate/chartgate/statechart"
)

// Verdict is the answer to a call that does not run, in no transport's
// terms: a refusal (ref and text), a tool error (text alone: the
// answers of workflow_transition that are not refusals), an answer the
// front door made itself (answer, err: a server's own "unknown tool"
// error), or an error. Each front door translates it (mcpResult).
type Verdict struct {
	Ref    *gate.Refusal
	Text   string
	Answer any
	Err    error
}

// authorize returns nil if the call may run in the state v, and otherwise
// the answer that refuses it.
func (g *Core) authorize(ctx context.Context, c *Call, v *View) *Verdict {
	if c.Kind == CallSend || c.ran {
		return nil // the caller, not the agent, decides; or the tool already ran
	}
	if vd := g.checkArguments(ctx, c); vd != nil {
		return vd
	}
	if c.Kind == CallTransition {
		return g.authorizeTransition(ctx, c, v)
	}
	if !g.Visible(ctx, v, c.Name, c.Info) {
		return g.refuse(ctx, c, v)
	}
	if used := g.Exhausted(v); len(used) > 0 && !g.leaves(ctx, v, c.Info, c.Name, c.input(), used) {
		return g.refuseLimit(ctx, c, v, used)
	}
	if c.Info.Event != "" {
		// What the event will do is decided once the tool has run, with
		// its result; what can fail without the result fails now.
		ev := statechart.Event{Type: c.Info.Event} // the engine reads no more
		if !g.dataless {
			ev = g.Event(c.Info.Event, c.Name, c.input(), nil)
		}
		ns, err := g.engine.Send(ctx, v.State, ev, g.callTime(c))
		if err != nil {
			return g.refuseEvent(ctx, c, v, err)
		}
		if !c.Info.OutputGuards {
			if guards, refused := g.guardsRefuse(ctx, v, ev); refused {
				return g.refuseGuards(ctx, c, v, guards)
			}
		}
		c.decided = decidedEvent{from: v.State, to: ns}
		return g.checkRecordSize(ctx, c, v, ns)
	}
	return nil
}

// decidedEvent is the state a call's event leads to from the state its
// authorization saw, computed without the tool's result.
type decidedEvent struct {
	from, to statechart.State
}

// guardsRefuse reports whether the active states of v handle ev but would
// not accept it: every transition for it has a guard, and none is enabled
// with ev's data. It returns the guards of those transitions. An event no
// active state handles is not refused: the tool is available there, and
// its event changes nothing.
func (g *Core) guardsRefuse(ctx context.Context, v *View, ev statechart.Event) ([]string, bool) {
	if v.State.Status() != statechart.StatusActive {
		return nil, false
	}
	var guards []string
	for i, n := range g.Nodes {
		if !v.Active.Has(i) {
			continue
		}
		for _, t := range n.Transitions {
			if t.Event == "" || !MatchesEvent(ev.Type, t.Event) {
				continue
			}
			if t.Guard == "" {
				return nil, false // taken whatever the data
			}
			guards = Dedupe(guards, []string{t.Guard})
		}
	}
	if len(guards) == 0 {
		return nil, false
	}
	ok, err := g.engine.Can(ctx, v.State, ev)
	if err != nil || ok {
		return nil, false // Send succeeded: an error here is not the call's
	}
	return guards, true
}

// checkRecordSize refuses a call after which the workflow's record would
// be larger than Options.MaxRecordBytes: ns is the state its event gives
// (without the tool's result, not known yet).
func (g *Core) checkRecordSize(ctx context.Context, c *Call, v *View, ns statechart.State) *Verdict {
	if ns == v.State {
		return nil // the event changes nothing
	}
	n, err := g.persistedSize(ns)
	if err != nil {
		return g.refuseEvent(ctx, c, v, err)
	}
	size := n + histrec.EntriesLen(v.Rec.History) + MaxEntryBytes
	if size <= g.maxRecord {
		return nil
	}
	return g.refuseArguments(ctx, c, fmt.Sprintf("after its event the workflow's record would take about %d bytes, more than the %d this server keeps for a workflow", size, g.maxRecord))
}

// jsonAppender is implemented by states that can append their persisted
// form to a buffer ([statechart.Snapshot.AppendJSON]).
type jsonAppender interface {
	AppendJSON(b []byte) ([]byte, error)
}

// maxScratch is the largest scratch buffer the gate keeps for the next
// call.
const maxScratch = 64 << 10

// persistedSize returns the length of a state's persisted form. A state
// that can append it to a buffer is written to one the gate reuses: only
// its length is needed.
func (g *Core) persistedSize(s statechart.State) (int, error) {
	a, ok := s.(jsonAppender)
	if !ok {
		b, err := s.MarshalJSON()
		return len(b), err
	}
	buf := g.scratch()
	b, err := a.AppendJSON((*buf)[:0])
	g.release(buf, b)
	return len(b), err
}

// scratch returns a buffer to write what is needed only for a while (a
// size, or a copy) into; release gives it back.
func (g *Core) scratch() *[]byte {
	buf, _ := g.bufs.Get().(*[]byte)
	if buf == nil {
		buf = new([]byte)
	}
	return buf
}

// release returns a buffer of scratch, as b (its contents grown) says, to
// be used again unless it grew large.
func (g *Core) release(buf *[]byte, b []byte) {
	if cap(b) <= maxScratch {
		*buf = b
		g.bufs.Put(buf)
	}
}

// checkArguments refuses arguments the gate could not record: larger than
// Options.MaxArgumentBytes or nested deeper than maxDataDepth. It checks a
// call once.
func (g *Core) checkArguments(ctx context.Context, c *Call) *Verdict {
	if c.Args.bounded {
		return nil
	}
	raw := c.RawArguments()
	var why string
	switch {
	case len(raw) > g.maxArgs:
		why = fmt.Sprintf("its arguments take %d bytes, more than the %d this server accepts for a workflow's tools", len(raw), g.maxArgs)
	case jsonx.TooDeep(raw, maxDataDepth):
		why = fmt.Sprintf("its arguments are nested more than %d levels deep", maxDataDepth)
	default:
		c.Args.bounded = true // decoded when needed, once
		return nil
	}
	return g.refuseArguments(ctx, c, why)
}

// Visible reports whether a tool is visible in a state.
func (g *Core) Visible(ctx context.Context, v *View, tool string, ti *ToolInfo) bool {
	if ti.Deny != nil && ti.Deny.Intersects(v.Active) {
		return false // an active state's meta.mcp.deny hides it
	}
	switch ti.Mode {
	case ModeStates:
		return ti.Nodes.Intersects(v.Active)
	case ModeCan:
		if v.State.Status() != statechart.StatusActive {
			return false // the machine takes no more events
		}
		ok, err := g.engine.Can(ctx, v.State, g.Event(ti.Event, tool, nil, nil))
		if err != nil {
			g.Log.Warn("mcpbind: evaluating whether the machine accepts an event", "event", ti.Event, "error", err)
			return false
		}
		return ok
	case ModeStart:
		return false // a session's own workflow needs no start
	case ModeDenied:
		return false
	}
	return true
}
