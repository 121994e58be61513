// This file defines the effects of the pure API: what a call decided that
// the caller carries out (children to start and stop, events for them,
// emitted events, delayed events scheduled and cancelled), and Report,
// what an external child tells back.

package statechart

import "time"

// Effect is something a call of the pure API decided besides the next
// snapshot, for the caller to carry out or take note of, in the order it
// was decided: a [StartChild], [StopChild], [SendToChild], [Emitted],
// [Scheduled] or [Cancelled].
//
// In the pure API every promise and callback child is external: the
// caller runs it (a job queue, another service, another process) and
// reports its result later with [Machine.Deliver], on the snapshot it
// stored meanwhile. Child machines run inside the call, like the root.
// Delayed events stay in the snapshot ([Snapshot.Pending],
// [Snapshot.NextDue]) and [Machine.AdvanceEffects] processes them when
// they are due; Scheduled and Cancelled only tell the caller when to call
// it.
type Effect interface{ effect() }

// ChildRef names a child actor in an effect.
type ChildRef struct {
	// Session names the child uniquely in its actor system, also across
	// processes; [Report] names the child by it. A new child gets a new
	// session even when it reuses an id, so a late report for a child
	// that was stopped (and maybe started again under the same id) finds
	// no child and changes nothing.
	Session string
	// Path is the ids from a child of the root down to the child.
	Path []string
	// Src is the name of its logic; SystemID its system id, if any.
	Src, SystemID string
}

// StartChild is an external child to start: run its logic (named by
// Child.Src) with the input, and report its result with [Machine.Deliver].
type StartChild struct {
	Child    ChildRef
	Input    any
	HasInput bool
}

// StopChild is an external child to stop: its result, if it comes, will be
// ignored.
type StopChild struct {
	Child ChildRef
}

// SendToChild is an event for an external child (xstate.sendTo,
// xstate.forwardTo): a callback's receive functions get it.
type SendToChild struct {
	Child ChildRef
	Event Event
}

// Emitted is an event the root emitted (xstate.emit), for its listeners
// (what [Actor.On] delivers).
type Emitted struct {
	Event Event
}

// Scheduled is a delayed event scheduled by an actor of the system (the
// root when Actor is nil): an `after` transition, a delayed xstate.raise,
// or a delayed xstate.sendTo or xstate.sendParent, for the actor To (the
// scheduling actor itself when To equals Actor). It is due at Due;
// [Machine.AdvanceEffects] processes it then.
type Scheduled struct {
	Actor, To []string // paths of child ids; nil is the root
	ID        string   // the send id ("xstate.after.<delay>.<state id>" for after), "" when none
	Event     Event
	Due       time.Time
}

// Cancelled is a delayed event cancelled (xstate.cancel, or the exit of the
// state of an `after` transition) before it was due.
type Cancelled struct {
	Actor []string
	ID    string
}

func (StartChild) effect()  {}
func (StopChild) effect()   {}
func (SendToChild) effect() {}
func (Emitted) effect()     {}
func (Scheduled) effect()   {}
func (Cancelled) effect()   {}

// ReportKind is what an external child reports.
type ReportKind uint8

const (
	// ReportDone: the child is done, with Output (a promise resolved).
	ReportDone ReportKind = iota
	// ReportError: the child failed with Error (a promise rejected).
	ReportError
	// ReportEvent: the child sends Event to its parent (a callback's
	// sendBack).
	ReportEvent
)

// Report is what an external child tells back, named by the session of
// its [StartChild] effect. See [Machine.Deliver].
type Report struct {
	Session string
	Kind    ReportKind
	Output  any   // ReportDone
	Error   any   // ReportError: a JSON value or a Go error
	Event   Event // ReportEvent
}
