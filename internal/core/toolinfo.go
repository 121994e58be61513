// This file defines how one tool is gated (ToolInfo), as the tables
// built from the machine's meta.mcp and the Go bindings give it, and the
// sets of state nodes the tables use (Bitset).

package core

// ToolMode is how a tool's visibility is decided.
type ToolMode uint8

const (
	ModeUnbound ToolMode = iota // always visible
	ModeStates                  // visible when one of nodes is active
	ModeCan                     // visible when the machine can handle event
	ModeStart                   // the start tool: listed only with handles
	ModeDenied                  // not named by the workflow, under DefaultDeny: never visible
)

// ToolInfo is how one tool is gated.
type ToolInfo struct {
	Mode        ToolMode
	Nodes       Bitset // ModeStates: the nodes that list it
	Deny        Bitset // the nodes whose meta.mcp.deny hides it; nil if none
	Event       string
	Invalidates []string // reported with statesync.Invalidate after a saved transition
	// OutputGuards: the guards of event read the tool's result, so a call
	// is not refused before it runs when they refuse the event without it.
	OutputGuards bool
}

// Bitset is a set of small non-negative integers.
type Bitset []uint64

// NewBitset returns an empty set of the integers below n.
func NewBitset(n int) Bitset { return make(Bitset, (n+63)/64) }

// Set adds i to b.
func (b Bitset) Set(i int) { b[i/64] |= 1 << (i % 64) }

// Has reports whether i is in b.
func (b Bitset) Has(i int) bool { return b[i/64]&(1<<(i%64)) != 0 }

// Or adds the members of o to b.
func (b Bitset) Or(o Bitset) {
	for i := range b {
		b[i] |= o[i]
	}
}

// Intersects reports whether b and o have a member in common.
func (b Bitset) Intersects(o Bitset) bool {
	for i := range b {
		if b[i]&o[i] != 0 {
			return true
		}
	}
	return false
}

// Equal reports whether b and o have the same members.
func (b Bitset) Equal(o Bitset) bool {
	if len(b) != len(o) {
		return false
	}
	for i := range b {
		if b[i] != o[i] {
			return false
		}
	}
	return true
}

// Clone returns a copy of b.
func (b Bitset) Clone() Bitset { return append(Bitset(nil), b...) }
