package statechart_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/statechart"
)

// loadErrors compiles src and returns the message of every load error, in
// the order Compile reports them. It fails the test if Compile succeeds or
// returns anything but an ErrorList.
func loadErrors(t *testing.T, src string, opts *statechart.Options) []string {
	t.Helper()
	m, err := statechart.Compile([]byte(src), opts)
	require.Error(t, err, "Compile accepted the machine")
	require.Nil(t, m)
	list, ok := err.(statechart.ErrorList)
	require.True(t, ok, "Compile returned %T, not an ErrorList: %v", err, err)
	require.NotEmpty(t, list)
	msgs := make([]string, len(list))
	for i, e := range list {
		msgs[i] = e.Error()
	}
	// Validate reports the same.
	require.Equal(t, err.Error(), statechart.Validate([]byte(src), opts).Error())
	return msgs
}

// loadImpl is a set of implementations for the rows that reference guards,
// actions and delays.
func loadImpl(t *testing.T) statechart.Implementations {
	t.Helper()
	impl, err := statechart.ParseImplementations([]byte(`{
		"guards": {"hasItems": {"field": "context.items", "op": "exists"}},
		"actions": {"notify": {"raise": {"type": "NOTIFIED"}}},
		"delays": {"TIMEOUT": 5000}
	}`))
	require.NoError(t, err)
	return impl
}

