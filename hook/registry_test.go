package hook

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/mcpbind/sqlitestore"
)

// record writes an agent session's record as a hook would.
func record(t *testing.T, store mcpbind.Store, s AgentSession) {
	t.Helper()
	_, err := UpdateSession(context.Background(), store, s.ID, func(r *AgentSession) bool {
		*r = s
		return true
	})
	require.NoError(t, err)
}

// Two agent hosts (Claude Code processes 100 and 200) started from one
// terminal shell (50): each launched the shells of its hooks and its own
// gateway.
var (
	terminal = []Proc{{PID: 50, Start: 5, Name: "bash"}, {PID: 10, Start: 1, Name: "tmux"}, {PID: 1, Start: 0, Name: "systemd"}}
	hostA    = Proc{PID: 100, Start: 11, Name: "claude"}
	hostB    = Proc{PID: 200, Start: 22, Name: "claude"}
)

func chain(ps ...Proc) []Proc { return append(ps, terminal...) }

// TestResolveSession: the gateway of an agent host resolves to the session
// whose hooks that host ran, whatever the order and times of the records.
func TestResolveSession(t *testing.T) {
	ctx := context.Background()
	store := mcpbind.NewMemoryStore(nil)
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	opts := &ResolveOptions{Now: func() time.Time { return now }}
	project := "/work/app"
	record(t, store, AgentSession{ID: "A", Host: ClaudeCode, Project: project, Seen: now.Add(-time.Minute),
		Ancestry: chain(Proc{PID: 101, Start: 12, Name: "sh"}, hostA)})
	record(t, store, AgentSession{ID: "B", Host: ClaudeCode, Project: project, Seen: now,
		Ancestry: chain(Proc{PID: 201, Start: 23, Name: "bash"}, hostB)})
	// Another project's session with host A's ancestry is not a candidate.
	record(t, store, AgentSession{ID: "other", Host: ClaudeCode, Project: "/work/lib", Seen: now, Ancestry: chain(hostA)})

	// Gateway A's parent is host A; B's record is newer but only shares the
	// terminal with it.
	m, err := ResolveSession(ctx, store, project, chain(hostA), opts)
	require.NoError(t, err)
	assert.Equal(t, Match{ID: "A", Exact: true, Depth: 0}, m)
	m, err = ResolveSession(ctx, store, project, chain(hostB), opts)
	require.NoError(t, err)
	assert.Equal(t, Match{ID: "B", Exact: true, Depth: 0}, m)

	// A gateway started through a shell by host A: the host is its
	// grandparent, still an exact match.
	m, err = ResolveSession(ctx, store, project, chain(Proc{PID: 102, Start: 13, Name: "sh"}, hostA), opts)
	require.NoError(t, err)
	assert.Equal(t, Match{ID: "A", Exact: true, Depth: 1}, m)

	// A third host whose hook has not run yet: the best match shares only
	// the terminal, and is not exact (a Resolver waits for better).
	hostC := Proc{PID: 300, Start: 33, Name: "claude"}
	m, err = ResolveSession(ctx, store, project, chain(hostC), opts)
	require.NoError(t, err)
	assert.Equal(t, "B", m.ID, "ties go to the newest")
	assert.False(t, m.Exact)
	assert.Equal(t, 1, m.Depth)

	// A PID reused by another process (another start time) is not the host.
	m, err = ResolveSession(ctx, store, project, chain(Proc{PID: 100, Start: 99, Name: "claude"}), opts)
	require.NoError(t, err)
	assert.False(t, m.Exact)

	// Sessions not seen for MaxAge are not candidates.
	m, err = ResolveSession(ctx, store, project, chain(hostA), &ResolveOptions{Now: func() time.Time { return now.Add(13 * time.Hour) }})
	require.NoError(t, err)
	assert.Equal(t, Match{Depth: -1}, m)

	// Without an ancestry (no /proc, no ps), the newest session of the
	// project.
	m, err = ResolveSession(ctx, store, project, nil, opts)
	require.NoError(t, err)
	assert.Equal(t, Match{ID: "B", Depth: -1}, m)
	// Init alone is no common ancestor.
	m, err = ResolveSession(ctx, store, project, []Proc{{PID: 1, Name: "init"}}, opts)
	require.NoError(t, err)
	assert.Equal(t, Match{Depth: -1}, m)
	// Sessions recorded without ancestry are taken when no ancestry matches.
	record(t, store, AgentSession{ID: "bare", Host: Cursor, Project: project, Seen: now.Add(-time.Hour)})
	m, err = ResolveSession(ctx, store, project, []Proc{{PID: 7, Start: 1, Name: "code"}}, opts)
	require.NoError(t, err)
	assert.Equal(t, Match{ID: "bare", Depth: -1}, m)
}

func TestHostIndex(t *testing.T) {
	assert.Equal(t, 0, HostIndex(nil))
	assert.Equal(t, 0, HostIndex([]Proc{{PID: 3}}), "names unknown")
	assert.Equal(t, 2, HostIndex([]Proc{{PID: 3, Name: "sh"}, {PID: 4, Name: "/usr/bin/env"}, {PID: 5, Name: "node"}}))
}

