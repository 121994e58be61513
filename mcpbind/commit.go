// This file records a call's event in the workflow: the event is sent to
// the engine and the new state saved with compare-and-swap, retried on
// conflicts; a call whose event could not be saved gets a note.

package mcpbind

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/chartgate/chartgate/statechart"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// update saves a change to a workflow with compare-and-swap. change maps
// the current view to the new state and record (a nil state: nothing to
// save); on a conflict (another call of the workflow saved first) the gate
// reloads and calls change again on the newer view. update returns the
// view change was last called with and the saved view (nil if none).
func (g *Gate) update(ctx context.Context, t target, cur *view, change func(*view) (statechart.State, record, error)) (from, to *view, err error) {
	// A change after the tool ran must be recorded even if the client
	// goes away.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), g.timeout)
	defer cancel()
	var sess *session
	var key string
	if t.handle != "" {
		key = g.handleKey(t.handle)
	} else {
		sess = g.ensureSession(t.ss)
		key = sess.key
	}
	for attempt := 0; ; attempt++ {
		if cur.key != key {
			cur = cur.withKey(key)
		}
		ns, rec, err := change(cur)
		if err != nil || ns == nil {
			return cur, nil, err
		}
		nv, err := g.newView(key, ns, rec, nil, 0)
		if err != nil {
			return cur, nil, err
		}
		ver, err := g.store.CompareAndSwap(ctx, key, cur.version, nv.data)
		if err == nil {
			nv.version = ver
			if sess == nil {
				g.handled.put(key, nv)
			} else {
				g.decoded.Store(key, nv)
				sess.saved.Store(true)
				if g.isClosed(sess) {
					// The session ended while the call ran.
					g.forget(t.ss, sess)
				}
			}
			return cur, nv, nil
		}
		if !isConflict(err) {
			return cur, nil, fmt.Errorf("saving the workflow state: %w", err)
		}
		if attempt >= g.retries {
			return cur, nil, fmt.Errorf("saving the workflow state: gave up after %d conflicts: %w", attempt+1, err)
		}
		backoff(ctx, attempt)
		next, err := g.load(ctx, t)
		if err != nil {
			return cur, nil, err
		}
		cur = next
	}
}

// apply sends an event to a workflow and saves the result (see update). It
// returns the state it was applied to, the new state (nil if the event
// changed nothing) and the transition, as recorded in the run history.
func (g *Gate) apply(ctx context.Context, t target, cur *view, ev statechart.Event, tool string) (from, to *view, tr Transition, err error) {
	from, to, err = g.update(ctx, t, cur, func(cur *view) (statechart.State, record, error) {
		ns, err := g.engine.Send(ctx, cur.state, ev, g.now())
		if err != nil {
			return nil, record{}, fmt.Errorf("the machine failed on event %q: %w", ev.Type, err)
		}
		snap, err := ns.MarshalJSON()
		if err != nil {
			return nil, record{}, fmt.Errorf("marshaling the new state: %w", err)
		}
		if bytes.Equal(snap, cur.rec.snap) {
			return nil, record{}, nil
		}
		tr = Transition{Key: cur.key, Tool: tool, Event: ev, From: cur.state.Value(), To: ns.Value(), Time: g.now()}
		rec := record{snap: snap}
		if g.hlimit > 0 {
			entry, err := appendTransition(nil, tr)
			if err != nil {
				return nil, record{}, fmt.Errorf("recording the transition: %w", err)
			}
			rec.history = appendHistory(cur.rec.history, entry, g.hlimit)
		}
		if len(cur.rec.calls) > 0 {
			ids := ns.StateIDs()
			rec.calls = carryCalls(cur.rec.calls, func(id string) bool { return slices.Contains(ids, id) })
		}
		return ns, rec, nil
	})
	return from, to, tr, err
}

func isConflict(err error) bool { return errors.Is(err, ErrConflict) }

// backoff sleeps a little, more after each conflict, with jitter.
func backoff(ctx context.Context, attempt int) {
	d := 20 * time.Microsecond << min(attempt, 9)
	d = d/2 + rand.N(d)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// notSaved returns the result of a call that ran but whose event could not
// be recorded: the tool's own result, plus a note in the content and under
// MetaKey in _meta. It is not an error result: the tool did its work.
func (g *Gate) notSaved(res *mcp.CallToolResult, tool string, ev statechart.Event, v *view, err error) *mcp.CallToolResult {
	state := v.state.Value()
	g.log.Error("mcpbind: a tool ran but its event was not recorded", "tool", tool, "event", ev.Type, "key", v.key, "error", err)
	out := *res
	out.Content = append(slices.Clip(res.Content), &mcp.TextContent{Text: fmt.Sprintf(
		"Note: %s ran, but the server could not record it in the workflow, so event %q was not applied and the workflow is still in state %s.",
		tool, ev.Type, stateText(state))})
	return withNote(&out, map[string]any{"code": CodeStateNotSaved, "event": ev.Type, "state": state})
}
