package statesync_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chartgate/chartgate/statesync"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func callReq(name string) *mcp.CallToolRequest {
	return &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: name}}
}

func okResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// callThrough runs one tools/call through the layer's middleware, with a
// handler returning res and err.
func callThrough(t *testing.T, l *statesync.Layer, name string, res *mcp.CallToolResult, err error) *mcp.CallToolResult {
	t.Helper()
	h := l.Middleware(func(context.Context, string, mcp.Request) (mcp.Result, error) {
		if res == nil {
			return nil, err
		}
		return res, err
	})
	out, gotErr := h(context.Background(), "tools/call", callReq(name))
	if !errors.Is(gotErr, err) {
		t.Fatalf("error = %v, want %v", gotErr, err)
	}
	if out == nil {
		return nil
	}
	return out.(*mcp.CallToolResult)
}

func texts(r *mcp.CallToolResult) []string {
	var out []string
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			out = append(out, tc.Text)
		} else {
			out = append(out, "<non-text>")
		}
	}
	return out
}

// TestInvalidationSeedExamples: the exact notices of the seeds and of the
// issue.
func TestInvalidationSeedExamples(t *testing.T) {
	l := mustNew(t, seedPolicies(), &statesync.Options{Default: statesync.NoStore})
	out := callThrough(t, l, "tasks_update", okResult(`{"ok": true}`), nil)
	want := []string{"[System: Cache invalidated for tasks.*, sprints.* — caused by tasks.update]", `{"ok": true}`}
	if !slices.Equal(texts(out), want) {
		t.Errorf("got %q, want %q", texts(out), want)
	}

	// The JSON example of the first seed lists sprints.* first.
	l2 := mustNew(t, []statesync.Policy{{Match: "tasks.update", Invalidates: []string{"sprints.*", "tasks.*"}}}, nil)
	out = callThrough(t, l2, "tasks.update", okResult(`{"ok": true}`), nil)
	want = []string{"[System: Cache invalidated for sprints.*, tasks.* — caused by tasks.update]", `{"ok": true}`}
	if !slices.Equal(texts(out), want) || out.IsError {
		t.Errorf("got %q, want %q", texts(out), want)
	}

	out = callThrough(t, l, "sprints_create", okResult("created"), nil)
	if got := texts(out)[0]; got != "[System: Cache invalidated for sprints.* — caused by sprints.create]" {
		t.Errorf("single pattern: %q", got)
	}
}

// TestInvalidationGuards mirrors MCP Fusion's CausalEngine tests: no signal
// on failure, on a protocol error, on read-only tools, on pending input.
func TestInvalidationGuards(t *testing.T) {
	var events []statesync.Event
	var notes []statesync.Notification
	l := mustNew(t, seedPolicies(), &statesync.Options{
		Default:        statesync.NoStore,
		OnInvalidation: func(e statesync.Event) { events = append(events, e) },
		Sink: func(_ context.Context, n statesync.Notification) error {
			notes = append(notes, n)
			return nil
		},
	})
	failed := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no such sprint"}}}
	if out := callThrough(t, l, "sprints_update", failed, nil); out != failed || len(out.Content) != 1 || !out.IsError {
		t.Errorf("isError result changed: %q", texts(out))
	}
	protoErr := errors.New("boom")
	if out := callThrough(t, l, "sprints_update", nil, protoErr); out != nil {
		t.Error("protocol error should pass through")
	}
	readOnly := okResult("[]")
	if out := callThrough(t, l, "sprints_list", readOnly, nil); out != readOnly {
		t.Error("read-only tool result changed")
	}
	countries := okResult("[]")
	if out := callThrough(t, l, "countries_list", countries, nil); out != countries {
		t.Error("immutable tool result changed")
	}
	pending := &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{}}
	if out := callThrough(t, l, "sprints_update", pending, nil); out != pending || len(out.Content) != 0 {
		t.Error("a result waiting for input must not be decorated")
	}
	if len(events) != 0 || len(notes) != 0 {
		t.Errorf("events %v, notifications %v; want none", events, notes)
	}
}

