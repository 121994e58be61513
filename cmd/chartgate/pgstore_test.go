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
	"testing"

	"github.com/jackc/pgx/v5"
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
