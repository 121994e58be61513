// This file holds the hostile machines with actors: a state invoking
// thousands of children, thousands of child machines whose timers are due
// at once, and two actors answering each other forever. Each shape has a
// test that asserts the outcome and a benchmark that reports time and
// memory.

package statechart_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/statechart"
)

// hostileInvokes returns a machine whose state a invokes n children of
// src, and GO leaves it and enters it again.
func hostileInvokes(n int, src string) string {
	var b strings.Builder
	b.WriteString(`{"id":"m","initial":"a","states":{"a":{"on":{"GO":{"target":"a","reenter":true}},"invoke":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"src":%q,"id":"c%d"}`, src, i)
	}
	b.WriteString(`]}}}`)
	return b.String()
}

// hostileTimerChild is a child machine whose state waits 10 ms, then ends.
const hostileTimerChild = `{"id":"t","initial":"w","states":{"w":{"after":{"10":"end"}},"end":{"type":"final"}}}`

func hostileActorMachine(tb testing.TB, src string, actors map[string]statechart.ActorLogic, opts *statechart.Options) *statechart.Machine {
	tb.Helper()
	o := statechart.Options{}
	if opts != nil {
		o = *opts
	}
	o.Implementations.Actors = actors
	m, err := statechart.Compile([]byte(src), &o)
	require.NoError(tb, err)
	return m
}

func timerChild(tb testing.TB) *statechart.Machine {
	tb.Helper()
	m, err := statechart.Compile([]byte(hostileTimerChild), nil)
	require.NoError(tb, err)
	return m
}

func TestHostileManyInvokes(t *testing.T) {
	ctx := context.Background()
	const n = 20_000
	m := hostileActorMachine(t, hostileInvokes(n, "job"), map[string]statechart.ActorLogic{
		"job": statechart.Promise(func(context.Context, any) (any, error) { return nil, nil }),
	}, nil)
	s, fx, err := m.StartEffects(ctx, nil, time.Time{})
	require.NoError(t, err)
	require.Len(t, fx, n)
	require.Len(t, s.Children(), n)
	// Leaving and entering again stops n and starts n.
	s, fx, err = m.TransitionEffects(ctx, s, statechart.NewEvent("GO"), time.Time{})
	require.NoError(t, err)
	require.Len(t, fx, 2*n)
	_, stop := fx[0].(statechart.StopChild)
	_, start := fx[n].(statechart.StartChild)
	assert.True(t, stop && start)
	assert.Equal(t, "c17", s.Children()[17].ID)
}

func TestHostileChildTimersDueAtOnce(t *testing.T) {
	ctx := context.Background()
	const n = 5_000
	m := hostileActorMachine(t, hostileInvokes(n, "timer"), map[string]statechart.ActorLogic{"timer": timerChild(t)}, nil)
	start := time.UnixMilli(0)
	s, _, err := m.StartEffects(ctx, nil, start)
	require.NoError(t, err)
	s, _, err = m.AdvanceEffects(ctx, s, start.Add(10*time.Millisecond))
	require.NoError(t, err)
	for _, c := range s.Children() {
		require.Equal(t, statechart.StatusDone, c.Status, c.ID)
	}

	// An Actor fires them from its clock.
	clock := statechart.NewEventLoopClock()
	a := statechart.NewActor(m, &statechart.ActorOptions{Clock: clock})
	require.NoError(t, a.Start(ctx))
	clock.Advance(10 * time.Millisecond)
	assert.Equal(t, statechart.StatusDone, a.Snapshot().Children()[n-1].Status)
}

// hostilePingPong: the root and its child answer each other forever.
const hostilePingPong = `{"id":"m","initial":"a","states":{"a":{
	"invoke":{"src":"echo","id":"e"},
	"on":{"GO":{"actions":{"type":"xstate.sendTo","params":{"to":"e","event":{"type":"PING"}}}},
	      "PONG":{"actions":{"type":"xstate.sendTo","params":{"to":"e","event":{"type":"PING"}}}}}}}}`

const hostileEcho = `{"id":"e","initial":"on","states":{"on":{"on":{"PING":{"actions":{"type":"xstate.sendParent","params":{"event":{"type":"PONG"}}}}}}}}`

func TestHostilePingPongStopsAtTheStepBudget(t *testing.T) {
	ctx := context.Background()
	echo, err := statechart.Compile([]byte(hostileEcho), nil)
	require.NoError(t, err)
	m := hostileActorMachine(t, hostilePingPong, map[string]statechart.ActorLogic{"echo": echo}, nil)
	s, _, err := m.StartEffects(ctx, nil, time.Time{})
	require.NoError(t, err)
	next, fx, err := m.TransitionEffects(ctx, s, statechart.NewEvent("GO"), time.Time{})
	requireOutOfSteps(t, err, "PONG", 100_000)
	assert.Same(t, s, next)
	assert.Empty(t, fx)

	a := statechart.NewActor(m, nil)
	require.NoError(t, a.Start(ctx))
	requireOutOfSteps(t, a.Send(ctx, statechart.NewEvent("GO")), "PONG", 100_000)
	assert.Equal(t, statechart.StatusError, a.Snapshot().Status())
}

func BenchmarkHostileManyInvokes(b *testing.B) {
	ctx := context.Background()
	m := hostileActorMachine(b, hostileInvokes(2000, "job"), map[string]statechart.ActorLogic{
		"job": statechart.Promise(func(context.Context, any) (any, error) { return nil, nil }),
	}, nil)
	s, _, err := m.StartEffects(ctx, nil, time.Time{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if s, _, err = m.TransitionEffects(ctx, s, statechart.NewEvent("GO"), time.Time{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHostileChildTimers(b *testing.B) {
	ctx := context.Background()
	m := hostileActorMachine(b, hostileInvokes(2000, "timer"), map[string]statechart.ActorLogic{"timer": timerChild(b)}, nil)
	start := time.UnixMilli(0)
	s, _, err := m.StartEffects(ctx, nil, start)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, _, err := m.AdvanceEffects(ctx, s, start.Add(10*time.Millisecond)); err != nil {
			b.Fatal(err)
		}
	}
}

func TestNextDueSeesChildMachinesTimers(t *testing.T) {
	ctx := context.Background()
	m := hostileActorMachine(t, hostileInvokes(3, "timer"), map[string]statechart.ActorLogic{"timer": timerChild(t)}, nil)
	start := time.UnixMilli(0)
	s, _, err := m.StartEffects(ctx, nil, start)
	require.NoError(t, err)
	assert.Empty(t, s.Pending(), "the root has no delayed event of its own")
	due, ok := s.NextDue()
	require.True(t, ok)
	assert.Equal(t, start.Add(10*time.Millisecond), due)
	s, _, err = m.AdvanceEffects(ctx, s, due)
	require.NoError(t, err)
	_, ok = s.NextDue()
	assert.False(t, ok)
}
