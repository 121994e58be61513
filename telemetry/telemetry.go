// Package telemetry records chartgate's gate in OpenTelemetry: a span per
// MCP request served (a gated tool call among them) and per workflow
// transition, under the GenAI/MCP semantic conventions (mcp.method.name,
// gen_ai.tool.name, gen_ai.operation.name, mcp.session.id, error.type),
// with chartgate.* attributes for the workflow, the state before and
// after, the gate's decision and the refusal's code; and counters of
// calls, refusals and transitions.
//
// A request's span continues the trace the client names in the request's
// _meta (traceparent, tracestate), when it does.
//
// [Telemetry.Middleware] is a go-sdk receiving middleware: add it after
// the gate's (mcpbind.Gate.Attach), so that it sees the gate's refusals.
// [Telemetry.OnTransition] is an mcpbind Options.OnTransition.
// [FromEnv] builds the OTLP exporters from the standard OTEL_*
// environment variables; with none set, telemetry is off and nothing is
// attached, so it costs nothing.
package telemetry

import (
	"context"
	"encoding/json"
	"reflect"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/chartgate/chartgate/mcpbind"
)

// scope names the instrumentation.
const scope = "github.com/chartgate/chartgate/telemetry"

// Attribute keys of chartgate's own.
const (
	AttrWorkflow    = "chartgate.workflow"     // the workflow's machine id
	AttrStateBefore = "chartgate.state.before" // the state value, as JSON, before
	AttrStateAfter  = "chartgate.state.after"  // and after a transition
	AttrEvent       = "chartgate.event"        // the event of a transition
	AttrDecision    = "chartgate.decision"     // allowed or refused
	AttrRefusalCode = "chartgate.refusal.code" // the refusal's code (mcpbind.Code...)
)

// Options configures [New].
type Options struct {
	// TracerProvider and MeterProvider receive the spans and the counters;
	// nil: none is recorded.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	// Workflow is the machine id of the gated workflow ("" when the server
	// gates nothing).
	Workflow string
	// OnTransition, if set, is called after the span of each transition
	// (to chain the mcpbind callback already in place).
	OnTransition func(context.Context, mcpbind.Transition)
}

// Telemetry records the requests and transitions of one server.
type Telemetry struct {
	tracer                       trace.Tracer
	calls, refusals, transitions metric.Int64Counter
	duration                     metric.Float64Histogram
	workflow                     []attribute.KeyValue
	next                         func(context.Context, mcpbind.Transition)
}

// New returns the telemetry of a server.
func New(o Options) (*Telemetry, error) {
	tp, mp := o.TracerProvider, o.MeterProvider
	if tp == nil {
		tp = tracenoop.NewTracerProvider()
	}
	if mp == nil {
		mp = noop.NewMeterProvider()
	}
	m := mp.Meter(scope)
	t := &Telemetry{tracer: tp.Tracer(scope), next: o.OnTransition}
	if o.Workflow != "" {
		t.workflow = []attribute.KeyValue{attribute.String(AttrWorkflow, o.Workflow)}
	}
	var err error
	if t.calls, err = m.Int64Counter("chartgate.calls", metric.WithDescription("Gated tool calls, by tool and decision"), metric.WithUnit("{call}")); err != nil {
		return nil, err
	}
	if t.refusals, err = m.Int64Counter("chartgate.refusals", metric.WithDescription("Tool calls the gate refused, by tool and refusal code"), metric.WithUnit("{call}")); err != nil {
		return nil, err
	}
	if t.transitions, err = m.Int64Counter("chartgate.transitions", metric.WithDescription("Workflow transitions, by event"), metric.WithUnit("{transition}")); err != nil {
		return nil, err
	}
	if t.duration, err = m.Float64Histogram("mcp.server.operation.duration", metric.WithDescription("MCP request duration as observed on the server"), metric.WithUnit("s")); err != nil {
		return nil, err
	}
	return t, nil
}

