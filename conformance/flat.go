// This file adds RunFlat, which replays a case on the flat-FSM engine
// (package statechart/flat) through the statechart.Engine interface.

package conformance

import (
	"context"
	"time"

	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/statechart/flat"
)

// RunFlat runs a case on the flat engine. The case's machine must be in the
// flat form ([flat.IsFlat]); its guards, actions and delays are ignored, as
// a flat machine refers to none. An advance step only moves the simulated
// time: a flat machine has no delayed transitions. Format v2 cases give an
// *UnsupportedError.
func RunFlat(ctx context.Context, c *Case) ([]map[string]any, bool, error) {
	if err := unsupportedV2(c); err != nil {
		return nil, false, err
	}
	m, err := flat.Compile(c.Machine)
	if err != nil {
		return nil, false, err
	}
	return runOnEngine(ctx, m, c)
}

// runOnEngine runs the steps of a case on any engine, through the
// statechart.Engine interface, with a simulated time that starts at the
// Unix epoch. errored reports whether the engine returned an error or a
// state with status error.
func runOnEngine(ctx context.Context, e statechart.Engine, c *Case) ([]map[string]any, bool, error) {
	now := time.Unix(0, 0).UTC()
	s, err := e.Start(ctx, now)
	errored := err != nil
	if s == nil {
		return nil, true, err
	}
	snaps := []map[string]any{engineStateSnapshot(s)}
	for _, step := range c.Steps {
		var next statechart.State
		if step.Event != nil {
			next, err = e.Send(ctx, s, *step.Event, now)
		} else {
			now = now.Add(time.Duration(*step.Advance * float64(time.Millisecond)))
			next, err = e.Advance(ctx, s, now)
		}
		errored = errored || err != nil
		if next != nil {
			s = next
		}
		errored = errored || s.Status() == statechart.StatusError
		snaps = append(snaps, engineStateSnapshot(s))
	}
	return snaps, errored, nil
}

// engineStateSnapshot is [Snapshot] for any [statechart.State]: value, status and
// context. Tags and output are not part of the State interface; a
// *statechart.Snapshot gets them from Snapshot.
func engineStateSnapshot(s statechart.State) map[string]any {
	if snap, ok := s.(*statechart.Snapshot); ok {
		return Snapshot(snap)
	}
	return map[string]any{
		"value":   s.Value(),
		"status":  string(s.Status()),
		"context": s.Context(),
	}
}
