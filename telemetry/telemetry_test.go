package telemetry_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart/flat"
	"github.com/chartgate/chartgate/telemetry"
)

// TestSpansAndCounters: a client whose calls carry a traceparent calls a
// tool the state refuses, then one that moves the workflow. The backend
// gets the two tools/call spans in the client's trace, with the MCP
// attributes and the gate's decision, the refusal's code and state, the
// transition's span under the call's, and the counts.
func TestSpansAndCounters(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))

	m, err := flat.Compile([]byte(`{"id": "job", "initial": "idle", "states": {"idle": {"on": {"START": "working"}}, "working": {"on": {"FINISH": "done"}}, "done": {"type": "final"}}}`))
	require.NoError(t, err)
	tel, err := telemetry.New(telemetry.Options{TracerProvider: tp, MeterProvider: mp, Workflow: "job"})
	require.NoError(t, err)
	gate, err := mcpbind.New(m, &mcpbind.Options{OnTransition: tel.OnTransition})
	require.NoError(t, err)
	server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	noop := func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return nil, nil, nil
	}
	mcpbind.AddTool(server, gate, &mcp.Tool{Name: "start"}, mcpbind.Binding{States: []string{"idle"}, Event: "START"}, noop)
	mcpbind.AddTool(server, gate, &mcp.Tool{Name: "finish"}, mcpbind.Binding{States: []string{"working"}, Event: "FINISH"}, noop)
	gate.Attach(server)
	server.AddReceivingMiddleware(tel.Middleware)

	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	_, err = server.Connect(ctx, st, nil)
	require.NoError(t, err)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	defer cs.Close()

	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	meta := mcp.Meta{"traceparent": "00-" + traceID + "-00f067aa0ba902b7-01"}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "finish", Meta: meta})
	require.NoError(t, err)
	require.True(t, res.IsError)
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "start", Meta: meta})
	require.NoError(t, err)
	require.False(t, res.IsError)

	byName := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range spans.Ended() {
		byName[s.Name()] = s
	}
	refused, ok := byName["tools/call finish"]
	require.True(t, ok, "no span of the refused call; spans: %v", names(spans.Ended()))
	assert.Equal(t, traceID, refused.SpanContext().TraceID().String(), "the client's trace")
	assert.Equal(t, "00f067aa0ba902b7", refused.Parent().SpanID().String())
	assert.Equal(t, trace.SpanKindServer, refused.SpanKind())
	attrs := attrMap(refused.Attributes())
	assert.Equal(t, "tools/call", attrs["mcp.method.name"])
	assert.Equal(t, "finish", attrs["gen_ai.tool.name"])
	assert.Equal(t, "execute_tool", attrs["gen_ai.operation.name"])
	assert.Equal(t, "job", attrs["chartgate.workflow"])
	assert.Equal(t, "refused", attrs["chartgate.decision"])
	assert.Equal(t, mcpbind.CodeForbidden, attrs["chartgate.refusal.code"])
	assert.Equal(t, `"idle"`, attrs["chartgate.state.before"])
	assert.Equal(t, "tool_error", attrs["error.type"])

	allowed := byName["tools/call start"]
	require.NotNil(t, allowed)
	assert.Equal(t, "allowed", attrMap(allowed.Attributes())["chartgate.decision"])
	tr, ok := byName["chartgate.transition START"]
	require.True(t, ok, "no transition span; spans: %v", names(spans.Ended()))
	assert.Equal(t, allowed.SpanContext().SpanID(), tr.Parent().SpanID(), "the transition's span is the call's child")
	ta := attrMap(tr.Attributes())
	assert.Equal(t, `"idle"`, ta["chartgate.state.before"])
	assert.Equal(t, `"working"`, ta["chartgate.state.after"])
	assert.Equal(t, "start", ta["gen_ai.tool.name"])

	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(ctx, &rm))
	counts := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if sum, ok := m.Data.(metricdata.Sum[int64]); ok {
				for _, dp := range sum.DataPoints {
					key := m.Name
					for _, k := range []attribute.Key{"gen_ai.tool.name", "chartgate.decision", "chartgate.refusal.code", "chartgate.event"} {
						if v, ok := dp.Attributes.Value(k); ok {
							key += " " + v.AsString()
						}
					}
					counts[key] += dp.Value
				}
			}
		}
	}
	assert.Equal(t, map[string]int64{
		"chartgate.calls finish refused":                     1,
		"chartgate.calls start allowed":                      1,
		"chartgate.refusals finish " + mcpbind.CodeForbidden: 1,
		"chartgate.transitions START":                        1,
	}, counts)
}

func attrMap(kvs []attribute.KeyValue) map[string]string {
	out := map[string]string{}
	for _, kv := range kvs {
		out[string(kv.Key)] = kv.Value.String()
	}
	return out
}

func names(spans []sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name())
	}
	return out
}
