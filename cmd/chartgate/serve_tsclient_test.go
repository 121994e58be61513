// This file runs the MCP TypeScript SDK's client against chartgate serve
// with the example workflow in front of the reference filesystem server:
// refusals of tools it listed, with their output schemas, must be readable
// by it.

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestServeTypeScriptClient(t *testing.T) {
	const enable = "cd cmd/chartgate/testdata/tsclient && npm ci"
	script := filesystemServer(t)
	node, _ := exec.LookPath("node")
	if _, err := os.Stat(filepath.Join("testdata", "tsclient", "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		t.Skipf("the MCP TypeScript SDK is not installed; to run this test: %s", enable)
	}
	root := t.TempDir()
	wf, err := filepath.Abs(filepath.Join(exampleDir, "workflow.json"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "client.mjs", root, testExe(t), "serve", "--log-level", "warn",
		"--workflow", wf, "--store", filepath.Join(t.TempDir(), "state.db"),
		// The tools' lock goes to a temporary folder, not beside the example.
		"--tools-lock", filepath.Join(t.TempDir(), "tools.lock.json"), "--", "node", script, root)
	cmd.Dir = filepath.Join("testdata", "tsclient")
	cmd.Env = append(os.Environ(), envMain+"=1") // client.mjs hands its environment to serve
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("client.mjs: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "ok: chartgate serve with the TypeScript SDK client") {
		t.Fatalf("no ok line:\n%s\n%s", stdout.String(), stderr.String())
	}
}
