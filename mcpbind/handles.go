// This file defines workflow handles, for protocol 2026-07-28 (no sessions,
// tool lists that must not vary per connection) and stateless servers: the
// start tool mints a workflow id, every gated tool is listed with a
// workflow_id argument, and a call is gated by the workflow it names.

package mcpbind

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/internal/core"
)

// handleArg is the argument that carries a workflow id.
const handleArg = "workflow_id"

// WorkflowStart is the structured result of the start tool.
type WorkflowStart struct {
	WorkflowID string `json:"workflow_id"` // pass it to every tool of the workflow
	State      any    `json:"state"`       // the initial state value
	// Tools lists the tools that may be called now.
	Tools []string `json:"tools"`
	// Instructions are those of the active states.
	Instructions []string `json:"instructions,omitempty"`
}

// workflowIDKey is the context key of WorkflowID.
type workflowIDKey struct{}

// handleContext is a call's context with the workflow id it names
// (context.WithValue, in one allocation instead of two).
type handleContext struct {
	context.Context
	id string
}

// withWorkflowID returns ctx carrying the workflow id a call names.
func withWorkflowID(ctx context.Context, id string) context.Context {
	return &handleContext{Context: ctx, id: id}
}

// Value implements context.Context. Under workflowIDKey it gives the
// handleContext itself: a pointer goes into an interface without an
// allocation, the id (a string) would not.
func (c *handleContext) Value(key any) any {
	if key == (workflowIDKey{}) {
		return c
	}
	return c.Context.Value(key)
}

// WorkflowID returns the workflow id a tool call names, for the tool's
// handler: with handles the gate removes the workflow_id argument before
// the handler sees the arguments, and passes the id in the context
// instead. It returns "" for calls keyed by their session (use the
// request's session there).
func WorkflowID(ctx context.Context) string {
	if c, _ := ctx.Value(workflowIDKey{}).(*handleContext); c != nil {
		return c.id
	}
	return ""
}

// newHandle returns a fresh workflow id: 128 random bits, in hex.
func newHandle() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// addStartTool adds the start tool to a server. The gate's middleware
// answers its calls.
func (g *Gate) addStartTool(s *mcp.Server) {
	s.AddTool(&mcp.Tool{
		Name: g.core.Start,
		Description: fmt.Sprintf("Start a new run of the %q workflow. Returns its workflow_id, its state and the tools available now. "+
			"Pass the workflow_id to every tool of the workflow.", g.core.Engine().ID()),
		InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
	}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, fmt.Errorf("mcpbind: %s is answered by the gate's middleware", g.core.Start)
	})
}

// startCall answers a call of the start tool.
func (g *Gate) startCall(ctx context.Context, next mcp.MethodHandler, req *mcp.CallToolRequest, handles bool) (mcp.Result, error) {
	if !handles {
		return toolError(fmt.Sprintf("This session has its own %q workflow already; %s is not needed. Call the workflow's tools directly.", g.core.Engine().ID(), g.core.Start)), nil
	}
	if g.startLimit != nil {
		if ok, wait := g.startLimit.allow(req, g.core.Now()); !ok {
			return g.refuseStart(wait), nil
		}
	}
	var v *core.View
	var id string
	for attempt := 0; v == nil; attempt++ {
		id = newHandle()
		var err error
		v, err = g.core.Create(ctx, g.core.HandleKey(id))
		if errors.Is(err, ErrStoreFull) {
			g.core.Log.Warn("mcpbind: the store is full: a workflow was not started", "error", err)
			return toolError(fmt.Sprintf("Tool %q was not run: the server holds as many workflows as it can and cannot start another now. Try again later, or go on with a workflow already started.", g.core.Start)), nil
		}
		if err != nil && (!gate.IsConflict(err) || attempt >= 2) {
			return nil, g.unavailable(err, false)
		}
	}
	tools, err := g.registered(ctx, next, req)
	if err != nil {
		return nil, err
	}
	st := WorkflowStart{
		WorkflowID:   id,
		State:        v.State.Value(),
		Tools:        g.core.Available(ctx, g.core.Rules.Load(), v, tools),
		Instructions: g.core.Instructions(v),
	}
	g.core.Log.InfoContext(ctx, "mcpbind: workflow started", "key", core.Fingerprint(v.Key), "state", st.State)
	var b strings.Builder
	fmt.Fprintf(&b, "Started workflow %s in state %s. Pass %s %q to every tool of the workflow.", id, core.StateText(st.State), handleArg, id)
	b.WriteString("\nTools available now: " + strings.Join(st.Tools, ", ") + ".")
	for _, in := range st.Instructions {
		b.WriteString("\nInstructions: " + in)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: b.String()}}, StructuredContent: st}, nil
}

