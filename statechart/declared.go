// This file defines how Compile recognizes the guards and actions that
// ParseImplementations made: their compiled conditions and assigns are
// run directly by the interpreter, with no call through the function and
// no copy of the context per assign, as long as the function in the
// Implementations maps is still the one ParseImplementations put there.

package statechart

import "unsafe"

// declared holds the compiled forms of declarative guards and actions,
// each with the identity of the function that stands for it.
type declared struct {
	guards  map[string]declaredGuard
	actions map[string]declaredAction
}

type declaredGuard struct {
	fn unsafe.Pointer // funcIdentity of the GuardFunc
	c  *cond
}

type declaredAction struct {
	fn      unsafe.Pointer // funcIdentity of the ActionFunc
	entries []assignEntry
}

// funcIdentity is the identity of a function value: a Go func value is a
// pointer to its closure, and every closure ParseImplementations makes
// captures its own compiled form, so two of them never share one. A
// function a caller put in the map instead has another identity, and is
// then called like any implementation.
func funcIdentity[F any](f F) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&f))
}

// addGuard records a compiled declarative guard.
func (d *declared) addGuard(name string, f GuardFunc, c *cond) {
	if d.guards == nil {
		d.guards = map[string]declaredGuard{}
	}
	d.guards[name] = declaredGuard{fn: funcIdentity(f), c: c}
}

// addAction records a compiled declarative assign.
func (d *declared) addAction(name string, f ActionFunc, entries []assignEntry) {
	if d.actions == nil {
		d.actions = map[string]declaredAction{}
	}
	d.actions[name] = declaredAction{fn: funcIdentity(f), entries: entries}
}

// guard returns the compiled condition of the guard named name, if f (the
// implementation Compile found for it) is the one ParseImplementations made.
func (d *declared) guard(name string, f GuardFunc) *cond {
	if d == nil || f == nil {
		return nil
	}
	if g, ok := d.guards[name]; ok && g.fn == funcIdentity(f) {
		return g.c
	}
	return nil
}

// action returns the compiled assign of the action named name, if f is
// the one ParseImplementations made.
func (d *declared) action(name string, f ActionFunc) []assignEntry {
	if d == nil || f == nil {
		return nil
	}
	if a, ok := d.actions[name]; ok && a.fn == funcIdentity(f) {
		return a.entries
	}
	return nil
}

// merge returns the union of d and other (other's entries win). Entries
// whose function was overridden are harmless: they no longer match.
func (d *declared) merge(other *declared) *declared {
	if d == nil {
		return other
	}
	if other == nil {
		return d
	}
	r := &declared{}
	for _, src := range []*declared{d, other} {
		for k, v := range src.guards {
			if r.guards == nil {
				r.guards = map[string]declaredGuard{}
			}
			r.guards[k] = v
		}
		for k, v := range src.actions {
			if r.actions == nil {
				r.actions = map[string]declaredAction{}
			}
			r.actions[k] = v
		}
	}
	return r
}
