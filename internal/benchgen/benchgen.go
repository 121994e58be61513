// Package benchgen writes the machine configs the compile benchmarks use:
// flat and nested machines of a given number of states, shared by the
// statechart package's benchmarks and conformance/bench.
package benchgen

import (
	"fmt"
	"strings"
)

// Flat returns a machine of n atomic states under the root (n+1 state
// nodes with the root), each with a transition to the next and one back to
// the first by id.
func Flat(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"id":"flat","initial":"s0","states":{`)
	for s := 0; s < n; s++ {
		if s > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"s%d":{"on":{"NEXT":"s%d","BACK":"#flat.s0"}}`, s, (s+1)%n)
	}
	b.WriteString(`}}`)
	return []byte(b.String())
}

// Nested returns a machine of n state nodes (the root included) in a tree
// where every compound state has up to 4 children, so its depth grows as
// log4 n; every state can jump home to the root's first child by id.
func Nested(n int) []byte {
	var b strings.Builder
	// node writes a state and the budget-1 states below it.
	var node func(name string, budget int)
	node = func(name string, budget int) {
		fmt.Fprintf(&b, `"%s":{"on":{"HOME":"#nested.n0"}`, name)
		if rest := budget - 1; rest > 0 {
			kids := min(4, rest)
			fmt.Fprintf(&b, `,"initial":"%s_0","states":{`, name)
			for k := 0; k < kids; k++ {
				if k > 0 {
					b.WriteByte(',')
				}
				share := rest / kids
				if k < rest%kids {
					share++
				}
				node(fmt.Sprintf("%s_%d", name, k), share)
			}
			b.WriteByte('}')
		}
		b.WriteByte('}')
	}
	b.WriteString(`{"id":"nested","initial":"n0","states":{`)
	node("n0", n-1)
	b.WriteString(`}}`)
	return []byte(b.String())
}
