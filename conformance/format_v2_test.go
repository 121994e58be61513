// This file tests reading case format v2: every step kind and key parses,
// bad v2 steps are errors that say where, and the flat runner refuses v2
// cases with an *UnsupportedError instead of replaying them wrongly.

package conformance_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/conformance"
)

const v2Case = `{
	"name": "v2/all-keys",
	"clock": "eventloop",
	"input": {"user": "ada"},
	"machine": {"initial": "a", "states": {"a": {"invoke": {"src": "p", "id": "p1"}}}},
	"actors": {"p": {"promise": {"resolve": 1, "after": 10}}},
	"steps": [
		{"event": {"type": "GO"}},
		{"advance": 10},
		{"persist": "mid"},
		{"restore": "mid"},
		{"query": {"can": {"type": "PAY", "n": 1}}},
		{"query": {"matches": {"a": "b"}}},
		{"query": {"hasTag": "busy"}},
		{"query": {"getMeta": {}}}
	],
	"expected": []
}`

func TestParseCaseV2(t *testing.T) {
	c, err := conformance.ParseCase([]byte(v2Case), "all-keys.json")
	require.NoError(t, err)
	require.NotNil(t, c.Clock)
	assert.Equal(t, conformance.ClockEventLoop, *c.Clock)
	assert.JSONEq(t, `{"user": "ada"}`, string(c.Input))
	assert.JSONEq(t, `{"p": {"promise": {"resolve": 1, "after": 10}}}`, string(c.Actors))
	assert.Equal(t, []string{"actors", "clock", "input", "persist", "query", "restore"}, c.V2Features())

	var got []string
	for _, s := range c.Steps {
		got = append(got, s.String())
	}
	assert.Equal(t, []string{
		`event {"type":"GO"}`,
		"advance 10ms",
		`persist "mid"`,
		`restore "mid"`,
		`query {"can":{"n":1,"type":"PAY"}}`,
		`query {"matches":{"a":"b"}}`,
		`query {"hasTag":"busy"}`,
		`query {"getMeta":{}}`,
	}, got)
	require.NotNil(t, c.Steps[4].Query.Can)
	assert.Equal(t, "PAY", c.Steps[4].Query.Can.Type)
}

func TestParseCaseV1HasNoV2Features(t *testing.T) {
	c, err := conformance.ParseCase([]byte(`{"machine": {"initial": "a", "states": {"a": {}}},
		"steps": [{"event": {"type": "E"}}, {"advance": 5}], "expected": []}`), "v1.json")
	require.NoError(t, err)
	assert.Empty(t, c.V2Features())
	assert.Nil(t, c.Clock)
}

func TestParseCaseV2Errors(t *testing.T) {
	for _, tc := range []struct {
		name, steps, extra, want string
	}{
		{"two kinds in a step", `[{"event": {"type": "E"}, "advance": 1}]`, ``, "steps[0]: a step is exactly one of"},
		{"empty step", `[{}]`, ``, "steps[0]: a step is exactly one of"},
		{"restore before persist", `[{"restore": "x"}, {"persist": "x"}]`, ``, `steps[0].restore: no earlier persist step named "x"`},
		{"unnamed persist", `[{"persist": ""}]`, ``, "steps[0].persist: needs a snapshot name"},
		{"two queries", `[{"query": {"can": {"type": "E"}, "hasTag": "t"}}]`, ``, "a query has exactly one of the keys"},
		{"unknown query", `[{"query": {"hasState": "a"}}]`, ``, `unknown query "hasState"`},
		{"matches a number", `[{"query": {"matches": 3}}]`, ``, "matches: must be a state value"},
		{"hasTag not a string", `[{"query": {"hasTag": 3}}]`, ``, "hasTag: must be a tag string"},
		{"unknown clock", `[]`, `"clock": "wall",`, `clock: must be "simulated" or "eventloop", not "wall"`},
		{"actors not an object", `[]`, `"actors": [],`, "actors: must be an object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := `{` + tc.extra + `"machine": {"initial": "a", "states": {"a": {}}}, "steps": ` + tc.steps + `}`
			_, err := conformance.ParseCase([]byte(data), "bad.json")
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), "bad.json: "), err.Error())
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestQueryRoundTrip(t *testing.T) {
	for _, q := range []string{`{"can":{"type":"E"}}`, `{"matches":"a.b"}`, `{"hasTag":"t"}`, `{"getMeta":{}}`} {
		var got conformance.Query
		require.NoError(t, json.Unmarshal([]byte(q), &got))
		b, err := json.Marshal(got)
		require.NoError(t, err)
		assert.JSONEq(t, q, string(b))
	}
}

func TestFlatRunnerRefusesV2Cases(t *testing.T) {
	c, err := conformance.ParseCase([]byte(v2Case), "all-keys.json")
	require.NoError(t, err)
	c.Expected = make([]json.RawMessage, len(c.Steps)+1)
	for i := range c.Expected {
		c.Expected[i] = json.RawMessage(`{}`)
	}
	_, _, err = conformance.RunFlat(context.Background(), c)
	var unsupported *conformance.UnsupportedError
	require.True(t, errors.As(err, &unsupported), "got %v", err)
	assert.Equal(t, c.V2Features(), unsupported.Features)
	m := conformance.Check(context.Background(), c, conformance.RunFlat)
	require.NotNil(t, m)
	assert.Equal(t, "v2/all-keys: uses case format v2 (actors, clock, input, persist, query, restore), which this runner does not run yet", m.String())
}
