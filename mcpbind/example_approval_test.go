package mcpbind_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart"
)

// A transition that waits for a person, answered with a grant signed with
// the approver key (what chartgate approve does), once.
func ExampleGate_Approve() {
	m, err := statechart.Compile([]byte(`{
	  "id": "deploy", "initial": "tested",
	  "states": {
	    "tested": {"on": {"DEPLOY": "waiting"}},
	    "waiting": {
	      "on": {"chartgate.approve": "live", "chartgate.reject": "tested"},
	      "meta": {"mcp": {"approval": {"event": "DEPLOY", "from": "tested", "to": "live", "message": "ship it?"}}}
	    },
	    "live": {"type": "final"}
	  }
	}`), nil)
	if err != nil {
		panic(err)
	}
	key := []byte("a secret only the person can read")
	gate, err := mcpbind.New(m.Engine(), &mcpbind.Options{ApproverKey: key})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	ref := mcpbind.Ref{Name: "session-1"}
	if _, err := gate.Send(ctx, ref, statechart.Event{Type: "DEPLOY"}, "agent"); err != nil {
		panic(err)
	}
	p, _ := gate.Pending(ctx, ref)
	fmt.Println("pending:", p.From, "->", p.To, p.Message, "id of", len(p.ID), "hex digits")

	now := time.Now()
	grant := mcpbind.Grant{ID: p.ID, Approve: true, By: "ada", Authenticated: true, Time: now,
		Token: mcpbind.ApprovalToken(key, p.ID, true, "ada", now)}
	tr, err := gate.Approve(ctx, ref, grant)
	fmt.Println("approved:", tr.To, tr.Approval.By, tr.Approval.Channel, err)
	_, err = gate.Approve(ctx, ref, grant)
	fmt.Println("again:", errors.Is(err, mcpbind.ErrApprovalUsed))
	// Output:
	// pending: tested -> live ship it? id of 40 hex digits
	// approved: live ada command <nil>
	// again: true
}
