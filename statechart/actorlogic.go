// This file defines actor logic, what a child actor runs: promise-like Go
// functions, callbacks, child machines, and their declarative JSON forms
// (the "actors" of a case file or a workflow), which ParseImplementations
// reads.

package statechart

import (
	"context"
	"fmt"
	"time"

	"github.com/tidwall/gjson"

	"github.com/chartgate/chartgate/internal/jsonx"
)

// ActorLogic is the logic of a child actor: what an invoke or an
// xstate.spawnChild starts for its src. It is a [Promise], a [Callback], a
// child [*Machine], or a declarative form read by [ParseImplementations].
// Name logic in [Implementations.Actors].
type ActorLogic interface{ actorLogic() }

// Promise is promise-like actor logic (XState's fromPromise). The function
// runs once per child, in its own goroutine, with the child's input (nil
// when it has none); ctx is cancelled when the child is stopped. Its result
// reaches the parent as the event xstate.done.actor.<id> with the output
// (event.output), or, when it returns an error, xstate.error.actor.<id>
// with the error (event.error). A result that arrives after the child was
// stopped is dropped.
//
// In the pure API ([Machine.TransitionEffects] and its siblings) the
// function is not called: the child is external, and the caller runs it
// (see [StartChild]). A nil Promise is logic that runs elsewhere also for
// an [Actor], which starts nothing for it: its result comes back with
// [Actor.Deliver].
type Promise func(ctx context.Context, input any) (output any, err error)

// Callback is callback actor logic (XState's fromCallback). The function
// runs on the interpreter's goroutine when the child starts, and returns a
// cleanup function (nil for none) that runs when the child is stopped. See
// [CallbackArgs]. ctx is cancelled when the child is stopped.
//
// In the pure API the function is not called: the child is external.
type Callback func(ctx context.Context, args CallbackArgs) (cleanup func())

// CallbackArgs is what a [Callback] receives.
type CallbackArgs struct {
	// Input is the child's input, nil when it has none.
	Input any
	// SendBack sends an event to the parent. It may be called from any
	// goroutine, at any time until the child is stopped (later calls are
	// dropped, as in XState). Events sent while the callback function or a
	// receive function runs are delivered when it returns, in order, before
	// anything else happens; events sent from other goroutines later are
	// delivered as they come.
	SendBack func(Event)
	// Receive registers a function that is called, on the interpreter's
	// goroutine, with every event sent to the child (xstate.sendTo,
	// xstate.forwardTo). It must not block.
	Receive func(func(Event))
}

func (Promise) actorLogic()  {}
func (Callback) actorLogic() {}

// A compiled machine is actor logic: the child machine, with the
// implementations it was compiled with, started with the input of the
// invoke or spawn as event.input of its xstate.init event. Its output
// becomes the event.output of xstate.done.actor.<id>.
func (*Machine) actorLogic() {}

// declPromise is the declarative promise: it settles with a value (a
// template over {input}) after a delay on the actor's clock.
type declPromise struct {
	value  *template
	reject bool
	after  time.Duration
}

// declCallback is the declarative callback: it sends events to its parent
// at given times after it starts, and answers the events it receives.
type declCallback struct {
	sends   []declSend
	answers map[string][]*eventTemplate
}

type declSend struct {
	at    time.Duration
	event *eventTemplate
}

func (*declPromise) actorLogic()  {}
func (*declCallback) actorLogic() {}

// parseActors reads the "actors" section of declarative implementations.
// Child machines are compiled with opts (their implementations come from
// their own JSON).
func parseActors(v gjson.Result, path jsonPath, opts *Options, add func(*Error)) map[string]ActorLogic {
	out := map[string]ActorLogic{}
	if !v.Exists() {
		return out
	}
	if !v.IsObject() {
		add(&Error{Path: string(path), Msg: "must be an object of actor names to actors, not " + jsonx.Kind(v)})
		return out
	}
	for _, mb := range jsonx.Members(v, func(k string) { add(&Error{Path: string(path.key(k)), Msg: fmt.Sprintf("duplicate key %q", k)}) }) {
		p := path.key(mb.Key)
		kinds := jsonx.Members(mb.Value, nil)
		if !mb.Value.IsObject() || len(kinds) != 1 || (kinds[0].Key != "promise" && kinds[0].Key != "callback" && kinds[0].Key != "machine") {
			add(&Error{Path: string(p), Msg: `an actor must be {"promise": {...}}, {"callback": {...}} or {"machine": {...}}`})
			continue
		}
		body, bp := kinds[0].Value, p.key(kinds[0].Key)
		if !body.IsObject() {
			add(&Error{Path: string(bp), Msg: "must be an object, not " + jsonx.Kind(body)})
			continue
		}
		var logic ActorLogic
		var err *Error
		switch kinds[0].Key {
		case "promise":
			logic, err = parsePromise(body, bp)
		case "callback":
			logic, err = parseCallback(body, bp)
		case "machine":
			logic, err = parseChildMachine(body, bp, opts)
		}
		if err != nil {
			add(err)
			continue
		}
		out[mb.Key] = logic
	}
	return out
}

