// This file tests the serve command: its command line in process, and the
// gateway it serves as a process of its own (the test binary run as
// chartgate), over stdio and Streamable HTTP, in front of a Go upstream
// (the test binary again).

package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/internal/stdio"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The test binary is chartgate when envMain is set, and a small MCP
// server on stdio when envUpstream is.
const (
	envMain     = "CHARTGATE_TEST_MAIN"
	envUpstream = "CHARTGATE_TEST_UPSTREAM"
	// envUpstreamTools lists, comma-separated, more tools the test
	// upstream serves (each answers its own name).
	envUpstreamTools = "CHARTGATE_TEST_UPSTREAM_TOOLS"
	// envEchoDescription is the test upstream's description of echo.
	envEchoDescription = "CHARTGATE_TEST_ECHO_DESCRIPTION"
)

func TestMain(m *testing.M) {
	switch {
	case os.Getenv(envUpstream) != "":
		runTestUpstream()
	case os.Getenv(envMain) != "":
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	code := m.Run()
	removeChartgateBinary()
	os.Exit(code)
}

type echoArgs struct {
	Text string `json:"text"`
}

// runTestUpstream serves echo and pid over stdio, then exits; or, in
// mode "linger", goes on running after its stdin ends, as a server that
// does not notice would (then only a signal stops it); in mode "rename",
// it also has a tool that renames echo; in mode "log", a tool that logs.
func runTestUpstream() {
	s := mcp.NewServer(&mcp.Implementation{Name: "test-upstream", Version: "1"}, nil)
	echo := func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: os.Getenv(envEchoDescription)}, echo)
	if os.Getenv(envUpstream) == "rename" {
		// rename lists echo as echo_v2 from then on.
		mcp.AddTool(s, &mcp.Tool{Name: "rename"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			s.RemoveTools("echo")
			mcp.AddTool(s, &mcp.Tool{Name: "echo_v2"}, echo)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "renamed"}}}, nil, nil
		})
	}
	for _, name := range strings.FieldsFunc(os.Getenv(envUpstreamTools), func(r rune) bool { return r == ',' }) {
		mcp.AddTool(s, &mcp.Tool{Name: name}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name}}}, nil, nil
		})
	}
	mcp.AddTool(s, &mcp.Tool{Name: "pid"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.Itoa(os.Getpid())}}}, nil, nil
	})
	if os.Getenv(envUpstream) == "log" {
		// log sends its text as a warning log message, right before its
		// result.
		mcp.AddTool(s, &mcp.Tool{Name: "log"}, func(ctx context.Context, req *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
			//lint:ignore SA1019 the upstream of a test of logging, deprecated from 2026-07-28 on
			err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "warning", Data: in.Text})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "logged"}}}, nil, err
		})
	}
	// Standard input through the poller: see stdio.Pollable.
	_ = s.Run(context.Background(), &mcp.IOTransport{Reader: stdio.Pollable(os.Stdin), Writer: os.Stdout})
	if os.Getenv(envUpstream) == "linger" {
		time.Sleep(time.Hour)
	}
	os.Exit(0)
}

func testExe(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	return exe
}

// upstreamConfig writes a configuration naming the test upstream "up".
func upstreamConfig(t *testing.T) string {
	exe := testExe(t)
	return writeFile(t, "servers.json", `{"mcpServers": {"up": {"command": `+strconv.Quote(exe)+`, "env": {"`+envUpstream+`": "1"}}}}`)
}

func TestServeCommandLine(t *testing.T) {
	code, _, errOut := chartgate("serve")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "no upstream server: give --config FILE, or -- COMMAND ARG")

	code, _, errOut = chartgate("serve", "--stateless", "--config", "x.json")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "--stateless needs --http")

	code, _, errOut = chartgate("serve", "node", "server.js")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "put the upstream's command after --: chartgate serve -- node server.js")

	code, out, _ := chartgate("serve", "--help")
	assert.Equal(t, exitOK, code)
	assert.Equal(t, serveUsage+serveWorkflowUsage, out)

	bad := writeFile(t, "bad.json", `{"mcpServers": {"fs": {"args": ["x"]}, "remote": {"url": "ftp://x", "headers": {"A": 1}}}}`)
	code, _, errOut = chartgate("serve", "--config", bad)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, bad+": 3 errors:")
	assert.Contains(t, errOut, `mcpServers.fs.command: required: a stdio server needs "command" (or give "url" for an HTTP server)`)
	assert.Contains(t, errOut, `mcpServers.remote.url: "ftp://x" is not an http:// or https:// URL`)
	assert.Contains(t, errOut, `mcpServers.remote.headers.A: must be a string, not a number (write "1")`)

	code, _, errOut = chartgate("serve", "--config", writeFile(t, "missing.json", `{"mcpServers": {"x": {"command": "/no/such/command"}}}`))
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, `upstream "x": connecting:`)
}

