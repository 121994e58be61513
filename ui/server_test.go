package ui_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/internal/diagram"
	"github.com/chartgate/chartgate/internal/pgtest"
	"github.com/chartgate/chartgate/internal/redistest"
	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/mcpbind/pgstore"
	"github.com/chartgate/chartgate/mcpbind/redisstore"
	"github.com/chartgate/chartgate/mcpbind/sqlitestore"
	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/ui"
	"github.com/chartgate/chartgate/workflow"
)

const shipWorkflow = `{"id": "ship", "initial": "plan", "states": {
  "plan": {"allowed_tools": ["Read"], "instructions": "Plan it.", "max_iterations": 5, "on": {"PLANNED": "build"}},
  "build": {"allowed_tools": ["Read"], "on": {"SHIP": {"target": "live", "requires_approval": true, "approval_message": "Ship?"}}},
  "live": {"type": "final"}}}`

type fixture struct {
	gate  *mcpbind.Gate
	login string
	base  string
}

// serve runs a server on the loopback over a memory store until the test
// ends.
func serve(t *testing.T) *fixture {
	return serveStore(t, mcpbind.NewMemoryStore(nil))
}

// testKey is the approver key the tests' gates verify and pages sign with.
var testKey = []byte("the person's key, 32 bytes long!")

func serveStore(t *testing.T, store mcpbind.Store) *fixture {
	return serveWith(t, store, testKey)
}

func serveWith(t *testing.T, store mcpbind.Store, key []byte) *fixture {
	t.Helper()
	w, err := workflow.Load([]byte(shipWorkflow), &workflow.Options{})
	require.NoError(t, err)
	g, err := mcpbind.New(w.Machine.Engine(), &mcpbind.Options{Store: store, HistoryLimit: 100, AuditCalls: true, Logger: slog.New(slog.DiscardHandler),
		ApproverKey: testKey})
	require.NoError(t, err)
	t.Cleanup(func() { g.Close() })
	srv, err := ui.New(&ui.Options{Gate: g, Chart: diagram.New(w.Machine, w.JSON), Poll: 20 * time.Millisecond, ApproverKey: key})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-done)
	})
	login := srv.LoginURL(ln.Addr())
	return &fixture{gate: g, login: login, base: strings.SplitN(login, "/login", 2)[0]}
}

// loggedIn returns a client holding the session cookie, and the CSRF
// token.
func (f *fixture) loggedIn(t *testing.T) (*http.Client, string) {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	c := &http.Client{Jar: jar}
	res, err := c.Get(f.login)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	cookies := res.Cookies()
	require.Len(t, cookies, 1)
	assert.True(t, cookies[0].HttpOnly)
	assert.Equal(t, http.SameSiteStrictMode, cookies[0].SameSite)
	assert.NotContains(t, cookies[0].Value, strings.SplitN(f.login, "token=", 2)[1], "the cookie is not the token")
	var s struct{ CSRF string }
	res, err = c.Get(f.base + "/api/session")
	require.NoError(t, err)
	require.NoError(t, json.NewDecoder(res.Body).Decode(&s))
	res.Body.Close()
	require.Len(t, s.CSRF, 64)
	return c, s.CSRF
}