func TestCompileReportsEveryErrorWithItsPath(t *testing.T) {
	impl := loadImpl(t)
	withImpl := &statechart.Options{Implementations: impl}
	strict := &statechart.Options{Implementations: impl, Strict: true}

	tests := []struct {
		name string
		src  string
		opts *statechart.Options
		want []string
	}{
		// The document.
		{
			name: "malformed JSON gives line and column",
			src:  "{\n  \"initial\": \"a\",\n  \"states\": {\"a\": {}},\n}",
			want: []string{`malformed JSON: line 4, column 1: invalid character '}' looking for beginning of object key string`},
		},
		{
			name: "truncated JSON",
			src:  `{"initial": "a", "states": {"a": {}}`,
			want: []string{`malformed JSON: line 1, column 36: unexpected end of JSON input`},
		},
		{
			name: "empty document",
			src:  ``,
			want: []string{`malformed JSON: line 1, column 1: unexpected end of JSON input`},
		},
		{
			name: "root is an array",
			src:  `[{"initial": "a"}]`,
			want: []string{`a machine config must be a JSON object, not an array`},
		},
		{
			name: "root is null",
			src:  `null`,
			want: []string{`a machine config must be a JSON object, not null`},
		},
		{
			name: "root is a string",
			src:  `"idle"`,
			want: []string{`a machine config must be a JSON object, not a string`},
		},

		// Keys.
		{
			name: "misspelled initial gets a hint, and the missing initial is reported",
			src:  `{"intial": "a", "states": {"a": {}, "b": {}}}`,
			want: []string{
				`intial: warning: unknown key "intial" (did you mean "initial"?)`,
				`compound state "(machine)" has no "initial"; add "initial": "a"`,
			},
		},
		{
			name: "bad id, context and description",
			src:  `{"id": 7, "context": [], "initial": "a", "states": {"a": {"id": "", "description": 5}}}`,
			want: []string{
				`id: must be a non-empty string, not a number`,
				`context: must be an object, not an array`,
				`states.a.id: must be a non-empty string, not an empty string`,
				`states.a.description: must be a string, not a number`,
			},
		},
		{
			name: "a state node that is not an object",
			src:  `{"initial": "a", "states": {"a": "b", "b": {}}}`,
			want: []string{`states.a: a state node must be an object, not a string`},
		},
		{
			name: "empty state key",
			src:  `{"initial": "a", "states": {"a": {}, "": {}}}`,
			want: []string{`states: a state key cannot be empty`},
		},

		// initial.
		{
			name: "compound state without initial",
			src:  `{"initial": "a", "states": {"a": {"states": {"x": {}, "y": {}}}}}`,
			want: []string{`states.a: compound state "(machine).a" has no "initial"; add "initial": "x"`},
		},
		{
			name: "initial is not a child",
			src:  `{"initial": "idel", "states": {"idle": {}, "busy": {}}}`,
			want: []string{`initial: "idel" is not a child state of "(machine)" (did you mean "idle"?)`},
		},
		{
			name: "initial is a deep path",
			src:  `{"initial": "a.x", "states": {"a": {"initial": "x", "states": {"x": {}}}}}`,
			want: []string{`initial: "a.x" is not a child state of "(machine)" (did you mean "a"?)`},
		},
		{
			name: "initial on an atomic state",
			src:  `{"initial": "a", "states": {"a": {"initial": "x"}}}`,
			want: []string{`states.a.initial: only compound states have an initial state (this one is atomic)`},
		},
		{
			name: "initial object with a bad target and an unknown key",
			src:  `{"initial": {"target": "b", "action": "x"}, "states": {"a": {}}}`,
			want: []string{
				`initial.action: warning: unknown key "action" (did you mean "actions"?)`,
				`initial.target: "b" is not a child state of "(machine)" (did you mean "a"?)`,
			},
		},
		{
			name: "initial that is not a string",
			src:  `{"initial": 1, "states": {"a": {}}}`,
			want: []string{`initial: must be the key of a child state, not a number`},
		},

		// type.
		{
			name: "unknown type",
			src:  `{"initial": "a", "states": {"a": {"type": "paralel"}, "b": {"type": 1}}}`,
			want: []string{
				`states.a.type: "paralel" is not a state type (atomic, compound, parallel, final, history)`,
				`states.b.type: 1 is not a state type (atomic, compound, parallel, final, history)`,
			},
		},
		{
			name: "compound without states",
			src:  `{"initial": "a", "states": {"a": {"type": "compound"}}}`,
			want: []string{`states.a.states: a compound state needs child states`},
		},
		{
			name: "final and atomic states with children",
			src:  `{"initial": "a", "states": {"a": {"type": "final", "states": {"x": {}}}, "b": {"type": "atomic", "states": {"y": {}}}}}`,
			want: []string{
				`states.a.states: a state of type "final" cannot have child states`,
				`states.b.states: a state of type "atomic" cannot have child states`,
			},
		},
		{
			name: "onDone on an atomic state",
			src:  `{"initial": "a", "states": {"a": {"onDone": "b"}, "b": {}}}`,
			want: []string{`states.a.onDone: only compound and parallel states are ever done; this one is atomic`},
		},

		// History.
		{
			name: "the root as a history state",
			src:  `{"type": "history"}`,
			want: []string{`the machine root cannot be a history state`},
		},
		{
			name: "history key on a state that is not a history state",
			src:  `{"initial": "a", "states": {"a": {"type": "atomic", "history": "deep"}}}`,
			want: []string{`states.a.history: only history states have "history"; add "type": "history"`},
		},
		{
			name: "history state with child states and a bad history value",
			src:  `{"initial": "a", "states": {"a": {}, "h": {"type": "history", "history": "deeper", "states": {"x": {}}}}}`,
			want: []string{
				`states.h.history: must be "shallow", "deep" or true, not "deeper"`,
				`states.h.states: a state of type "history" cannot have child states`,
			},
		},
		{
			name: "history default targets that cannot be entered",
			src: `{"initial": "p", "states": {
				"p": {"initial": "a", "states": {
					"a": {}, "b": {},
					"h1": {"type": "history", "target": "c"},
					"h2": {"type": "history", "target": "#out"},
					"h3": {"type": "history", "target": "h1"},
					"h4": {"type": "history", "target": ["a", "b"]},
					"h5": {"type": "history", "target": []}
				}},
				"o": {"id": "out"}
			}}`,
			want: []string{
				`states.p.states.h1.target: "c" is not a child of "(machine).p": state "(machine).p" has no child "c" (did you mean "a"?)`,
				`states.p.states.h2.target: "#out" is not inside "(machine).p"; a history state can only restore its parent's descendants`,
				`states.p.states.h3.target: "h1" is a history state; the default target must be a regular state`,
				`states.p.states.h4.target: targets "(machine).p.a" and "(machine).p.b" are in different children of compound state "(machine).p", so they cannot both be active`,
				`states.p.states.h5.target: must name at least one state; leave it out to use the parent's initial state`,
			},
		},
		{
			name: "initial history state without a default target loops",
			src:  `{"initial": "h", "states": {"h": {"type": "history"}, "b": {}}}`,
			want: []string{`initial: "h" is a history state without a "target", which would loop; give it a "target"`},
		},

		// Duplicates.
		{
			name: "duplicate state ids",
			src:  `{"initial": "a", "states": {"a": {"id": "x"}, "b": {"initial": "c", "states": {"c": {"id": "x"}}}}}`,
			want: []string{`states.b.states.c.id: duplicate state id "x" (also states.a)`},
		},
		{
			name: "custom id that collides with a default id",
			src:  `{"id": "m", "initial": "a", "states": {"a": {}, "b": {"id": "m.a"}}}`,
			want: []string{`states.b.id: duplicate state id "m.a" (also states.a)`},
		},
		{
			name: "duplicate keys in states, on and a transition",
			src: `{"initial": "a", "states": {
				"a": {"on": {"GO": "b", "GO": "a", "STOP": {"target": "b", "target": "a"}}},
				"b": {},
				"a": {}
			}}`,
			want: []string{
				`states.a: duplicate key "a"`,
				`states.a.on.GO: duplicate key "GO"`,
				`states.a.on.STOP.target: duplicate key "target"`,
			},
		},

		// Targets.
		{
			name: "unknown sibling",
			src:  `{"initial": "cart", "states": {"cart": {"on": {"PAY": "payed"}}, "paid": {}}}`,
			want: []string{`states.cart.on.PAY: "payed" is not a sibling of "cart": state "(machine)" has no child "payed" (did you mean "paid"?)`},
		},
		{
			name: "unknown state id",
			src:  `{"initial": "payment", "states": {"payment": {"on": {"PAY": [{"target": "done", "guard": "hasItems"}, {"target": "#nope"}]}}, "done": {"id": "finished"}}}`,
			opts: withImpl,
			want: []string{`states.payment.on.PAY[1].target: "#nope" is not a state id`},
		},
		{
			name: "unknown state id with a hint, and a bad path below an id",
			src:  `{"initial": "a", "states": {"a": {"id": "start", "on": {"GO": "#strat", "IN": "#start.x"}}}}`,
			want: []string{
				`states.a.on.GO: "#strat" is not a state id (did you mean "start"?)`,
				`states.a.on.IN: "#start.x" is not a state id: state "start" has no child "x"`,
			},
		},
		{
			name: "child target that does not exist",
			src:  `{"initial": "a", "states": {"a": {"initial": "x", "states": {"x": {}}, "on": {"GO": ".y"}}}}`,
			want: []string{`states.a.on.GO: ".y" is not a descendant of "(machine).a": state "(machine).a" has no child "y" (did you mean "x"?)`},
		},
		{
			name: "sibling path whose child does not exist",
			src:  `{"initial": "a", "states": {"a": {"on": {"GO": "b.z"}}, "b": {"initial": "x", "states": {"x": {}}}}}`,
			want: []string{`states.a.on.GO: "b.z" is not a sibling of "a": state "(machine).b" has no child "z" (did you mean "x"?)`},
		},
		{
			name: "root-level target without a dot",
			src:  `{"initial": "a", "on": {"RESET": "a"}, "states": {"a": {}}}`,
			want: []string{`on.RESET: "a" is not a valid target from the root node; did you mean ".a"?`},
		},
		{
			name: "keys with dots are quoted in paths",
			src:  `{"initial": "a.b", "states": {"a.b": {"on": {"GO": "a.c", "UP": "a\\.c", "SELF": "a.b"}}}}`,
			want: []string{
				`states["a.b"].on.GO: "a.c" is not a sibling of "a.b": state "(machine)" has no child "a"`,
				`states["a.b"].on.UP: "a\\.c" is not a sibling of "a.b": state "(machine)" has no child "a.c" (did you mean "a.b"?)`,
				`states["a.b"].on.SELF: "a.b" is not a sibling of "a.b": state "(machine)" has no child "a"; to target the key "a.b", escape its dots: "a\\.b"`,
			},
		},
		{
			name: "two targets in different children of one compound state",
			src:  `{"initial": "a", "states": {"a": {"on": {"GO": {"target": ["b", "c"]}}}, "b": {}, "c": {}}}`,
			want: []string{`states.a.on.GO.target: targets "(machine).b" and "(machine).c" are in different children of compound state "(machine)", so they cannot both be active`},
		},
		{
			name: "bad target values",
			src:  `{"initial": "a", "states": {"a": {"on": {"A": {"target": 5}, "B": {"target": ["", null]}}}}}`,
			want: []string{
				`states.a.on.A.target: a target must be a string or an array of strings, not a number`,
				`states.a.on.B.target[0]: a target must be a non-empty string, not ""`,
				`states.a.on.B.target[1]: a target must be a non-empty string, not null`,
			},
		},

		// Transitions.
		{
			name: "null transition",
			src:  `{"initial": "a", "states": {"a": {"on": {"GO": null}}}}`,
			want: []string{`states.a.on.GO: a transition must be a target string, an object or an array, not null`},
		},
		{
			name: "transition array holding a number",
			src:  `{"initial": "a", "states": {"a": {"on": {"GO": ["a", 1]}}}}`,
			want: []string{`states.a.on.GO[1]: a transition must be a target string or an object, not a number`},
		},
		{
			name: "on, after and always that are not objects",
			src:  `{"initial": "a", "states": {"a": {"on": [], "after": 100, "always": true}}}`,
			want: []string{
				`states.a.on: must be an object mapping events to transitions, not an array`,
				`states.a.after: must be an object mapping delays to transitions, not a number`,
				`states.a.always: a transition must be a target string, an object or an array, not a boolean`,
			},
		},
		{
			name: "empty event descriptor and infix wildcard (strict: XState accepts infix wildcards and matches nothing)",
			src:  `{"initial": "a", "states": {"a": {"on": {"": "a", "a.*.b": "a"}}}}`,
			opts: &statechart.Options{Strict: true},
			want: []string{
				`states.a.on: an event descriptor cannot be empty; use "always" for eventless transitions`,
				`states.a.on["a.*.b"]: wildcards can only be the whole descriptor ("*") or its last token ("event.*")`,
			},
		},
		{
			name: "internal was replaced by reenter",
			src:  `{"initial": "a", "states": {"a": {"on": {"GO": {"target": "a", "internal": false, "reenter": "yes"}}}}}`,
			want: []string{
				`states.a.on.GO.internal: warning: "internal" is ignored: XState v5 replaced it by "reenter" (internal: false is reenter: true)`,
				`states.a.on.GO.reenter: must be true or false, not a string`,
			},
		},

		// Guards.
		{
			name: "guard with no implementation, with a hint",
			src:  `{"initial": "a", "states": {"a": {"on": {"GO": {"target": "a", "guard": "hasItem"}, "STOP": {"guard": {"type": "isAdmin", "params": {"role": "x"}}}}}}}`,
			opts: withImpl,
			want: []string{
				`states.a.on.GO.guard: guard "hasItem" is not implemented (did you mean "hasItems"?)`,
				`states.a.on.STOP.guard: guard "isAdmin" is not implemented`,
			},
		},
		{
			name: "guard with no implementation inside a built-in",
			src:  `{"initial": "a", "states": {"a": {"always": {"guard": {"type": "xstate.not", "params": {"guard": {"type": "xstate.and", "params": {"guards": ["hasItems", "isOpen"]}}}}}}}}`,
			opts: withImpl,
			want: []string{`states.a.always.guard.params.guard.params.guards[1]: guard "isOpen" is not implemented`},
		},
		{
			name: "bad guard forms",
			src: `{"initial": "a", "states": {"a": {"on": {
				"A": {"guard": 5},
				"B": {"guard": {}},
				"C": {"guard": {"type": "xstate.or"}},
				"D": {"guard": {"type": "xstate.not"}},
				"E": {"guard": {"type": "xstate.stateIn", "params": {"stateValue": "#nowhere"}}},
				"F": {"guard": {"type": "xstate.stateIn"}},
				"G": {"guard": {"type": "hasItems", "params": 1, "extra": true}}
			}}}}`,
			opts: withImpl,
			want: []string{
				`states.a.on.A.guard: a guard must be a name or an object with a "type", not a number`,
				`states.a.on.B.guard: a guard object needs a "type"`,
				`states.a.on.C.guard.params.guards: xstate.or needs an array of guards`,
				`states.a.on.D.guard.params.guard: xstate.not needs a guard`,
				`states.a.on.E.guard.params.stateValue: "#nowhere" is not a state id`,
				`states.a.on.F.guard.params.stateValue: xstate.stateIn needs a "#id" or a state value, not nothing`,
				`states.a.on.G.guard.params: must be an object, not a number`,
				`states.a.on.G.guard.extra: warning: unknown key "extra"`,
			},
		},
		{
			name: "AllowMissingGuards defers missing guards to run time",
			src:  `{"initial": "a", "states": {"a": {"on": {"GO": {"target": "a", "guard": "later"}}, "invoke": {"src": 3}}}}`,
			opts: &statechart.Options{AllowMissingGuards: true},
			want: []string{
				`states.a.on.GO.guard: warning: guard "later" is not implemented: evaluating it is an error, as in XState`,
				`states.a.invoke.src: must be the name of an actor in the implementations, not a number`,
			},
		},

		// Actions.
		{
			name: "action with no implementation is only an error in Strict mode",
			src:  `{"initial": "a", "states": {"a": {"entry": ["notify", "notfy"], "exit": {"type": "audit", "params": {"level": 1}}}}}`,
			opts: strict,
			want: []string{
				`states.a.entry[1]: action "notfy" is not implemented (did you mean "notify"?)`,
				`states.a.exit: action "audit" is not implemented`,
			},
		},
		{
			name: "bad action forms",
			src: `{"initial": "a", "states": {"a": {
				"entry": ["", 5, {}, {"type": 1}],
				"exit": {"type": "notify", "params": [], "args": {}}
			}}}`,
			want: []string{
				`states.a.entry[0]: warning: an empty action name does nothing: XState skips it`,
				`states.a.entry[1]: an action must be a name or an object with a "type", not 5`,
				`states.a.entry[2]: an action object needs a "type"`,
				`states.a.entry[3].type: must be a non-empty string, not a number`,
				`states.a.exit.params: must be an object, not an array`,
				`states.a.exit.args: warning: unknown key "args" (did you mean "params"?)`,
			},
		},
		{
			name: "bad xstate.assign, xstate.raise and xstate.cancel params",
			src: `{"initial": "a", "states": {"a": {"entry": [
				{"type": "xstate.assign"},
				{"type": "xstate.assign", "params": 5},
				{"type": "xstate.assign", "params": {"n": {"$inc": "1"}, "m": {"$ref": "ctx.m"}, "k": {"$set": 1}, "k": 2}},
				{"type": "xstate.raise", "params": {"event": "DONE"}},
				{"type": "xstate.raise", "params": {"event": {"type": ""}}},
				{"type": "xstate.raise", "params": {"event": {"type": "DONE"}, "delay": -1}},
				{"type": "xstate.raise", "params": {"event": {"type": "DONE"}, "delay": true}},
				{"type": "xstate.cancel"},
				{"type": "xstate.cancel", "params": {"sendId": 3}}
			]}}}`,
			want: []string{
				`states.a.entry[0].params: xstate.assign needs params: an object of context keys to expressions`,
				`states.a.entry[1].params: must be an object, not a number`,
				`states.a.entry[2].params.k: duplicate key "k"`,
				`states.a.entry[2].params.n.$inc: must be a number, not a string`,
				`states.a.entry[2].params.m.$ref: must be a path that starts with "context" or "event", not "ctx.m"`,
				`states.a.entry[2].params.k.$set: unknown operator "$set" (use $ref, $inc or $push)`,
				`states.a.entry[3].params.event: xstate.raise needs an event object with a "type"`,
				`states.a.entry[4].params.event: xstate.raise needs an event object with a "type"`,
				`states.a.entry[5].params.delay: warning: a negative delay: XState schedules its event in the past, so it fires at once, before the zero delays scheduled with it`,
				`states.a.entry[6].params.delay: must be milliseconds or the name of a delay, not true`,
				`states.a.entry[7].params.sendId: xstate.cancel needs the id of the delayed event to cancel`,
				`states.a.entry[8].params.sendId: xstate.cancel needs the id of the delayed event to cancel`,
			},
		},
		{
			name: "invoke",
			src: `{"initial": "a", "states": {"a": {"invoke": [
				{"src": "fetchUser", "onDone": "nowhere", "input": {"id": {"$ref": "state.id"}}, "sytemId": "x"},
				{"id": 5, "src": "f", "onError": {"target": "b", "guard": {"type": "xstate.not"}}},
				3
			]}, "b": {"invoke": "fetchUser"}}}`,
			want: []string{
				`states.a.invoke[0].input.id.$ref: must be a dotted path that starts with "context" or "event", not "state.id"`,
				`states.a.invoke[0].sytemId: warning: unknown key "sytemId" (did you mean "systemId"?)`,
				`states.a.invoke[0].src: warning: no actor logic is named "fetchUser": XState starts nothing for it (and fails to start when an initial state invokes it)`,
				`states.a.invoke[0].onDone: "nowhere" is not a sibling of "a": state "(machine)" has no child "nowhere"`,
				`states.a.invoke[1].id: must be a string, not a number`,
				`states.a.invoke[1].src: warning: no actor logic is named "f": XState starts nothing for it (and fails to start when an initial state invokes it)`,
				`states.a.invoke[1].onError.guard.params.guard: xstate.not needs a guard`,
				`states.a.invoke[2]: an invoke must be an object with a "src", not a number`,
				`states.b.invoke: must be an invoke object or an array of them, not a string`,
			},
		},

		// Delays.
		{
			name: "bad after keys and values",
			src: `{"initial": "a", "states": {"a": {"after": {
				"-5": "b", "": "b", "Infinity": "b", "0x10": "b", "1e30": "b", "100": 5, "200": [{"target": "nowhere"}]
			}}, "b": {}}}`,
			// Array-index keys come first, as in JavaScript's key order.
			want: []string{
				`states.a.after.100: a transition must be a target string, an object or an array, not a number`,
				`states.a.after.200[0].target: "nowhere" is not a sibling of "a": state "(machine)" has no child "nowhere"`,
				`states.a.after.-5: warning: a negative delay: XState schedules its event in the past, so it fires at once, before the zero delays scheduled with it`,
				`states.a.after[""]: a delay cannot be empty (XState reads it as 0); write "0"`,
				`states.a.after.Infinity: a delay must be a finite number of milliseconds`,
				`states.a.after.0x10: write a delay as decimal milliseconds or as the name of a delay`,
				`states.a.after.1e30: a delay cannot be longer than about 292 years`,
			},
		},
		{
			name: "unknown named delay in Strict mode",
			src: `{"initial": "a", "states": {"a": {
				"after": {"TIMEOUT": "b", "TIMEOTU": "b"},
				"entry": {"type": "xstate.raise", "params": {"event": {"type": "PING"}, "delay": "SOON"}}
			}, "b": {}}}`,
			opts: strict,
			want: []string{
				`states.a.entry.params.delay: delay "SOON" has no implementation (XState would raise the event at once)`,
				`states.a.after.TIMEOTU: delay "TIMEOTU" has no implementation (XState would fire it at once)`,
			},
		},

		// Tags.
		{
			name: "bad tags",
			src:  `{"initial": "a", "states": {"a": {"tags": 5}, "b": {"tags": ["ok", 5, null]}}}`,
			want: []string{
				`states.a.tags: must be a string or an array of strings, not a number`,
				`states.b.tags[1]: must be a string, not a number`,
				`states.b.tags[2]: must be a string, not null`,
			},
		},

		// Everything at once.
		{
			name: "many errors are all collected, in document order",
			src: `{
				"id": "shop",
				"intial": "cart",
				"states": {
					"cart": {
						"entry": {"type": "xstate.assign"},
						"on": {
							"ADD": {"target": "cart", "cond": "hasItems"},
							"PAY": [{"target": "payment", "guard": "hasItems"}, {"target": "#nope"}],
							"QUIT": null
						},
						"tags": [1]
					},
					"payment": {
						"type": "parallell",
						"after": {"-1": "cart"},
						"invoke": {"src": "charge", "onDone": "nowhere"}
					},
					"done": {"type": "final", "on": {"AGAIN": ".cart"}}
				}
			}`,
			opts: withImpl,
			want: []string{
				`intial: warning: unknown key "intial" (did you mean "initial"?)`,
				`compound state "shop" has no "initial"; add "initial": "cart"`,
				`states.cart.tags[0]: must be a string, not a number`,
				`states.cart.entry.params: xstate.assign needs params: an object of context keys to expressions`,
				`states.cart.on.ADD.cond: warning: "cond" is ignored: it is XState v4's name of "guard", so the transition is unguarded (XState's development build refuses it)`,
				`states.cart.on.PAY[1].target: "#nope" is not a state id (did you mean "shop"?)`,
				`states.cart.on.QUIT: a transition must be a target string, an object or an array, not null`,
				`states.payment.type: "parallell" is not a state type (atomic, compound, parallel, final, history)`,
				`states.payment.invoke.src: warning: no actor logic is named "charge": XState starts nothing for it (and fails to start when an initial state invokes it)`,
				`states.payment.invoke.onDone: "nowhere" is not a sibling of "payment": state "shop" has no child "nowhere"`,
				`states.payment.after.-1: warning: a negative delay: XState schedules its event in the past, so it fires at once, before the zero delays scheduled with it`,
				`states.done.on.AGAIN: ".cart" is not a descendant of "shop.done": state "shop.done" has no child "cart"`,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := loadErrors(t, tc.src, tc.opts)
			require.Equal(t, tc.want, got, "got:\n%s", loadGoStrings(got))
		})
	}
}

