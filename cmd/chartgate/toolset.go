// This file turns a workflow's transport-free tool set (Statewright's
// statewright_get_state and statewright_transition) into mcpbind's
// workflow tools.

package main

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/workflow"
)

// workflowTools returns the options of mcpbind workflow tools that answer
// as ts renders, each answer the text of the result.
func workflowTools(ts *workflow.ToolSet) *mcpbind.WorkflowToolsOptions {
	o := &mcpbind.WorkflowToolsOptions{
		StatusName:            ts.StatusName,
		TransitionName:        ts.TransitionName,
		StatusDescription:     ts.StatusDescription,
		TransitionDescription: ts.TransitionDescription,
		AnyEvent:              ts.AnyEvent,
		ExplainGuard:          ts.ExplainGuard,
	}
	if f := ts.RenderStatus; f != nil {
		o.RenderStatus = func(ctx context.Context, st mcpbind.WorkflowStatus, wf *mcpbind.Workflow) *mcp.CallToolResult {
			return textResult(f(ctx, st, wf))
		}
	}
	if f := ts.RenderTransition; f != nil {
		o.RenderTransition = func(ctx context.Context, tr mcpbind.TransitionResult, wf *mcpbind.Workflow) *mcp.CallToolResult {
			return textResult(f(ctx, tr, wf))
		}
	}
	return o
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}