// Middleware is a go-sdk receiving middleware that records a span for
// each request, and counts tool calls and refusals.
func (t *Telemetry) Middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ctx = extract(ctx, req)
		name := method
		attrs := make([]attribute.KeyValue, 0, 8)
		attrs = append(attrs, attribute.String("mcp.method.name", method))
		attrs = append(attrs, t.workflow...)
		var tool string
		if c, ok := req.(*mcp.CallToolRequest); ok && c.Params != nil {
			tool = c.Params.Name
			name += " " + tool
			attrs = append(attrs, attribute.String("gen_ai.tool.name", tool), attribute.String("gen_ai.operation.name", "execute_tool"))
		}
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil && ss.ID() != "" {
			attrs = append(attrs, attribute.String("mcp.session.id", ss.ID()))
		}
		start := time.Now()
		ctx, span := t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
		defer span.End()
		res, err := next(ctx, method, req)
		metricAttrs := []attribute.KeyValue{attribute.String("mcp.method.name", method)}
		switch {
		case err != nil:
			span.SetStatus(codes.Error, err.Error())
			span.SetAttributes(attribute.String("error.type", "_OTHER"))
			metricAttrs = append(metricAttrs, attribute.String("error.type", "_OTHER"))
		case tool != "":
			cr, _ := res.(*mcp.CallToolResult)
			decision := "allowed"
			if ref, ok := mcpbind.RefusalOf(cr); ok {
				decision = "refused"
				span.SetAttributes(attribute.String(AttrRefusalCode, ref.Code), attribute.String(AttrStateBefore, jsonText(ref.State)))
				t.refusals.Add(ctx, 1, metric.WithAttributes(append([]attribute.KeyValue{attribute.String("gen_ai.tool.name", tool), attribute.String(AttrRefusalCode, ref.Code)}, t.workflow...)...))
			}
			span.SetAttributes(attribute.String(AttrDecision, decision))
			if cr != nil && cr.IsError {
				span.SetAttributes(attribute.String("error.type", "tool_error"))
				span.SetStatus(codes.Error, "tool_error")
				metricAttrs = append(metricAttrs, attribute.String("error.type", "tool_error"))
			}
			t.calls.Add(ctx, 1, metric.WithAttributes(append([]attribute.KeyValue{attribute.String("gen_ai.tool.name", tool), attribute.String(AttrDecision, decision)}, t.workflow...)...))
		}
		t.duration.Record(ctx, time.Since(start).Seconds(), metric.WithAttributes(metricAttrs...))
		return res, err
	}
}

// OnTransition records a transition: a span, a child of the call's when
// a call caused it, and a count. It is an mcpbind Options.OnTransition.
func (t *Telemetry) OnTransition(ctx context.Context, tr mcpbind.Transition) {
	attrs := append([]attribute.KeyValue{
		attribute.String(AttrEvent, tr.Event.Type),
		attribute.String(AttrStateBefore, jsonText(tr.From)),
		attribute.String(AttrStateAfter, jsonText(tr.To)),
	}, t.workflow...)
	if tr.Tool != "" {
		attrs = append(attrs, attribute.String("gen_ai.tool.name", tr.Tool))
	}
	if tr.By != "" {
		attrs = append(attrs, attribute.String("chartgate.by", tr.By))
	}
	_, span := t.tracer.Start(ctx, "chartgate.transition "+tr.Event.Type, trace.WithAttributes(attrs...))
	span.End()
	t.transitions.Add(ctx, 1, metric.WithAttributes(append([]attribute.KeyValue{attribute.String(AttrEvent, tr.Event.Type)}, t.workflow...)...))
	if t.next != nil {
		t.next(ctx, tr)
	}
}

// extract continues the trace the request's _meta names (traceparent,
// tracestate), if any.
func extract(ctx context.Context, req mcp.Request) context.Context {
	p := req.GetParams()
	if p == nil || reflect.ValueOf(p).IsNil() {
		return ctx
	}
	meta := p.GetMeta()
	carrier := propagation.MapCarrier{}
	for _, k := range []string{"traceparent", "tracestate"} {
		if s, ok := meta[k].(string); ok {
			carrier[k] = s
		}
	}
	if len(carrier) == 0 {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, carrier)
}

// jsonText writes a state value as JSON.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}
