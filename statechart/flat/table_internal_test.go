// This file tests the transition table of a Machine from the inside: its
// dense and sparse forms answer alike, and a large, mostly empty table is
// kept sparse.

package flat

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

// ringConfig returns a flat machine of n states s0…s(n-1) where state i
// goes to the next state on its own event E<i>, and every state goes back
// to s0 on RESET: n+1 event types, 2n transitions.
func ringConfig(n int) string {
	var b strings.Builder
	b.WriteString(`{"id": "ring", "initial": "s0", "states": {`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"s%d": {"on": {"E%d": "s%d", "RESET": "s0"}}`, i, i, (i+1)%n)
	}
	b.WriteString("}}")
	return b.String()
}

// lookups returns the answer of target for every state and every event
// type, and for one the machine does not know.
func lookups(m *Machine) [][]int {
	events := append(m.Events(), "NOPE")
	out := make([][]int, len(m.nodes))
	for i := range m.nodes {
		for _, ev := range events {
			t, ok := m.target(i, ev)
			if !ok {
				t = -1
			}
			out[i] = append(out[i], t)
		}
	}
	return out
}

func TestTableDenseAndSparseAgree(t *testing.T) {
	for _, n := range []int{1, 2, 7, 300} {
		m, err := Compile([]byte(ringConfig(n)))
		require.NoError(t, err)
		// What each state's transitions say, read from the loader's edges,
		// not from a table.
		want := make([][]int, n)
		events := append(m.Events(), "NOPE")
		for i, nd := range m.nodes {
			for _, ev := range events {
				t := -1
				for _, e := range nd.transitions {
					if e.event == ev {
						t = e.target
					}
				}
				want[i] = append(want[i], t)
			}
		}
		m.buildTable(true)
		assert.Equal(t, want, lookups(m), "dense, %d states", n)
		m.buildTable(false)
		assert.Equal(t, want, lookups(m), "sparse, %d states", n)
	}
}

func TestTableOfManyStatesAndEventsIsSparse(t *testing.T) {
	const n = 300 // 300 × 301 cells, 600 transitions
	m, err := Compile([]byte(ringConfig(n)))
	require.NoError(t, err)
	assert.Nil(t, m.next)
	assert.Len(t, m.far, 2*n)

	small, err := Compile([]byte(ringConfig(20)))
	require.NoError(t, err)
	assert.Len(t, small.next, 20*21)
	assert.Nil(t, small.far)

	// The sparse machine runs: around the ring and back to s0.
	ctx, now := context.Background(), time.Unix(0, 0)
	s, err := m.Start(ctx, now)
	require.NoError(t, err)
	for i := range n {
		ok, err := m.Can(ctx, s, statechart.NewEvent(fmt.Sprintf("E%d", i+1)))
		require.NoError(t, err)
		assert.False(t, ok, "s%d has no E%d", i, i+1)
		s, err = m.Send(ctx, s, statechart.NewEvent(fmt.Sprintf("E%d", i)), now)
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("s%d", (i+1)%n), s.Value())
	}
	s, err = m.Send(ctx, s, statechart.NewEvent("E0"), now)
	require.NoError(t, err)
	s, err = m.Send(ctx, s, statechart.NewEvent("RESET"), now)
	require.NoError(t, err)
	assert.Equal(t, "s0", s.Value())
}
