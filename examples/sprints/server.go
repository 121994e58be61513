package main

import (
	"context"

	"github.com/chartgate/chartgate/statesync"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// policies are the seeds' State Sync configuration, written in the canonical
// group.action form although the tools are named group_action.
func policies() []statesync.Policy {
	return []statesync.Policy{
		// Mutations that invalidate related domains
		{Match: "sprints.update", Invalidates: []string{"sprints.*"}},
		{Match: "sprints.create", Invalidates: []string{"sprints.*"}},
		{Match: "sprints.delete", Invalidates: []string{"sprints.*"}},
		{Match: "tasks.update", Invalidates: []string{"tasks.*", "sprints.*"}},
		// Static reference data
		{Match: "countries.*", CacheControl: statesync.Immutable},
	}
}

type (
	noArgs     struct{}
	createArgs struct {
		Name string `json:"name" jsonschema:"Sprint name"`
	}
	updateSprintArgs struct {
		ID   string `json:"id" jsonschema:"Sprint ID"`
		Name string `json:"name,omitempty" jsonschema:"New name"`
	}
	deleteArgs struct {
		ID string `json:"id" jsonschema:"Sprint ID"`
	}
	updateTaskArgs struct {
		ID       string  `json:"id" jsonschema:"Task ID"`
		Title    *string `json:"title,omitempty" jsonschema:"New title"`
		SprintID *string `json:"sprint_id,omitempty" jsonschema:"ID of the sprint to move the task to"`
	}
	sprintsOut struct {
		Sprints []SprintView `json:"sprints"`
	}
	countriesOut struct {
		Countries []string `json:"countries"`
	}
)

// newServer builds the MCP server: six tools over st, with the State Sync
// layer installed as receiving middleware. Invalidations are also sent as
// notifications/resources/updated to clients subscribed to
// statesync://stale/<pattern>.
func newServer(st *store, opts *statesync.Options) (*mcp.Server, *statesync.Layer, error) {
	server := mcp.NewServer(&mcp.Implementation{Name: "sprints", Version: "1.0.0"}, &mcp.ServerOptions{
		Capabilities:       &mcp.ServerCapabilities{Resources: &mcp.ResourceCapabilities{Subscribe: true}},
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	o := statesync.Options{Default: statesync.NoStore}
	if opts != nil {
		o = *opts
	}
	if o.Sink == nil {
		o.Sink = statesync.ServerSink(server)
	}
	layer, err := statesync.New(policies(), &o)
	if err != nil {
		return nil, nil, err
	}

	mcp.AddTool(server, &mcp.Tool{Name: "sprints_list", Description: "List workspace sprints with their tasks."},
		func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, sprintsOut, error) {
			return nil, sprintsOut{st.listSprints()}, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: "sprints_create", Description: "Create a new sprint."},
		func(_ context.Context, _ *mcp.CallToolRequest, in createArgs) (*mcp.CallToolResult, SprintView, error) {
			v, err := st.createSprint(in.Name)
			return nil, v, err
		})
	mcp.AddTool(server, &mcp.Tool{Name: "sprints_update", Description: "Rename a sprint."},
		func(_ context.Context, _ *mcp.CallToolRequest, in updateSprintArgs) (*mcp.CallToolResult, SprintView, error) {
			v, err := st.updateSprint(in.ID, in.Name)
			return nil, v, err
		})
	mcp.AddTool(server, &mcp.Tool{Name: "sprints_delete", Description: "Delete an empty sprint."},
		func(_ context.Context, _ *mcp.CallToolRequest, in deleteArgs) (*mcp.CallToolResult, SprintView, error) {
			v, err := st.deleteSprint(in.ID)
			return nil, v, err
		})
	mcp.AddTool(server, &mcp.Tool{Name: "tasks_update", Description: "Update a task: retitle it, or move it to another sprint."},
		func(_ context.Context, _ *mcp.CallToolRequest, in updateTaskArgs) (*mcp.CallToolResult, TaskView, error) {
			v, err := st.updateTask(in.ID, in.Title, in.SprintID)
			return nil, v, err
		})
	mcp.AddTool(server, &mcp.Tool{Name: "countries_list", Description: "List country codes."},
		func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, countriesOut, error) {
			return nil, countriesOut{countries}, nil
		})

	server.AddReceivingMiddleware(layer.Middleware)
	return server, layer, nil
}

// toolNames are the wire names of the server's tools.
var toolNames = []string{"sprints_list", "sprints_create", "sprints_update", "sprints_delete", "tasks_update", "countries_list"}
