package flat_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/statechart/flat"
)

// errs compiles config and returns its errors as "path: msg" strings.
func errs(t *testing.T, config string) []string {
	t.Helper()
	m, err := flat.Compile([]byte(config))
	require.Error(t, err, "config compiled")
	require.Nil(t, m)
	var list statechart.ErrorList
	require.True(t, errors.As(err, &list), "error is %T, not a statechart.ErrorList", err)
	out := make([]string, len(list))
	for i, e := range list {
		out[i] = e.Error()
	}
	return out
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name   string
		config string
		want   []string
	}{
		{"malformed", `{"initial": "a", "states": {"a": {}},}`,
			[]string{"malformed JSON: line 1, column 38: invalid character '}' looking for beginning of object key string"}},
		{"invalid UTF-8", "{\"id\": \"m\xe6\", \"initial\": \"a\", \"states\": {\"a\": {}}}",
			[]string{"malformed JSON: line 1, column 10: invalid UTF-8"}},
		{"not an object", `["a"]`,
			[]string{"a machine config must be a JSON object, not an array"}},
		{"no states", `{"initial": "a"}`,
			[]string{`a flat machine needs "states": an object of states`}},
		{"states not an object", `{"initial": "a", "states": ["a"]}`,
			[]string{"states: must be an object of states, not an array"}},
		{"empty states", `{"initial": "a", "states": {}}`,
			[]string{"states: a flat machine needs at least one state"}},
		{"missing initial", `{"states": {"idle": {}, "busy": {}}}`,
			[]string{`the machine has no "initial"; add "initial": "idle"`}},
		{"bad initial", `{"initial": "idel", "states": {"idle": {}, "busy": {}}}`,
			[]string{`initial: "idel" is not a state (did you mean "idle"?)`}},
		{"initial not a string", `{"initial": 1, "states": {"idle": {}}}`,
			[]string{"initial: must be the name of a state, not a number"}},
		{"initial object", `{"initial": {"target": "idle"}, "states": {"idle": {}}}`,
			[]string{"initial: must be the name of a state, not an object (initial actions need the full interpreter, statechart.Compile)"}},
		{"bad id", `{"id": "", "initial": "a", "states": {"a": {}}}`,
			[]string{"id: cannot be empty"}},
		{"unknown target", `{"id": "shop", "initial": "payment", "states": {"payment": {"on": {"PAY": "nope"}}, "paid": {}}}`,
			[]string{`states.payment.on.PAY: "nope" is not a state`}},
		{"target typo", `{"initial": "payment", "states": {"payment": {"on": {"PAY": "payed"}}, "paid": {"type": "final"}}}`,
			[]string{`states.payment.on.PAY: "payed" is not a state (did you mean "paid"?)`}},
		{"unknown id", `{"id": "shop", "initial": "a", "states": {"a": {"on": {"GO": "#shop.bb"}}, "b": {}}}`,
			[]string{`states.a.on.GO: "#shop.bb" is not a state id (did you mean "#shop.b"?)`}},
		{"non-string target", `{"initial": "a", "states": {"a": {"on": {"GO": 3, "STOP": null}}}}`,
			[]string{
				"states.a.on.GO: a transition must be the name of the target state, not a number",
				"states.a.on.STOP: a transition must be the name of the target state, not null",
			}},
		{"non-string target in object", `{"initial": "a", "states": {"a": {"on": {"GO": {"target": true}}}}}`,
			[]string{"states.a.on.GO.target: a target must be the name of a state, not a boolean"}},
		{"empty target", `{"initial": "a", "states": {"a": {"on": {"GO": ""}}}}`,
			[]string{"states.a.on.GO: a target cannot be empty; the flat form has no targetless transitions; use the full interpreter (statechart.Compile)"}},
		{"targetless object", `{"initial": "a", "states": {"a": {"on": {"GO": {"description": "x"}}}}}`,
			[]string{`states.a.on.GO: a transition needs a "target"; the flat form has no targetless transitions; use the full interpreter (statechart.Compile)`}},
		{"array of transitions", `{"initial": "a", "states": {"a": {"on": {"GO": ["a"]}}}}`,
			[]string{"states.a.on.GO: the flat form has no lists of candidate transitions; use the full interpreter (statechart.Compile)"}},
		{"multiple targets", `{"initial": "a", "states": {"a": {"on": {"GO": {"target": ["a"]}}}}}`,
			[]string{"states.a.on.GO.target: the flat form has no multiple targets; use the full interpreter (statechart.Compile)"}},
		{"guard and actions", `{"initial": "a", "states": {"a": {"on": {"GO": {"target": "a", "guard": "ok", "actions": "log", "reenter": true}}}}}`,
			[]string{
				"states.a.on.GO.guard: the flat form has no guards; use the full interpreter (statechart.Compile)",
				"states.a.on.GO.actions: the flat form has no actions; use the full interpreter (statechart.Compile)",
				"states.a.on.GO.reenter: the flat form has no reentering transitions; use the full interpreter (statechart.Compile)",
			}},
		{"unknown transition key", `{"initial": "a", "states": {"a": {"on": {"GO": {"target": "a", "gaurd": "ok"}}}}}`,
			[]string{`states.a.on.GO.gaurd: unknown key "gaurd" (did you mean "guard"?)`}},
		{"v4 keys", `{"initial": "a", "states": {"a": {"on": {"GO": {"target": "a", "cond": "ok", "internal": false}}}}}`,
			[]string{
				`states.a.on.GO.cond: "cond" was renamed to "guard" in XState v5, and the flat form has no guards; use the full interpreter (statechart.Compile)`,
				`states.a.on.GO.internal: "internal" was replaced by "reenter" in XState v5, and the flat form has no reentering transitions; use the full interpreter (statechart.Compile)`,
			}},
		{"nested states", `{"initial": "a", "states": {"a": {"initial": "x", "states": {"x": {}}}}}`,
			[]string{
				"states.a.initial: the flat form has no nested states; use the full interpreter (statechart.Compile)",
				"states.a.states: the flat form has no nested states; use the full interpreter (statechart.Compile)",
			}},
		{"state-level extras", `{"initial": "a", "states": {"a": {"entry": "x", "exit": "y", "always": "b", "after": {"10": "b"}, "tags": ["t"], "id": "A"}, "b": {}}}`,
			[]string{
				"states.a.entry: the flat form has no entry actions; use the full interpreter (statechart.Compile)",
				"states.a.exit: the flat form has no exit actions; use the full interpreter (statechart.Compile)",
				"states.a.always: the flat form has no eventless transitions; use the full interpreter (statechart.Compile)",
				"states.a.after: the flat form has no delayed transitions; use the full interpreter (statechart.Compile)",
				"states.a.tags: the flat form has no tags; use the full interpreter (statechart.Compile)",
				"states.a.id: the flat form has no custom state ids; use the full interpreter (statechart.Compile)",
			}},
		{"root extras", `{"initial": "a", "context": {"n": 1}, "on": {"X": ".a"}, "entry": "log", "type": "parallel", "states": {"a": {}}}`,
			[]string{
				"context: the flat form has no context; use the full interpreter (statechart.Compile)",
				"on: the flat form has no transitions on the machine root; use the full interpreter (statechart.Compile)",
				"entry: the flat form has no entry actions; use the full interpreter (statechart.Compile)",
				`type: the flat form has no "parallel" machine root (it is compound); use the full interpreter (statechart.Compile)`,
			}},
		{"unknown keys", `{"intial": "a", "initial": "a", "states": {"a": {"onn": {}, "typ": "final"}}}`,
			[]string{
				`intial: unknown key "intial" (did you mean "initial"?)`,
				`states.a.onn: unknown key "onn" (did you mean "on"?)`,
				`states.a.typ: unknown key "typ" (did you mean "type"?)`,
			}},
		{"invoke", `{"initial": "a", "states": {"a": {"invoke": {"src": "x"}}}}`,
			[]string{"states.a.invoke: invoke is not supported by the flat engine: statechart.Compile runs actors"}},
		{"bad type", `{"initial": "a", "states": {"a": {"type": "finale"}, "b": {"type": 1}, "c": {"type": "parallel"}}}`,
			[]string{
				`states.a.type: "finale" is not a state type (atomic, compound, parallel, final, history) (did you mean "final"?)`,
				`states.b.type: must be "atomic" or "final", not a number`,
				"states.c.type: the flat form has no parallel states; use the full interpreter (statechart.Compile)",
			}},
		{"duplicate keys", `{"initial": "a", "initial": "b", "states": {"a": {"on": {"GO": "b", "GO": "a"}}, "b": {}, "a": {}}}`,
			[]string{
				`initial: duplicate key "initial"`,
				`states.a: duplicate key "a"`,
				`states.a.on.GO: duplicate key "GO"`,
			}},
		{"state not an object", `{"initial": "a", "states": {"a": "b", "b": {}}}`,
			[]string{"states.a: a state must be an object, not a string"}},
		{"empty state key", `{"initial": "a", "states": {"": {}, "a": {}}}`,
			[]string{"states: a state key cannot be empty"}},
		{"on not an object", `{"initial": "a", "states": {"a": {"on": "b"}}}`,
			[]string{"states.a.on: must be an object mapping events to target states, not a string"}},
		{"wildcards and reserved events", `{"initial": "a", "states": {"a": {"on": {"*": "a", "ev.*": "a", "a*b": "a", "xstate.init": "a", "": "a"}}}}`,
			[]string{
				`states.a.on.*: the flat form has no wildcard events ("*", "prefix.*"); use the full interpreter (statechart.Compile)`,
				`states.a.on["ev.*"]: the flat form has no wildcard events ("*", "prefix.*"); use the full interpreter (statechart.Compile)`,
				`states.a.on.a*b: "*" can only be the whole event descriptor or its last token ("prefix.*")`,
				`states.a.on["xstate.init"]: the flat form has no handlers of XState's own events ("xstate.*"); use the full interpreter (statechart.Compile)`,
				"states.a.on: an event name cannot be empty",
			}},
		{"relative and root targets", `{"id": "m", "initial": "a", "states": {"a": {"on": {"IN": ".x", "ROOT": "#m", "DEEP": "a.x"}}}}`,
			[]string{
				`states.a.on.IN: ".x" is relative to "a"; the flat form has no child states; use the full interpreter (statechart.Compile)`,
				`states.a.on.ROOT: "#m" is the machine root; the flat form has no transitions to the root; use the full interpreter (statechart.Compile)`,
				`states.a.on.DEEP: "a.x" is not a state (did you mean "a"?)`,
			}},
		{"path quoting", `{"initial": "a b", "states": {"a b": {"on": {"GO.NOW": "c"}}}}`,
			[]string{`states["a b"].on["GO.NOW"]: "c" is not a state`}},
		{"description types", `{"initial": "a", "description": 1, "states": {"a": {"description": []}}}`,
			[]string{"description: must be a string, not a number", "states.a.description: must be a string, not an array"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, errs(t, tt.config))
			assert.False(t, flat.IsFlat([]byte(tt.config)))
		})
	}
}

