package statechart_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/statechart"
)

var epoch = time.UnixMilli(0).UTC()

func compile(t testing.TB, src string, opts *statechart.Options) *statechart.Machine {
	t.Helper()
	m, err := statechart.Compile([]byte(src), opts)
	require.NoError(t, err)
	return m
}

func ev(typ string, kv ...any) statechart.Event {
	e := statechart.Event{Type: typ}
	for i := 0; i+1 < len(kv); i += 2 {
		if e.Data == nil {
			e.Data = map[string]any{}
		}
		e.Data[kv[i].(string)] = kv[i+1]
	}
	return e
}

const checkout = `{
  "id": "checkout",
  "initial": "empty",
  "context": {"items": []},
  "states": {
    "empty": {"on": {"ADD_ITEM": {"target": "has_items", "actions": "add"}}},
    "has_items": {
      "tags": ["cart"],
      "on": {
        "ADD_ITEM": {"actions": "add"},
        "CHECKOUT": {"target": "payment", "guard": "notEmpty"}
      }
    },
    "payment": {
      "tags": ["cart", "paying"],
      "meta": {"mcp": {"tools": ["cart_pay"]}},
      "on": {"PAY": [{"target": "confirmed", "guard": {"type": "methodIs", "params": {"method": "card"}}}]}
    },
    "confirmed": {"type": "final"}
  },
  "output": {"ok": true}
}`

func checkoutImpl() statechart.Implementations {
	return statechart.Implementations{
		Guards: map[string]statechart.GuardFunc{
			"notEmpty": func(_ context.Context, a statechart.GuardArgs) (bool, error) {
				return len(a.Context["items"].([]any)) > 0, nil
			},
			"methodIs": func(_ context.Context, a statechart.GuardArgs) (bool, error) {
				return a.Event.Data["method"] == a.Params["method"], nil
			},
		},
		Actions: map[string]statechart.ActionFunc{
			"add": func(_ context.Context, a *statechart.ActionArgs) error {
				items := append([]any{}, a.Context["items"].([]any)...)
				a.Assign(map[string]any{"items": append(items, a.Event.Data["sku"])})
				return nil
			},
		},
	}
}

func TestPureTransitionsDoNotModifyTheirInput(t *testing.T) {
	ctx := context.Background()
	m := compile(t, checkout, &statechart.Options{Implementations: checkoutImpl()})
	s0, err := m.Start(ctx, epoch)
	require.NoError(t, err)
	require.Equal(t, "empty", s0.Value())

	s1, err := m.Transition(ctx, s0, ev("ADD_ITEM", "sku", "a1"), epoch)
	require.NoError(t, err)
	require.Equal(t, "has_items", s1.Value())
	require.Equal(t, []any{"a1"}, s1.Context()["items"])
	require.Equal(t, "empty", s0.Value(), "the input snapshot changed")
	require.Equal(t, []any{}, s0.Context()["items"])

	ok, err := m.Can(ctx, s1, ev("PAY"))
	require.NoError(t, err)
	require.False(t, ok)
	ok, err = m.Can(ctx, s1, ev("CHECKOUT"))
	require.NoError(t, err)
	require.True(t, ok)

	s2, _ := m.Transition(ctx, s1, ev("CHECKOUT"), epoch)
	require.True(t, s2.Matches("payment"))
	require.True(t, s2.HasTag("paying"))
	require.Equal(t, []string{"cart", "paying"}, s2.Tags())
	require.Equal(t, map[string]any{"checkout.payment": map[string]any{"mcp": map[string]any{"tools": []any{"cart_pay"}}}}, s2.Meta())
	require.Equal(t, []string{"checkout", "checkout.payment"}, s2.StateIDs())

	// the guard reads the event's data and the guard's params
	s3, _ := m.Transition(ctx, s2, ev("PAY", "method", "cash"), epoch)
	require.Equal(t, "payment", s3.Value())
	s4, _ := m.Transition(ctx, s3, ev("PAY", "method", "card"), epoch)
	require.Equal(t, statechart.StatusDone, s4.Status())
	require.Equal(t, map[string]any{"ok": true}, s4.Output())

	// events after done are ignored
	s5, err := m.Transition(ctx, s4, ev("ADD_ITEM"), epoch)
	require.NoError(t, err)
	require.Same(t, s4, s5)
}

