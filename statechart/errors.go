// This file defines the errors of the package: load errors that name the
// JSON path of the offending value, and runtime errors of a running machine.

package statechart

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Error is one problem found while loading a machine. Path is the JSON path
// of the offending value in the machine config, written the way a reader
// would look it up: "states.payment.on.PAY[1].target". An empty path means
// the document itself.
//
// A warning is something XState accepts, and Compile compiles as XState
// runs it, but that is most likely a mistake: an unknown key (ignored), an
// XState v4 key such as "cond" (ignored, so the transition is unguarded), a
// negative delay, an empty action name. [Machine.Warnings] lists the
// warnings of a machine that compiled; [Options.Strict] makes every warning
// an error.
type Error struct {
	Path    string
	Msg     string
	Warning bool  // a warning rather than an error
	err     error // a sentinel such as ErrLimit, for errors.Is
}

// Unwrap returns the sentinel error the error matches, if any.
func (e *Error) Unwrap() error { return e.err }

// Error returns "path: message", or "path: warning: message" for a warning.
func (e *Error) Error() string {
	msg := e.Msg
	if e.Warning {
		msg = "warning: " + msg
	}
	if e.Path == "" {
		return msg
	}
	return e.Path + ": " + msg
}

// ErrorList is every problem found while loading a machine, in document
// order. Compile returns a non-empty ErrorList as its error when it found
// at least one error; the list then holds the warnings too (Warning set),
// since a warning often explains an error: an unknown key "intial" beside
// the error that the state has no "initial". Use errors.As to get at the
// individual problems.
type ErrorList []*Error

func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return l[0].Error()
	}
	warnings := 0
	for _, e := range l {
		if e.Warning {
			warnings++
		}
	}
	var b strings.Builder
	switch errs := len(l) - warnings; {
	case warnings == 0:
		fmt.Fprintf(&b, "%d errors:", errs)
	case errs == 0:
		fmt.Fprintf(&b, "%d warnings:", warnings)
	default:
		fmt.Fprintf(&b, "%s and %s:", plural(errs, "error"), plural(warnings, "warning"))
	}
	for _, e := range l {
		b.WriteString("\n\t")
		b.WriteString(e.Error())
	}
	return b.String()
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Unwrap returns the individual problems, so errors.Is and errors.As see them.
func (l ErrorList) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

// ErrLimit is wrapped by load errors caused by an input that exceeds one of
// the hard limits of [Options] (size, nesting depth, number of states).
var ErrLimit = errors.New("input exceeds a limit")

// RuntimeError reports a failure while a machine processed an event: a guard
// or action implementation returned an error, a guard had no implementation,
// or the machine looped without reaching a stable state. The snapshot that
// comes with it has status [StatusError], as in XState.
type RuntimeError struct {
	State string // id of the state node whose guard or action failed, if known
	Event string // type of the event being processed
	Err   error
}

func (e *RuntimeError) Error() string {
	var b strings.Builder
	b.WriteString("statechart: ")
	if e.State != "" {
		fmt.Fprintf(&b, "in state %q ", e.State)
	}
	fmt.Fprintf(&b, "on event %q: %v", e.Event, e.Err)
	return b.String()
}

func (e *RuntimeError) Unwrap() error { return e.Err }

// ErrGuardNotImplemented is wrapped by the runtime error of a guard that has
// no implementation (only possible with [Options.AllowMissingGuards]), and
// by the load error (or, with AllowMissingGuards, the warning) that names
// such a guard.
var ErrGuardNotImplemented = errors.New("guard is not implemented")

// ErrInfiniteLoop is wrapped by the runtime error of a macrostep that took
// more than [Options.MaxMicrosteps] microsteps.
var ErrInfiniteLoop = errors.New("infinite loop detected")

// ErrStepBudget is matched, with errors.Is, by the [*StepBudgetError] of a
// call that ran out of its step budget ([Options.MaxSteps]).
var ErrStepBudget = errors.New("step budget exhausted")

// StepBudgetError reports that one call (Start, Transition, Advance,
// Actor.Send, or a delayed event fired by an Actor) needed more than
// [Options.MaxSteps] steps. The call changed nothing: the caller's snapshot,
// or the Actor's, is the one it had before the call. (A delayed event fired
// by an Actor has no caller to return the error to: the actor then keeps
// its state with status error, and Snapshot.Err returns this error.)
type StepBudgetError struct {
	Event string // the type of the event the call processed (Advance: the delayed event it was at)
	Limit int    // the budget: Options.MaxSteps
}

func (e *StepBudgetError) Error() string {
	return fmt.Sprintf("statechart: on event %q: more than %d steps in one call (Options.MaxSteps): the machine loops, or needs a larger budget; nothing was changed", e.Event, e.Limit)
}

// Is reports whether target is ErrStepBudget.
func (e *StepBudgetError) Is(target error) bool { return target == ErrStepBudget }

// ErrNotActive is returned when an event is sent to a snapshot or actor whose
// status is not active, with errors.Is. XState ignores such events silently;
// the pure functions report it so callers can tell.
var ErrNotActive = errors.New("machine is not active")

// RejectionError is the error of an actor that failed with a value that is
// not a Go error: a declarative promise's rejection, as XState passes it
// on (event.error of xstate.error.actor.<id>). Its message is the value as
// JSON.
type RejectionError struct {
	Value any
}

func (e *RejectionError) Error() string {
	b, err := json.Marshal(e.Value)
	if err != nil {
		return fmt.Sprint(e.Value)
	}
	return string(b)
}

// ErrorObject is a Go error in the event.error of an xstate.error.actor.<id>
// event: it unwraps to the error, and reads, through JSON, as XState's
// Error object does: {} (so that a context holding it persists as in
// XState).
type ErrorObject struct {
	Err error
}

func (e *ErrorObject) Error() string { return e.Err.Error() }

// Unwrap returns the error.
func (e *ErrorObject) Unwrap() error { return e.Err }

// MarshalJSON writes {}.
func (e *ErrorObject) MarshalJSON() ([]byte, error) { return []byte("{}"), nil }
