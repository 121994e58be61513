// This file exports the event-descriptor rule for the packages that
// decide ahead of the interpreter which transitions an event can take.

package statechart

// MatchesEvent reports whether an event of type eventType matches a
// transition's event descriptor the way the interpreter matches it (and
// XState does): exactly, "*" (any event), or "prefix.*" for the prefix
// itself and every event below it ("cart.*" matches cart and cart.add,
// not carts). An infix wildcard ("a.*.b") matches nothing.
func MatchesEvent(eventType, descriptor string) bool {
	return matchesEventDescriptor(eventType, descriptor)
}
