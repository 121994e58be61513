package statelessengine_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/qmuntal/stateless"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/statechart/statelessengine"
)

// docMachine is draft -SUBMIT-> review -APPROVE [amount <= 100]-> published,
// review -REJECT-> draft; entering review counts in entered.
func docMachine(t *testing.T, entered *atomic.Int32) statechart.Engine {
	t.Helper()
	sm := stateless.NewStateMachineWithExternalStorage(statelessengine.State, statelessengine.SetState, stateless.FiringImmediate)
	small := func(_ context.Context, args ...any) bool {
		ev, _ := args[0].(statechart.Event)
		in, _ := ev.Data["input"].(map[string]any)
		n, _ := in["amount"].(float64)
		return n <= 100
	}
	sm.Configure("draft").Permit("SUBMIT", "review")
	sm.Configure("review").
		Permit("APPROVE", "published", small).
		Permit("REJECT", "draft").
		OnEntry(func(context.Context, ...any) error { entered.Add(1); return nil })
	e, err := statelessengine.New(sm, &statelessengine.Options{
		ID:       "doc",
		States:   []any{"draft", "review", "published"},
		Final:    []any{"published"},
		Triggers: []any{"SUBMIT", "APPROVE", "REJECT"},
		Meta:     map[any]any{"review": map[string]any{"mcp": map[string]any{"tools": []any{"read_doc"}}}},
	})
	require.NoError(t, err)
	return e
}

func ev(typ string, amount float64) statechart.Event {
	return statechart.Event{Type: typ, Data: map[string]any{"input": map[string]any{"amount": amount}}}
}

func TestStatesAndNodes(t *testing.T) {
	e := docMachine(t, new(atomic.Int32))
	ctx := context.Background()
	s, err := e.Start(ctx, time.Now())
	require.NoError(t, err)
	assert.Equal(t, "draft", s.Value())
	assert.Equal(t, statechart.StatusActive, s.Status())
	assert.Equal(t, []string{"doc", "doc.draft"}, s.StateIDs())
	assert.Empty(t, s.Context())

	nodes := e.Nodes()
	require.Len(t, nodes, 4)
	assert.Equal(t, "doc", nodes[0].ID)
	assert.Equal(t, "doc.draft", nodes[0].Initial)
	assert.Equal(t, statechart.Node{ID: "doc.published", Key: "published", Parent: "doc", Type: "final"}, nodes[3])
	assert.Equal(t, map[string]any{"mcp": map[string]any{"tools": []any{"read_doc"}}}, nodes[2].Meta)
	var events []string
	for _, tr := range nodes[1].Transitions {
		events = append(events, tr.Event)
	}
	assert.Equal(t, []string{"APPROVE", "REJECT", "SUBMIT"}, events)

	b, err := s.MarshalJSON()
	require.NoError(t, err)
	assert.JSONEq(t, `{"status":"active","value":"draft"}`, string(b))
	r, err := e.Restore([]byte(`{"status":"done","value":"published"}`))
	require.NoError(t, err)
	assert.Equal(t, statechart.StatusDone, r.Status())
	_, err = e.Restore([]byte(`{"value":"archived"}`))
	assert.EqualError(t, err, `statelessengine: restoring a state of "doc": "archived" is not one of its states`)
	_, err = e.Restore([]byte(`[`))
	assert.Error(t, err)
}

func TestPermittedTriggersAndGuards(t *testing.T) {
	var entered atomic.Int32
	e := docMachine(t, &entered)
	ctx, now := context.Background(), time.Now()
	draft, _ := e.Start(ctx, now)
	for _, c := range []struct {
		typ  string
		want bool
	}{{"SUBMIT", true}, {"APPROVE", false}, {"REJECT", false}, {"NOPE", false}} {
		ok, err := e.Can(ctx, draft, ev(c.typ, 0))
		require.NoError(t, err)
		assert.Equal(t, c.want, ok, "draft can %s", c.typ)
	}
	// An event no transition takes leaves the state as it was.
	s, err := e.Send(ctx, draft, ev("APPROVE", 0), now)
	require.NoError(t, err)
	assert.Same(t, draft, s)

	review, err := e.Send(ctx, draft, ev("SUBMIT", 0), now)
	require.NoError(t, err)
	assert.Equal(t, "review", review.Value())
	assert.Equal(t, "draft", draft.Value(), "states are immutable")
	assert.Equal(t, int32(1), entered.Load(), "the entry action ran once")

	// The guard reads the event's data: too large an amount is refused.
	ok, err := e.Can(ctx, review, ev("APPROVE", 500))
	require.NoError(t, err)
	assert.False(t, ok)
	s, err = e.Send(ctx, review, ev("APPROVE", 500), now)
	require.NoError(t, err)
	assert.Equal(t, "review", s.Value())
	s, err = e.Send(ctx, review, ev("APPROVE", 50), now)
	require.NoError(t, err)
	assert.Equal(t, "published", s.Value())
	assert.Equal(t, statechart.StatusDone, s.Status())
	ok, err = e.Can(ctx, s, ev("REJECT", 0))
	require.NoError(t, err)
	assert.False(t, ok, "a final state takes no event")

	adv, err := e.Advance(ctx, review, now.Add(time.Hour))
	require.NoError(t, err)
	assert.Same(t, review, adv)
}

