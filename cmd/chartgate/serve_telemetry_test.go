package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpSpans is an OTLP/HTTP receiver of traces: the spans it got, by name,
// with their string attributes.
type otlpSpans struct {
	mu    sync.Mutex
	spans map[string]map[string]string
}

func (o *otlpSpans) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.URL.Path == "/v1/traces" {
		var req coltracepb.ExportTraceServiceRequest
		if proto.Unmarshal(body, &req) == nil {
			o.mu.Lock()
			for _, rs := range req.ResourceSpans {
				for _, ss := range rs.ScopeSpans {
					for _, s := range ss.Spans {
						attrs := map[string]string{}
						for _, kv := range s.Attributes {
							attrs[kv.Key] = kv.Value.GetStringValue()
						}
						o.spans[s.Name] = attrs
					}
				}
			}
			o.mu.Unlock()
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(http.StatusOK)
}

func (o *otlpSpans) get(name string) map[string]string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.spans[name]
}

// TestServeExportsTelemetry: with OTEL_EXPORTER_OTLP_ENDPOINT set, chartgate
// serve --workflow sends its spans over OTLP: the refused call's, with the
// gate's decision and code, and the transition's.
func TestServeExportsTelemetry(t *testing.T) {
	rec := &otlpSpans{spans: map[string]map[string]string{}}
	collector := httptest.NewServer(rec)
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	t.Setenv("OTEL_SERVICE_NAME", "")

	wf := writeFile(t, "workflow.json", `{"id": "wf", "initial": "a", "states": {
		"a": {"allowed_tools": ["pid"], "on": {"GO": "b"}},
		"b": {"allowed_tools": ["echo"], "on": {"DONE": "c"}},
		"c": {"type": "final"}}}`)
	url, serve := startServeHTTP(t, "--log-level", "warn", "--workflow", wf, "--store", "memory", "--", "env", envUpstream+"=1", testExe(t))
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: &http.Transport{}}}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.True(t, res.IsError)
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "workflow_transition", Arguments: map[string]any{"event": "GO"}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%v", res.Content)
	cs.Close()
	require.NoError(t, serve.Process.Signal(os.Interrupt)) // flushes
	serve.Wait()

	deadline := time.Now().Add(10 * time.Second)
	for rec.get("chartgate.transition GO") == nil && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	call := rec.get("tools/call echo")
	require.NotNil(t, call, "no span of the refused call")
	assert.Equal(t, "tools/call", call["mcp.method.name"])
	assert.Equal(t, "echo", call["gen_ai.tool.name"])
	assert.Equal(t, "wf", call["chartgate.workflow"])
	assert.Equal(t, "refused", call["chartgate.decision"])
	assert.Equal(t, "FORBIDDEN", call["chartgate.refusal.code"])
	assert.Equal(t, `"a"`, call["chartgate.state.before"])
	assert.NotEmpty(t, call["mcp.session.id"])
	tr := rec.get("chartgate.transition GO")
	require.NotNil(t, tr, "no span of the transition")
	assert.Equal(t, `"a"`, tr["chartgate.state.before"])
	assert.Equal(t, `"b"`, tr["chartgate.state.after"])
}
