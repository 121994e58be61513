package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTypeScriptClient runs tsclient/client.mjs, the MCP TypeScript SDK's
// client walking the checkout flow: against the command served over stdio
// (the test binary, as in TestStdio), with sessions; and against a
// stateless Streamable HTTP server, with workflow handles. It needs Node.js
// and the pinned SDK:
//
//	cd examples/checkout/tsclient && npm ci
func TestTypeScriptClient(t *testing.T) {
	const enable = "cd examples/checkout/tsclient && npm ci"
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("node is not on PATH; to run this test, install Node.js and npm, then: %s", enable)
	}
	sdk := filepath.Join("tsclient", "node_modules", "@modelcontextprotocol", "sdk", "package.json")
	if _, err := os.Stat(sdk); err != nil {
		t.Skipf("the MCP TypeScript SDK is not installed (no %s); to run this test: %s", sdk, enable)
	}
	t.Run("stdio", func(t *testing.T) {
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		runTSClient(t, node, "ok: checkout flow passed", exe)
	})
	t.Run("stateless HTTP", func(t *testing.T) {
		engine, _, err := newEngine("auto")
		if err != nil {
			t.Fatal(err)
		}
		h, _, err := httpHandler(engine, &httpOptions{Stateless: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		defer srv.Close()
		runTSClient(t, node, "ok: checkout flow with workflow handles passed", "--url", srv.URL+"/mcp")
	})
}

// runTSClient runs client.mjs with args and checks that it ends with its
// ok line.
func runTSClient(t *testing.T, node, okLine string, args ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{"client.mjs"}, args...)...)
	cmd.Dir = "tsclient"
	// client.mjs hands its whole environment to the server it starts.
	cmd.Env = append(os.Environ(), "CHECKOUT_AS_COMMAND=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second // the server shares stderr; don't wait on it forever
	err := cmd.Run()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("client.mjs timed out\ntranscript:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	if err != nil {
		t.Fatalf("client.mjs: %v\ntranscript:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "\n"+okLine) {
		t.Fatalf("client.mjs exited 0 without its final ok line\ntranscript:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	for _, line := range strings.Split(stdout.String(), "\n") {
		if strings.HasPrefix(line, "MCP protocol ") {
			t.Log(line)
		}
	}
}
