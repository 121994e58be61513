// This file keeps the events a hook must send and could not apply when
// the tool ran (the workflow held by a call in flight for longer than
// the gate waits, a store that failed): they are kept, in order, and
// applied by the next hook event of the session before anything else;
// until they are, the session's pre tool events are refused.

package hook

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/internal/jsonx"
	"github.com/chartgate/chartgate/statechart"
)

// PendingEvent is an event a hook had to send and could not apply yet,
// kept in its session's record (AgentSession.Pending): the record of a
// call of Tool that ran (its budget count and bound event), or an
// interrupt (Interrupt, its Event and the File that fired it).
type PendingEvent struct {
	ID        string          `json:"id"`
	Tool      string          `json:"tool,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	Failed    bool            `json:"failed,omitempty"`
	Interrupt string          `json:"interrupt,omitempty"`
	Event     string          `json:"event,omitempty"`
	File      string          `json:"file,omitempty"`
	// Reason is why it was not applied, Time when it was kept.
	Reason string    `json:"reason"`
	Time   time.Time `json:"time"`
	// Claim names the hook applying it now, until ClaimUntil: no other
	// hook applies it meanwhile (a hook that died leaves it to the next
	// once ClaimUntil has passed).
	Claim      string    `json:"claim,omitempty"`
	ClaimUntil time.Time `json:"claimUntil,omitempty"`
}

// what says what a pending event is, for people.
func (p PendingEvent) what() string {
	if p.Interrupt != "" {
		return fmt.Sprintf("interrupt %q (file %s)", p.Interrupt, p.File)
	}
	return fmt.Sprintf("the record of a call of %s that ran", p.Tool)
}

// claimTTL is how long a hook holds the pending events it applies: longer
// than a hook process lives (its deadline).
const claimTTL = time.Minute

// newID returns a random id.
func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// keep adds events to the session's pending ones, in order.
func (h *Handler) keep(ctx context.Context, session string, ps []PendingEvent) error {
	_, err := UpdateSession(ctx, h.store, session, func(s *AgentSession) bool {
		s.Pending = append(s.Pending, ps...)
		return true
	})
	return err
}

// catchUp applies what earlier hook events of the session could not:
// first the post tool events a failing store kept in the pending file
// (replayed as they came), then the session's pending events in the
// store, in order. It returns notes for the agent on what moved, and the
// pending events still not applied.
func (h *Handler) catchUp(ctx context.Context, ev Event, ref gate.Ref, sess *AgentSession) ([]string, []PendingEvent, error) {
	notes, err := h.replayFile(ctx, ev.SessionID, ref)
	if err != nil {
		return nil, nil, err
	}
	if sess != nil && len(sess.Pending) == 0 && len(notes) == 0 {
		return nil, nil, nil
	}
	more, left, err := h.applyPending(ctx, ev.SessionID, ref)
	return append(notes, more...), left, err
}

// applyPending claims the session's pending events no live hook holds,
// up to the first one another holds (they apply in order), applies them
// one by one, and removes each applied one.
func (h *Handler) applyPending(ctx context.Context, session string, ref gate.Ref) ([]string, []PendingEvent, error) {
	me, now := newID(), h.o.Now()
	var claimed []PendingEvent
	s, err := UpdateSession(ctx, h.store, session, func(s *AgentSession) bool {
		claimed = claimed[:0]
		for i := range s.Pending {
			p := &s.Pending[i]
			if p.Claim != "" && now.Before(p.ClaimUntil) {
				break
			}
			p.Claim, p.ClaimUntil = me, now.Add(claimTTL)
			claimed = append(claimed, *p)
		}
		return len(claimed) > 0
	})
	if err != nil {
		return nil, nil, fmt.Errorf("hook: claiming the session's pending events: %w", err)
	}
	var notes []string
	for _, p := range claimed {
		tr, err := h.apply(ctx, ref, p)
		if err != nil {
			// Left for the next event, unclaimed, with the new reason.
			_, uerr := UpdateSession(ctx, h.store, session, func(s *AgentSession) bool {
				for i := range s.Pending {
					if s.Pending[i].Claim == me {
						s.Pending[i].Claim, s.Pending[i].ClaimUntil = "", time.Time{}
						if s.Pending[i].ID == p.ID {
							s.Pending[i].Reason = err.Error()
						}
					}
				}
				return true
			})
			s, _, lerr := LoadSession(ctx, h.store, session)
			if uerr != nil || lerr != nil || s == nil {
				return notes, []PendingEvent{p}, errors.Join(uerr, lerr)
			}
			return notes, s.Pending, nil
		}
		if tr != nil {
			notes = append(notes, fmt.Sprintf("chartgate: %s, kept since %s, was applied now: the workflow moved from %s to %s.",
				p.what(), p.Time.UTC().Format(time.RFC3339), jsonx.Text(tr.From), jsonx.Text(tr.To)))
		}
		if s, err = UpdateSession(ctx, h.store, session, func(s *AgentSession) bool {
			n := len(s.Pending)
			s.Pending = slices.DeleteFunc(s.Pending, func(q PendingEvent) bool { return q.ID == p.ID })
			return len(s.Pending) != n
		}); err != nil {
			return notes, nil, fmt.Errorf("hook: %s was applied, but not removed from the pending events: %w", p.what(), err)
		}
	}
	if s == nil {
		return notes, nil, nil
	}
	return notes, s.Pending, nil
}

// sendByKey is the context key of the time by which the sends of a hook
// event must be done (withSendBy).
type sendByKey struct{}

// withSendBy marks, in a context with a deadline, the time by which the
// event's sends must give up waiting for the workflow: two thirds of the
// way to the deadline, so that what they could not apply can still be
// kept in the store before it.
func withSendBy(ctx context.Context, now time.Time) context.Context {
	d, ok := ctx.Deadline()
	if !ok || !d.After(now) {
		return ctx
	}
	return context.WithValue(ctx, sendByKey{}, now.Add(d.Sub(now)*2/3))
}

// sendCtx returns the context of one send: ctx, ended at the time
// withSendBy set.
func sendCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if by, ok := ctx.Value(sendByKey{}).(time.Time); ok {
		return context.WithDeadline(ctx, by)
	}
	return context.WithCancel(ctx)
}

// apply sends a pending event to the workflow, within the time the
// event's sends have (sendCtx).
func (h *Handler) apply(ctx context.Context, ref gate.Ref, p PendingEvent) (*gate.Transition, error) {
	ctx, cancel := sendCtx(ctx)
	defer cancel()
	if p.Interrupt != "" {
		return h.gate.Send(ctx, ref, statechart.Event{Type: p.Event, Data: map[string]any{"input": map[string]any{"file": p.File, "interrupt": p.Interrupt}}}, "hook")
	}
	return h.gate.Commit(ctx, h.request(ref, nil, p.Tool, p.Input), gate.Outcome{Failed: p.Failed})
}

// pendingDeny is the refusal of a pre tool event while events of the
// session are not applied.
func pendingDeny(left []PendingEvent) string {
	var b strings.Builder
	b.WriteString("chartgate: this tool is refused until the workflow has taken what earlier tool calls sent, which could not be applied yet: ")
	for i, p := range left {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s (%s)", p.what(), p.Reason)
	}
	b.WriteString(". It is applied at the next hook event, as soon as the workflow is free; try again in a moment.")
	return b.String()
}

// pendingFile is where the post tool events of a session are kept while
// the store fails: one JSON event per line, under the project's
// .chartgate folder, named by a digest of the session id.
func (h *Handler) pendingFile(session string) string {
	sum := sha256.Sum256([]byte(session))
	return filepath.Join(h.project, ConfigDir, "pending", hex.EncodeToString(sum[:12])+".jsonl")
}

// keepInFile appends a post tool event the hook could not record (the
// store failed) to the session's pending file.
func (h *Handler) keepInFile(ev Event) error {
	path := h.pendingFile(ev.SessionID)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	line, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write(append(line, '\n'))
	serr := f.Sync()
	return errors.Join(werr, serr, f.Close())
}

// replayFile takes the session's pending file (renamed, so that one hook
// takes it) and replays its post tool events in order. A file taken by a
// hook that died (older than claimTTL) is taken again. Events not
// replayed (the store failed again) go back to the pending file.
func (h *Handler) replayFile(ctx context.Context, session string, ref gate.Ref) ([]string, error) {
	path := h.pendingFile(session)
	taken := path + ".taken-" + newID()
	if err := os.Rename(path, taken); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		taken = h.staleTaken(path)
		if taken == "" {
			return nil, nil
		}
	}
	data, err := os.ReadFile(taken)
	if err != nil {
		return nil, err
	}
	var evs []Event
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, MaxInput+1<<20)
	for sc.Scan() {
		var e Event
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.SessionID == session {
			evs = append(evs, e)
		}
	}
	var notes []string
	for i, e := range evs {
		wf, err := h.gate.WorkflowOf(ctx, ref)
		var res Result
		if err == nil {
			res, err = h.postTool(ctx, e, ref, wf, nil, false)
		}
		if err != nil {
			for _, rest := range evs[i:] {
				if kerr := h.keepInFile(rest); kerr != nil {
					return notes, errors.Join(err, kerr) // the taken file stays, for a later hook
				}
			}
			_ = os.Remove(taken)
			return notes, fmt.Errorf("hook: replaying the session's kept post tool events: %w", err)
		}
		if res.Context != "" {
			notes = append(notes, res.Context)
		}
	}
	return notes, os.Remove(taken)
}

// staleTaken returns a pending file of the session that a hook took and
// left (it died) more than claimTTL ago, renamed for this hook; "" if
// there is none.
func (h *Handler) staleTaken(path string) string {
	matches, _ := filepath.Glob(path + ".taken-*")
	for _, m := range matches {
		fi, err := os.Stat(m)
		if err != nil || h.o.Now().Sub(fi.ModTime()) < claimTTL {
			continue
		}
		mine := path + ".taken-" + newID()
		if os.Rename(m, mine) == nil {
			return mine
		}
	}
	return ""
}
