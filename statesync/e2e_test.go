package statesync_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chartgate/chartgate/statesync"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// board is a tiny in-memory sprint board for end-to-end tests.
type board struct {
	mu      sync.Mutex
	sprints map[string]string // id -> name
	next    int
}

type createArgs struct {
	Name string `json:"name" jsonschema:"Sprint name"`
}

type updateArgs struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
}

func (b *board) list(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var names []string
	for _, n := range b.sprints {
		names = append(names, n)
	}
	sort.Strings(names)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(names, ",")}}}, nil, nil
}

func (b *board) create(_ context.Context, _ *mcp.CallToolRequest, in createArgs) (*mcp.CallToolResult, any, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.next++
	id := fmt.Sprintf("s%d", b.next)
	b.sprints[id] = in.Name
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "created " + id}}}, nil, nil
}

func (b *board) update(_ context.Context, _ *mcp.CallToolRequest, in updateArgs) (*mcp.CallToolResult, any, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.sprints[in.ID]; !ok {
		return nil, nil, fmt.Errorf("no sprint %q", in.ID)
	}
	b.sprints[in.ID] = in.Name
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "updated " + in.ID}}}, nil, nil
}

func countries(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "DE,FR,JP"}}}, nil, nil
}

// newSeedServer builds the seeds' domain on a go-sdk server with the layer
// installed, registry policies for the sprints and a per-tool option for the
// countries.
func newSeedServer(t *testing.T, opts *statesync.Options) (*mcp.Server, *statesync.Layer) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "sprints", Version: "1"}, &mcp.ServerOptions{
		// Clients subscribe to statesync://stale/<pattern> URIs.
		Capabilities:       &mcp.ServerCapabilities{Resources: &mcp.ResourceCapabilities{Subscribe: true}},
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	o := *opts
	o.Sink = statesync.ServerSink(s)
	l := mustNew(t, []statesync.Policy{
		{Match: "sprints.update", Invalidates: []string{"sprints.*"}},
		{Match: "sprints.create", Invalidates: []string{"sprints.*"}},
	}, &o)
	b := &board{sprints: map[string]string{}}
	mcp.AddTool(s, &mcp.Tool{Name: "sprints_list", Description: "List workspace sprints"}, b.list)
	mcp.AddTool(s, &mcp.Tool{Name: "sprints_create", Description: "Create a new sprint"}, b.create)
	mcp.AddTool(s, &mcp.Tool{Name: "sprints_update", Description: "Update a sprint"}, b.update)
	statesync.AddTool(s, l, &mcp.Tool{Name: "countries_list", Description: "List country codes."}, countries, statesync.Cached())
	s.AddReceivingMiddleware(l.Middleware)
	return s, l
}

// connect connects a go-sdk client to s in memory; mws, if any, see every
// message the client receives.
func connect(t *testing.T, s *mcp.Server, version string, copts *mcp.ClientOptions, mws ...mcp.Middleware) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, copts)
	c.AddReceivingMiddleware(mws...)
	cs, err := c.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// subscribe subscribes cs to uri and returns once the server has recorded
// the subscription. Under the legacy protocol that is when
// ClientSession.Subscribe returns (the server answers resources/subscribe
// after recording it). Under protocol 2026-07-28 (SEP-2575) Subscribe only
// sends subscriptions/listen and returns; the server records the
// subscription while handling that request, concurrently with the calls
// that follow, and then sends notifications/subscriptions/acknowledged,
// which acked (fed by ackWatcher) passes on. A notification sent before
// that reaches no one.
func subscribe(t *testing.T, cs *mcp.ClientSession, uri string, acked <-chan struct{}) {
	t.Helper()
	if err := cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	if cs.InitializeResult().ProtocolVersion < "2026-07-28" {
		return
	}
	select {
	case <-acked:
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/subscriptions/acknowledged")
	}
}

// ackWatcher is client middleware that sends on acked for each
// notifications/subscriptions/acknowledged the client receives.
func ackWatcher(acked chan<- struct{}) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method == "notifications/subscriptions/acknowledged" {
				acked <- struct{}{}
			}
			return res, err
		}
	}
}

