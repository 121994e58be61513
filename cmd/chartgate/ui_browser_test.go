// This file drives `chartgate ui` in a real browser (Debian's chromium,
// headless, through chromedp) while a gate moves the workflow on the same
// SQLite store.

package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart"
)

// shipWorkflow plans, builds, and ships only once a person approves.
const shipWorkflow = `{
  "id": "ship",
  "initial": "plan",
  "states": {
    "plan": {
      "allowed_tools": ["Read"],
      "instructions": "Read the code and write a plan; send PLANNED with the plan as data.rationale.",
      "max_iterations": 10,
      "on": {"PLANNED": "build"}
    },
    "build": {
      "allowed_tools": ["Read", "Edit"],
      "instructions": "Build it; send SHIP when done (a person approves).",
      "on": {"SHIP": {"target": "live", "requires_approval": true, "approval_message": "Ship to production?"}}
    },
    "live": {"type": "final"}
  }
}`

// chromium returns the path of a Chromium or Chrome binary, or "".
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// artifacts is the folder the screenshots go to: $CHARTGATE_ARTIFACTS if
// set, else a temporary one.
func artifacts(t *testing.T) string {
	dir := os.Getenv("CHARTGATE_ARTIFACTS")
	if dir == "" {
		return t.TempDir()
	}
	dir = filepath.Join(dir, t.Name())
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

// startUI runs `chartgate ui` on the project and returns its login URL and
// base URL; the process is stopped (SIGTERM) when the test ends.
func startUI(t *testing.T, workflowFile, store string) (login, base string) {
	// The person's approver key, which the page signs its answers with.
	key := filepath.Join(t.TempDir(), "approver.key")
	require.NoError(t, createKey(key))
	cmd := exec.Command(testExe(t), "ui", "--workflow", workflowFile, "--store", store, "--key", key)
	cmd.Env = append(os.Environ(), envMain+"=1")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("chartgate ui's stderr:\n%s", stderr.String())
		}
	})
	lines := bufio.NewScanner(out)
	found := make(chan string, 1)
	go func() {
		for lines.Scan() {
			if m := regexp.MustCompile(`^chartgate ui: open (http://\S+/login\?token=[0-9a-f]{64})$`).FindStringSubmatch(lines.Text()); m != nil {
				found <- m[1]
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case login = <-found:
	case <-time.After(20 * time.Second):
		t.Fatalf("chartgate ui printed no login URL; stderr:\n%s", stderr.String())
	}
	return login, strings.SplitN(login, "/login", 2)[0]
}

// TestUIInABrowser: the page lists a workflow the gate moves, lights its
// new state within a second of each transition, shows the pending
// approval, approves it by a click (recorded as by the OS user, through
// the page), and shows that
// in the history; without the token every request is refused.
func TestUIInABrowser(t *testing.T) {
	browser := chromium()
	if browser == "" {
		t.Skip("no chromium binary (chromium, chromium-browser or google-chrome) on PATH: apt-get install -y chromium")
	}
	shots := artifacts(t)
	t.Logf("screenshots in %s", shots)
	dir := t.TempDir()
	wfFile := filepath.Join(dir, "workflow.json")
	require.NoError(t, os.WriteFile(wfFile, []byte(shipWorkflow), 0o644))
	store := filepath.Join(dir, "state.db")

	// The gate that moves the workflow, in this process, on the same
	// store file, with the options every command agrees on.
	wf, st := wfFile, store
	format, subflows, durable := "auto", "", false
	p, err := openProject(projectFlags{workflow: &wf, store: &st, format: &format, subflows: &subflows, durable: &durable})
	require.NoError(t, err)
	defer p.close()
	// The agent's session is named agent-1; its calls go through a go-sdk
	// server in this process.
	opts := agreedGateOptions(p, nil, false, defaultLeaseTTL)
	opts.SessionKey = func(*mcp.ServerSession) string { return "agent-1" }
	opts.Handles = mcpbind.HandlesNever
	g, err := mcpbind.New(p.workflow.Machine.Engine(), opts)
	require.NoError(t, err)
	defer g.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	ref := mcpbind.Ref{Name: "agent-1"}
	server := mcp.NewServer(&mcp.Implementation{Name: "tools", Version: "1"}, nil)
	for _, name := range []string{"Read", "Edit"} {
		mcp.AddTool(server, &mcp.Tool{Name: name}, func(context.Context, *mcp.CallToolRequest, map[string]any) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
		})
	}
	g.Attach(server)
	serverT, clientT := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, serverT, nil)
	require.NoError(t, err)
	defer ss.Close()
	agent, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx, clientT, nil)
	require.NoError(t, err)
	defer agent.Close()
	// The agent reads a file (the workflow is recorded, in plan), then
	// tries to edit one, which plan does not allow.
	r, err := agent.CallTool(ctx, &mcp.CallToolParams{Name: "Read", Arguments: map[string]any{"file_path": "main.go"}})
	require.NoError(t, err)
	require.False(t, r.IsError, "%s", r.Content[0].(*mcp.TextContent).Text)
	r, err = agent.CallTool(ctx, &mcp.CallToolParams{Name: "Edit", Arguments: map[string]any{"file_path": "main.go"}})
	require.NoError(t, err)
	require.True(t, r.IsError, "Edit is refused in plan")

	login, base := startUI(t, wfFile, store)

	// Without the token (or its cookie), everything is refused.
	for _, path := range []string{"/", "/app.js", "/api/session", "/api/workflows", "/api/chart", "/events", "/api/workflow?w=name:agent-1", "/login?token=0000"} {
		res, err := http.Get(base + path)
		require.NoError(t, err)
		res.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, res.StatusCode, path)
	}
	res, err := http.Post(base+"/api/approve", "application/json", strings.NewReader(`{"workflow": "name:agent-1", "approve": true}`))
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, "POST /api/approve")

	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.WindowSize(1400, 1000))...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(alloc)
	defer cancelBrowser()
	shot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644))
	}
	// waitFor polls the page until expr is true, and returns how long
	// that took.
	waitFor := func(expr string, limit time.Duration) time.Duration {
		t.Helper()
		start := time.Now()
		for {
			ok, err := chromedp.Run(bctx, chromedp.Evaluate[bool](expr))
			require.NoError(t, err)
			if ok {
				return time.Since(start)
			}
			if time.Since(start) > limit {
				t.Fatalf("after %s the page still does not satisfy %s", limit, expr)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	// A browser without the cookie sees the refusal too.
	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(base+"/")))
	body, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.body.innerText`))
	require.NoError(t, err)
	assert.Contains(t, body, "not logged in")
	shot("0-refused-without-token")

	// Logging in with the printed URL; the page lists the workflow.
	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(login)))
	require.NoError(t, chromedp.Do(bctx, chromedp.WaitVisible(chromedp.CSS(`tr[data-workflow="name:agent-1"]`))))
	row, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.querySelector('tr[data-workflow="name:agent-1"]').innerText`))
	require.NoError(t, err)
	assert.Contains(t, row, "plan")
	assert.Contains(t, row, "Read the code and write a plan")
	assert.Contains(t, row, "1/10", "the call budget (the refused call does not count)")
	shot("1-list")
	// The token is spent: a second use is refused.
	res, err = http.Get(login)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, "the login URL a second time")

	// The workflow's page: plan lit.
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.CSS(`tr[data-workflow="name:agent-1"] a`))))
	lit := func(id string) string {
		return `!!document.querySelector('#chart g.state.active[data-id="` + id + `"]')`
	}
	waitFor(lit("ship.plan"), 5*time.Second)
	waitFor(`document.getElementById('timeline').innerText.includes('refused Edit in plan: the tool is not allowed in this state (FORBIDDEN)')`, 5*time.Second)
	shot("2-workflow-plan")

	// A transition: the lit state follows within a second.
	_, err = g.Send(ctx, ref, statechart.Event{Type: "PLANNED", Data: map[string]any{"input": map[string]any{"rationale": "small change, tests first"}}}, "agent-1")
	require.NoError(t, err)
	took := waitFor(lit("ship.build")+` && !`+lit("ship.plan")[2:], time.Second)
	t.Logf("the lit state followed the transition in %s", took)
	waitFor(`document.getElementById('timeline').innerText.includes('small change, tests first')`, 5*time.Second)
	shot("3-workflow-build")

	// SHIP needs a person: the approval appears on the page.
	_, err = g.Send(ctx, ref, statechart.Event{Type: "SHIP"}, "agent-1")
	require.NoError(t, err)
	waitFor(`!document.getElementById('pending').hidden && document.getElementById('pending').innerText.includes('Ship to production?')`, 5*time.Second)
	pa, err := g.Approval(ctx, ref)
	require.NoError(t, err)
	waitFor(`document.getElementById('pending').innerText.includes('approval `+pa.ID+`')`, 5*time.Second) // named as everywhere else
	shot("4-pending-approval")

	// Approved by a click: the workflow is live, the history says by whom.
	by, authd := approver("")
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.CSS(`#pending button.approve`))))
	waitFor(lit("ship.live"), 5*time.Second)
	waitFor(`document.getElementById('pending').hidden && document.getElementById('timeline').innerText.includes('chartgate.approve') && document.getElementById('timeline').innerText.includes('by `+by+`')`, 5*time.Second)
	shot("5-approved")
	w, err := g.WorkflowOf(ctx, ref)
	require.NoError(t, err)
	assert.Equal(t, "live", w.State.Value())
	last := w.History[len(w.History)-1]
	assert.Equal(t, mcpbind.EventApprove, last.Event.Type)
	assert.Equal(t, by, last.By)
	require.NotNil(t, last.Approval)
	assert.Equal(t, mcpbind.ChannelPage, last.Approval.Channel)
	assert.Equal(t, authd, last.Approval.Authenticated)

	// Back on the list: live, nothing pending.
	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(base+"/")))
	require.NoError(t, chromedp.Do(bctx, chromedp.WaitVisible(chromedp.CSS(`tr[data-workflow="name:agent-1"]`))))
	waitFor(`document.querySelector('tr[data-workflow="name:agent-1"]').innerText.includes('live') && !document.querySelector('tr[data-workflow="name:agent-1"] button')`, 5*time.Second)
	shot("6-list-after")
}
