package ui

// This file defines what the page shows, as JSON: the list of workflows
// and one workflow's view.

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/chartgate/chartgate/internal/jsonx"
	"github.com/chartgate/chartgate/mcpbind"
)

// row is one workflow of the list.
type row struct {
	Workflow     string                   `json:"workflow"` // "id:<id>" or "name:<name>"; "" when known by key only
	Key          string                   `json:"key"`
	State        string                   `json:"state"`
	Status       string                   `json:"status"`
	Pending      *mcpbind.PendingApproval `json:"pending,omitempty"`
	Updated      string                   `json:"updated,omitempty"` // RFC 3339, UTC
	Instructions []string                 `json:"instructions,omitempty"`
	Limits       []mcpbind.CallLimit      `json:"limits,omitempty"`
	Last         *entry                   `json:"last,omitempty"`
}

// detail is one workflow's view.
type detail struct {
	row
	Active  []string `json:"active"` // the ids of the active states, ancestors included
	History []entry  `json:"history"`
}

// entry is one entry of the run history.
type entry struct {
	Time      string `json:"time"`
	Kind      string `json:"kind"` // call, refusal or transition
	Tool      string `json:"tool,omitempty"`
	By        string `json:"by,omitempty"`
	Event     string `json:"event,omitempty"`
	From      string `json:"from"`
	To        string `json:"to,omitempty"`
	Outcome   string `json:"outcome,omitempty"`
	Reason    string `json:"reason,omitempty"` // a refusal's, in words
	Rationale string `json:"rationale,omitempty"`
	Data      string `json:"data,omitempty"` // the event's data, JSON
}

// reasons puts refusal codes in words.
var reasons = map[string]string{
	mcpbind.CodeForbidden:        "the tool is not allowed in this state",
	mcpbind.CodeCallLimit:        "the state's call budget is used up",
	mcpbind.CodeWorkflowRequired: "the tool needs a workflow id",
	mcpbind.CodeUnknownWorkflow:  "no such workflow",
	mcpbind.CodeWorkflowExpired:  "the workflow expired",
	mcpbind.CodeRateLimited:      "too many calls",
	mcpbind.CodeWorkflowBusy:     "the workflow was busy",
	mcpbind.CodeTooLarge:         "the arguments are too large",
	mcpbind.CodeWorkflowError:    "the workflow is in error",
	mcpbind.CodeStateNotSaved:    "the new state could not be saved",
	"REFUSED":                    "the machine does not take this event in this state",
}

func refText(r mcpbind.Ref) string {
	switch {
	case r.ID != "":
		return "id:" + r.ID
	case r.Name != "":
		return "name:" + r.Name
	}
	return ""
}

// parseRef reads "id:<id>" or "name:<name>".
func parseRef(s string) (mcpbind.Ref, error) {
	if id, ok := strings.CutPrefix(s, "id:"); ok && id != "" {
		return mcpbind.Ref{ID: id}, nil
	}
	if name, ok := strings.CutPrefix(s, "name:"); ok && name != "" {
		return mcpbind.Ref{Name: name}, nil
	}
	return mcpbind.Ref{}, errors.New(`a workflow is "id:<id>" or "name:<name>", not ` + jsonx.Text(s))
}

func stateText(v any) string {
	if v == nil {
		return ""
	}
	return jsonx.Text(v)
}

func timeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func entryOf(t mcpbind.Transition) entry {
	e := entry{Time: timeText(t.Time), Tool: t.Tool, By: t.By, From: stateText(t.From)}
	if t.Outcome != "" {
		e.Kind, e.Outcome = "call", strings.ToLower(t.Outcome)
		if t.Outcome != "ran" && t.Outcome != "failed" {
			e.Kind, e.Outcome = "refusal", t.Outcome
			e.Reason = reasons[t.Outcome]
		}
		return e
	}
	e.Kind, e.Event, e.To = "transition", t.Event.Type, stateText(t.To)
	if in, ok := t.Event.Data["input"].(map[string]any); ok {
		if r, ok := in["rationale"].(string); ok {
			e.Rationale = r
		}
	}
	if len(t.Event.Data) > 0 {
		if b, err := json.Marshal(t.Event.Data); err == nil {
			e.Data = string(b)
		}
	}
	return e
}

// instructions returns the instructions of the active states, outermost
// first.
func (s *Server) instructions(ids []string) []string {
	var out []string
	for _, id := range ids {
		if in := s.instructs[id]; in != "" {
			out = append(out, in)
		}
	}
	return out
}

func (s *Server) listView(ctx context.Context) ([]row, error) {
	ws, err := s.gate.Workflows(ctx)
	if err != nil {
		return nil, err
	}
	rows := make([]row, 0, len(ws))
	for _, w := range ws {
		r := row{Workflow: refText(w.Ref), Key: w.Key, State: stateText(w.State), Status: string(w.Status), Pending: w.Pending, Updated: timeText(w.Updated)}
		if r.Workflow != "" {
			if wf, err := s.gate.WorkflowOf(ctx, w.Ref); err == nil {
				r.Instructions = s.instructions(wf.State.StateIDs())
				r.Limits = wf.Limits
				if n := len(wf.History); n > 0 {
					last := entryOf(wf.History[n-1])
					r.Last = &last
				}
			}
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func (s *Server) detailView(ctx context.Context, ref mcpbind.Ref) (*detail, error) {
	wf, err := s.gate.WorkflowOf(ctx, ref)
	if err != nil {
		return nil, err
	}
	pending, err := s.gate.Pending(ctx, ref)
	if err != nil {
		return nil, err
	}
	ids := wf.State.StateIDs()
	d := &detail{
		row: row{Workflow: refText(ref), Key: wf.Key, State: stateText(wf.State.Value()), Status: string(wf.State.Status()),
			Pending: pending, Instructions: s.instructions(ids), Limits: wf.Limits},
		Active:  ids,
		History: make([]entry, len(wf.History)),
	}
	for i, t := range wf.History {
		d.History[i] = entryOf(t)
	}
	if n := len(wf.History); n > 0 {
		d.Updated = timeText(wf.History[n-1].Time)
		d.Last = &d.History[n-1]
	}
	return d, nil
}