// TestEndToEnd drives the layer with the go-sdk client over in-memory
// transports, for the newest protocol and for the last one with sessions.
func TestEndToEnd(t *testing.T) {
	for _, version := range []string{"", "2025-11-25"} {
		t.Run("protocol="+version, func(t *testing.T) {
			var (
				mu      sync.Mutex
				updated []string
				events  []statesync.Event
			)
			gotUpdate := make(chan struct{}, 16)
			acked := make(chan struct{}, 16)
			s, _ := newSeedServer(t, &statesync.Options{
				Default: statesync.NoStore,
				OnInvalidation: func(e statesync.Event) {
					mu.Lock()
					events = append(events, e)
					mu.Unlock()
				},
			})
			cs := connect(t, s, version, &mcp.ClientOptions{
				ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
					mu.Lock()
					updated = append(updated, req.Params.URI)
					mu.Unlock()
					gotUpdate <- struct{}{}
				},
			}, ackWatcher(acked))
			ctx := context.Background()

			lt, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			descs := map[string]string{}
			for _, tool := range lt.Tools {
				descs[tool.Name] = tool.Description
			}
			wantDescs := map[string]string{
				"sprints_list":   "List workspace sprints [Cache-Control: no-store]",
				"sprints_create": "Create a new sprint [Cache-Control: no-store]",
				"sprints_update": "Update a sprint [Cache-Control: no-store]",
				"countries_list": "List country codes. [Cache-Control: immutable]",
			}
			for name, want := range wantDescs {
				if descs[name] != want {
					t.Errorf("%s: %q, want %q", name, descs[name], want)
				}
			}
			// Listing again gives the same, not doubled, descriptions.
			lt2, _ := cs.ListTools(ctx, nil)
			for _, tool := range lt2.Tools {
				if tool.Description != wantDescs[tool.Name] {
					t.Errorf("second list: %s: %q", tool.Name, tool.Description)
				}
			}

			subscribe(t, cs, "statesync://stale/sprints.*", acked)

			if got := texts(call(t, cs, "sprints_list", map[string]any{})); !slices.Equal(got, []string{""}) {
				t.Errorf("sprints_list before = %q", got)
			}
			res := call(t, cs, "sprints_create", map[string]any{"name": "Sprint 1"})
			if got := texts(res); !slices.Equal(got, []string{"[System: Cache invalidated for sprints.* — caused by sprints.create]", "created s1"}) || res.IsError {
				t.Errorf("sprints_create = %q", got)
			}
			select {
			case <-gotUpdate:
			case <-time.After(5 * time.Second):
				t.Fatal("no notifications/resources/updated")
			}
			if got := texts(call(t, cs, "sprints_list", map[string]any{})); !slices.Equal(got, []string{"Sprint 1"}) {
				t.Errorf("sprints_list after = %q", got)
			}

			res = call(t, cs, "sprints_update", map[string]any{"id": "nope", "name": "x"})
			if got := texts(res); !res.IsError || len(got) != 1 || strings.Contains(got[0], "Cache invalidated") {
				t.Errorf("failed update = %v %q", res.IsError, got)
			}
			res = call(t, cs, "sprints_update", map[string]any{"id": "s1", "name": "Sprint One"})
			if got := texts(res); got[0] != "[System: Cache invalidated for sprints.* — caused by sprints.update]" {
				t.Errorf("sprints_update = %q", got)
			}
			select {
			case <-gotUpdate:
			case <-time.After(5 * time.Second):
				t.Fatal("no second notifications/resources/updated")
			}

			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(updated, []string{"statesync://stale/sprints.*", "statesync://stale/sprints.*"}) {
				t.Errorf("resources/updated = %q", updated)
			}
			if len(events) != 2 || events[0].CausedBy != "sprints.create" || events[0].Session == nil || events[1].CausedBy != "sprints.update" {
				t.Errorf("events = %+v", events)
			}
		})
	}
}