// TestInvalidationKeepsResult mirrors MCP Fusion's ResponseDecorator tests:
// the notice is content[0], the content follows in order, other fields are
// kept, and the handler's result is not modified.
func TestInvalidationKeepsResult(t *testing.T) {
	l := mustNew(t, seedPolicies(), nil)
	in := &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.ImageContent{MIMEType: "image/png", Data: []byte{1}}, &mcp.TextContent{Text: "b"}},
		StructuredContent: map[string]any{"ok": true},
		Meta:              mcp.Meta{"k": "v"},
	}
	out := callThrough(t, l, "sprints_delete", in, nil)
	if got := texts(out); !slices.Equal(got, []string{"[System: Cache invalidated for sprints.* — caused by sprints.delete]", "a", "<non-text>", "b"}) {
		t.Errorf("content = %q", got)
	}
	if out == in || len(in.Content) != 3 || out.IsError || out.StructuredContent == nil || out.Meta["k"] != "v" {
		t.Error("result not copied faithfully")
	}
	empty := callThrough(t, l, "sprints_delete", &mcp.CallToolResult{}, nil)
	if len(empty.Content) != 1 {
		t.Errorf("empty content: %q", texts(empty))
	}
}

func TestXMLNotice(t *testing.T) {
	l := mustNew(t, seedPolicies(), &statesync.Options{Format: statesync.XMLNotice})
	out := callThrough(t, l, "tasks_update", okResult("{}"), nil)
	if got, want := texts(out)[0], `<cache_invalidation cause="tasks.update" domains="tasks.*, sprints.*" />`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	evil := statesync.XMLNotice(statesync.Event{CausedBy: `tool<"evil">`, Patterns: []string{"a&b", "it's"}})
	if want := `<cache_invalidation cause="tool&lt;&quot;evil&quot;&gt;" domains="a&amp;b, it&apos;s" />`; evil != want {
		t.Errorf("escaping: got %q, want %q", evil, want)
	}
}

func TestCustomAndEmptyFormatter(t *testing.T) {
	var events int
	l := mustNew(t, seedPolicies(), &statesync.Options{
		Format:         func(e statesync.Event) string { return "STALE " + strings.Join(e.Patterns, "|") + " by " + e.Tool },
		OnInvalidation: func(statesync.Event) { events++ },
	})
	if got := texts(callThrough(t, l, "tasks_update", okResult("{}"), nil))[0]; got != "STALE tasks.*|sprints.* by tasks_update" {
		t.Errorf("custom format: %q", got)
	}
	silent := mustNew(t, seedPolicies(), &statesync.Options{
		Format:         func(statesync.Event) string { return "" },
		OnInvalidation: func(statesync.Event) { events++ },
	})
	in := okResult("{}")
	if out := callThrough(t, silent, "tasks_update", in, nil); out != in {
		t.Error("an empty notice should leave the result as is")
	}
	if events != 2 {
		t.Errorf("observer called %d times, want 2", events)
	}
}

// TestOnInvalidation mirrors MCP Fusion's onInvalidation tests: fires with
// cause, patterns and time on success only; a panicking observer is
// recovered and logged and the call is unaffected.
func TestOnInvalidation(t *testing.T) {
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	var got []statesync.Event
	l := mustNew(t, []statesync.Policy{
		{Match: "billing.pay", Invalidates: []string{"billing.invoices.*", "reports.balance"}},
	}, &statesync.Options{
		OnInvalidation: func(e statesync.Event) {
			got = append(got, e)
			e.Patterns[0] = "mutated by the observer"
		},
		Now: func() time.Time { return at },
	})
	out := callThrough(t, l, "billing_pay", okResult("paid"), nil)
	if len(got) != 1 {
		t.Fatalf("events = %v", got)
	}
	e := got[0]
	if e.CausedBy != "billing.pay" || e.Tool != "billing_pay" || !e.Time.Equal(at) || e.Patterns[1] != "reports.balance" {
		t.Errorf("event = %+v", e)
	}
	if texts(out)[0] != "[System: Cache invalidated for billing.invoices.*, reports.balance — caused by billing.pay]" {
		t.Errorf("an observer must not be able to change the notice: %q", texts(out)[0])
	}
	callThrough(t, l, "billing_pay", &mcp.CallToolResult{IsError: true}, nil)
	callThrough(t, l, "billing_refund", okResult(""), nil)
	if len(got) != 1 {
		t.Errorf("observer fired on error or no match: %d events", len(got))
	}

	var logs bytes.Buffer
	boom := mustNew(t, seedPolicies(), &statesync.Options{
		OnInvalidation: func(statesync.Event) { panic("observer exploded") },
		Logger:         slog.New(slog.NewTextHandler(&logs, nil)),
	})
	out = callThrough(t, boom, "sprints_update", okResult("updated"), nil)
	if !slices.Equal(texts(out), []string{"[System: Cache invalidated for sprints.* — caused by sprints.update]", "updated"}) {
		t.Errorf("call affected by the panic: %q", texts(out))
	}
	if !strings.Contains(logs.String(), "OnInvalidation panicked") || !strings.Contains(logs.String(), "observer exploded") {
		t.Errorf("panic not logged: %s", logs.String())
	}
}