func TestFailingActionKeepsPreviousStateWithStatusError(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("boom")
	m := compile(t, `{"initial":"a","context":{"n":0},"states":{
		"a":{"on":{"GO":{"target":"b","actions":["inc","fail"]}}},
		"b":{}}}`, &statechart.Options{Implementations: statechart.Implementations{Actions: map[string]statechart.ActionFunc{
		"inc": func(_ context.Context, a *statechart.ActionArgs) error {
			a.Assign(map[string]any{"n": 1.0})
			return nil
		},
		"fail": func(context.Context, *statechart.ActionArgs) error { return boom },
	}}})
	a := statechart.NewActor(m, nil)
	require.NoError(t, a.Start(ctx))
	err := a.Send(ctx, ev("GO"))
	require.ErrorIs(t, err, boom)
	var re *statechart.RuntimeError
	require.ErrorAs(t, err, &re)
	require.Equal(t, "GO", re.Event)
	s := a.Snapshot()
	require.Equal(t, statechart.StatusError, s.Status())
	require.Equal(t, "a", s.Value())
	require.Equal(t, 0.0, s.Context()["n"], "a failed macrostep must not leak its assigns")
	require.NoError(t, a.Send(ctx, ev("GO")), "an errored actor ignores events")
}

func TestInfiniteLoopIsAnErrorNotAHang(t *testing.T) {
	m := compile(t, `{"initial":"a","states":{"a":{"always":"b"},"b":{"always":"a"}}}`, &statechart.Options{MaxMicrosteps: 1000})
	s, err := m.Start(context.Background(), epoch)
	require.ErrorIs(t, err, statechart.ErrInfiniteLoop)
	require.Equal(t, statechart.StatusError, s.Status())
}

func TestMissingGuardFailsAtCompileOrAtRuntime(t *testing.T) {
	src := `{"initial":"a","states":{"a":{"on":{"GO":{"target":"b","guard":"isReady"}}},"b":{}}}`
	_, err := statechart.Compile([]byte(src), nil)
	require.EqualError(t, err, `states.a.on.GO.guard: guard "isReady" is not implemented`)

	m := compile(t, src, &statechart.Options{AllowMissingGuards: true})
	s, _ := m.Start(context.Background(), epoch)
	s, err = m.Transition(context.Background(), s, ev("GO"), epoch)
	require.ErrorIs(t, err, statechart.ErrGuardNotImplemented)
	require.Equal(t, statechart.StatusError, s.Status())
}

const persistMachine = `{
  "id": "p",
  "initial": "work",
  "context": {"log": []},
  "states": {
    "work": {
      "initial": "edit",
      "states": {
        "edit": {"on": {"NEXT": "review"}},
        "review": {"after": {"1000": "approved"}},
        "approved": {},
        "hist": {"type": "history", "history": "deep"}
      },
      "on": {"PAUSE": "paused"}
    },
    "paused": {"on": {"RESUME": "work.hist"}}
  }
}`

func TestPersistedSnapshotRestoresHistoryAndPendingTimers(t *testing.T) {
	ctx := context.Background()
	m := compile(t, persistMachine, nil)
	clock := statechart.NewSimulatedClock()
	a := statechart.NewActor(m, &statechart.ActorOptions{Clock: clock})
	require.NoError(t, a.Start(ctx))
	require.NoError(t, a.Send(ctx, ev("NEXT")))
	clock.Advance(400 * time.Millisecond)
	require.Equal(t, map[string]any{"work": "review"}, a.Snapshot().Value())

	data, err := json.Marshal(a.Snapshot())
	require.NoError(t, err)

	// "another process": a new machine compiled from the same JSON, a new clock at the same time
	m2 := compile(t, persistMachine, nil)
	s, err := m2.Restore(data)
	require.NoError(t, err)
	require.Len(t, s.Pending(), 1)
	require.Equal(t, "xstate.after.1000.p.work.review", s.Pending()[0].Event.Type)
	clock2 := statechart.NewSimulatedClock()
	clock2.Advance(400 * time.Millisecond)
	b := statechart.NewActor(m2, &statechart.ActorOptions{Clock: clock2, Snapshot: s})
	require.NoError(t, b.Start(ctx))
	clock2.Advance(599 * time.Millisecond)
	require.Equal(t, map[string]any{"work": "review"}, b.Snapshot().Value(), "fired early")
	clock2.Advance(time.Millisecond)
	require.Equal(t, map[string]any{"work": "approved"}, b.Snapshot().Value(), "the restored timer did not fire")

	// deep history survives a second round trip
	require.NoError(t, b.Send(ctx, ev("PAUSE")))
	data, err = json.Marshal(b.Snapshot())
	require.NoError(t, err)
	s, err = m.Restore(data)
	require.NoError(t, err)
	s, err = m.Transition(ctx, s, ev("RESUME"), clock2.Now())
	require.NoError(t, err)
	require.Equal(t, map[string]any{"work": "approved"}, s.Value())
}