func TestCompileLimits(t *testing.T) {
	big := make([]byte, flat.MaxBytes+1)
	assert.Equal(t, []string{"document is 8388609 bytes, more than the limit of 8388608"}, errs(t, string(big)))

	// Hostile nesting is refused before anything recurses over it.
	deep := strings.Repeat("[", 1<<20) + strings.Repeat("]", 1<<20)
	assert.Equal(t, []string{"JSON nesting is deeper than the limit of 256"}, errs(t, deep))
	deepMeta := `{"initial": "a", "states": {"a": {"meta": ` + strings.Repeat(`{"x":`, 300) + "1" + strings.Repeat("}", 300) + `}}}`
	assert.Equal(t, []string{"JSON nesting is deeper than the limit of 256"}, errs(t, deepMeta))

	var b strings.Builder
	b.WriteString(`{"initial": "s0", "states": {`)
	for i := 0; i <= flat.MaxStates; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"s` + itoa(i) + `":{}`)
	}
	b.WriteString("}}")
	assert.Equal(t, []string{"states: more than 100000 states"}, errs(t, b.String()))
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var d []byte
	for ; i > 0; i /= 10 {
		d = append([]byte{byte('0' + i%10)}, d...)
	}
	return string(d)
}

func TestCompileAccepts(t *testing.T) {
	for name, config := range map[string]string{
		"minimal":             `{"initial": "a", "states": {"a": {}}}`,
		"object target":       `{"initial": "a", "states": {"a": {"on": {"GO": {"target": "b", "description": "go"}}}, "b": {}}}`,
		"default id target":   `{"initial": "a", "states": {"a": {"on": {"GO": "#(machine).b"}}, "b": {}}}`,
		"machine id target":   `{"id": "m", "initial": "a", "states": {"a": {"on": {"GO": "#m.b"}}, "b": {}}}`,
		"escaped id target":   `{"id": "m", "initial": "a", "states": {"a": {"on": {"GO": "#m\\.b"}}, "b": {}}}`,
		"dotted key":          `{"initial": "a.b", "states": {"a.b": {"on": {"GO": "a\\.b"}}}}`,
		"metadata":            `{"version": "1", "context": {}, "type": "compound", "description": "d", "meta": {"x": [1]}, "initial": "a", "states": {"a": {"type": "atomic", "meta": {"y": 2}, "description": "a"}}}`,
		"final with handlers": `{"initial": "a", "states": {"a": {"type": "final", "on": {"GO": "a"}}}}`,
		"star inside name":    `{"initial": "a", "states": {"a": {"on": {"GO*": "a"}}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := flat.Compile([]byte(config))
			require.NoError(t, err)
			assert.True(t, flat.IsFlat([]byte(config)))
			// Whatever the flat form accepts, the full interpreter accepts too.
			_, err = statechart.Compile([]byte(config), nil)
			require.NoError(t, err)
		})
	}
}

