package main

import (
	"context"
	"net/http"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServeAsksForApproval: a chartgate serve process asks the client's
// user about a transition that needs approval, by elicitation (2025-11-25,
// a stateful server) or by an input-required result the go-sdk client
// answers on retry (2026-07-28, stateless), and applies the answer; the
// run history, read by another process, records the channel.
func TestServeAsksForApproval(t *testing.T) {
	for _, tc := range []struct{ protocol, channel string }{
		{"2025-11-25", "elicitation"},
		{"2026-07-28", "input-required"},
	} {
		t.Run(tc.protocol, func(t *testing.T) {
			wf := writeFile(t, "workflow.json", releaseWorkflow)
			store := filepath.Join(t.TempDir(), "state.db")
			args := []string{"--log-level", "warn", "--workflow", wf, "--store", store, "--", "env", envUpstream + "=1", testExe(t)}
			if tc.protocol == "2026-07-28" {
				args = append([]string{"--stateless"}, args...)
			}
			url, _ := startServeHTTP(t, args...)
			ctx := context.Background()
			var asked []string
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked = append(asked, req.Params.Message)
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
				},
			}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: &http.Transport{}}},
				&mcp.ClientSessionOptions{ProtocolVersion: tc.protocol})
			require.NoError(t, err)
			t.Cleanup(func() { cs.Close() })
			args2 := map[string]any{"event": "BUILT"}
			if tc.protocol == "2026-07-28" {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "workflow_start"})
				require.NoError(t, err)
				args2["workflow_id"] = res.StructuredContent.(map[string]any)["workflow_id"].(string)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "workflow_transition", Arguments: args2})
			require.NoError(t, err)
			require.False(t, res.IsError, "%v", res.Content)
			require.Len(t, asked, 1)
			id := regexp.MustCompile(`approval ([0-9a-f]{40})`).FindStringSubmatch(asked[0])
			require.NotNil(t, id, asked[0])
			assert.Contains(t, res.Content[0].(*mcp.TextContent).Text, "Approval "+id[1]+" was approved by user ("+tc.channel+")")

			code, out, errOut := chartgate("status", "--workflow", wf, "--store", store)
			require.Equal(t, exitOK, code, errOut)
			assert.Regexp(t, `  deploy \(active\)`, out)
			ref := regexp.MustCompile(`^(\S+)  `).FindStringSubmatch(out)
			require.NotNil(t, ref, out)
			code, out, errOut = chartgate("history", ref[1], "--workflow", wf, "--store", store)
			require.Equal(t, exitOK, code, errOut)
			assert.Contains(t, out, "(approval "+id[1]+" by user through "+tc.channel+", not authenticated)")
		})
	}
}