// TestSink mirrors MCP Fusion's notificationSink tests: one notification
// per pattern with the configured scheme, none on error, and a failing or
// panicking sink does not affect the call.
func TestSink(t *testing.T) {
	var notes []statesync.Notification
	sink := func(_ context.Context, n statesync.Notification) error {
		notes = append(notes, n)
		return nil
	}
	l := mustNew(t, seedPolicies(), &statesync.Options{Sink: sink, URIScheme: "fusion"})
	callThrough(t, l, "tasks_update", okResult("{}"), nil)
	want := []statesync.Notification{
		{Method: "notifications/resources/updated", URI: "fusion://stale/tasks.*", Pattern: "tasks.*", CausedBy: "tasks.update"},
		{Method: "notifications/resources/updated", URI: "fusion://stale/sprints.*", Pattern: "sprints.*", CausedBy: "tasks.update"},
	}
	if !slices.Equal(notes, want) {
		t.Errorf("notifications =\n%+v\nwant\n%+v", notes, want)
	}
	notes = nil
	callThrough(t, l, "tasks_update", &mcp.CallToolResult{IsError: true}, nil)
	if len(notes) != 0 {
		t.Errorf("sink called on error: %v", notes)
	}

	def := mustNew(t, seedPolicies(), &statesync.Options{Sink: sink})
	callThrough(t, def, "sprints_create", okResult("{}"), nil)
	if len(notes) != 1 || notes[0].URI != "statesync://stale/sprints.*" {
		t.Errorf("default scheme: %+v", notes)
	}

	var logs bytes.Buffer
	calls := 0
	bad := mustNew(t, seedPolicies(), &statesync.Options{
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Sink: func(_ context.Context, n statesync.Notification) error {
			calls++
			if n.Pattern == "tasks.*" {
				panic("sink exploded")
			}
			return errors.New("transport closed")
		},
	})
	out := callThrough(t, bad, "tasks_update", okResult("{}"), nil)
	if calls != 2 || len(out.Content) != 2 {
		t.Errorf("sink calls %d, content %q", calls, texts(out))
	}
	if !strings.Contains(logs.String(), "Sink panicked") || !strings.Contains(logs.String(), "transport closed") {
		t.Errorf("sink failures not logged: %s", logs.String())
	}
}