func TestRestoreRejectsForeignStates(t *testing.T) {
	m := compile(t, persistMachine, nil)
	_, err := m.Restore([]byte(`{"status":"active","value":{"work":"nope"},"context":{}}`))
	require.ErrorContains(t, err, `state "p.work" has no child "nope"`)
	_, err = m.Restore([]byte(`{"status":"active","value":"paused","nodes":["p","p.work.hist"],"context":{}}`))
	require.ErrorContains(t, err, `history state "p.work.hist" cannot be active`)
	_, err = m.Restore([]byte(`{"status":"active","value":"work","nodes":["p","p.paused"],"context":{}}`))
	require.ErrorContains(t, err, `value: "work" does not match the nodes, whose value is "paused"`)
	_, err = m.Restore([]byte(`{"status":"weird","value":"paused"}`))
	require.ErrorContains(t, err, `unknown status "weird"`)
}

// restoreMachine has no history states, so every configuration it can be
// in is legal.
const restoreMachine = `{"id": "m", "initial": "a", "states": {
  "a": {"initial": "x", "states": {"x": {"on": {"GO": "y"}}, "y": {}}},
  "p": {"type": "parallel", "states": {"r1": {}, "r2": {}}},
  "f": {"type": "final"}
}}`

func TestRestoreRejectsImpossibleSnapshots(t *testing.T) {
	m := compile(t, restoreMachine, nil)
	h := compile(t, persistMachine, nil)
	for _, tc := range []struct {
		m    *statechart.Machine
		json string
		want string
	}{
		{m, `{"nodes": ["m", "m.a", "m.a.x", "m.a.y"]}`, `nodes: compound state "m.a" has 2 active children ("m.a.x" and "m.a.y"); it can only be in one`},
		{m, `{"nodes": ["m", "m.a"]}`, `nodes: compound state "m.a" is active but none of its children is`},
		{m, `{"nodes": ["m", "m.p", "m.p.r1"]}`, `nodes: region "m.p.r2" of parallel state "m.p" is not active`},
		{m, `{"nodes": ["m", "m.a.x"]}`, `nodes: state "m.a.x" is active but its parent "m.a" is not`},
		{m, `{"nodes": ["m.a", "m.a.x"]}`, `nodes: the configuration does not contain the root`},
		{m, `{"nodes": ["m", "m.a", "m.a.x", "m.a"]}`, `nodes: state "m.a" is listed twice`},
		{m, `{"nodes": ["m", "m.zz"]}`, `nodes[1]: "m.zz" is not a state of machine "m"`},
		{m, `{"nodes": ["m"]}`, `nodes: compound state "m" is active but none of its children is`},
		{m, `{"value": {"a": "y"}, "nodes": ["m", "m.a", "m.a.x"]}`, `value: {"a":"y"} does not match the nodes, whose value is {"a":"x"}`},
		{m, `{"value": {"a": ["x"]}}`, `value.a: a state value is a string or an object, not an array`},
		{m, `{"value": {"a": "x", "p": {}}}`, `value: compound state "m" has 2 active children ("m.a" and "m.p"); it can only be in one`},
		{m, `{"value": "a", "output": 1}`, `output: only a done snapshot has an output, and this one is active`},
		{m, `{"value": "a", "error": "boom"}`, `error: only a snapshot with status error has an error, and this one is active`},
		{m, `{"status": "done", "value": "a"}`, `status: the snapshot is done, but the machine is not in a final state`},
		{m, `{"status": "done", "value": "f", "scheduledEvents": [{"event": {"type": "E"}, "seq": 1}]}`, `scheduledEvents: a snapshot with status done has no pending delayed events`},
		{m, `{"value": "a", "scheduledEvents": [{"event": {"type": "E"}, "seq": 1}, {"event": {"type": "F"}, "seq": 1}]}`, `scheduledEvents[1]: seq 1 is used twice`},
		{m, `{"value": "a", "scheduledEvents": [{"id": "t", "event": {"type": "E"}, "seq": 1, "keyed": true}, {"id": "t", "event": {"type": "F"}, "seq": 2, "keyed": true}]}`, `scheduledEvents[1]: a cancel of "t" would stop two events (only the latest is keyed)`},
		{m, `{"value": "a", "scheduledEvents": [{"event": {"type": "E"}, "seq": 1, "keyed": true}]}`, `scheduledEvents[0]: keyed, but it has no id to cancel it by`},
		{m, `{"value": "a", "scheduledEvents": [{"id": "t", "seq": 1}]}`, `scheduledEvents[0]: needs an event with a type`},
		{m, `{"value": "a", "scheduledEvents": [{"event": {"type": 1}, "seq": 1}]}`, `scheduledEvents[0]: event needs a non-empty string "type"`},
		{m, `{"value": "a", "historyValue": {"m.a": []}}`, `historyValue: "m.a" is not a history state`},
		{h, `{"value": "paused", "historyValue": {"p.work.hist": [{"id": "p.work"}]}}`, `historyValue["p.work.hist"][0]: deep history remembers atomic states inside "p.work", not "p.work"`},
		{h, `{"value": "paused", "historyValue": {"p.work.hist": [{"id": "p.paused"}]}}`, `historyValue["p.work.hist"][0]: deep history remembers atomic states inside "p.work", not "p.paused"`},
		{h, `{"value": "paused", "historyValue": {"p.work.hist": [{"id": "p.work.edit"}, {"id": "p.work.edit"}]}}`, `historyValue["p.work.hist"][1]: "p.work.edit" is listed twice`},
		{h, `{"value": "paused", "historyValue": {"p.work.hist": [{"id": "nope"}]}}`, `historyValue["p.work.hist"][0]: "nope" is not a state`},
	} {
		s, err := tc.m.Restore([]byte(tc.json))
		require.EqualError(t, err, "statechart: restore: "+tc.want, tc.json)
		require.Nil(t, s)
	}

	// The pre-initial snapshot of a machine that failed to start holds
	// only the root; it restores as it was written.
	s, err := m.Restore([]byte(`{"status": "error", "error": "boom", "nodes": ["m"]}`))
	require.NoError(t, err)
	require.Equal(t, "boom", s.Err().Error())
	s, err = m.Restore([]byte(`{"status": "error", "value": "a"}`))
	require.NoError(t, err)
	require.Error(t, s.Err(), "status error always comes with an error")
}