// strippedRequest is a call's request without its workflow_id argument,
// and its parameters.
type strippedRequest struct {
	req    mcp.CallToolRequest
	params mcp.CallToolParamsRaw
}

// takeHandle reads the workflow id of a call and returns it and its store
// key, with the call stripped of it, as the tool's handler expects its
// arguments (made in into, if not nil). A call without a well-formed id
// gets a refusal instead.
func (g *Gate) takeHandle(ctx context.Context, next mcp.MethodHandler, req *mcp.CallToolRequest, into *strippedRequest) (id, key string, _ *mcp.CallToolRequest, _ mcp.Result) {
	idv, rest, ok := cutHandle(req.Params.Arguments)
	if !ok {
		res, err := g.refuseHandle(ctx, next, req, CodeWorkflowRequired, "")
		return "", "", nil, orError(res, err)
	}
	if idv.Type != gjson.String || !core.ValidHandle(idv.Str) {
		// A copy: idv may point into the arguments (see cutHandle).
		res, err := g.refuseHandle(ctx, next, req, CodeUnknownWorkflow, strings.Clone(idv.Raw))
		return "", "", nil, orError(res, err)
	}
	// The key copies the id, and the id is its end: one allocation for
	// both, and nothing kept points into the arguments.
	key = g.core.HandleKey(idv.Str)
	id = key[len(key)-len(idv.Str):]
	stripped := into
	if stripped == nil {
		stripped = new(strippedRequest) // the request and its parameters, in one allocation
	}
	*stripped = strippedRequest{*req, *req.Params}
	stripped.params.Arguments = rest
	stripped.req.Params = &stripped.params
	return id, key, &stripped.req, nil
}

// cutHandle finds the workflow_id member of a call's arguments: it
// returns its value and the arguments without it (members in their
// order, values as they were written), or false if the arguments are not
// a JSON object with that member. Of repeated members the last counts, as
// in encoding/json, and none is kept.
//
// The arguments are read in place, not copied into a string for gjson:
// the value's strings may point into them, so a caller copies what it
// keeps beyond the call (the arguments are not changed while it runs).
func cutHandle(args json.RawMessage) (id gjson.Result, rest []byte, ok bool) {
	if !gjson.ValidBytes(args) {
		return id, nil, false
	}
	obj := gjson.Parse(unsafe.String(unsafe.SliceData(args), len(args)))
	if !obj.IsObject() {
		return id, nil, false
	}
	rest = make([]byte, 0, len(obj.Raw))
	rest = append(rest, '{')
	obj.ForEach(func(k, v gjson.Result) bool {
		if k.Str == handleArg {
			id, ok = v, true
			return true
		}
		if len(rest) > 1 {
			rest = append(rest, ',')
		}
		rest = append(rest, k.Raw...)
		rest = append(rest, ':')
		rest = append(rest, v.Raw...)
		return true
	})
	return id, append(rest, '}'), ok
}

// handledList is the tool list of one page for handle mode, for one set of
// workflow tools.
type handledList struct {
	wf    *workflowToolSets
	tools []*mcp.Tool
}

// handleList returns a page of tools/list for handle mode: every tool (but
// those DefaultDeny refuses), the gated ones (and the workflow tools) with
// a workflow_id argument and a description of the states in which they
// work. It is the same for every client, as protocol 2026-07-28 requires.
func (g *Gate) handleList(memo *listMemo, wf *workflowToolSets) []*mcp.Tool {
	return g.wholeList(&memo.handled, memo, wf, true)
}