func TestNewRefuses(t *testing.T) {
	own := stateless.NewStateMachine("draft")
	_, err := statelessengine.New(own, &statelessengine.Options{States: []any{"draft"}})
	assert.ErrorContains(t, err, "build it with stateless.NewStateMachineWithExternalStorage(statelessengine.State, statelessengine.SetState")
	sm := stateless.NewStateMachineWithExternalStorage(statelessengine.State, statelessengine.SetState, stateless.FiringImmediate)
	_, err = statelessengine.New(sm, &statelessengine.Options{})
	assert.Error(t, err)
	_, err = statelessengine.New(sm, &statelessengine.Options{States: []any{"a", "a"}})
	assert.EqualError(t, err, `statelessengine: Options.States[1]: the name "a" is empty or given twice`)
	_, err = statelessengine.New(sm, &statelessengine.Options{States: []any{"a"}, Final: []any{"b"}})
	assert.EqualError(t, err, `statelessengine: Options.Final[0]: b is not in Options.States`)
	_, err = statelessengine.State(context.Background())
	assert.Error(t, err, "outside an Engine call")
}

// TestConcurrentInstances: instances in different states fire at once
// without seeing each other's state (run with -race).
func TestConcurrentInstances(t *testing.T) {
	var entered atomic.Int32
	e := docMachine(t, &entered)
	ctx, now := context.Background(), time.Now()
	draft, _ := e.Start(ctx, now)
	review, _ := e.Send(ctx, draft, ev("SUBMIT", 0), now)
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			from, typ, want := draft, "SUBMIT", "review"
			if i%2 == 1 {
				from, typ, want = review, "REJECT", "draft"
			}
			s, err := e.Send(ctx, from, ev(typ, 0), now)
			if err == nil && s.Value() != want {
				err = fmt.Errorf("%s from %v gave %v, want %s", typ, from.Value(), s.Value(), want)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// TestGatedTools: through mcpbind, a tool whose trigger's guard refuses
// the call's arguments is refused before it runs and leaves the workflow
// where it was; one the guard accepts runs and commits its transition.
func TestGatedTools(t *testing.T) {
	e := docMachine(t, new(atomic.Int32))
	gate, err := mcpbind.New(e, &mcpbind.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	server := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
	var ran atomic.Int32
	type amountIn struct {
		Amount float64 `json:"amount"`
	}
	handler := func(context.Context, *mcp.CallToolRequest, amountIn) (*mcp.CallToolResult, any, error) {
		ran.Add(1)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	}
	mcpbind.AddTool(server, gate, &mcp.Tool{Name: "submit_doc"}, mcpbind.Binding{Event: "SUBMIT"}, handler)
	mcpbind.AddTool(server, gate, &mcp.Tool{Name: "approve_doc"}, mcpbind.Binding{States: []string{"review"}, Event: "APPROVE"}, handler)
	mcp.AddTool(server, &mcp.Tool{Name: "read_doc"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "text"}}}, nil, nil
	})
	gate.Attach(server)
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	_, err = server.Connect(ctx, st, nil)
	require.NoError(t, err)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	defer cs.Close()
	call := func(name string, amount float64) *mcp.CallToolResult {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"amount": amount}})
		require.NoError(t, err)
		return res
	}
	tools := func() []string {
		res, err := cs.ListTools(ctx, nil)
		require.NoError(t, err)
		var out []string
		for _, tl := range res.Tools {
			out = append(out, tl.Name)
		}
		return out
	}
	assert.Equal(t, []string{"submit_doc"}, tools(), "read_doc is listed in review only")
	assert.True(t, call("approve_doc", 1).IsError, "approve_doc in draft")
	assert.Equal(t, int32(0), ran.Load())

	assert.False(t, call("submit_doc", 0).IsError)
	assert.Equal(t, int32(1), ran.Load())
	assert.ElementsMatch(t, []string{"approve_doc", "read_doc"}, tools(), "the transition to review was committed")
	assert.False(t, call("approve_doc", 10).IsError)
	assert.Empty(t, tools(), "published is final")
}