// quirkMachine is conformance case random/6001-5927, where XState enters
// two children of the compound state s1 in one microstep: a history state
// restores s2 while the always transition of s1 enters s13.
const quirkMachine = `{"id": "machine", "context": {"k1": 0}, "type": "parallel", "states": {
  "s1": {"initial": "s2",
    "always": {"target": "#machine.s1.s13", "guard": "lt_k1", "actions": "inc_k1"},
    "states": {
      "s2": {"type": "parallel", "states": {
        "s3": {"type": "parallel", "states": {"s6": {"type": "parallel", "states": {
          "s8": {"always": {"target": "#machine.s1.s14", "guard": "lt_k1", "actions": "inc_k1"}}}}}},
        "s11": {}}},
      "s13": {},
      "s14": {"type": "history", "history": "shallow", "target": "s2.s3.s6.s8"}}}}}`

func TestRestoreAcceptsWhatTheInterpreterProduces(t *testing.T) {
	impl, err := statechart.ParseImplementations([]byte(`{
	  "guards": {"lt_k1": {"field": "context.k1", "op": "lt", "value": 2}},
	  "actions": {"inc_k1": {"assign": {"k1": {"$inc": 1}}}}}`))
	require.NoError(t, err)
	m := compile(t, quirkMachine, &statechart.Options{Implementations: impl})
	s, err := m.Start(context.Background(), epoch)
	require.NoError(t, err)
	// As recorded from XState: s1 has two active children.
	require.Equal(t, map[string]any{"s1": map[string]any{"s2": map[string]any{"s3": map[string]any{"s6": map[string]any{"s8": map[string]any{}}}, "s11": map[string]any{}}, "s13": map[string]any{}}}, s.Value())
	data, err := json.Marshal(s)
	require.NoError(t, err)
	back, err := m.Restore(data)
	require.NoError(t, err, "a machine with history states can be in such a configuration")
	again, err := json.Marshal(back)
	require.NoError(t, err)
	require.JSONEq(t, string(data), string(again))
}

