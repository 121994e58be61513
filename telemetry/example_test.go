package telemetry_test

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart/flat"
	"github.com/chartgate/chartgate/telemetry"
)

// A gated server whose requests and transitions are traced: the gate's
// middleware first, the telemetry's after it (outside), so that it sees
// the gate's refusals.
func Example() {
	spans := tracetest.NewSpanRecorder()
	tel, err := telemetry.New(telemetry.Options{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)), Workflow: "job"})
	if err != nil {
		panic(err)
	}
	m, err := flat.Compile([]byte(`{"id": "job", "initial": "idle", "states": {"idle": {"on": {"START": "working"}}, "working": {}}}`))
	if err != nil {
		panic(err)
	}
	gate, err := mcpbind.New(m, &mcpbind.Options{OnTransition: tel.OnTransition})
	if err != nil {
		panic(err)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	mcpbind.AddTool(server, gate, &mcp.Tool{Name: "start"}, mcpbind.Binding{States: []string{"idle"}, Event: "START"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return nil, nil, nil
		})
	gate.Attach(server)
	server.AddReceivingMiddleware(tel.Middleware)

	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := server.Connect(ctx, st, nil); err != nil {
		panic(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		panic(err)
	}
	defer cs.Close()
	for range 2 { // the second call is refused: the workflow moved on
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "start"}); err != nil {
			panic(err)
		}
	}
	for _, s := range spans.Ended() {
		if s.Name() == "tools/call start" || s.Name() == "chartgate.transition START" {
			fmt.Print(s.Name())
			for _, kv := range s.Attributes() {
				if kv.Key == "chartgate.decision" || kv.Key == "chartgate.refusal.code" || kv.Key == "chartgate.state.after" {
					fmt.Printf(" %s=%s", kv.Key, kv.Value.String())
				}
			}
			fmt.Println()
		}
	}
	// Output:
	// chartgate.transition START chartgate.state.after="working"
	// tools/call start chartgate.decision=allowed
	// tools/call start chartgate.refusal.code=FORBIDDEN chartgate.decision=refused
}
