package main

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestServeLogBeforeResult checks on the wire, through chartgate serve
// over Streamable HTTP with and without a workflow gate, that a log
// message an upstream sends right before a tool's result reaches the
// client on the call's response stream, before the result (MCP
// conformance's tools-call-with-logging asks the same of a server).
func TestServeLogBeforeResult(t *testing.T) {
	wf := writeFile(t, "workflow.json", `{"id": "w", "initial": "a", "states": {
  "a": {"meta": {"mcp": {"tools": ["log"], "events": {"log": "GO"}}}, "on": {"GO": "b"}},
  "b": {"meta": {"mcp": {"tools": ["log"]}}, "on": {"GO": "a"}}}}`)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"serve", []string{"--config", writeFile(t, "servers.json", `{"mcpServers": {"up": {"command": `+strconv.Quote(testExe(t))+`, "env": {"`+envUpstream+`": "log"}}}}`)}},
		{"serve --workflow", []string{"--workflow", wf, "--store", "memory", "--", "env", envUpstream + "=log", testExe(t)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, _ := startServeHTTP(t, append([]string{"--log-level", "warn"}, tc.args...)...)
			post := func(session, body string) (string, string) {
				t.Helper()
				req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
				require.NoError(t, err)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				if session != "" {
					req.Header.Set("Mcp-Session-Id", session)
					req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
				}
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				defer resp.Body.Close()
				data, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				require.Less(t, resp.StatusCode, 300, "%s: %s", body, data)
				return resp.Header.Get("Mcp-Session-Id"), string(data)
			}
			id, _ := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
			post(id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			post(id, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"info"}}`)
			for i := range 10 {
				callID := 100 + i
				text := fmt.Sprintf("message %d", i)
				_, body := post(id, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"log","arguments":{"text":%q}}}`, callID, text))
				logAt := strings.Index(body, text)
				resultAt := strings.Index(body, fmt.Sprintf(`"id":%d,"result"`, callID))
				require.NotEqual(t, -1, resultAt, "call %d: no result on its stream:\n%s", i, body)
				require.NotEqual(t, -1, logAt, "call %d: the log message is not on the call's stream:\n%s", i, body)
				require.Less(t, logAt, resultAt, "call %d: the log message comes after the result:\n%s", i, body)
				require.NotContains(t, body[resultAt:], `"isError":true`, "call %d: refused:\n%s", i, body)
			}
		})
	}
}