func TestResolveStateStartsAnywhere(t *testing.T) {
	ctx := context.Background()
	m := compile(t, persistMachine, nil)
	s, err := m.ResolveState("work", nil) // partial: completed with the initial child
	require.NoError(t, err)
	require.Equal(t, map[string]any{"work": "edit"}, s.Value())
	s, err = m.ResolveState(map[string]any{"work": "review"}, map[string]any{"log": []any{"x"}})
	require.NoError(t, err)
	require.Empty(t, s.Pending(), "XState's resolveState schedules nothing")
	a := statechart.NewActor(m, &statechart.ActorOptions{Snapshot: s})
	require.NoError(t, a.Start(ctx))
	require.NoError(t, a.Send(ctx, ev("PAUSE")))
	require.Equal(t, "paused", a.Snapshot().Value())
	require.Equal(t, []any{"x"}, a.Snapshot().Context()["log"])
	_, err = m.ResolveState("nowhere", nil)
	require.Error(t, err)
}

func TestMatches(t *testing.T) {
	m := compile(t, `{"initial":"a","states":{"a":{"initial":"b","states":{"b":{}}},"p":{"type":"parallel","states":{"x":{},"y":{"initial":"y1","states":{"y1":{}}}}}}}`, nil)
	s, _ := m.Start(context.Background(), epoch)
	require.True(t, s.Matches("a"))
	require.True(t, s.Matches("a.b"))
	require.True(t, s.Matches(map[string]any{"a": "b"}))
	require.False(t, s.Matches("b"))
	s, err := m.ResolveState("p", nil)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"p": map[string]any{"x": map[string]any{}, "y": "y1"}}, s.Value())
	require.True(t, s.Matches("p.y.y1"))
	require.True(t, s.In("#(machine).p.x"))
}

func TestGoActionsRaiseAndAssignInOrder(t *testing.T) {
	ctx := context.Background()
	var seen []string
	log := func(name string) statechart.ActionFunc {
		return func(_ context.Context, a *statechart.ActionArgs) error {
			seen = append(seen, fmt.Sprintf("%s:%v", name, a.Context["n"]))
			return nil
		}
	}
	m := compile(t, `{"initial":"a","context":{"n":0},"states":{
		"a":{"on":{"GO":{"target":"b","actions":["bump","logT","ping"]}},"exit":"logX"},
		"b":{"entry":"logE","on":{"PING":{"actions":"logP"}}}}}`, &statechart.Options{Implementations: statechart.Implementations{Actions: map[string]statechart.ActionFunc{
		"bump": func(_ context.Context, a *statechart.ActionArgs) error {
			a.Assign(map[string]any{"n": 1.0})
			return nil
		},
		"ping": func(_ context.Context, a *statechart.ActionArgs) error { a.Raise(ev("PING")); return nil },
		"logT": log("t"), "logX": log("x"), "logE": log("e"), "logP": log("p"),
	}}})
	a := statechart.NewActor(m, nil)
	require.NoError(t, a.Start(ctx))
	require.NoError(t, a.Send(ctx, ev("GO")))
	require.Equal(t, []string{"x:0", "t:1", "e:1", "p:1"}, seen)
}

func TestGoActionUnsetRemovesKeys(t *testing.T) {
	ctx := context.Background()
	var seen []map[string]any
	m := compile(t, `{"initial":"a","context":{"n":0,"keep":true,"gone":1},"states":{
		"a":{"on":{"GO":{"target":"b","actions":["drop","look"]}}},
		"b":{}}}`, &statechart.Options{Implementations: statechart.Implementations{Actions: map[string]statechart.ActionFunc{
		"drop": func(_ context.Context, a *statechart.ActionArgs) error {
			a.Unset("gone", "never")
			a.Assign(map[string]any{"n": 1.0})
			return nil
		},
		"look": func(_ context.Context, a *statechart.ActionArgs) error {
			seen = append(seen, a.Context)
			return nil
		},
	}}})
	a := statechart.NewActor(m, nil)
	require.NoError(t, a.Start(ctx))
	require.NoError(t, a.Send(ctx, ev("GO")))
	want := map[string]any{"n": 1.0, "keep": true}
	require.Equal(t, []map[string]any{want}, seen, "a later action sees the key gone")
	require.Equal(t, want, a.Snapshot().Context())
}

