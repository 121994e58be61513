// This file defines refusals: the answer to a call the gate does not run,
// with the guidance that tells the agent what it may do instead.

package mcpbind

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/internal/core"
)

// MetaKey is the _meta key of the gate's notes on a call result.
const MetaKey = "chartgate/mcpbind"

// RefusalOf returns the refusal of a call result the gate refused (for Go
// clients: the refusal is under [MetaKey] in the result's _meta). It
// returns false for a result that is not a refusal: the call ran.
func RefusalOf(res *mcp.CallToolResult) (*Refusal, bool) {
	if res == nil || !res.IsError {
		return nil, false
	}
	switch v := res.Meta[MetaKey].(type) {
	case *Refusal:
		return v, true
	case nil:
		return nil, false
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, false
		}
		var ref Refusal
		if json.Unmarshal(b, &ref) != nil || ref.Code == "" {
			return nil, false
		}
		return &ref, true
	}
}

// mcpAnswer is an answer the MCP door made, as an MCP result.
func mcpAnswer(answer any, err error) (mcp.Result, error) {
	res, _ := answer.(mcp.Result)
	return res, err
}

// mcpResult is a verdict as an MCP tool result: a refusal is IsError with
// the text and the Refusal under MetaKey in _meta, a tool error IsError
// with the text; an answer the MCP door made is returned as it is.
func mcpResult(vd *core.Verdict) mcp.Result {
	switch {
	case vd.Answer != nil:
		res, _ := mcpAnswer(vd.Answer, nil)
		return res
	case vd.Ref != nil:
		return &mcp.CallToolResult{
			IsError: true,
			Content: []mcp.Content{&mcp.TextContent{Text: vd.Text}},
			Meta:    mcp.Meta{MetaKey: vd.Ref},
		}
	case vd.Text != "":
		return toolError(vd.Text)
	}
	return nil
}

// registered lists the names of the server's tools, through the handlers
// below the gate.
func (g *Gate) registered(ctx context.Context, next mcp.MethodHandler, req *mcp.CallToolRequest) ([]string, error) {
	lreq := &mcp.ListToolsRequest{Session: req.Session, Extra: req.Extra, Params: &mcp.ListToolsParams{}}
	var names []string
	for page := 0; page < 1000; page++ {
		res, err := next(ctx, "tools/list", lreq)
		if err != nil {
			return nil, err
		}
		lr, ok := res.(*mcp.ListToolsResult)
		if !ok || lr == nil {
			return nil, fmt.Errorf("tools/list returned %T", res)
		}
		for _, t := range lr.Tools {
			names = append(names, t.Name)
		}
		if lr.NextCursor == "" {
			break
		}
		lreq = &mcp.ListToolsRequest{Session: req.Session, Extra: req.Extra, Params: &mcp.ListToolsParams{Cursor: lr.NextCursor}}
	}
	return names, nil
}

// orError turns a failed answer into an error result.
func orError(res mcp.Result, err error) mcp.Result {
	if err != nil {
		return toolError(err.Error())
	}
	return res
}

// refuseHandle answers a call that names no workflow (code
// CodeWorkflowRequired) or an unknown one (CodeUnknownWorkflow), without
// running it. A name the server does not have goes to the server, which
// reports it.
func (g *Gate) refuseHandle(ctx context.Context, next mcp.MethodHandler, req *mcp.CallToolRequest, code, id string) (mcp.Result, error) {
	name := req.Params.Name
	tools, err := g.registered(ctx, next, req)
	if err == nil && !slices.Contains(tools, name) {
		return next(ctx, "tools/call", req)
	}
	ref := Refusal{Code: code, Tool: name, Available: []string{g.core.Start}, Path: []Step{{Tool: g.core.Start}}, Reachable: true}
	var text string
	if code == CodeWorkflowRequired {
		text = fmt.Sprintf("Tool %q is part of the %q workflow and needs its %s argument. Call %s first to start a workflow, then pass the %s it returns to %s.",
			name, g.core.Engine().ID(), handleArg, g.core.Start, handleArg, name)
	} else {
		if core.ValidHandle(id) {
			ref.Workflow = id
		}
		text = fmt.Sprintf("Tool %q was not run: %s %s names no running %q workflow (it may have expired). Call %s to start a new one and pass the %s it returns.",
			name, handleArg, truncate(id, 80), g.core.Engine().ID(), g.core.Start, handleArg)
	}
	return mcpResult(core.Refused(&ref, text)), nil
}

// truncate quotes s, shortened to at most n bytes.
func truncate(s string, n int) string {
	if len(s) > n {
		s = s[:n] + "…"
	}
	return strconv.Quote(s)
}

func toolError(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}
