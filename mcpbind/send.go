// This file defines how events reach a workflow from outside an MCP
// request: a person's approval, an interrupt a gateway or a hook detects,
// a host's hook reporting a tool it ran. They take the same path as a
// call of workflow_transition: the workflow's lease, the event, the saved
// state, the run history.

package mcpbind

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/internal/core"
	"github.com/chartgate/chartgate/statechart"
)

func (g *gateCore) refTarget(ref Ref) (target, error) {
	switch {
	case ref.ID != "" && ref.Name != "":
		return target{}, errors.New("mcpbind: a Ref names a workflow by its ID or by its Name, not both")
	case ref.ID != "":
		if !validHandle(ref.ID) {
			return target{}, fmt.Errorf("mcpbind: %q is not a workflow id: %w", ref.ID, ErrUnknownWorkflow)
		}
		return g.handleTarget(ref.ID), nil
	case ref.Name != "":
		return target{name: ref.Name, key: g.nameKey(ref.Name)}, nil
	}
	return target{}, errors.New("mcpbind: an empty Ref names no workflow")
}

// WorkflowOf is [Gate.WorkflowOf].
func (g *gateCore) WorkflowOf(ctx context.Context, ref Ref) (*Workflow, error) {
	t, err := g.refTarget(ref)
	if err != nil {
		return nil, err
	}
	return g.workflow(ctx, t)
}

// Send is [Gate.Send].
func (g *gateCore) Send(ctx context.Context, ref Ref, ev statechart.Event, by string) (*Transition, error) {
	t, err := g.refTarget(ref)
	if err != nil {
		return nil, err
	}
	s := &steps{g: g, c: &gatedCall{kind: callSend, rules: g.rules.Load(), info: unboundInfo, target: t, event: ev, by: by}}
	gate.Do(ctx, s)
	switch {
	case s.err != nil:
		return nil, fmt.Errorf("mcpbind: sending %q: %w", ev.Type, s.err)
	case s.out.err != nil:
		return nil, fmt.Errorf("mcpbind: sending %q: %w", ev.Type, s.out.err)
	}
	return s.out.tr, nil // Send is never refused: only an error stops it
}

// Workflows is [Gate.Workflows].
func (g *gateCore) Workflows(ctx context.Context) ([]WorkflowInfo, error) {
	l, ok := g.store.(Lister)
	if !ok {
		return nil, ErrNoListing
	}
	keys, err := l.Keys(ctx, g.prefix)
	if err != nil {
		return nil, err
	}
	var out []WorkflowInfo
	for _, key := range keys {
		v, data, ver, err := g.fetch(ctx, key)
		if err != nil {
			return nil, err
		}
		if ver == 0 {
			continue // gone since it was listed
		}
		wi := WorkflowInfo{Key: key}
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
		wi.State, wi.Status, wi.Pending, wi.Version = v.state.Value(), v.state.Status(), g.pending(v), v.rec.WorkflowVersion
		if h := core.DecodeHistory(v.rec.History, key); len(h) > 0 {
			wi.Updated = h[len(h)-1].Time
		}
		out = append(out, wi)
	}
	return out, nil
}