// onlyKeys reports the first key of v that is not allowed.
func onlyKeys(v gjson.Result, path jsonPath, allowed ...string) *Error {
	for _, mb := range jsonx.Members(v, nil) {
		ok := false
		for _, a := range allowed {
			ok = ok || mb.Key == a
		}
		if !ok {
			return &Error{Path: string(path.key(mb.Key)), Msg: fmt.Sprintf("unknown key %q%s", mb.Key, didYouMean(mb.Key, allowed))}
		}
	}
	return nil
}

// readMs reads a non-negative number of milliseconds.
func readMs(v gjson.Result, path jsonPath) (time.Duration, *Error) {
	if v.Type != gjson.Number {
		return 0, &Error{Path: string(path), Msg: "must be a number of milliseconds, not " + quoteJSON(v)}
	}
	if problem := delayProblem(v.Float()); problem != "" {
		return 0, &Error{Path: string(path), Msg: problem}
	}
	return msDuration(v.Float()), nil
}

func parsePromise(v gjson.Result, path jsonPath) (*declPromise, *Error) {
	if err := onlyKeys(v, path, "resolve", "reject", "after"); err != nil {
		return nil, err
	}
	res, rej := v.Get("resolve"), v.Get("reject")
	if res.Exists() == rej.Exists() {
		return nil, &Error{Path: string(path), Msg: `a promise needs exactly one of "resolve" and "reject"`}
	}
	p := &declPromise{reject: rej.Exists()}
	val, vp := res, path.key("resolve")
	if p.reject {
		val, vp = rej, path.key("reject")
	}
	t, err := compileTemplate(val, vp, inputRoots)
	if err != nil {
		return nil, err
	}
	p.value = t
	if a := v.Get("after"); a.Exists() {
		if p.after, err = readMs(a, path.key("after")); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func parseCallback(v gjson.Result, path jsonPath) (*declCallback, *Error) {
	if err := onlyKeys(v, path, "send", "onReceive"); err != nil {
		return nil, err
	}
	cb := &declCallback{answers: map[string][]*eventTemplate{}}
	if sends := v.Get("send"); sends.Exists() {
		sp := path.key("send")
		if !sends.IsArray() {
			return nil, &Error{Path: string(sp), Msg: "must be an array of {\"at\": ms, \"event\": {...}}"}
		}
		for i, s := range sends.Array() {
			ip := sp.index(i)
			if !s.IsObject() {
				return nil, &Error{Path: string(ip), Msg: "must be {\"at\": ms, \"event\": {...}}"}
			}
			if err := onlyKeys(s, ip, "at", "event"); err != nil {
				return nil, err
			}
			at, err := readMs(s.Get("at"), ip.key("at"))
			if err != nil {
				return nil, err
			}
			ev, err := compileEventTemplate(s.Get("event"), ip.key("event"), inputRoots, "a send")
			if err != nil {
				return nil, err
			}
			cb.sends = append(cb.sends, declSend{at: at, event: ev})
		}
	}
	if on := v.Get("onReceive"); on.Exists() {
		op := path.key("onReceive")
		if !on.IsObject() {
			return nil, &Error{Path: string(op), Msg: "must be an object of event types to lists of events"}
		}
		for _, mb := range jsonx.Members(on, nil) {
			lp := op.key(mb.Key)
			if !mb.Value.IsArray() {
				return nil, &Error{Path: string(lp), Msg: "must be an array of events"}
			}
			var list []*eventTemplate
			for i, e := range mb.Value.Array() {
				ev, err := compileEventTemplate(e, lp.index(i), answerRoots, "an answer")
				if err != nil {
					return nil, err
				}
				list = append(list, ev)
			}
			cb.answers[mb.Key] = list
		}
	}
	return cb, nil
}

// parseChildMachine compiles {"machine": CONFIG, "guards": ..., "actions":
// ..., "delays": ..., "actors": ...}.
func parseChildMachine(v gjson.Result, path jsonPath, opts *Options) (*Machine, *Error) {
	if err := onlyKeys(v, path, "machine", "guards", "actions", "delays", "actors"); err != nil {
		return nil, err
	}
	cfg := v.Get("machine")
	if !cfg.IsObject() {
		return nil, &Error{Path: string(path.key("machine")), Msg: "must be a machine config object"}
	}
	impl, err := parseImplementations(v, opts)
	if err != nil {
		return nil, prefixError(err, path)
	}
	o := (*Options)(nil).withDefaults()
	if opts != nil {
		o = *opts
	}
	o.Implementations = impl
	m, cerr := Compile([]byte(cfg.Raw), &o)
	if cerr != nil {
		return nil, prefixError(cerr, path.key("machine"))
	}
	return m, nil
}

// prefixError turns the first problem of err into one *Error whose path is
// below prefix (the rest are counted in the message).
func prefixError(err error, prefix jsonPath) *Error {
	list, ok := err.(ErrorList)
	if !ok || len(list) == 0 {
		return &Error{Path: string(prefix), Msg: err.Error()}
	}
	e := list[0]
	p := string(prefix)
	if e.Path != "" {
		p += "." + e.Path
	}
	msg := e.Msg
	if len(list) > 1 {
		msg += fmt.Sprintf(" (and %d more problems)", len(list)-1)
	}
	return &Error{Path: p, Msg: msg, err: e.err}
}
