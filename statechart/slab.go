// This file defines slab, the allocator Compile takes a machine's many
// small values from (transitions, event groups), and the helpers that find
// and add a state node's event groups.

package statechart

// slab hands out pointers to zeroed values of T allocated in chunks: a
// machine of thousands of transitions then costs the allocator and the
// garbage collector tens of objects rather than thousands. The chunks grow
// with the number of values handed out (up to maxSlabChunk), so that a small
// machine does not pay for a large chunk. Every value lives as long as its
// chunk does, which suits values that live as long as their machine.
type slab[T any] struct {
	free []T // the current chunk's values not handed out yet
	used int // the number of values handed out
}

// maxSlabChunk is the largest chunk a slab allocates, in values.
const maxSlabChunk = 256

func (s *slab[T]) new() *T {
	if len(s.free) == 0 {
		s.free = make([]T, min(max(s.used, 4), maxSlabChunk))
	}
	p := &s.free[0]
	s.free = s.free[1:]
	s.used++
	return p
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
