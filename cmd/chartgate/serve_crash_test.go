// This file kills chartgate serve in the middle of transitions, again and
// again, and restarts it on the same store: no transition may be lost or
// made twice, and the run history must agree with the state.

package main

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/mcpbind"
)

// counterWorkflow counts transitions in its context: INC, sent with
// workflow_transition, and ECHOED, sent by a successful call of the
// upstream's echo.
const counterWorkflow = `{"id": "counter", "initial": "open", "context": {"n": 0},
  "states": {"open": {"on": {
      "INC": {"actions": {"type": "xstate.assign", "params": {"n": {"$inc": 1}}}},
      "ECHOED": {"actions": {"type": "xstate.assign", "params": {"n": {"$inc": 1}}}}},
    "meta": {"mcp": {"tools": ["*"], "events": {"echo": "ECHOED"}}}}}}`

// TestServeKilledMidTransition kills serve on its default SQLite store
// (synchronous=NORMAL: a commit is in the file once acknowledged, which
// survives the process, not the machine) and with --durable (synced).
func TestServeKilledMidTransition(t *testing.T) {
	t.Run("default", func(t *testing.T) { killedMidTransition(t) })
	t.Run("durable", func(t *testing.T) { killedMidTransition(t, "--durable") })
}

func killedMidTransition(t *testing.T, flags ...string) {
	exe := testExe(t)
	wf := writeFile(t, "workflow.json", counterWorkflow)
	store := filepath.Join(t.TempDir(), "state.db")
	project := []string{"--workflow", wf, "--store", store}
	ctx := context.Background()
	acknowledged, byEcho := 0, 0
	const rounds, callers = 6, 4
	for round := range rounds {
		args := append([]string{"serve", "--log-level", "error", "--session", "s", "--lease-ttl", "300ms"}, flags...)
		cmd := exec.Command(exe, append(append(args, project...), "--", "env", envUpstream+"=1", exe)...)
		cmd.Env = append(os.Environ(), envMain+"=1")
		cmd.Stderr = testWriter{t}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx,
			&mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		require.NoError(t, err, "round %d", round)
		var wg sync.WaitGroup
		var mu sync.Mutex
		for i := range callers {
			// Half the callers move the workflow with workflow_transition,
			// half with a call of the upstream's echo (the gateway's hop to
			// the upstream, then the gate's commit).
			params := &mcp.CallToolParams{Name: "workflow_transition", Arguments: map[string]any{"event": "INC"}}
			if i%2 == 1 {
				params = &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 15 { // 6 rounds x 4 x 15 = 360 at most: the whole history is kept (500)
					res, err := cs.CallTool(ctx, params)
					if err != nil {
						return // the gateway died
					}
					if !res.IsError {
						mu.Lock()
						acknowledged++
						if params.Name == "echo" {
							byEcho++
						}
						mu.Unlock()
					}
				}
			}()
		}
		time.Sleep(time.Duration(20+rand.IntN(150)) * time.Millisecond)
		require.NoError(t, cmd.Process.Kill()) // mid-transition, as likely as not
		wg.Wait()
		_ = cs.Close()
	}
	// Every acknowledged transition is in the state; the state counts the
	// transitions of the history, no more, no fewer.
	code, out, errOut := chartgate(append([]string{"history", "name:s", "--json"}, project...)...)
	require.Equal(t, exitOK, code, errOut)
	entries := 0
	for _, line := range lines(out) {
		// Entries of calls that moved nothing (a call refused while
		// another held the workflow) have no event.
		var e struct {
			Event struct{ Type string } `json:"event"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &e))
		if e.Event.Type == "INC" || e.Event.Type == "ECHOED" {
			entries++
		}
	}
	p, err := openProject(projectFlagsOf(wf, store))
	require.NoError(t, err)
	defer p.close()
	g, err := p.gate()
	require.NoError(t, err)
	w, err := g.WorkflowOf(ctx, mcpbind.Ref{Name: "s"})
	require.NoError(t, err)
	n := int(w.State.Context()["n"].(float64))
	t.Logf("%d transitions acknowledged (%d by echo), %d made, %d in the history", acknowledged, byEcho, n, entries)
	assert.Positive(t, byEcho, "no call of echo moved the workflow")
	assert.Positive(t, acknowledged-byEcho, "no workflow_transition moved the workflow")
	assert.GreaterOrEqual(t, n, acknowledged, "an acknowledged transition was lost")
	// Each kill can leave each caller's call in flight committed and not
	// acknowledged: at most one per caller per round.
	assert.LessOrEqual(t, n, acknowledged+rounds*callers, "more transitions than calls in flight when killed")
	assert.Equal(t, n, entries, "the history disagrees with the state")
}