// TestUpdateSessionConcurrently: hooks of one session run at once (Claude
// Code runs parallel tool calls' hooks in parallel); no update is lost.
func TestUpdateSessionConcurrently(t *testing.T) {
	store, err := sqlitestore.Open(filepath.Join(t.TempDir(), "state.db"), nil)
	require.NoError(t, err)
	defer store.Close()
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			_, err := UpdateSession(context.Background(), store, "s", func(s *AgentSession) bool {
				s.StopBlocks++
				return true
			})
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	s, _, err := LoadSession(context.Background(), store, "s")
	require.NoError(t, err)
	assert.Equal(t, 20, s.StopBlocks)
}

func TestPruneSessions(t *testing.T) {
	store := mcpbind.NewMemoryStore(nil)
	now := time.Now()
	record(t, store, AgentSession{ID: "old", Seen: now.Add(-8 * 24 * time.Hour)})
	record(t, store, AgentSession{ID: "new", Seen: now})
	n, err := PruneSessions(context.Background(), store, now.Add(-7*24*time.Hour))
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	ss, err := Sessions(context.Background(), store)
	require.NoError(t, err)
	require.Len(t, ss, 1)
	assert.Equal(t, "new", ss[0].ID)
}

// TestResolverNeverWaits: a gateway whose host connects before its first
// hook runs gets "" at once (it serves a workflow of its own meanwhile),
// not another session of the project; a later request finds its host's
// session as soon as the hook has recorded it, and keeps it. Another
// host's session is taken only once Wait has passed.
func TestResolverNeverWaits(t *testing.T) {
	store := mcpbind.NewMemoryStore(nil)
	project := "/work/app"
	record(t, store, AgentSession{ID: "B", Project: project, Seen: time.Now(), Ancestry: chain(hostB)})
	r := &Resolver{Store: store, Project: project, Ancestry: chain(hostA), Wait: time.Hour, Logger: quiet()}
	start := time.Now()
	assert.Equal(t, "", r.Session(context.Background()), "B is another host's session")
	assert.Less(t, time.Since(start), time.Second, "no waiting")
	record(t, store, AgentSession{ID: "A", Project: project, Seen: time.Now(), Ancestry: chain(Proc{PID: 101, Start: 12, Name: "sh"}, hostA)})
	assert.Equal(t, "A", r.Session(context.Background()))
	record(t, store, AgentSession{ID: "C", Project: project, Seen: time.Now(), Ancestry: chain(Proc{PID: 102, Start: 13, Name: "sh"}, hostA)})
	assert.Equal(t, "A", r.Name(), "the id never changes once found")

	// Without an exact match, the best one is taken once Wait has passed.
	r = &Resolver{Store: store, Project: project, Ancestry: chain(Proc{PID: 999, Start: 1, Name: "other"}), Wait: 30 * time.Millisecond, Logger: quiet()}
	assert.Equal(t, "", r.Session(context.Background()))
	time.Sleep(40 * time.Millisecond)
	assert.NotEqual(t, "", r.Session(context.Background()))
}

// TestRendezvousWithRealProcesses: two agent hosts (processes) each start
// a hook and a gateway (processes); each gateway, resolving with its real
// ancestry, finds the session of its own host's hook. The test binary
// plays every process (TestMain's roles).
func TestRendezvousWithRealProcesses(t *testing.T) {
	if len(Ancestry()) == 0 {
		t.Skip("the process tree cannot be read here")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	for _, session := range []string{"session-B", "session-A"} {
		out, err := runRole(t, "host", db, session)
		require.NoError(t, err, out)
		assert.Equal(t, session+" exact", strings.TrimSpace(out), "the gateway of the host that ran %s", session)
	}
}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

func runRole(t *testing.T, role, db, session string) (string, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "HOOK_TEST_ROLE="+role, "HOOK_TEST_DB="+db, "HOOK_TEST_SESSION="+session)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out) + stderr.String(), err
	}
	return string(out), nil
}

// TestMain lets the test binary play the processes of
// TestRendezvousWithRealProcesses: an agent host, which runs a hook and
// then a gateway as its children; the hook, which records its session; the
// gateway, which resolves its session and prints it.
func TestMain(m *testing.M) {
	switch os.Getenv("HOOK_TEST_ROLE") {
	case "":
		os.Exit(m.Run())
	case "host":
		for _, role := range []string{"hook", "gateway"} {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "HOOK_TEST_ROLE="+role)
			cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
			if err := cmd.Run(); err != nil {
				fmt.Fprintln(os.Stderr, role, err)
				os.Exit(1)
			}
		}
	case "hook":
		os.Exit(roleHook())
	case "gateway":
		os.Exit(roleGateway())
	}
	os.Exit(0)
}

func roleHook() int {
	store, err := sqlitestore.Open(os.Getenv("HOOK_TEST_DB"), nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer store.Close()
	anc := Ancestry()
	_, err = UpdateSession(context.Background(), store, os.Getenv("HOOK_TEST_SESSION"), func(s *AgentSession) bool {
		s.Project, s.Seen, s.Ancestry, s.Host = "/work/app", time.Now(), anc, ClaudeCode
		return true
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func roleGateway() int {
	store, err := sqlitestore.Open(os.Getenv("HOOK_TEST_DB"), nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer store.Close()
	m, err := ResolveSession(context.Background(), store, "/work/app", Ancestry(), nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	exact := "inexact"
	if m.Exact {
		exact = "exact"
	}
	fmt.Println(m.ID, exact)
	return 0
}