func TestNodes(t *testing.T) {
	m, err := flat.Compile([]byte(`{"id": "m", "initial": "idle", "description": "root",
		"states": {"idle": {"on": {"GO": "busy", "2": "10", "1": "idle"}, "meta": {"k": 1}}, "busy": {"on": {"DONE": "#m.end"}}, "10": {}, "end": {"type": "final"}}}`))
	require.NoError(t, err)
	want := []statechart.Node{
		{ID: "m", Type: "compound", Initial: "m.idle", Description: "root"},
		{ID: "m.10", Key: "10", Parent: "m", Type: "atomic"},
		{ID: "m.idle", Key: "idle", Parent: "m", Type: "atomic", Meta: map[string]any{"k": 1.0}, Transitions: []statechart.TransitionInfo{
			{Event: "1", Targets: []string{"m.idle"}},
			{Event: "2", Targets: []string{"m.10"}},
			{Event: "GO", Targets: []string{"m.busy"}},
		}},
		{ID: "m.busy", Key: "busy", Parent: "m", Type: "atomic", Transitions: []statechart.TransitionInfo{
			{Event: "DONE", Targets: []string{"m.end"}},
		}},
		{ID: "m.end", Key: "end", Parent: "m", Type: "final"},
	}
	assert.Equal(t, want, m.Nodes())
	assert.Equal(t, []string{"1", "2", "GO", "DONE"}, m.Events())
	assert.Equal(t, "m", m.ID())
}