func TestEngineAdapter(t *testing.T) {
	ctx := context.Background()
	m := compile(t, checkout, &statechart.Options{Implementations: checkoutImpl()})
	var e statechart.Engine = m.Engine()
	s, err := e.Start(ctx, epoch)
	require.NoError(t, err)
	s, err = e.Send(ctx, s, ev("ADD_ITEM", "sku", "x"), epoch)
	require.NoError(t, err)
	require.Equal(t, "has_items", s.Value())
	data, err := s.MarshalJSON()
	require.NoError(t, err)
	s2, err := e.Restore(data)
	require.NoError(t, err)
	require.Equal(t, s.Value(), s2.Value())
	require.Equal(t, s.Context(), s2.Context())
	other := compile(t, checkout, &statechart.Options{Implementations: checkoutImpl()})
	_, err = other.Engine().Send(ctx, s, ev("CHECKOUT"), epoch)
	require.ErrorContains(t, err, "does not belong")
	_, err = e.Restore([]byte(`{`))
	require.Error(t, err)
}

// TestSharedMachineManyActors runs many actors of one machine at once;
// run with -race, it proves the Machine is safe to share and that actors
// never see each other's state.
func TestSharedMachineManyActors(t *testing.T) {
	ctx := context.Background()
	m := compile(t, checkout, &statechart.Options{Implementations: checkoutImpl()})
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			a := statechart.NewActor(m, nil)
			if err := a.Start(ctx); err != nil {
				t.Error(err)
				return
			}
			for i := 0; i < g; i++ {
				_ = a.Send(ctx, ev("ADD_ITEM", "sku", fmt.Sprint(g)))
			}
			if n := len(a.Snapshot().Context()["items"].([]any)); n != g {
				t.Errorf("actor %d has %d items", g, n)
			}
		}(g)
	}
	// one actor shared by many goroutines: every event is applied exactly once
	shared := statechart.NewActor(m, nil)
	require.NoError(t, shared.Start(ctx))
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				_ = shared.Send(ctx, ev("ADD_ITEM", "sku", "s"))
				_ = shared.Snapshot().Value()
			}
		}()
	}
	wg.Wait()
	require.Len(t, shared.Snapshot().Context()["items"], 400)
}

func TestActorWithRealClockFiresDelayedTransition(t *testing.T) {
	ctx := context.Background()
	m := compile(t, `{"initial":"a","states":{"a":{"after":{"20":"b"}},"b":{}}}`, nil)
	a := statechart.NewActor(m, nil)
	done := make(chan struct{})
	var once sync.Once
	a.Subscribe(func(s *statechart.Snapshot) {
		if s.Value() == "b" {
			once.Do(func() { close(done) })
		}
	})
	require.NoError(t, a.Start(ctx))
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the delayed transition never fired")
	}
	a.Stop()
	require.Equal(t, statechart.StatusStopped, a.Snapshot().Status())
}

func TestAdvanceProcessesDueEventsInOrder(t *testing.T) {
	ctx := context.Background()
	m := compile(t, `{"initial":"a","context":{"log":[]},"states":{"a":{
		"entry":[{"type":"xstate.raise","params":{"event":{"type":"LATE"},"delay":300}},
		         {"type":"xstate.raise","params":{"event":{"type":"EARLY"},"delay":100}}],
		"on":{"EARLY":{"actions":{"type":"xstate.assign","params":{"log":{"$push":"early"}}}},
		      "LATE":{"actions":{"type":"xstate.assign","params":{"log":{"$push":"late"}}}}}}}}`, nil)
	s, err := m.Start(ctx, epoch)
	require.NoError(t, err)
	due, ok := s.NextDue()
	require.True(t, ok)
	require.Equal(t, epoch.Add(100*time.Millisecond), due)
	s2, err := m.Advance(ctx, s, epoch.Add(time.Second))
	require.NoError(t, err)
	require.Equal(t, []any{"early", "late"}, s2.Context()["log"])
	require.Len(t, s.Pending(), 2, "Advance changed its input")
	require.Empty(t, s2.Pending())
}

