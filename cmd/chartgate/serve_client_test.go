// This file holds how the tests start chartgate as a process and connect
// an MCP client to it over stdio.

package main

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// A serveClient says how a test runs the test binary as chartgate and
// connects to it; the zero value runs it in the test's folder, in the
// test's environment, for a client named "agent" of protocol 2025-11-25.
type serveClient struct {
	dir      string             // the process's folder; "" for the test's
	base     []string           // the environment; nil for os.Environ()
	env      []string           // added to the environment
	name     string             // the client's name; "" for "agent"
	options  *mcp.ClientOptions // the client's options, e.g. a list_changed handler
	protocol string             // "" for 2025-11-25; "latest" for the SDK's newest
}

// start runs chartgate with args and returns the connected session, which
// is closed when the test ends.
func (c serveClient) start(t *testing.T, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(testExe(t), args...)
	cmd.Dir = c.dir
	base := c.base
	if base == nil {
		base = os.Environ()
	}
	cmd.Env = append(append(base, envMain+"=1"), c.env...)
	cmd.Stderr = testWriter{t}
	name := c.name
	if name == "" {
		name = "agent"
	}
	var opts *mcp.ClientSessionOptions
	switch c.protocol {
	case "":
		opts = &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
	case "latest":
	default:
		opts = &mcp.ClientSessionOptions{ProtocolVersion: c.protocol}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, c.options).Connect(context.Background(),
		&mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// serveProcess runs the test binary as chartgate with args, in dir, with
// env added, and connects a client to it over stdio.
func serveProcess(t *testing.T, dir string, env []string, args ...string) *mcp.ClientSession {
	t.Helper()
	return serveClient{dir: dir, env: env}.start(t, args...)
}

// listChanged is a client's options that signal on the channel returned
// each list_changed notification the client receives.
func listChanged() (*mcp.ClientOptions, chan struct{}) {
	changed := make(chan struct{}, 10)
	return &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	}, changed
}

// listed lists the session's tools by name, sorted.
func listed(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		require.NoError(t, err)
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// callTool calls a tool and returns its result and text.
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args any) (*mcp.CallToolResult, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	return res, textOf(res)
}

// textOf joins the texts of a result, one line each.
func textOf(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}
