package flat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/statechart/flat"
)

func Example() {
	config := []byte(`{
		"id": "checkout",
		"initial": "empty",
		"states": {
			"empty":     {"on": {"ADD_ITEM": "has_items"}},
			"has_items": {"on": {"ADD_ITEM": "has_items", "CHECKOUT": "payment"}},
			"payment":   {"on": {"PAY": "confirmed"}},
			"confirmed": {"type": "final"}
		}
	}`)
	if !flat.IsFlat(config) {
		fmt.Println("needs statechart.Compile")
		return
	}
	m, err := flat.Compile(config)
	if err != nil {
		fmt.Println(err)
		return
	}
	var e statechart.Engine = m
	ctx, now := context.Background(), time.Now()
	s, _ := e.Start(ctx, now)
	for _, ev := range []string{"CHECKOUT", "ADD_ITEM", "CHECKOUT", "PAY", "ADD_ITEM"} {
		s, _ = e.Send(ctx, s, statechart.NewEvent(ev), now)
		fmt.Printf("%-8s -> %s (%s)\n", ev, s.Value(), s.Status())
	}
	b, _ := json.Marshal(s)
	fmt.Println(string(b))

	_, err = flat.Compile([]byte(`{"initial": "a", "states": {"a": {"on": {"GO": "bb"}, "entry": "log"}, "b": {}}}`))
	fmt.Println(err)
	// Output:
	// CHECKOUT -> empty (active)
	// ADD_ITEM -> has_items (active)
	// CHECKOUT -> payment (active)
	// PAY      -> confirmed (done)
	// ADD_ITEM -> confirmed (done)
	// {"status":"done","value":"confirmed","context":{},"historyValue":{},"children":{},"nodes":["checkout","checkout.confirmed"]}
	// 2 errors:
	// 	states.a.entry: the flat form has no entry actions; use the full interpreter (statechart.Compile)
	// 	states.a.on.GO: "bb" is not a state (did you mean "b"?)
}