func TestZeroDelayLoopsEndInsteadOfHanging(t *testing.T) {
	ctx := context.Background()
	m := compile(t, `{"initial":"a","states":{"a":{"after":{"0":{"target":"a","reenter":true}}}}}`, &statechart.Options{MaxSteps: 100})
	s, err := m.Start(ctx, epoch)
	require.NoError(t, err)
	s2, err := m.Advance(ctx, s, epoch)
	require.ErrorIs(t, err, statechart.ErrStepBudget)
	require.Same(t, s, s2, "Advance out of steps returns its input")
	require.Equal(t, statechart.StatusActive, s2.Status())
	require.Len(t, s2.Pending(), 1)

	clock := statechart.NewSimulatedClock()
	a := statechart.NewActor(m, &statechart.ActorOptions{Clock: clock})
	require.NoError(t, a.Start(ctx))
	clock.Advance(0) // returns: the clock bounds one Advance
	require.Equal(t, "a", a.Snapshot().Value())
}

func TestResolveStateThroughInitialHistory(t *testing.T) {
	m := compile(t, `{"initial":"p","states":{"p":{"initial":"h","states":{"h":{"type":"history","target":"b"},"a":{},"b":{}}}}}`, nil)
	s, err := m.ResolveState("p", nil)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"p": "b"}, s.Value())
	s0, err := m.Start(context.Background(), epoch)
	require.NoError(t, err)
	require.Equal(t, s0.Value(), s.Value())
}

// TestActorSnapshotsStayAsTheyWere checks that the snapshots an actor hands
// out (Snapshot, subscribers, ActorOptions.Snapshot) keep their pending
// delayed events when the actor fires or cancels them later: the actor
// changes its timers in place only while no snapshot shares them.
func TestActorSnapshotsStayAsTheyWere(t *testing.T) {
	ctx := context.Background()
	m := compile(t, `{"initial":"a","states":{"a":{"after":{"10":{"actions":"tick"},"20":{"actions":"tick"},"30":"b"},"on":{"STOP":"b"}},"b":{}}}`, nil)
	clock := statechart.NewSimulatedClock()
	start, err := m.Start(ctx, clock.Now())
	require.NoError(t, err)
	a := statechart.NewActor(m, &statechart.ActorOptions{Clock: clock, Snapshot: start})
	var seen []*statechart.Snapshot
	a.Subscribe(func(s *statechart.Snapshot) { seen = append(seen, s) })
	require.NoError(t, a.Start(ctx))
	before := a.Snapshot()
	clock.Advance(10 * time.Millisecond)
	clock.Advance(10 * time.Millisecond)
	require.Len(t, a.Snapshot().Pending(), 1)
	require.Len(t, start.Pending(), 3, "the snapshot the actor started from")
	require.Len(t, before.Pending(), 3, "a snapshot taken before")
	require.Len(t, seen, 3, "start and two delayed events")
	for i, want := range []int{3, 2, 1} {
		require.Len(t, seen[i].Pending(), want, "the subscriber's snapshot %d", i)
	}
	require.NoError(t, a.Send(ctx, ev("STOP")))
	require.Empty(t, a.Snapshot().Pending())
	require.Len(t, seen[2].Pending(), 1)
	require.Equal(t, "b", a.Snapshot().Value())
}

// TestFailingActionAtStartKeepsTheComputedSnapshot: a Go action that fails
// during the initial macrostep leaves the snapshot XState computed before
// running it (its state, with the assigns of the macrostep), in status
// error, not the machine's first state with an empty context.
func TestFailingActionAtStartKeepsTheComputedSnapshot(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("boom")
	m := compile(t, `{"initial":"a","context":{"n":0},"states":{
		"a":{"always":{"target":"b","actions":{"type":"xstate.assign","params":{"n":{"$inc":1}}}}},
		"b":{"entry":["fail"]}}}`, &statechart.Options{Implementations: statechart.Implementations{Actions: map[string]statechart.ActionFunc{
		"fail": func(context.Context, *statechart.ActionArgs) error { return boom },
	}}})
	a := statechart.NewActor(m, nil)
	require.ErrorIs(t, a.Start(ctx), boom)
	s := a.Snapshot()
	require.Equal(t, statechart.StatusError, s.Status())
	require.Equal(t, "b", s.Value())
	require.Equal(t, 1.0, s.Context()["n"])
}