func (f *fixture) post(t *testing.T, c *http.Client, body string, header map[string]string) (int, string) {
	req, err := http.NewRequest(http.MethodPost, f.base+"/api/approve", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := c.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func TestEveryRequestNeedsTheLogin(t *testing.T) {
	f := serve(t)
	for _, path := range []string{"/", "/app.js", "/app.css", "/api/session", "/api/chart", "/api/workflows", "/api/workflow?w=name:a", "/events", "/nope", "/login", "/login?token=", "/login?token=00"} {
		res, err := http.Get(f.base + path)
		require.NoError(t, err)
		res.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, res.StatusCode, path)
	}
	code, _ := f.post(t, http.DefaultClient, `{"workflow": "name:a", "approve": true}`, map[string]string{"Origin": f.base})
	assert.Equal(t, http.StatusUnauthorized, code)

	c, _ := f.loggedIn(t)
	for _, path := range []string{"/", "/app.js", "/app.css", "/api/session", "/api/chart", "/api/workflows"} {
		res, err := c.Get(f.base + path)
		require.NoError(t, err)
		res.Body.Close()
		assert.Equal(t, http.StatusOK, res.StatusCode, path)
		assert.Contains(t, res.Header.Get("Content-Security-Policy"), "script-src 'self'", path)
		assert.Equal(t, "no-store", res.Header.Get("Cache-Control"), path)
	}
	// The token works once, and a second browser gets nothing from it.
	res, err := http.Get(f.login)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
	// A made-up cookie is refused.
	req, _ := http.NewRequest(http.MethodGet, f.base+"/api/workflows", nil)
	req.AddCookie(&http.Cookie{Name: "chartgate_ui", Value: strings.Repeat("0", 64)})
	res, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
}

// TestOtherHostsAreRefused: a page whose DNS name was rebound to the
// loopback sends its own Host, and gets nothing, not even the login.
func TestOtherHostsAreRefused(t *testing.T) {
	f := serve(t)
	c, _ := f.loggedIn(t)
	u, err := url.Parse(f.base)
	require.NoError(t, err)
	cookie := c.Jar.Cookies(u)[0]
	get := func(host string) int {
		req, _ := http.NewRequest(http.MethodGet, f.base+"/api/workflows", nil)
		req.Host = host
		req.AddCookie(cookie)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		return res.StatusCode
	}
	for _, host := range []string{"evil.example", "evil.example:80", "127.0.0.1", "localhost", "127.0.0.2:" + u.Port()} {
		assert.Equal(t, http.StatusForbidden, get(host), host)
	}
	assert.Equal(t, http.StatusOK, get("localhost:"+u.Port()), "localhost with the port")
	assert.Equal(t, http.StatusOK, get(u.Host), "the address")
}

func TestApproveNeedsOriginAndCSRF(t *testing.T) {
	f := serve(t)
	ctx := context.Background()
	ref := mcpbind.Ref{Name: "a"}
	_, err := f.gate.Send(ctx, ref, statechart.Event{Type: "PLANNED"}, "agent")
	require.NoError(t, err)
	_, err = f.gate.Send(ctx, ref, statechart.Event{Type: "SHIP"}, "agent")
	require.NoError(t, err)
	c, csrf := f.loggedIn(t)
	body := `{"workflow": "name:a", "approve": true}`

	for name, h := range map[string]map[string]string{
		"no CSRF token":    {"Origin": f.base},
		"wrong CSRF token": {"Origin": f.base, "X-CSRF-Token": strings.Repeat("a", 64)},
		"no Origin":        {"X-CSRF-Token": csrf},
		"another Origin":   {"Origin": "http://evil.example", "X-CSRF-Token": csrf},
	} {
		code, _ := f.post(t, c, body, h)
		assert.Equal(t, http.StatusForbidden, code, name)
	}
	a, err := f.gate.Pending(ctx, ref)
	require.NoError(t, err)
	require.NotNil(t, a, "still pending")

	ok := map[string]string{"Origin": f.base, "X-CSRF-Token": csrf}
	code, msg := f.post(t, c, `{"workflow": "a"}`, ok)
	assert.Equal(t, http.StatusBadRequest, code, msg)
	code, msg = f.post(t, c, body, ok)
	require.Equal(t, http.StatusOK, code, msg)
	assert.JSONEq(t, `{"from": "build:SHIP:approval", "to": "live", "by": "ui"}`, msg)
	code, msg = f.post(t, c, body, ok)
	assert.Equal(t, http.StatusConflict, code, msg)
	assert.Contains(t, msg, "waits for no approval")

	w, err := f.gate.WorkflowOf(ctx, ref)
	require.NoError(t, err)
	last := w.History[len(w.History)-1]
	assert.Equal(t, mcpbind.EventApprove, last.Event.Type)
	assert.Equal(t, "ui", last.By)
	require.NotNil(t, last.Approval)
	assert.Equal(t, mcpbind.ChannelPage, last.Approval.Channel)
	assert.Equal(t, a.ID, last.Approval.ID)

	// GET does not approve; other methods are refused.
	req, _ := http.NewRequest(http.MethodPut, f.base+"/api/approve", strings.NewReader(body))
	res, err := c.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, res.StatusCode)
}

