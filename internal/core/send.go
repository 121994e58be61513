// This file defines how events reach a workflow from outside an MCP
// request: a person's approval, an interrupt a gateway or a hook detects,
// a host's hook reporting a tool it ran. They take the same path as a
// call of workflow_transition: the workflow's lease, the event, the saved
// state, the run history.

package core

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/statechart"
)

func (g *Core) refTarget(ref gate.Ref) (Target, error) {
	switch {
	case ref.ID != "" && ref.Name != "":
		return Target{}, errors.New("mcpbind: a Ref names a workflow by its ID or by its Name, not both")
	case ref.ID != "":
		if !ValidHandle(ref.ID) {
			return Target{}, fmt.Errorf("mcpbind: %q is not a workflow id: %w", ref.ID, gate.ErrUnknownWorkflow)
		}
		return g.handleTarget(ref.ID), nil
	case ref.Name != "":
		return Target{Name: ref.Name, Key: g.NameKey(ref.Name)}, nil
	}
	return Target{}, errors.New("mcpbind: an empty Ref names no workflow")
}

// WorkflowOf implements mcpbind's Gate.WorkflowOf.
func (g *Core) WorkflowOf(ctx context.Context, ref gate.Ref) (*gate.Workflow, error) {
	t, err := g.refTarget(ref)
	if err != nil {
		return nil, err
	}
	return g.WorkflowAt(ctx, t)
}

// Send implements mcpbind's Gate.Send.
func (g *Core) Send(ctx context.Context, ref gate.Ref, ev statechart.Event, by string) (*gate.Transition, error) {
	t, err := g.refTarget(ref)
	if err != nil {
		return nil, err
	}
	s := &Steps{G: g, C: &Call{Kind: CallSend, Rules: g.Rules.Load(), Info: UnboundInfo, Target: t, Event: ev, By: by}}
	gate.Do(ctx, s)
	switch {
	case s.Err != nil:
		return nil, fmt.Errorf("mcpbind: sending %q: %w", ev.Type, s.Err)
	case s.Out.Err != nil:
		return nil, fmt.Errorf("mcpbind: sending %q: %w", ev.Type, s.Out.Err)
	}
	return s.Out.Tr, nil // Send is never refused: only an error stops it
}

// Workflows implements mcpbind's Gate.Workflows.
func (g *Core) Workflows(ctx context.Context) ([]gate.WorkflowInfo, error) {
	l, ok := g.store.(gate.Lister)
	if !ok {
		return nil, gate.ErrNoListing
	}
	keys, err := l.Keys(ctx, g.prefix)
	if err != nil {
		return nil, err
	}
	var out []gate.WorkflowInfo
	for _, key := range keys {
		v, data, ver, err := g.fetch(ctx, key)
		if err != nil {
			return nil, err
		}
		if ver == 0 {
			continue // gone since it was listed
		}
		wi := gate.WorkflowInfo{Key: key}
		rest := strings.TrimPrefix(key, g.prefix)
		if id, ok := strings.CutPrefix(rest, "wf:"); ok {
			wi.Ref.ID = id
		} else if name, ok := strings.CutPrefix(rest, "session:"); ok {
			wi.Ref.Name = name
		}
		if v == nil {
			if v, err = g.decode(key, data, ver); err != nil {
				if errors.As(err, &wi.Refused) {
					wi.Version = wi.Refused.Stored
					out = append(out, wi)
					continue
				}
				return nil, err
			}
		}
		wi.State, wi.Status, wi.Pending, wi.Version = v.State.Value(), v.State.Status(), g.WaitingFor(v), v.Rec.WorkflowVersion
		if h := DecodeHistory(v.Rec.History, key); len(h) > 0 {
			wi.Updated = h[len(h)-1].Time
		}
		out = append(out, wi)
	}
	return out, nil
}
