// This file holds the tests of the commands on a Postgres store
// (--store postgres://...), on a real PostgreSQL server (internal/pgtest).

package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/internal/pgtest"
)

// pgDatabase returns the connection string of a new database of the test
// server, dropped at the end of the test.
func pgDatabase(t *testing.T) string {
	t.Helper()
	dsn := pgtest.Start(t)
	u, err := url.Parse(dsn)
	require.NoError(t, err, "the test server's connection string must be a URL")
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "chartgate_test_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	require.NoError(t, err)
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Error(err)
		}
	})
	u.Path = "/" + name
	return u.String()
}

// TestPostgresStore: status, approve and history on a Postgres store
// (TestOutOfBandCommands' run), and a hook whose project's workflow lives
// in the database: its session's workflow is where status finds it, and
// no SQLite file is made in the project.
func TestPostgresStore(t *testing.T) {
	dsn := pgDatabase(t)
	t.Run("OutOfBand", func(t *testing.T) { outOfBand(t, dsn) })
	t.Run("Hook", func(t *testing.T) {
		project := hookProject(t)
		hookArgs := []string{"hook", "claude-code", "--project", project, "--store", dsn}
		code, _, errOut := chartgateIn(fixture(t, "claude-code", "session-start.json", project, "agent-7"), hookArgs...)
		require.Equal(t, exitOK, code, errOut)
		code, out, errOut := chartgateIn(fixture(t, "claude-code", "pre-tool-use-write.json", project, "agent-7"), hookArgs...)
		require.Equal(t, exitOK, code, errOut)
		assert.Contains(t, out, `"permissionDecision":"deny"`)
		// A Read, which plan allows, counts toward plan's max_iterations:
		// the workflow is saved.
		for _, f := range []string{"pre-tool-use-read.json", "post-tool-use-read.json"} {
			code, out, errOut = chartgateIn(fixture(t, "claude-code", f, project, "agent-7"), hookArgs...)
			require.Equal(t, exitOK, code, errOut)
			assert.NotContains(t, out, `"deny"`)
		}
		entries, err := os.ReadDir(filepath.Join(project, ".chartgate"))
		require.NoError(t, err)
		for _, e := range entries {
			assert.Equal(t, "workflow.json", e.Name(), "the project folder holds only its workflow: the store is the database")
		}
		code, out, errOut = chartgate("status", "--workflow", filepath.Join(project, ".chartgate", "workflow.json"), "--store", dsn)
		require.Equal(t, exitOK, code, errOut)
		assert.Regexp(t, `(?m)^name:agent-7  plan `, out)
	})
	t.Run("Unreachable", func(t *testing.T) {
		code, _, errOut := chartgate("status", "--workflow", writeFile(t, "workflow.json", releaseWorkflow),
			"--store", "postgres://ada:secret@127.0.0.1:1/db?sslmode=disable&connect_timeout=2")
		assert.Equal(t, exitFail, code)
		assert.Contains(t, errOut, "--store postgres://ada:***@127.0.0.1:1/db")
		assert.NotContains(t, errOut, "secret")
	})
}

// deployApprovalWorkflow is a Statewright workflow over the test upstream's tools
// whose deploy needs approval.
const deployApprovalWorkflow = `{
  "id": "ship", "initial": "build",
  "states": {
    "build": {"allowed_tools": ["echo"], "on": {"BUILT": {"target": "deploy", "requires_approval": true, "approval_message": "ship it?"}}},
    "deploy": {"allowed_tools": ["pid"], "on": {"DONE": "done"}},
    "done": {"type": "final"}
  }
}`

// TestServePostgresApproval: two chartgate serve processes on one Postgres
// store serve one agent session's workflow (--session); a transition
// asked for through one waits for approval, and chartgate approve, run
// apart from both, moves it: both sessions get list_changed at once (the
// store's change feed), and list the next state's tool.
func TestServePostgresApproval(t *testing.T) {
	dsn := pgDatabase(t)
	exe := testExe(t)
	wf := writeFile(t, "workflow.json", deployApprovalWorkflow)
	project := []string{"--workflow", wf, "--store", dsn}
	ctx := context.Background()
	type instance struct {
		cs      *mcp.ClientSession
		changed chan struct{}
	}
	start := func() *instance {
		opts, changed := listChanged()
		return &instance{changed: changed, cs: serveClient{options: opts}.start(t, append(append([]string{"serve", "--log-level", "warn", "--session", "s1"}, project...),
			"--", "env", envUpstream+"=1", exe)...)}
	}
	tools := func(in *instance) []string {
		res, err := in.cs.ListTools(ctx, nil)
		require.NoError(t, err)
		var names []string
		for _, tool := range res.Tools {
			if !strings.HasPrefix(tool.Name, "workflow_") {
				names = append(names, tool.Name)
			}
		}
		return names
	}
	a, b := start(), start()
	assert.Equal(t, []string{"echo"}, tools(a))
	assert.Equal(t, []string{"echo"}, tools(b))

	res, err := a.cs.CallTool(ctx, &mcp.CallToolParams{Name: "workflow_transition", Arguments: map[string]any{"event": "BUILT"}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	// Waiting for approval may change the tools or not: drain what came.
	time.Sleep(300 * time.Millisecond)
	for _, in := range []*instance{a, b} {
		for len(in.changed) > 0 {
			<-in.changed
		}
	}

	key := filepath.Join(t.TempDir(), "approver.key")
	require.NoError(t, createKey(key))
	code, out, errOut := chartgate(append([]string{"approve", "name:s1", "--by", "ada", "--yes", "--key", key}, project...)...)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "-> deploy")
	for name, in := range map[string]*instance{"A": a, "B": b} {
		select {
		case <-in.changed:
		case <-time.After(10 * time.Second):
			t.Fatalf("instance %s: no list_changed within 10 s of chartgate approve", name)
		}
		assert.Equal(t, []string{"pid"}, tools(in), "instance %s after the approval", name)
	}
}