// connectionList returns a page of tools/list for a connection of
// protocol 2026-07-28 that carries its own workflow (stdio, in-memory):
// every tool but the start tool (the connection has its workflow) and
// those DefaultDeny refuses, the gated ones with a description of the
// states in which they work. Calls are refused by the connection's state;
// the list does not vary, as the protocol requires.
func (g *Gate) connectionList(memo *listMemo, wf *workflowToolSets) []*mcp.Tool {
	return g.wholeList(&memo.connection, memo, wf, false)
}

// wholeList computes (once per set of workflow tools) the list of every
// tool of handle mode (handles) or of a connection's workflow.
func (g *Gate) wholeList(cache *atomic.Pointer[handledList], memo *listMemo, wf *workflowToolSets, handles bool) []*mcp.Tool {
	if l := cache.Load(); l != nil && l.wf == wf {
		return slices.Clone(l.tools)
	}
	out := make([]*mcp.Tool, 0, len(memo.tools))
	for i, t := range memo.tools {
		ti := memo.infos[i]
		switch {
		case isWorkflowTool(wf, t.Name):
			if handles {
				t = g.withHandle(t, "")
			}
			out = append(out, t)
		case ti.Mode == core.ModeStates || ti.Mode == core.ModeCan:
			if handles {
				out = append(out, g.withHandle(t, g.whereText(ti)))
			} else {
				out = append(out, withDescriptionNote(t, g.whereText(ti)))
			}
		case ti.Mode == core.ModeDenied:
			// Not part of the workflow (DefaultDeny): never callable.
		case ti.Mode == core.ModeStart && !handles:
			// The connection has its workflow: nothing to start.
		default:
			out = append(out, t)
		}
	}
	cache.Store(&handledList{wf: wf, tools: out})
	return slices.Clone(out)
}

// isWorkflowTool reports whether name is one of the workflow tools.
func isWorkflowTool(sets *workflowToolSets, name string) bool {
	w, _ := sets.byName(name)
	return w != nil
}

// whereText says in which states a gated tool works.
func (g *Gate) whereText(ti *core.ToolInfo) string {
	if ti.Mode == core.ModeCan {
		return fmt.Sprintf("It works only when the workflow accepts event %q.", ti.Event)
	}
	var names []string
	for i := range g.core.Nodes {
		if ti.Nodes.Has(i) {
			if g.core.Paths[i] == "" {
				return "It works in every state of the workflow."
			}
			names = append(names, strconv.Quote(g.core.Paths[i]))
		}
	}
	if len(names) == 1 {
		return "It works only in state " + names[0] + "."
	}
	return "It works only in states " + strings.Join(names, ", ") + "."
}

// withHandle returns a copy of a tool that takes the workflow_id argument.
func (g *Gate) withHandle(t *mcp.Tool, where string) *mcp.Tool {
	out := *t
	note := fmt.Sprintf("Part of the %q workflow: pass the %s that %s returned.", g.core.Engine().ID(), handleArg, g.core.Start)
	if where != "" {
		note += " " + where
	}
	out = *withDescriptionNote(&out, note)
	out.InputSchema = withHandleProperty(t.InputSchema, fmt.Sprintf("The workflow id that %s returned.", g.core.Start))
	return &out
}

// withDescriptionNote returns a copy of a tool with a note after its description.
func withDescriptionNote(t *mcp.Tool, note string) *mcp.Tool {
	out := *t
	if out.Description == "" {
		out.Description = note
	} else {
		out.Description = strings.TrimRight(out.Description, " \n") + "\n\n" + note
	}
	return &out
}

// withHandleProperty returns an input schema with a required string
// property workflow_id added. A schema it cannot read is returned as it is.
func withHandleProperty(schema any, desc string) any {
	b, err := json.Marshal(schema)
	if err != nil {
		return schema
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil || m == nil {
		return schema
	}
	props, _ := m["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	props[handleArg] = map[string]any{"type": "string", "description": desc}
	m["properties"] = props
	req, _ := m["required"].([]any)
	if !slices.Contains(req, any(handleArg)) {
		req = append(req, handleArg)
	}
	m["required"] = req
	out, err := json.Marshal(m)
	if err != nil {
		return schema
	}
	return json.RawMessage(out)
}