// TestEventsFollowTheStore: the event stream of a workflow sends its view
// when the store changes, with the active states, instructions, budgets
// and history.
func TestEventsFollowTheStore(t *testing.T) {
	f := serve(t)
	ctx := context.Background()
	ref := mcpbind.Ref{Name: "a"}
	_, err := f.gate.Record(ctx, ref, "Read", json.RawMessage(`{}`), nil, mcpbind.Host{})
	require.NoError(t, err)
	c, _ := f.loggedIn(t)
	res, err := c.Get(f.base + "/events?w=name:a")
	require.NoError(t, err)
	defer res.Body.Close()
	assert.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	lines := bufio.NewScanner(res.Body)
	next := func() map[string]any {
		for lines.Scan() {
			if data, ok := strings.CutPrefix(lines.Text(), "data: "); ok {
				var v map[string]any
				require.NoError(t, json.Unmarshal([]byte(data), &v))
				return v
			}
		}
		t.Fatal("the stream ended")
		return nil
	}
	v := next()
	assert.Equal(t, "plan", v["state"])
	assert.Equal(t, []any{"ship", "ship.plan"}, v["active"])
	assert.Equal(t, []any{"Plan it."}, v["instructions"])
	assert.Equal(t, float64(1), v["limits"].([]any)[0].(map[string]any)["calls"])
	_, err = f.gate.Send(ctx, ref, statechart.Event{Type: "PLANNED", Data: map[string]any{"input": map[string]any{"rationale": "why not"}}}, "agent")
	require.NoError(t, err)
	v = next()
	assert.Equal(t, "build", v["state"])
	h := v["history"].([]any)
	last := h[len(h)-1].(map[string]any)
	assert.Equal(t, "transition", last["kind"])
	assert.Equal(t, "why not", last["rationale"])
	assert.Equal(t, "agent", last["by"])

	// A workflow that is not there: the list says so, no panic.
	res2, err := c.Get(f.base + "/api/workflow?w=id:nothex")
	require.NoError(t, err)
	res2.Body.Close()
	assert.Equal(t, http.StatusNotFound, res2.StatusCode)
	res2, err = c.Get(f.base + "/api/workflow?w=bogus")
	require.NoError(t, err)
	res2.Body.Close()
	assert.Equal(t, http.StatusBadRequest, res2.StatusCode)
}

// TestEveryStore: the page lists, follows and approves on each store the
// command opens: memory, SQLite and Redis.
func TestEveryStore(t *testing.T) {
	for name, open := range map[string]func(t *testing.T) mcpbind.Store{
		"memory": func(*testing.T) mcpbind.Store { return mcpbind.NewMemoryStore(nil) },
		"sqlite": func(t *testing.T) mcpbind.Store {
			s, err := sqlitestore.Open(filepath.Join(t.TempDir(), "state.db"), nil)
			require.NoError(t, err)
			t.Cleanup(func() { s.Close() })
			return s
		},
		"redis": func(t *testing.T) mcpbind.Store { return redisstore.New(redistest.Start(t), nil) },
		"postgres": func(t *testing.T) mcpbind.Store {
			s, err := pgstore.Open(context.Background(), pgtest.Start(t), nil)
			require.NoError(t, err)
			t.Cleanup(func() { s.Close() })
			return s
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := serveStore(t, open(t))
			ctx := context.Background()
			ref := mcpbind.Ref{Name: "a"}
			_, err := f.gate.Send(ctx, ref, statechart.Event{Type: "PLANNED"}, "agent")
			require.NoError(t, err)
			_, err = f.gate.Send(ctx, ref, statechart.Event{Type: "SHIP"}, "agent")
			require.NoError(t, err)
			c, csrf := f.loggedIn(t)
			res, err := c.Get(f.base + "/api/workflows")
			require.NoError(t, err)
			var rows []map[string]any
			require.NoError(t, json.NewDecoder(res.Body).Decode(&rows))
			res.Body.Close()
			require.Len(t, rows, 1)
			assert.Equal(t, "name:a", rows[0]["workflow"])
			assert.Equal(t, "build:SHIP:approval", rows[0]["state"])
			assert.Equal(t, "Ship?", rows[0]["pending"].(map[string]any)["message"])
			code, msg := f.post(t, c, `{"workflow": "name:a", "approve": false}`, map[string]string{"Origin": f.base, "X-CSRF-Token": csrf})
			require.Equal(t, http.StatusOK, code, msg)
			w, err := f.gate.WorkflowOf(ctx, ref)
			require.NoError(t, err)
			assert.Equal(t, "build", w.State.Value(), "rejected: back where it was")
			assert.Equal(t, "ui", w.History[len(w.History)-1].By)
		})
	}
}

// TestApproveNeedsTheApproverKey: a page started without the approver key,
// or with another key than the gate's, cannot answer an approval; the
// approval stays pending.
func TestApproveNeedsTheApproverKey(t *testing.T) {
	for name, key := range map[string][]byte{
		"no key":      nil,
		"another key": []byte("not the person's key, 32 bytes!!"),
	} {
		t.Run(name, func(t *testing.T) {
			f := serveWith(t, mcpbind.NewMemoryStore(nil), key)
			ctx := context.Background()
			ref := mcpbind.Ref{Name: "a"}
			for _, ev := range []string{"PLANNED", "SHIP"} {
				_, err := f.gate.Send(ctx, ref, statechart.Event{Type: ev}, "agent")
				require.NoError(t, err)
			}
			c, csrf := f.loggedIn(t)
			code, msg := f.post(t, c, `{"workflow": "name:a", "approve": true}`, map[string]string{"Origin": f.base, "X-CSRF-Token": csrf})
			assert.Equal(t, http.StatusForbidden, code, msg)
			a, err := f.gate.Pending(ctx, ref)
			require.NoError(t, err)
			assert.NotNil(t, a, "still pending")
		})
	}
}
