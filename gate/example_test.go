package gate_test

import (
	"context"
	"fmt"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart"
)

// Example decides and commits calls of an agent host's own tools (say a
// hook's Bash and Write) with no MCP server: Decide refuses Write while
// the workflow plans, Commit records a Bash call that sends PLANNED, and
// Write is allowed in the state that follows.
func Example() {
	m, err := statechart.Compile([]byte(`{
	  "id": "task", "initial": "planning",
	  "states": {
	    "planning": {"on": {"PLANNED": "writing"},
	                 "meta": {"mcp": {"tools": ["Bash"], "events": {"Bash": "PLANNED"},
	                                  "instructions": "Plan first."}}},
	    "writing":  {"meta": {"mcp": {"tools": ["Write"]}}}
	  }}`), nil)
	if err != nil {
		panic(err)
	}
	g, err := mcpbind.New(m.Engine(), &mcpbind.Options{DefaultDeny: true})
	if err != nil {
		panic(err)
	}
	var d gate.Decider = g
	ctx := context.Background()
	ref := gate.Ref{Name: "agent-session-1"}
	tools := []string{"Bash", "Write"}

	dec, err := d.Decide(ctx, gate.Request{Ref: ref, Tool: "Write", Tools: tools})
	if err != nil {
		panic(err)
	}
	fmt.Println(dec.Allowed, dec.Refusal.Code, dec.Refusal.Available, dec.Refusal.Path)

	tr, err := d.Commit(ctx, gate.Request{Ref: ref, Tool: "Bash", Args: []byte(`{"command": "ls"}`), Tools: tools}, gate.Outcome{})
	if err != nil {
		panic(err)
	}
	fmt.Println(tr.Event.Type, tr.From, "->", tr.To)

	dec, err = d.Decide(ctx, gate.Request{Ref: ref, Tool: "Write", Tools: tools})
	if err != nil {
		panic(err)
	}
	fmt.Println(dec.Allowed)
	// Output:
	// false FORBIDDEN [Bash] [{Bash PLANNED  []}]
	// PLANNED planning -> writing
	// true
}
