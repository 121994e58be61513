// This file defines slab, the allocator Compile takes a machine's many
// small values from (transitions, event groups), and the helpers that find
// and add a state node's event groups.

package statechart

import "cmp"

// slab hands out pointers to zeroed values of T allocated in chunks: a
// machine of thousands of transitions then costs the allocator and the
// garbage collector tens of objects rather than thousands. The chunks grow
// with the number of values handed out (up to limit, or maxSlabChunk), so
// that a small machine does not pay for a large chunk. Every value lives as
// long as its chunk does, which suits values that live as long as their
// machine.
type slab[T any] struct {
	free  []T // the current chunk's values not handed out yet
	used  int // the number of values handed out
	limit int // the most values in a chunk; 0 is maxSlabChunk
}

// maxSlabChunk is the largest chunk a slab allocates by default, in
// values. Chunks are best kept within 32 KB, the size up to which Go's
// allocator recycles memory in its size classes rather than taking and
// zeroing fresh pages.
const maxSlabChunk = 256

func (s *slab[T]) new() *T {
	if len(s.free) == 0 {
		s.free = make([]T, min(max(s.used, 4), cmp.Or(s.limit, maxSlabChunk)))
	}
	p := &s.free[0]
	s.free = s.free[1:]
	s.used++
	return p
}

// carve returns a zeroed slice of length and capacity n (appending to it
// copies it) taken from *chunk, which it refills with room for about as
// many values as used says were needed so far: many short slices then share
// an allocation. A long one is allocated on its own.
func carve[T any](chunk *[]T, n, used int) []T {
	if n > maxSlabChunk/4 {
		return make([]T, n)
	}
	if len(*chunk) < n {
		*chunk = make([]T, min(max(used, n, 4), maxSlabChunk))
	}
	s := (*chunk)[:n:n]
	*chunk = (*chunk)[n:]
	return s
}

// single returns []T{x}, carved from *chunk.
func single[T any](chunk *[]T, x T, used int) []T {
	one := carve(chunk, 1, used)
	one[0] = x
	return one
}

// group returns node n's transitions on descriptor d, nil if it has none.
func (n *stateNode) group(d string) *eventGroup {
	if n.byEvent != nil {
		return n.byEvent[d]
	}
	for _, g := range n.on {
		if g.descriptor == d {
			return g
		}
	}
	return nil
}

// addGroup appends g to node n's groups. Past maxExactScan groups, a map
// finds them by descriptor (n.byEvent, which the interpreter reads too);
// a node with fewer is scanned.
func (n *stateNode) addGroup(g *eventGroup) {
	n.on = append(n.on, g)
	switch {
	case n.byEvent != nil:
		n.byEvent[g.descriptor] = g
	case len(n.on) > maxExactScan:
		n.byEvent = make(map[string]*eventGroup, 2*len(n.on))
		for _, g := range n.on {
			n.byEvent[g.descriptor] = g
		}
	}
}