// loadGoStrings prints messages as Go raw strings, to update a row.
func loadGoStrings(msgs []string) string {
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "\t`%s`,\n", m)
	}
	return b.String()
}

// loadSiblings returns a machine with n sibling states s0..s(n-1); state(i)
// returns the config of state i.
func loadSiblings(n int, state func(i int) string) []byte {
	var b strings.Builder
	b.WriteString(`{"id": "m", "initial": "s0", "states": {`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"s%d": %s`, i, state(i))
	}
	b.WriteString("}}")
	return []byte(b.String())
}

func TestCompileLimitsMatchErrLimit(t *testing.T) {
	small := `{"initial": "a", "states": {"a": {}}}`
	tests := []struct {
		name string
		src  []byte
		opts *statechart.Options
		want string
	}{
		{
			name: "MaxBytes",
			src:  []byte(small),
			opts: &statechart.Options{MaxBytes: 10},
			want: `document is 37 bytes, more than the limit of 10`,
		},
		{
			name: "default MaxDepth, 100k nested arrays",
			src:  []byte(strings.Repeat("[", 100_000)),
			want: `JSON nesting is deeper than the limit of 256`,
		},
		{
			name: "default MaxDepth, 100k nested objects",
			src:  []byte(strings.Repeat(`{"a":`, 100_000)),
			want: `JSON nesting is deeper than the limit of 256`,
		},
		{
			name: "MaxDepth, nested states",
			src:  []byte(strings.Repeat(`{"initial": "a", "states": {"a": `, 10) + "{}" + strings.Repeat("}}", 10)),
			opts: &statechart.Options{MaxDepth: 15},
			want: `JSON nesting is deeper than the limit of 15`,
		},
		{
			name: "MaxStates",
			src:  loadSiblings(20, func(int) string { return "{}" }),
			opts: &statechart.Options{MaxStates: 5},
			want: `states.s4: more than 5 state nodes`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := statechart.Compile(tc.src, tc.opts)
			require.Error(t, err)
			require.ErrorIs(t, err, statechart.ErrLimit)
			require.Equal(t, tc.want, err.Error())
			var list statechart.ErrorList
			require.ErrorAs(t, err, &list)
			require.Len(t, list, 1)
		})
	}

	t.Run("brackets inside strings do not count", func(t *testing.T) {
		src := `{"initial": "a", "description": "` + strings.Repeat("[{", 1000) + `", "states": {"a": {}}}`
		_, err := statechart.Compile([]byte(src), nil)
		require.NoError(t, err)
	})
	t.Run("ordinary errors do not match ErrLimit", func(t *testing.T) {
		_, err := statechart.Compile([]byte(`{"initial": "b", "states": {"a": {}}}`), nil)
		require.Error(t, err)
		require.NotErrorIs(t, err, statechart.ErrLimit)
	})
	t.Run("a machine at the limits compiles", func(t *testing.T) {
		src := loadSiblings(4, func(int) string { return "{}" })
		_, err := statechart.Compile(src, &statechart.Options{MaxStates: 5, MaxBytes: len(src), MaxDepth: 3})
		require.NoError(t, err)
	})
}

// hostileCompileInputs are inputs that a quadratic loader would choke on:
// thousands of misspelled names among thousands of states (did-you-mean
// hints), huge target arrays, long chains of "#id" segments, and a guard
// nested 40 deep with wide levels. BenchmarkHostileCompile measures them;
// TestCompileHostileInputs checks what Compile says about each.
func hostileCompileInputs() map[string][]byte {
	const n = 20_000
	return map[string][]byte{
		"unknown ids": loadSiblings(n, func(i int) string {
			return fmt.Sprintf(`{"on": {"E": "#m.s%dx"}}`, i)
		}),
		"unknown siblings": loadSiblings(n, func(i int) string {
			return fmt.Sprintf(`{"on": {"E": "s%dx"}}`, i)
		}),
		"unknown guards": loadSiblings(n, func(i int) string {
			return fmt.Sprintf(`{"on": {"E": {"guard": "g%d"}}}`, i)
		}),
		"every state targets every other": loadSiblings(500, func(i int) string {
			var b strings.Builder
			b.WriteString(`{"on": {"E": {"target": [`)
			for j := range 500 {
				if j > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `"s%d"`, j)
			}
			b.WriteString(`]}}}`)
			return b.String()
		}),
		"one huge target array": []byte(`{"initial": "a", "states": {"a": {"on": {"E": {"target": [` +
			strings.Repeat(`"b",`, 500_000) + `"b"]}}}, "b": {}}}`),
		"long #id chain": []byte(`{"initial": "a", "states": {"a": {"id": "x", "on": {"E": "#x` +
			strings.Repeat(`.#x`, 200_000) + `"}}}}`),
		"nested escaped #id": []byte(`{"initial": "a", "states": {"a": {"id": "x", "on": {"E": "#x` +
			strings.Repeat(`\\.#x`, 200_000) + `"}}}}`),
		"deep states": []byte(strings.Repeat(`{"initial": "a", "on": {"E": "#nope"}, "states": {"a": `, 120) + "{}" + strings.Repeat("}}", 120)),
	}
}

func TestCompileHostileInputs(t *testing.T) {
	inputs := hostileCompileInputs()
	errorsOf := func(name string) statechart.ErrorList {
		t.Helper()
		_, err := statechart.Compile(inputs[name], nil)
		var list statechart.ErrorList
		require.ErrorAs(t, err, &list, name)
		return list
	}
	for _, tc := range []struct {
		name        string
		count       int
		first, last string
	}{
		{"unknown ids", 20_000,
			`states.s0.on.E: "#m.s0x" is not a state id: state "m" has no child "s0x" (did you mean "s0"?)`,
			`states.s19999.on.E: "#m.s19999x" is not a state id: state "m" has no child "s19999x"`}, // past the hint budget
		{"unknown siblings", 20_000,
			`states.s0.on.E: "s0x" is not a sibling of "s0": state "m" has no child "s0x" (did you mean "s0"?)`,
			`states.s19999.on.E: "s19999x" is not a sibling of "s19999": state "m" has no child "s19999x"`},
		{"unknown guards", 20_000,
			`states.s0.on.E.guard: guard "g0" is not implemented`,
			`states.s19999.on.E.guard: guard "g19999" is not implemented`},
		{"every state targets every other", 500 * 499,
			`states.s0.on.E.target: targets "m.s0" and "m.s1" are in different children of compound state "m", so they cannot both be active`,
			`states.s499.on.E.target: targets "m.s0" and "m.s499" are in different children of compound state "m", so they cannot both be active`},
		{"deep states", 120,
			`on.E: "#nope" is not a state id`,
			strings.Repeat("states.a.", 119) + `on.E: "#nope" is not a state id`},
	} {
		list := errorsOf(tc.name)
		require.Len(t, list, tc.count, tc.name)
		require.Equal(t, tc.first, list[0].Error(), tc.name)
		require.Equal(t, tc.last, list[len(list)-1].Error(), tc.name)
	}
	list := errorsOf("nested escaped #id")
	require.Len(t, list, 1)
	require.True(t, strings.HasPrefix(list[0].Error(), `states.a.on.E: "#x\\.#x\\.#x`), list[0].Error()[:100])

	// Repeated targets are one target; a chain of "#id" segments ends where
	// its last segment points.
	for name, want := range map[string]string{"one huge target array": "(machine).b", "long #id chain": "x"} {
		m, err := statechart.Compile(inputs[name], nil)
		require.NoError(t, err, name)
		require.Equal(t, []string{want}, m.Nodes()[1].Transitions[0].Targets, name)
	}
}

func BenchmarkHostileCompile(b *testing.B) {
	inputs := hostileCompileInputs()
	names := make([]string, 0, len(inputs))
	for name := range inputs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		src := inputs[name]
		b.Run(strings.ReplaceAll(name, " ", "_"), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				_, _ = statechart.Compile(src, nil)
			}
		})
	}
}

// studioExport is a machine in the shape Stately Studio exports (names
// plus params for guards and actions), using every JSON feature of XState
// v5 that chartgate supports.
const studioExport = `{
  "id": "checkout",
  "version": "1.2.0",
  "description": "A checkout flow",
  "meta": {"owner": "payments"},
  "context": {"items": [], "paid": false},
  "initial": {"target": "cart", "actions": [{"type": "track", "params": {"step": "start"}}]},
  "output": {"result": "paid"},
  "states": {
    "cart": {
      "description": "Collecting items",
      "tags": ["editable", "visible"],
      "meta": {"title": "Cart"},
      "entry": [{"type": "track", "params": {"step": "cart"}}],
      "on": {
        "ADD_ITEM": {
          "actions": [{"type": "addItem", "params": {"qty": 1}}],
          "description": "Add an item",
          "meta": {"tool": "add_item"}
        },
        "CHECKOUT": [
          {"target": "payment", "guard": {"type": "hasItems", "params": {"min": 1}}, "description": "Pay"},
          {"actions": "warnEmpty"}
        ],
        "DETOUR": "gift\\.wrap"
      }
    },
    "gift.wrap": {
      "on": {"DONE": {"target": "#checkout.cart", "reenter": true}}
    },
    "payment": {
      "type": "parallel",
      "tags": "paying",
      "entry": {"type": "xstate.log"},
      "states": {
        "card": {
          "initial": "entering",
          "states": {
            "entering": {"on": {"SUBMIT": "verifying"}},
            "verifying": {
              "after": {"3000": "failed", "TIMEOUT": {"target": "failed", "actions": ["track"]}},
              "on": {"APPROVED": {"target": "ok", "actions": {"type": "xstate.assign", "params": {"paid": true}}}}
            },
            "failed": {"on": {"RETRY": "entering"}},
            "ok": {"type": "final"},
            "hist": {"type": "history", "history": "deep", "target": "entering"}
          }
        },
        "address": {
          "initial": "editing",
          "states": {
            "editing": {"on": {"SAVE": {"target": "saved", "guard": {"type": "xstate.not", "params": {"guard": "isPaid"}}}}},
            "saved": {"type": "final", "output": {"saved": true}}
          }
        }
      },
      "onDone": {"target": "confirmed", "actions": [{"type": "notify"}]},
      "on": {"BACK": "#checkout.cart", "RESUME": ".card.hist"}
    },
    "confirmed": {
      "always": [
        {"target": "done", "guard": {"type": "xstate.and", "params": {"guards": ["isPaid", {"type": "hasItems", "params": {"min": 1}}]}}},
        {"target": "cart"}
      ]
    },
    "done": {"type": "final", "description": "Paid", "tags": ["final"]}
  }
}`

const studioImpl = `{
  "guards": {
    "hasItems": {"field": "context.items.0", "op": "exists"},
    "isPaid": {"field": "context.paid", "op": "eq", "value": true}
  },
  "actions": {
    "addItem": {"assign": {"items": {"$push": {"$ref": "event.sku"}}}},
    "track": {"assign": {"steps": {"$inc": 1}}},
    "notify": {"raise": {"type": "NOTIFIED"}},
    "warnEmpty": {"assign": {"warned": true}}
  },
  "delays": {"TIMEOUT": 10000}
}`

func TestCompileAcceptsStudioExport(t *testing.T) {
	impl, err := statechart.ParseImplementations([]byte(studioImpl))
	require.NoError(t, err)
	m, err := statechart.Compile([]byte(studioExport), &statechart.Options{Implementations: impl, Strict: true})
	require.NoError(t, err)

	require.Equal(t, "checkout", m.ID())
	require.Equal(t, []string{
		"checkout", "checkout.cart", "checkout.gift.wrap", "checkout.payment",
		"checkout.payment.card", "checkout.payment.card.entering", "checkout.payment.card.verifying",
		"checkout.payment.card.failed", "checkout.payment.card.ok", "checkout.payment.card.hist",
		"checkout.payment.address", "checkout.payment.address.editing", "checkout.payment.address.saved",
		"checkout.confirmed", "checkout.done",
	}, m.StateIDs())
	nodes := map[string]statechart.Node{}
	for _, n := range m.Nodes() {
		nodes[n.ID] = n
	}
	require.Equal(t, "checkout.cart", nodes["checkout"].Initial)
	require.Equal(t, "parallel", nodes["checkout.payment"].Type)
	require.Equal(t, "history", nodes["checkout.payment.card.hist"].Type)
	require.Equal(t, "gift.wrap", nodes["checkout.gift.wrap"].Key)
	require.Equal(t, []string{"editable", "visible"}, nodes["checkout.cart"].Tags)
	require.Equal(t, map[string]any{"title": "Cart"}, nodes["checkout.cart"].Meta)
	require.Equal(t, "Collecting items", nodes["checkout.cart"].Description)
	require.Contains(t, nodes["checkout.cart"].Transitions, statechart.TransitionInfo{
		Event: "CHECKOUT", Targets: []string{"checkout.payment"}, Guard: "hasItems",
	})
	require.Contains(t, nodes["checkout.cart"].Transitions, statechart.TransitionInfo{
		Event: "DETOUR", Targets: []string{"checkout.gift.wrap"},
	})
	require.Contains(t, m.Events(), "xstate.after.3000.checkout.payment.card.verifying")
	require.Contains(t, m.Events(), "xstate.after.TIMEOUT.checkout.payment.card.verifying")
	require.Contains(t, m.Events(), "xstate.done.state.checkout.payment")

	// It runs, too.
	ctx := context.Background()
	clock := statechart.NewSimulatedClock()
	a := statechart.NewActor(m, &statechart.ActorOptions{Clock: clock})
	require.NoError(t, a.Start(ctx))
	require.Equal(t, "cart", a.Snapshot().Value())
	require.Equal(t, 2.0, a.Snapshot().Context()["steps"], "initial actions and entry actions ran")
	require.NoError(t, a.Send(ctx, statechart.NewEvent("CHECKOUT")))
	require.Equal(t, true, a.Snapshot().Context()["warned"])
	require.NoError(t, a.Send(ctx, statechart.Event{Type: "ADD_ITEM", Data: map[string]any{"sku": "a1"}}))
	require.NoError(t, a.Send(ctx, statechart.NewEvent("CHECKOUT")))
	require.Equal(t, map[string]any{"payment": map[string]any{"card": "entering", "address": "editing"}}, a.Snapshot().Value())
	require.Equal(t, []string{"paying"}, a.Snapshot().Tags())
	require.NoError(t, a.Send(ctx, statechart.NewEvent("SUBMIT")))
	clock.Advance(3000 * time.Millisecond)
	require.Equal(t, map[string]any{"payment": map[string]any{"card": "failed", "address": "editing"}}, a.Snapshot().Value())
	require.NoError(t, a.Send(ctx, statechart.NewEvent("RETRY")))
	require.NoError(t, a.Send(ctx, statechart.NewEvent("SUBMIT")))
	require.NoError(t, a.Send(ctx, statechart.NewEvent("SAVE")))
	require.NoError(t, a.Send(ctx, statechart.NewEvent("APPROVED")))
	s := a.Snapshot()
	require.Equal(t, statechart.StatusDone, s.Status(), "value %v", s.Value())
	require.Equal(t, "done", s.Value())
	require.Equal(t, map[string]any{"result": "paid"}, s.Output())
	require.Empty(t, s.Pending(), "leaving verifying cancelled its timers")
}

// TestCompileAcceptsXStateForms covers the JSON forms XState accepts that
// are easy to reject by mistake.
func TestCompileAcceptsXStateForms(t *testing.T) {
	for name, src := range map[string]string{
		"empty machine":                     `{}`,
		"empty states":                      `{"states": {}}`,
		"targetless forms":                  `{"initial": "a", "states": {"a": {"on": {"A": "", "B": {}, "C": {"target": ""}, "D": []}}}}`,
		"history true is shallow":           `{"initial": "a", "states": {"a": {}, "h": {"type": "history", "history": true}}}`,
		"history inferred from history key": `{"initial": "a", "states": {"a": {}, "h": {"history": "shallow"}}}`,
		"history in a parallel state":       `{"type": "parallel", "states": {"a": {}, "b": {}, "h": {"type": "history"}}}`,
		"initial history with a target":     `{"initial": "h", "states": {"h": {"type": "history", "target": "b"}, "b": {}}}`,
		"multi-region target":               `{"initial": "a", "states": {"a": {"on": {"GO": {"target": ["#p.x.x2", "#p.y.y2"]}}}, "p": {"id": "p", "type": "parallel", "states": {"x": {"initial": "x1", "states": {"x1": {}, "x2": {}}}, "y": {"initial": "y1", "states": {"y1": {}, "y2": {}}}}}}}`,
		"ancestor and descendant targets":   `{"initial": "a", "states": {"a": {"on": {"GO": {"target": ["b", "b.c", "b"]}}}, "b": {"initial": "c", "states": {"c": {}}}}}`,
		"wildcards":                         `{"initial": "a", "states": {"a": {"on": {"*": "a", "foo.*": "a", "foo.bar.*": "a"}}}}`,
		"exponent and fractional delays":    `{"initial": "a", "states": {"a": {"after": {"1e3": "a", "0.5": "a", " 250 ": "a", "0": "a"}}}}`,
		"unknown delay outside Strict":      `{"initial": "a", "states": {"a": {"after": {"LATER": "a"}}}}`,
		"unknown action outside Strict":     `{"initial": "a", "states": {"a": {"entry": "nothing", "exit": [{"type": "nothing", "params": {"x": 1}}]}}}`,
		"root transitions with dot targets": `{"initial": "a", "on": {"RESET": ".a", "B": {"target": ".b", "reenter": true}}, "states": {"a": {}, "b": {}}}`,
		"path through an id":                `{"initial": "a", "states": {"a": {"on": {"GO": "#deep.inner"}}, "b": {"id": "deep", "initial": "inner", "states": {"inner": {}}}}}`,
		"declared built-ins":                `{"initial": "a", "states": {"a": {"entry": [{"type": "xstate.raise", "params": {"event": {"type": "T", "n": 1}, "delay": 100, "id": "t"}}, {"type": "xstate.cancel", "params": {"sendId": "t"}}, {"type": "xstate.log"}], "on": {"T": {"guard": {"type": "xstate.stateIn", "params": {"stateValue": "a"}}}}}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			m, err := statechart.Compile([]byte(src), nil)
			require.NoError(t, err)
			require.Empty(t, m.Warnings())
		})
	}
}

// TestCompileWarnings covers what XState accepts but is most likely a
// mistake: Compile compiles it, as XState runs it, and reports a warning
// with its path; Strict makes each warning an error.
func TestCompileWarnings(t *testing.T) {
	const negative = "a negative delay: XState schedules its event in the past, so it fires at once, before the zero delays scheduled with it"
	tests := []struct {
		name string
		src  string
		opts *statechart.Options
		want []string
	}{
		{
			name: "misspelled keys in a state node, a transition, initial, a guard and an action",
			src: `{"initial": {"target": "a", "action": "x"}, "states": {"a": {
				"entyr": "x",
				"on": {"GO": {"taget": "b", "guard": {"type": "xstate.stateIn", "params": {"stateValue": "a"}, "parms": {}}, "actions": {"type": "xstate.log", "param": {}}}}
			}, "b": {}}}`,
			want: []string{
				`initial.action: unknown key "action" (did you mean "actions"?)`,
				`states.a.entyr: unknown key "entyr" (did you mean "entry"?)`,
				`states.a.on.GO.taget: unknown key "taget" (did you mean "target"?)`,
				`states.a.on.GO.guard.parms: unknown key "parms" (did you mean "params"?)`,
				`states.a.on.GO.actions.param: unknown key "param" (did you mean "params"?)`,
			},
		},
		{
			name: "initial on a parallel state, and a default target on a state that is not a history state",
			src:  `{"type": "parallel", "initial": "a", "states": {"a": {"target": "b"}, "b": {}}}`,
			want: []string{
				`initial: "initial" is ignored: a parallel state enters all its regions (XState ignores it too)`,
				`states.a.target: "target" is ignored: only history states have a default target (XState ignores it too); put targets on transitions`,
			},
		},
		{
			name: "XState v4 and TypeScript keys of the machine; schemas and version are XState's own",
			src: `{"initial": "a", "version": "1", "schemas": {}, "predictableActionArguments": true, "preserveActionOrder": true,
				"tsTypes": {}, "schema": {"context": {}}, "types": {}, "options": {"maxIterations": 10}, "states": {"a": {}}}`,
			want: []string{
				`predictableActionArguments: "predictableActionArguments" is ignored: an XState v4 option; v5 always works that way`,
				`preserveActionOrder: "preserveActionOrder" is ignored: an XState v4 option; v5 always works that way`,
				`tsTypes: "tsTypes" is ignored: XState v4's typegen, for TypeScript only`,
				`schema: "schema" is ignored: XState v4's TypeScript typing (v5 types machines with setup({types}))`,
				`types: "types" is ignored: it types the machine for TypeScript and does nothing at run time`,
				`options: "options" is not read: XState's maxIterations is Options.MaxMicrosteps here`,
			},
		},
		{
			name: "XState v4 keys of state nodes, and root keys below the root",
			src: `{"initial": "a", "states": {"a": {"onEntry": "x", "onExit": "y", "activities": ["beep"], "cond": "ok", "context": {}, "schemas": {}}, 
				"b": {"type": "final", "data": {"x": 1}}}}`,
			want: []string{
				`states.a.onEntry: "onEntry" is ignored: XState v4's old name of "entry"`,
				`states.a.onExit: "onExit" is ignored: XState v4's old name of "exit"`,
				`states.a.activities: "activities" is ignored: XState v4's activities; v5 runs actors with "invoke"`,
				`states.a.cond: "cond" is ignored: XState v4's guard, which belongs on a transition (as "guard" in v5)`,
				`states.a.context: "context" is ignored: XState reads it on the machine root only`,
				`states.a.schemas: "schemas" is ignored: XState reads it on the machine root only`,
				`states.b.data: "data" is ignored: XState v4's done data; v5 reads "output"`,
			},
		},
		{
			name: "XState v4 keys of transitions",
			src:  `{"initial": "a", "states": {"a": {"on": {"GO": {"target": "b", "cond": "ok", "internal": true, "in": "#x"}}}, "b": {}}}`,
			want: []string{
				`states.a.on.GO.cond: "cond" is ignored: it is XState v4's name of "guard", so the transition is unguarded (XState's development build refuses it)`,
				`states.a.on.GO.internal: "internal" is ignored: XState v5 replaced it by "reenter" (internal: false is reenter: true)`,
				`states.a.on.GO.in: "in" is ignored: XState v4's state condition; in v5 it is the guard {"type": "xstate.stateIn", "params": {"stateValue": ...}}`,
			},
		},
		{
			name: "negative delays",
			src: `{"initial": "a", "states": {"a": {"after": {"-5": "b", "-0": "b"},
				"entry": {"type": "xstate.raise", "params": {"event": {"type": "E"}, "delay": -0.5}}}, "b": {}}}`,
			want: []string{
				`states.a.entry.params.delay: ` + negative,
				`states.a.after.-5: ` + negative,
			},
		},
		{
			name: "empty action names and empty guards",
			src: `{"initial": "a", "states": {"a": {"entry": ["", "xstate.log", {"type": "", "params": {}}], "exit": "",
				"on": {"A": {"guard": "", "target": "b"}, "B": {"guard": null, "target": "b"}}}, "b": {}}}`,
			want: []string{
				`states.a.entry[0]: an empty action name does nothing: XState skips it`,
				`states.a.entry[2].type: an empty action name does nothing: XState skips it`,
				`states.a.exit: an empty action name does nothing: XState skips it`,
				`states.a.on.A.guard: an empty guard ("") is no guard: XState takes the transition unguarded`,
				`states.a.on.B.guard: an empty guard (null) is no guard: XState takes the transition unguarded`,
			},
		},
		{
			name: "an infix wildcard matches nothing",
			src:  `{"initial": "a", "states": {"a": {"on": {"a.*.b": "a"}}}}`,
			want: []string{`states.a.on["a.*.b"]: wildcards can only be the whole descriptor ("*") or its last token ("event.*")`},
		},
		{
			name: "routes XState ignores, and the root's transitions routes replace",
			src: `{"id": "m", "initial": "a", "route": {}, "on": {"xstate.route": ".a"}, "states": {
				"a": {"route": {}},
				"b": {"id": "b", "route": {"target": "a", "guard": "", "actions": "xstate.log"}}
			}}`,
			want: []string{
				`route: the machine root has no route: XState collects the routes of the states below it`,
				`on["xstate.route"]: never taken: as in XState, the routes of the states replace the root's transitions on "xstate.route"`,
				`states.a.route: a route needs the state's own "id": XState ignores it without one`,
				`states.b.route.target: "target" is ignored: a route always targets its own state`,
				`states.b.route.guard: an empty guard ("") is no guard: XState takes the transition unguarded`,
			},
		},
		{
			name: "empty invoke lists are no warning",
			src:  `{"initial": "a", "invoke": [], "states": {"a": {"invoke": []}}}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := statechart.Compile([]byte(tc.src), tc.opts)
			require.NoError(t, err)
			var got []string
			for _, w := range m.Warnings() {
				require.True(t, w.Warning, "%v", w)
				require.Equal(t, w.Path+": warning: "+w.Msg, w.Error())
				got = append(got, w.Path+": "+w.Msg)
			}
			require.Equal(t, tc.want, got, "got:\n%s", loadGoStrings(got))

			strict := statechart.Options{Strict: true}
			if tc.opts != nil {
				strict = *tc.opts
				strict.Strict = true
			}
			m, err = statechart.Compile([]byte(tc.src), &strict)
			if len(tc.want) == 0 {
				require.NoError(t, err)
				return
			}
			require.Nil(t, m)
			var list statechart.ErrorList
			require.ErrorAs(t, err, &list)
			got = nil
			for _, e := range list {
				require.False(t, e.Warning, "Strict: %v", e)
				got = append(got, e.Error())
			}
			require.Equal(t, tc.want, got, "Strict: every warning is an error")
		})
	}
}

// TestMissingGuards: by default a guard without implementation is an
// error; AllowMissingGuards makes it a warning, Strict or not, and the
// machine fails only when it evaluates the guard, as XState does.
func TestMissingGuards(t *testing.T) {
	src := []byte(`{"initial": "a", "states": {"a": {"on": {
		"GO": {"target": "b", "guard": "isReady"},
		"AND": {"target": "b", "guard": {"type": "xstate.and", "params": {"guards": ["isReady", "isReady"]}}},
		"SKIP": "b"}}, "b": {}}}`)
	_, err := statechart.Compile(src, nil)
	require.ErrorIs(t, err, statechart.ErrGuardNotImplemented)
	require.Equal(t, `3 errors:
	states.a.on.GO.guard: guard "isReady" is not implemented
	states.a.on.AND.guard.params.guards[0]: guard "isReady" is not implemented
	states.a.on.AND.guard.params.guards[1]: guard "isReady" is not implemented`, err.Error())

	for _, strict := range []bool{false, true} {
		m, err := statechart.Compile(src, &statechart.Options{AllowMissingGuards: true, Strict: strict})
		require.NoError(t, err)
		ws := m.Warnings()
		require.Len(t, ws, 3, "every reference is reported")
		require.ErrorIs(t, ws, statechart.ErrGuardNotImplemented)
		require.Equal(t, `states.a.on.GO.guard: warning: guard "isReady" is not implemented: evaluating it is an error, as in XState`, ws[0].Error())

		ctx := context.Background()
		s, err := m.Start(ctx, time.UnixMilli(0))
		require.NoError(t, err)
		skipped, err := m.Transition(ctx, s, statechart.NewEvent("SKIP"), time.UnixMilli(0))
		require.NoError(t, err, "a guard that is not evaluated does not matter")
		require.Equal(t, "b", skipped.Value())
		failed, err := m.Transition(ctx, s, statechart.NewEvent("GO"), time.UnixMilli(0))
		require.ErrorIs(t, err, statechart.ErrGuardNotImplemented)
		require.Equal(t, statechart.StatusError, failed.Status())
	}
}

// TestTargetlessFormsBlockButEmptyArrayFallsThrough: "E": "", {} and
// {"target": ""} consume the event, "E": [] lets the parent handle it, as in
// XState.
func TestTargetlessFormsBlockButEmptyArrayFallsThrough(t *testing.T) {
	m, err := statechart.Compile([]byte(`{"initial": "p", "states": {
		"p": {"initial": "a", "on": {"A": "q", "B": "q", "C": "q", "D": "q"},
		      "states": {"a": {"on": {"A": "", "B": {}, "C": {"target": ""}, "D": []}}}},
		"q": {}
	}}`), nil)
	require.NoError(t, err)
	ctx := context.Background()
	for ev, want := range map[string]any{"A": map[string]any{"p": "a"}, "B": map[string]any{"p": "a"}, "C": map[string]any{"p": "a"}, "D": "q"} {
		s, err := m.Start(ctx, time.UnixMilli(0))
		require.NoError(t, err)
		s, err = m.Transition(ctx, s, statechart.NewEvent(ev), time.UnixMilli(0))
		require.NoError(t, err)
		require.Equal(t, want, s.Value(), "event %s", ev)
	}
}

// TestDelayKeysReadLikeXState checks that numeric keys of "after" are read
// as JavaScript's +key reads them, and name the event as XState does.
func TestDelayKeysReadLikeXState(t *testing.T) {
	m, err := statechart.Compile([]byte(`{"id": "d", "initial": "a", "states": {"a": {"after": {"1e3": "b", "0.5": "c", " 250 ": "c", "-2.5": "c", "-1e-7": "c"}}, "b": {}, "c": {}}}`), nil)
	require.NoError(t, err)
	s, err := m.Start(context.Background(), time.UnixMilli(0))
	require.NoError(t, err)
	var ids []string
	for _, p := range s.Pending() {
		ids = append(ids, fmt.Sprintf("%s@%dus", p.ID, p.Due.Sub(time.UnixMilli(0)).Microseconds()))
	}
	require.Equal(t, []string{"xstate.after.-2.5.d.a@-2500us", "xstate.after.-1e-7.d.a@0us", "xstate.after.0.5.d.a@500us", "xstate.after.250.d.a@250000us", "xstate.after.1000.d.a@1000000us"}, ids)
}

// TestRoutesAreRootTransitions: a route compiles to a transition of the
// root on "xstate.route", guarded by the event's "to", which tools see in
// Nodes and Events.
func TestRoutesAreRootTransitions(t *testing.T) {
	m, err := statechart.Compile([]byte(`{"id": "m", "initial": "a", "states": {
		"a": {}, "b": {"id": "bee", "route": {"guard": "ok", "actions": "log"}}}}`), &statechart.Options{AllowMissingGuards: true})
	require.NoError(t, err)
	root := m.Nodes()[0]
	require.Equal(t, []statechart.TransitionInfo{{Event: "xstate.route", Targets: []string{"bee"}, Guard: "xstate.and", Actions: []string{"log"}}}, root.Transitions)
	require.Contains(t, m.Events(), "xstate.route")

	ctx := context.Background()
	s, err := m.Start(ctx, time.UnixMilli(0))
	require.NoError(t, err)
	ok, err := m.Can(ctx, s, statechart.Event{Type: "xstate.route", Data: map[string]any{"to": "#elsewhere"}})
	require.NoError(t, err, "the route's own guard comes first, so the missing one is not evaluated")
	require.False(t, ok)
}

// TestNegativeDelaysFireFirst: a negative delay is due in the past, so the
// pure functions, like an Actor on XState's simulated clock (see the
// conformance case after/negative-delay-fires-before-zero), fire it before
// zero delays scheduled with it.
func TestNegativeDelaysFireFirst(t *testing.T) {
	impl, err := statechart.ParseImplementations([]byte(`{"actions": {"log": {"assign": {"log": {"$push": {"$ref": "event.type"}}}}}}`))
	require.NoError(t, err)
	m, err := statechart.Compile([]byte(`{"id": "m", "context": {"log": []}, "initial": "a", "states": {"a": {
		"entry": [{"type": "xstate.raise", "params": {"event": {"type": "ZERO"}, "delay": 0}},
		          {"type": "xstate.raise", "params": {"event": {"type": "MINUS"}, "delay": -10}}],
		"after": {"0": {"actions": "log"}, "-5": {"actions": "log"}},
		"on": {"*": {"actions": "log"}}}}}`), &statechart.Options{Implementations: impl})
	require.NoError(t, err)
	require.Len(t, m.Warnings(), 2)
	ctx := context.Background()
	epoch := time.UnixMilli(0)
	s, err := m.Start(ctx, epoch)
	require.NoError(t, err)
	s, err = m.Advance(ctx, s, epoch)
	require.NoError(t, err)
	require.Equal(t, []any{"MINUS", "xstate.after.-5.m.a", "ZERO", "xstate.after.0.m.a"}, s.Context()["log"])
}

func TestParseImplementationsReportsErrorsWithPaths(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{
			name: "malformed JSON",
			src:  `{"guards": {"g": }}`,
			want: []string{`malformed JSON: line 1, column 18: invalid character '}' looking for beginning of value`},
		},
		{
			name: "not an object",
			src:  `[]`,
			want: []string{`implementations must be a JSON object, not an array`},
		},
		{
			name: "sections that are not objects",
			src:  `{"guards": [], "actions": 1, "delays": "fast"}`,
			want: []string{
				`guards: must be an object of named conditions, not an array`,
				`actions: must be an object of named actions, not a number`,
				`delays: must be an object of named delays in milliseconds, not a string`,
			},
		},
		{
			name: "conditions",
			src: `{"guards": {
				"op":      {"field": "context.n", "op": "bigger", "value": 1},
				"opType":  {"field": "context.n", "op": 5, "value": 1},
				"nofield": {"op": "eq", "value": 1},
				"noop":    {"field": "context.n", "value": 1},
				"novalue": {"field": "context.n", "op": "gt"},
				"field":   {"field": "ctx.n", "op": "exists"},
				"ref":     {"field": "context.n", "op": "eq", "value": {"$ref": "n"}},
				"inc":     {"field": "context.n", "op": "eq", "value": {"$inc": 1}},
				"key":     {"field": "context.n", "op": "exists", "vaule": 1},
				"and":     {"and": {"field": "context.n", "op": "exists"}},
				"nested":  {"or": [{"field": "context.n", "op": "exists"}, {"not": {"field": "context.n", "op": "eq"}}]},
				"not":     {"not": 1},
				"stateIn": {"stateIn": 1},
				"dup": {"field": "context.n", "op": "exists"},
				"dup": {"field": "context.n", "op": "exists"}
			}}`,
			want: []string{
				`guards.dup: duplicate key "dup"`,
				`guards.op.op: unknown op "bigger" (did you mean "gte"?)`,
				`guards.opType.op: unknown op 5`,
				`guards.nofield: a condition needs a "field"`,
				`guards.noop: a condition needs an "op"`,
				`guards.novalue: op "gt" needs a "value"`,
				`guards.field.field: must be a path that starts with "context" or "event", not "ctx.n"`,
				`guards.ref.value.$ref: must be a path that starts with "context" or "event", not "n"`,
				`guards.inc.value: a condition value is a JSON value or {"$ref": path}`,
				`guards.key.vaule: unknown key "vaule" (did you mean "value"?)`,
				`guards.and.and: must be an array of conditions`,
				`guards.nested.or[1].not: op "eq" needs a "value"`,
				`guards.not.not: a condition must be an object: {"field", "op", "value"}, {"and": [...]}, {"or": [...]} or {"not": ...}`,
				`guards.stateIn.stateIn: must be a "#id" or a state value`,
			},
		},
		{
			name: "actions",
			src: `{"actions": {
				"op":    {"assign": {"n": {"$add": 1}}},
				"inc":   {"assign": {"n": {"$inc": "1"}}},
				"ref":   {"assign": {"n": {"$push": {"$ref": 5}}}},
				"shape": {"assign": []},
				"raise": {"raise": {"kind": "X"}},
				"other": {"send": {"type": "X"}},
				"name":  "doIt"
			}}`,
			want: []string{
				`actions.op.assign.n.$add: unknown operator "$add" (use $ref, $inc or $push)`,
				`actions.inc.assign.n.$inc: must be a number, not a string`,
				`actions.ref.assign.n.$push.$ref: must be a path that starts with "context" or "event", not 5`,
				`actions.shape.assign: must be an object of context keys to expressions`,
				`actions.raise.raise: must be an event object with a "type"`,
				`actions.other: an action must be {"assign": {...}}, {"raise": {...}} or {"throw": "message"}`,
				`actions.name: an action must be {"assign": {...}}, {"raise": {...}} or {"throw": "message"}`,
			},
		},
		{
			name: "delays",
			src:  `{"delays": {"neg": -1, "str": "100", "huge": 1e300, "inf": 1e999, "ok": 100}}`,
			want: []string{
				`delays.neg: a delay cannot be negative`,
				`delays.str: a delay must be a number of milliseconds, not "100"`,
				`delays.huge: a delay cannot be longer than about 292 years`,
				`delays.inf: a delay must be a finite number of milliseconds`,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := statechart.ParseImplementations([]byte(tc.src))
			var list statechart.ErrorList
			require.ErrorAs(t, err, &list)
			got := make([]string, len(list))
			for i, e := range list {
				got[i] = e.Error()
			}
			require.Equal(t, tc.want, got, "got:\n%s", loadGoStrings(got))
		})
	}

	t.Run("a whole case file is accepted", func(t *testing.T) {
		impl, err := statechart.ParseImplementations([]byte(`{"name": "x", "machine": {}, "steps": [],
			"guards": {"g": {"stateIn": "#m.a"}}, "actions": {"a": {"raise": {"type": "E", "n": 1}}}, "delays": {"D": 0}}`))
		require.NoError(t, err)
		require.Len(t, impl.Guards, 1)
		require.Len(t, impl.Actions, 1)
		require.Equal(t, map[string]time.Duration{"D": 0}, impl.Delays)
	})
	t.Run("hostile nesting is a limit error", func(t *testing.T) {
		_, err := statechart.ParseImplementations([]byte(`{"guards": {"g": ` + strings.Repeat(`{"not": `, 100_000)))
		require.ErrorIs(t, err, statechart.ErrLimit)
	})
}

// TestCompileWideStateFindsChildrenByKey: a state with many children finds
// them by key (a map rather than a scan) as one with few does: targets
// between siblings, an array-index key listed first as in JavaScript, a
// duplicate key (the first one is the state), and a missing sibling
// reported with its path.
func TestCompileWideStateFindsChildrenByKey(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"id":"w","initial":"c0","states":{`)
	for i := range 30 {
		fmt.Fprintf(&b, `"c%d":{"on":{"NEXT":"c%d","SEVEN":"7"}},`, i, (i+1)%30)
	}
	b.WriteString(`"c5":{"on":{"NEXT":"c0"}},"7":{"on":{"BACK":"c29"}}}}`)
	_, err := statechart.Compile([]byte(b.String()), nil)
	if err == nil || !strings.Contains(err.Error(), `states.c5: duplicate key "c5"`) {
		t.Fatalf("err = %v, want the duplicate key c5", err)
	}
	valid := strings.Replace(b.String(), `"c5":{"on":{"NEXT":"c0"}},`, ``, 1)
	m, err := statechart.Compile([]byte(valid), nil)
	if err != nil {
		t.Fatal(err)
	}
	if ids := m.StateIDs(); ids[1] != "w.7" {
		t.Fatalf("first child %q, want the array-index key 7 first", ids[1])
	}
	ctx := context.Background()
	a := statechart.NewActor(m, nil)
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct{ event, want string }{
		{"NEXT", "c1"}, {"NEXT", "c2"}, {"SEVEN", "7"}, {"BACK", "c29"}, {"NEXT", "c0"},
	} {
		if err := a.Send(ctx, statechart.Event{Type: step.event}); err != nil {
			t.Fatal(err)
		}
		if got := a.Snapshot().Value(); got != step.want {
			t.Fatalf("after %s: %v, want %s", step.event, got, step.want)
		}
	}
	bad := strings.Replace(valid, `"c12":{"on":{"NEXT":"c13"`, `"c12":{"on":{"NEXT":"c99"`, 1)
	_, err = statechart.Compile([]byte(bad), nil)
	if err == nil || !strings.Contains(err.Error(), `states.c12.on.NEXT: "c99" is not a sibling of "c12"`) {
		t.Fatalf("err = %v, want c99 reported at states.c12.on.NEXT", err)
	}
}

// TestCompileDuplicateIDsKeepTheirPlace: ids are indexed once every node is
// read, and a duplicate's error still comes where the node's own keys are
// reported: after its key errors, before its children's duplicate keys.
func TestCompileDuplicateIDsKeepTheirPlace(t *testing.T) {
	doc := `{"id":"m","initial":"a","states":{
		"a":{"id":"x","states":{"":{},"b":{}},"initial":"b","bogus":1},
		"c":{"id":"x","states":{"d":{"id":"x"},"d":{}},"initial":"d","tags":5},
		"e":5,"f":{"id":"m"}}}`
	_, err := statechart.Compile([]byte(doc), nil)
	want := `7 errors and 1 warning:
	states.a.bogus: warning: unknown key "bogus" (did you mean "tags"?)
	states.a.states: a state key cannot be empty
	states.c.tags: must be a string or an array of strings, not a number
	states.c.id: duplicate state id "x" (also states.a)
	states.c.states.d: duplicate key "d"
	states.c.states.d.id: duplicate state id "x" (also states.a)
	states.e: a state node must be an object, not a number
	states.f.id: duplicate state id "m" (also the machine root)`
	if err == nil || err.Error() != want {
		t.Fatalf("err =\n%v\nwant\n%s", err, want)
	}
}