func TestFormatterPanicFallsBack(t *testing.T) {
	var logs bytes.Buffer
	l := mustNew(t, seedPolicies(), &statesync.Options{
		Format: func(statesync.Event) string { panic("format exploded") },
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	out := callThrough(t, l, "sprints_create", okResult("{}"), nil)
	if texts(out)[0] != "[System: Cache invalidated for sprints.* — caused by sprints.create]" || !strings.Contains(logs.String(), "format exploded") {
		t.Errorf("got %q, logs %s", texts(out), logs.String())
	}
}

// TestToolOptions mirrors MCP Fusion's fluent .cached()/.stale()/
// .invalidates() and pins the precedence over registry policies.
func TestToolOptions(t *testing.T) {
	l := mustNew(t, []statesync.Policy{
		{Match: "countries.*", CacheControl: statesync.NoStore},
		{Match: "tasks.update", Invalidates: []string{"tasks.*"}},
	}, &statesync.Options{Default: statesync.NoStore})
	for tool, opts := range map[string][]statesync.ToolOption{
		"countries_list": {statesync.Cached()},
		"sprints_list":   {statesync.Stale()},
		"timezones_list": {statesync.Cached()},
		"tasks_update":   {statesync.Invalidates("sprints.*", "tasks.*")},
		"sprints_create": {statesync.Invalidates("sprints.*"), statesync.Cached(), statesync.Stale(), statesync.Invalidates("reports.*")},
	} {
		if err := l.Declare(tool, opts...); err != nil {
			t.Fatal(err)
		}
	}
	checkResolve(t, l, "countries_list", want{statesync.Immutable, nil, 0}) // the tool beats the policy
	checkResolve(t, l, "sprints_list", want{statesync.NoStore, nil, -1})
	checkResolve(t, l, "timezones_list", want{statesync.Immutable, nil, -1}) // the tool beats the default
	checkResolve(t, l, "tasks_update", want{statesync.NoStore, []string{"tasks.*", "sprints.*"}, 1})
	checkResolve(t, l, "sprints_create", want{statesync.NoStore, []string{"sprints.*", "reports.*"}, -1}) // last directive wins
	if r := l.Resolve("sprints_create"); !r.Declared {
		t.Error("Declared not set")
	}

	out := callThrough(t, l, "sprints_create", okResult("{}"), nil)
	if texts(out)[0] != "[System: Cache invalidated for sprints.*, reports.* — caused by sprints.create]" {
		t.Errorf("notice = %q", texts(out)[0])
	}

	if err := l.Declare("sprints_create"); err != nil { // forget
		t.Fatal(err)
	}
	checkResolve(t, l, "sprints_create", want{statesync.NoStore, nil, -1})

	err := l.Declare("x", statesync.Invalidates("ok.*", "sp ace", ""), statesync.Invalidates("a/b"))
	if err == nil || !strings.Contains(err.Error(), `tool "x"`) || !strings.Contains(err.Error(), `"sp ace"`) ||
		!strings.Contains(err.Error(), "Entry 2 is empty") || !strings.Contains(err.Error(), "entry 3") {
		t.Errorf("Declare error = %v", err)
	}
	checkResolve(t, l, "x", want{statesync.NoStore, nil, -1}) // nothing changed
}

func TestToolAndAddTool(t *testing.T) {
	l := mustNew(t, nil, nil)
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	type in struct {
		Name string `json:"name"`
	}
	statesync.AddTool(s, l, &mcp.Tool{Name: "sprints_create"}, func(context.Context, *mcp.CallToolRequest, in) (*mcp.CallToolResult, any, error) {
		return nil, nil, nil
	}, statesync.Invalidates("sprints.*"))
	checkResolve(t, l, "sprints_create", want{"", []string{"sprints.*"}, -1})

	tool := &mcp.Tool{Name: "countries_list"}
	if l.Tool(tool, statesync.Cached()) != tool {
		t.Error("Tool should return its argument")
	}
	checkResolve(t, l, "countries_list", want{statesync.Immutable, nil, -1})

	defer func() {
		if recover() == nil {
			t.Error("Tool with an invalid pattern should panic")
		}
	}()
	l.Tool(&mcp.Tool{Name: "bad"}, statesync.Invalidates("a/b"))
}

// TestInvalidateHook: patterns added during the call join the tool's own;
// without a layer the hook says so; invalid patterns are refused whole.
func TestInvalidateHook(t *testing.T) {
	l := mustNew(t, seedPolicies(), nil)
	var hookErr error
	h := l.Middleware(func(ctx context.Context, _ string, req mcp.Request) (mcp.Result, error) {
		if err := statesync.Invalidate(ctx, "bad pattern"); err == nil {
			hookErr = errors.New("invalid pattern accepted")
		}
		if err := statesync.Invalidate(ctx, "cart.*", "sprints.*"); err != nil {
			hookErr = err
		}
		return okResult("{}"), nil
	})
	res, err := h(context.Background(), "tools/call", callReq("sprints_update"))
	if err != nil || hookErr != nil {
		t.Fatal(err, hookErr)
	}
	if got := texts(res.(*mcp.CallToolResult))[0]; got != "[System: Cache invalidated for sprints.*, cart.* — caused by sprints.update]" {
		t.Errorf("notice = %q", got)
	}
	if err := statesync.Invalidate(context.Background(), "x"); !errors.Is(err, statesync.ErrNoLayer) {
		t.Errorf("without a layer: %v", err)
	}
}

// TestDecorateResultDirect: the same work outside the middleware, for
// custom pipelines.
func TestDecorateResultDirect(t *testing.T) {
	var logs bytes.Buffer
	l := mustNew(t, nil, &statesync.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	res := okResult("{}")
	if out := l.DecorateResult(context.Background(), callReq("a_b"), res); out != res {
		t.Error("nothing to invalidate: result should be returned as is")
	}
	out := l.DecorateResult(context.Background(), callReq("a_b"), res, "x.*", "bad x", "x.*")
	if texts(out)[0] != "[System: Cache invalidated for x.* — caused by a.b]" || !strings.Contains(logs.String(), "bad x") {
		t.Errorf("got %q, logs %s", texts(out), logs.String())
	}
	var nilLayer *statesync.Layer
	if nilLayer.DecorateResult(context.Background(), callReq("a"), res, "x") != res {
		t.Error("nil layer")
	}
}

// TestOtherMethodsPassThrough: the layer touches tools/list and tools/call
// only, and a nil layer installs nothing.
func TestOtherMethodsPassThrough(t *testing.T) {
	l := mustNew(t, seedPolicies(), &statesync.Options{Default: statesync.NoStore})
	want := &mcp.ListPromptsResult{}
	var seen string
	h := l.Middleware(func(_ context.Context, method string, _ mcp.Request) (mcp.Result, error) {
		seen = method
		return want, nil
	})
	if res, err := h(context.Background(), "prompts/list", &mcp.ListPromptsRequest{}); res != want || err != nil || seen != "prompts/list" {
		t.Error("prompts/list altered")
	}
	var nilLayer *statesync.Layer
	called := false
	next := func(context.Context, string, mcp.Request) (mcp.Result, error) { called = true; return nil, nil }
	if _, _ = nilLayer.Middleware(next)(context.Background(), "tools/call", callReq("x")); !called {
		t.Error("nil layer should pass through")
	}
}

// TestConcurrentCalls exercises the middleware under -race.
func TestConcurrentCalls(t *testing.T) {
	var mu sync.Mutex
	n := 0
	l := mustNew(t, seedPolicies(), &statesync.Options{
		Default:        statesync.NoStore,
		CacheSize:      4,
		OnInvalidation: func(statesync.Event) { mu.Lock(); n++; mu.Unlock() },
	})
	h := l.Middleware(func(ctx context.Context, method string, _ mcp.Request) (mcp.Result, error) {
		if method == "tools/list" {
			return &mcp.ListToolsResult{Tools: []*mcp.Tool{{Name: "sprints_list"}, {Name: "countries_list"}}}, nil
		}
		_ = statesync.Invalidate(ctx, "cart.*")
		return okResult("{}"), nil
	})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				if _, err := h(context.Background(), "tools/call", callReq([]string{"tasks_update", "sprints_create", "x_y"}[(g+i)%3])); err != nil {
					t.Error(err)
				}
				if _, err := h(context.Background(), "tools/list", &mcp.ListToolsRequest{}); err != nil {
					t.Error(err)
				}
				if i%50 == 0 {
					_ = l.Declare("x_y", statesync.Invalidates("y.*"))
				}
			}
		}()
	}
	wg.Wait()
	if n != 8*200 {
		t.Errorf("%d events, want %d", n, 8*200)
	}
}

// TestEventStale: an event names stale every canonical name one of its
// patterns matches, dots included.
func TestEventStale(t *testing.T) {
	e := statesync.Event{Patterns: []string{"cart.*", "orders.list"}}
	for key, want := range map[string]bool{
		"cart.items.list": true, "cart.": true, "orders.list": true,
		"cart": false, "carts.list": false, "orders.list.all": false,
	} {
		if got := e.Stale(key); got != want {
			t.Errorf("Stale(%q) = %v, want %v", key, got, want)
		}
	}
}
