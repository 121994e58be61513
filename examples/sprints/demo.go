package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// step is one call of the scripted session.
type step struct {
	why  string
	tool string
	args map[string]any
}

var script = []step{
	{"read the board", "sprints_list", map[string]any{}},
	{"a mutation: the sprint list the client holds is now stale", "sprints_create", map[string]any{"name": "Sprint 3"}},
	{"moving a task changes two sprints: tasks.update invalidates sprints.* too", "tasks_update", map[string]any{"id": "t3", "sprint_id": "s3"}},
	{"a failed mutation changed nothing, so it invalidates nothing", "sprints_delete", map[string]any{"id": "s1"}},
	{"sprint 2 is empty now", "sprints_delete", map[string]any{"id": "s2"}},
	{"renaming", "sprints_update", map[string]any{"id": "s3", "name": "Sprint 3 (release)"}},
	{"re-read, as the notices asked", "sprints_list", map[string]any{}},
	{"reference data: immutable, never invalidated", "countries_list", map[string]any{}},
}

// demo connects a go-sdk client to the server in memory, runs the script and
// writes what the client sees to w.
func demo(ctx context.Context, w io.Writer) error {
	server, _, err := newServer(newStore(), nil)
	if err != nil {
		return err
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		return err
	}
	defer ss.Close()
	client := mcp.NewClient(&mcp.Implementation{Name: "sprints-demo", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		return err
	}
	defer cs.Close()

	fmt.Fprintln(w, "# tools/list: every description carries its cache directive")
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		return err
	}
	for _, t := range tools.Tools {
		fmt.Fprintf(w, "%-15s %s\n", t.Name, t.Description)
	}
	for _, s := range script {
		args, err := json.Marshal(s.args)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "\n# %s\n> %s %s\n", s.why, s.tool, args)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: s.tool, Arguments: s.args})
		if err != nil {
			return fmt.Errorf("%s: %w", s.tool, err)
		}
		if res.IsError {
			fmt.Fprintln(w, "(isError)")
		}
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				fmt.Fprintln(w, tc.Text)
			}
		}
	}
	return nil
}
