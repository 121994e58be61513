// This file defines Engine and State, the small interface through which the
// MCP layer runs workflows, so that the full interpreter and the flat
// table-driven engine (package statechart/flat) are interchangeable.

package statechart

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Engine runs instances of one compiled workflow. Implementations are
// immutable and safe for concurrent use; all per-instance data is in the
// State values they return, which are never modified.
type Engine interface {
	// ID returns the machine id.
	ID() string
	// Nodes describes every state node, in document order.
	Nodes() []Node
	// Start returns the initial state of a new instance.
	Start(ctx context.Context, now time.Time) (State, error)
	// Send processes one event and returns the new state. An event sent to
	// a state that is not active is ignored: s is returned.
	Send(ctx context.Context, s State, ev Event, now time.Time) (State, error)
	// Advance processes the delayed events due at or before now.
	Advance(ctx context.Context, s State, now time.Time) (State, error)
	// Can reports whether the event would be handled in state s.
	Can(ctx context.Context, s State, ev Event) (bool, error)
	// Restore reads a state written by the state's MarshalJSON.
	Restore(data []byte) (State, error)
}

// State is an immutable state of one workflow instance. *Snapshot
// implements it.
type State interface {
	// Value is the state value in XState's shape.
	Value() any
	// Status is active, done, error or stopped.
	Status() Status
	// Context is the instance's context (empty for flat machines).
	Context() map[string]any
	// StateIDs returns the ids of the active state nodes, ancestors included.
	StateIDs() []string
	// MarshalJSON writes the persisted form, read back by Engine.Restore.
	json.Marshaler
}

// Engine returns m as an [Engine].
func (m *Machine) Engine() Engine { return machineEngine{m} }

type machineEngine struct{ m *Machine }

func (e machineEngine) ID() string    { return e.m.ID() }
func (e machineEngine) Nodes() []Node { return e.m.Nodes() }

func (e machineEngine) Start(ctx context.Context, now time.Time) (State, error) {
	s, err := e.m.Start(ctx, now)
	return s, err
}

func (e machineEngine) snapshot(s State) (*Snapshot, error) {
	snap, ok := s.(*Snapshot)
	if !ok || snap.machine != e.m {
		return nil, fmt.Errorf("statechart: state %T does not belong to machine %q", s, e.m.id)
	}
	return snap, nil
}

func (e machineEngine) Send(ctx context.Context, s State, ev Event, now time.Time) (State, error) {
	snap, err := e.snapshot(s)
	if err != nil {
		return s, err
	}
	return e.m.Transition(ctx, snap, ev, now)
}

func (e machineEngine) Advance(ctx context.Context, s State, now time.Time) (State, error) {
	snap, err := e.snapshot(s)
	if err != nil {
		return s, err
	}
	return e.m.Advance(ctx, snap, now)
}

func (e machineEngine) Can(ctx context.Context, s State, ev Event) (bool, error) {
	snap, err := e.snapshot(s)
	if err != nil {
		return false, err
	}
	return e.m.Can(ctx, snap, ev)
}

func (e machineEngine) Restore(data []byte) (State, error) {
	s, err := e.m.Restore(data)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// EffectEngine is an [Engine] that also returns the effects each call
// decided (see [Effect]): what a stateless server needs to run a machine
// with actors, its promise and callback children being external jobs. The
// engine of a [Machine] implements it; Engine's methods drop the effects.
type EffectEngine interface {
	Engine
	// UsesActors reports whether the machine has actors at all (invoke,
	// spawn, sendTo, emit, ...): without them every call returns no
	// effects but Scheduled and Cancelled.
	UsesActors() bool
	StartEffects(ctx context.Context, opts *StartOptions, now time.Time) (State, []Effect, error)
	SendEffects(ctx context.Context, s State, ev Event, now time.Time) (State, []Effect, error)
	AdvanceEffects(ctx context.Context, s State, now time.Time) (State, []Effect, error)
	// Deliver feeds back what an external child reports (see
	// [Machine.Deliver]).
	Deliver(ctx context.Context, s State, rep Report, now time.Time) (State, []Effect, error)
}

// UsesActors reports whether the machine invokes, spawns, stops or sends
// to other actors, or emits events: it then runs in an actor system, and
// its pure functions are best called in their Effects forms.
func (m *Machine) UsesActors() bool { return m.usesActors }

func (e machineEngine) UsesActors() bool { return e.m.usesActors }

func (e machineEngine) StartEffects(ctx context.Context, opts *StartOptions, now time.Time) (State, []Effect, error) {
	s, fx, err := e.m.StartEffects(ctx, opts, now)
	if s == nil {
		return nil, fx, err
	}
	return s, fx, err
}

func (e machineEngine) SendEffects(ctx context.Context, s State, ev Event, now time.Time) (State, []Effect, error) {
	snap, err := e.snapshot(s)
	if err != nil {
		return s, nil, err
	}
	return e.m.TransitionEffects(ctx, snap, ev, now)
}

func (e machineEngine) AdvanceEffects(ctx context.Context, s State, now time.Time) (State, []Effect, error) {
	snap, err := e.snapshot(s)
	if err != nil {
		return s, nil, err
	}
	return e.m.AdvanceEffects(ctx, snap, now)
}

func (e machineEngine) Deliver(ctx context.Context, s State, rep Report, now time.Time) (State, []Effect, error) {
	snap, err := e.snapshot(s)
	if err != nil {
		return s, nil, err
	}
	return e.m.Deliver(ctx, snap, rep, now)
}