func TestCommandName(t *testing.T) {
	for cmd, want := range map[string]string{
		"npx -y @modelcontextprotocol/server-filesystem /repo": "server-filesystem",
		"npx -y @playwright/mcp@latest":                        "mcp",
		"uvx mcp-server-git --repository .":                    "mcp-server-git",
		"node ./dist/index.js stdio":                           "index",
		"/usr/local/bin/my-server --port 1":                    "my-server",
		"python3 -m weather_server":                            "weather_server",
		"env A=1 server":                                       "env",
	} {
		assert.Equal(t, want, commandName(strings.Fields(cmd)), cmd)
	}
}

// processGone reports whether pid has exited (or is a zombie that is not
// ours to reap).
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return os.IsNotExist(err)
	}
	fields := strings.Fields(string(data))
	return len(fields) > 2 && fields[2] == "Z"
}

func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) is still running", what, pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func callText(t *testing.T, cs *mcp.ClientSession, name string, args any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	require.False(t, res.IsError)
	return res.Content[0].(*mcp.TextContent).Text
}

func TestServeStdio(t *testing.T) {
	exe := testExe(t)
	for _, killed := range []bool{false, true} {
		name := "stdin closed"
		if killed {
			name = "SIGKILL"
		}
		t.Run(name, func(t *testing.T) {
			// The upstream after --, through env to set its mode: one
			// that outlives its stdin.
			cmd := exec.Command(exe, "serve", "--log-level", "warn", "--", "env", envUpstream+"=linger", exe)
			cmd.Env = append(os.Environ(), envMain+"=1")
			cmd.Stderr = testWriter{t}
			ctx := context.Background()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx,
				&mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
			require.NoError(t, err)
			defer cs.Close()
			assert.Equal(t, "chartgate", cs.InitializeResult().ServerInfo.Name)
			var names []string
			for tool, err := range cs.Tools(ctx, nil) {
				require.NoError(t, err)
				names = append(names, tool.Name)
			}
			assert.ElementsMatch(t, []string{"echo", "pid"}, names)
			assert.Equal(t, "through serve", callText(t, cs, "echo", map[string]any{"text": "through serve"}))
			upstream, err := strconv.Atoi(callText(t, cs, "pid", nil))
			require.NoError(t, err)

			if killed {
				// The kernel kills the child of a gateway that was killed
				// (Pdeathsig).
				require.NoError(t, cmd.Process.Kill())
			} else {
				// Closing serve's stdin ends it: it closes the upstream's
				// stdin, then, as the upstream lingers, sends SIGTERM.
				require.NoError(t, cs.Close())
				assert.Equal(t, 0, cmd.ProcessState.ExitCode())
			}
			waitGone(t, upstream, "the upstream")
		})
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// startServeHTTP starts chartgate serve --http on a free port and returns
// the URL it serves and the process.
func startServeHTTP(t *testing.T, args ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(testExe(t), append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), envMain+"=1")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	urls := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`at (http://\S+/mcp)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			t.Log(sc.Text())
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	select {
	case url := <-urls:
		return url, cmd
	case <-time.After(30 * time.Second):
		t.Fatal("chartgate serve --http did not say where it serves")
	}
	return "", nil
}

func TestServeHTTP(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		name := "sessions"
		args := []string{"--config", upstreamConfig(t)}
		if stateless {
			name, args = "stateless", append(args, "--stateless")
		}
		t.Run(name, func(t *testing.T) {
			url, cmd := startServeHTTP(t, args...)
			ctx := context.Background()
			for _, protocol := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx,
					&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: &http.Transport{}}}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
				require.NoError(t, err, protocol)
				assert.Equal(t, "over "+protocol, callText(t, cs, "echo", map[string]any{"text": "over " + protocol}))
				cs.Close()
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx,
				&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: &http.Transport{}}}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			require.NoError(t, err)
			upstream, err := strconv.Atoi(callText(t, cs, "pid", nil))
			require.NoError(t, err)
			cs.Close()

			require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
			require.NoError(t, cmd.Wait())
			waitGone(t, upstream, "the upstream")
		})
	}
}
