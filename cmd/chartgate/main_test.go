package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	checkoutFile = "../../examples/machines/checkout.json"
	trafficFile  = "../../examples/machines/traffic-light.json"
)

// chartgate runs the command in-process, with nothing on stdin.
func chartgate(args ...string) (code int, stdout, stderr string) {
	return chartgateIn("", args...)
}

// chartgateIn runs the command in-process with stdin on its standard input.
func chartgateIn(stdin string, args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// writeFile writes content to a new file in a temporary directory.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	return path
}

func lines(s string) []string {
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

func TestUsage(t *testing.T) {
	// Help asked for: on stdout, exit 0.
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}, {"-help"}} {
		code, out, errOut := chartgate(args...)
		assert.Equal(t, exitOK, code, args)
		assert.Empty(t, errOut, args)
		assert.Equal(t, usageText, out, args)
	}
	for _, args := range [][]string{
		{"help", "run"},
		{"--help", "validate"},
		{"run", checkoutFile, "-h"},
		{"diagram", "--help"},
		{"validate", "a.json", "-help", "b.json"},
		{"bench", "-h", checkoutFile},
	} {
		cmd := args[0]
		if cmd == "help" || cmd == "--help" {
			cmd = args[1]
		}
		code, out, errOut := chartgate(args...)
		assert.Equal(t, exitOK, code, args)
		assert.Empty(t, errOut, args)
		assert.Equal(t, commandUsage[cmd], out, args)
	}

	// Usage shown because the command line is wrong: on stderr, exit 2.
	code, out, errOut := chartgate()
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, out)
	assert.Equal(t, usageText, errOut)
	for _, args := range [][]string{{"frobnicate"}, {"help", "frobnicate"}} {
		code, out, errOut := chartgate(args...)
		assert.Equal(t, exitUsage, code, args)
		assert.Empty(t, out, args)
		assert.Equal(t, "chartgate: unknown command \"frobnicate\"\n\n"+usageText, errOut, args)
	}

	for _, args := range [][]string{
		{"validate"},
		{"validate", "-", checkoutFile, "-"},
		{"run"},
		{"run", checkoutFile, trafficFile},
		{"run", checkoutFile, "--clock", "sundial"},
		{"run", checkoutFile, "--events", "A,"},
		{"run", checkoutFile, "--nope"},
		{"diagram", checkoutFile, "--format", "png"},
		{"bench", checkoutFile},
		{"bench", checkoutFile, "--events", "A", "-n", "0"},
	} {
		code, out, errOut := chartgate(args...)
		assert.Equal(t, exitUsage, code, args)
		assert.Empty(t, out, args)
		assert.Contains(t, errOut, "usage: chartgate "+args[0], args)
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"-version"}, {"version"}} {
		code, out, errOut := chartgate(args...)
		assert.Equal(t, exitOK, code, args)
		assert.Empty(t, errOut, args)
		// A test binary's main module has no version: "(devel)", possibly
		// with the VCS revision.
		assert.Regexp(t, `^chartgate \(devel\)( \([0-9a-f]+(, modified)?\))?\n$`, out, args)
	}

	mod := func(v string, settings ...debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: "github.com/chartgate/chartgate", Version: v}, Settings: settings}
	}
	rev := debug.BuildSetting{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"}
	dirty := debug.BuildSetting{Key: "vcs.modified", Value: "true"}
	for _, c := range []struct {
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{nil, false, "(devel)"},
		{mod(""), true, "(devel)"},
		{mod("v1.2.0"), true, "v1.2.0"},
		{mod("(devel)", rev, dirty), true, "(devel) (0123456789abcdef0123456789abcdef01234567, modified)"},
		// go build's pseudo-version already names the revision.
		{mod("v0.0.0-20260101120000-0123456789ab+dirty", rev, dirty), true, "v0.0.0-20260101120000-0123456789ab+dirty"},
	} {
		assert.Equal(t, c.want, version(c.info, c.ok))
	}
}

func TestStdinAndBOM(t *testing.T) {
	traffic, err := os.ReadFile(trafficFile)
	require.NoError(t, err)
	bom := "\xEF\xBB\xBF"

	code, out, errOut := chartgateIn(string(traffic), "validate", "-")
	assert.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "<stdin>: ok (13 states)\n", out)

	// A file and stdin; with a byte order mark, which is dropped.
	code, out, errOut = chartgateIn(bom+string(traffic), "validate", checkoutFile, "-")
	assert.Equal(t, exitOK, code, errOut)
	assert.Equal(t, checkoutFile+": ok (4 states)\n<stdin>: ok (13 states)\n", out)

	file := writeFile(t, "bom.json", bom+string(traffic))
	code, out, errOut = chartgate("validate", file)
	assert.Equal(t, exitOK, code, errOut)
	assert.Equal(t, file+": ok (13 states)\n", out)

	// A case file with a BOM: its declarations are read too.
	caseFile := bom + `{"machine": {"id": "c", "initial": "a", "context": {"n": 0},
  "states": {"a": {"on": {"GO": {"target": "b", "guard": "small", "actions": "inc"}}}, "b": {}}},
  "guards": {"small": {"field": "context.n", "op": "lt", "value": 1}},
  "actions": {"inc": {"assign": {"n": {"$inc": 1}}}}}`
	code, out, errOut = chartgateIn(caseFile, "run", "-", "--events", "GO")
	assert.Equal(t, exitOK, code, errOut)
	assert.Equal(t, `{"step":0,"event":null,"value":"a","status":"active","context":{"n":0}}
{"step":1,"event":{"type":"GO"},"value":"b","status":"active","context":{"n":1}}
`, out)

	code, out, errOut = chartgateIn(string(traffic), "diagram", "-", "--format", "dot")
	assert.Equal(t, exitOK, code, errOut)
	assert.True(t, strings.HasPrefix(out, "digraph "), out)

	code, out, errOut = chartgateIn(string(traffic), "bench", "-", "--events", "PUSH", "-n", "10")
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "10 events in ")

	// Errors name stdin as <stdin>; only a BOM at the very start is dropped.
	code, out, _ = chartgateIn(`{"id": "x", "initial": "a", "states": {"a": {"type": "weird"}}}`, "validate", "-")
	assert.Equal(t, exitFail, code)
	assert.Equal(t, `<stdin>: states.a.type: "weird" is not a state type (atomic, compound, parallel, final, history)`+"\n", out)
	code, out, errOut = chartgateIn(" "+bom+string(traffic), "run", "-")
	assert.Equal(t, exitFail, code)
	assert.Empty(t, out)
	assert.True(t, strings.HasPrefix(errOut, "<stdin>: malformed JSON: line 1, column 2: "), errOut)
	code, out, errOut = chartgateIn("", "diagram", "-")
	assert.Equal(t, exitFail, code)
	assert.Empty(t, out)
	assert.True(t, strings.HasPrefix(errOut, "<stdin>: "), errOut)
}

func TestParseArgsFlagsAnywhere(t *testing.T) {
	fs := newFlagSet("t")
	a := fs.String("a", "", "")
	b := fs.Bool("b", false, "")
	pos, err := parseArgs(fs, []string{"x", "-a", "1", "y", "--b", "--", "-z", "w"})
	require.NoError(t, err)
	assert.Equal(t, []string{"x", "y", "-z", "w"}, pos)
	assert.Equal(t, "1", *a)
	assert.True(t, *b)

	_, err = parseArgs(newFlagSet("t"), []string{"x", "-h"})
	assert.ErrorIs(t, err, flag.ErrHelp)
}

func TestValidateExamples(t *testing.T) {
	code, out, errOut := chartgate("validate", checkoutFile, trafficFile)
	assert.Equal(t, exitOK, code)
	assert.Empty(t, errOut)
	assert.Equal(t, checkoutFile+": ok (4 states)\n"+trafficFile+": ok (13 states)\n", out)

	code, out, _ = chartgate("validate", "--strict", checkoutFile)
	assert.Equal(t, exitOK, code)
	assert.Equal(t, checkoutFile+": ok (4 states)\n", out)
}

func TestValidateReportsEveryError(t *testing.T) {
	file := writeFile(t, "bad.json", `{
  "id": "bad",
  "initial": "nope",
  "states": {
    "idle": {"on": {"GO": {"target": "#missing", "guard": "isOk"}}},
    "x": {"typo": 1, "type": "weird"}
  }
}`)
	code, out, errOut := chartgate("validate", file)
	assert.Equal(t, exitFail, code)
	assert.Empty(t, errOut)
	assert.Equal(t, []string{
		file + `: initial: "nope" is not a child state of "bad" (did you mean "idle"?)`,
		file + `: states.idle.on.GO.guard: warning: guard "isOk" is not implemented: evaluating it is an error, as in XState`,
		file + `: states.idle.on.GO.target: "#missing" is not a state id`,
		file + `: states.x.typo: warning: unknown key "typo" (did you mean "type"?)`,
		file + `: states.x.type: "weird" is not a state type (atomic, compound, parallel, final, history)`,
	}, lines(out))
}

// TestValidateWarnings: what XState accepts but is most likely a mistake
// is a warning; validate exits 0 with warnings only, and --strict makes
// them errors. A guard without implementation is a warning for validate,
// an error for run and bench unless --allow-missing-guards is given.
func TestValidateWarnings(t *testing.T) {
	file := writeFile(t, "v4.json", `{
  "id": "v4",
  "predictableActionArguments": true,
  "initial": "idle",
  "states": {
    "idle": {"entyr": "greet", "on": {"GO": {"target": "busy", "cond": "isReady"}}},
    "busy": {"after": {"-10": "idle"}, "on": {"CHECK": {"target": "idle", "guard": "isDone"}}}
  }
}`)
	warnings := []string{
		file + `: predictableActionArguments: warning: "predictableActionArguments" is ignored: an XState v4 option; v5 always works that way`,
		file + `: states.idle.entyr: warning: unknown key "entyr" (did you mean "entry"?)`,
		file + `: states.idle.on.GO.cond: warning: "cond" is ignored: it is XState v4's name of "guard", so the transition is unguarded (XState's development build refuses it)`,
		file + `: states.busy.on.CHECK.guard: warning: guard "isDone" is not implemented: evaluating it is an error, as in XState`,
		file + `: states.busy.after.-10: warning: a negative delay: XState schedules its event in the past, so it fires at once, before the zero delays scheduled with it`,
	}
	code, out, errOut := chartgate("validate", file)
	assert.Equal(t, exitOK, code)
	assert.Empty(t, errOut)
	assert.Equal(t, append(warnings, file+": ok (2 states, 5 warnings)"), lines(out))

	code, out, _ = chartgate("validate", "--strict", file)
	assert.Equal(t, exitFail, code)
	var strict []string
	for _, w := range warnings {
		w = strings.Replace(w, "warning: ", "", 1)
		w = strings.Replace(w, ": evaluating it is an error, as in XState", "", 1)
		strict = append(strict, w)
	}
	assert.Equal(t, strict, lines(out))

	// run refuses the missing guard, and says how to run it anyway.
	code, out, errOut = chartgate("run", file, "--events", "GO")
	assert.Equal(t, exitFail, code)
	assert.Empty(t, out)
	assert.Contains(t, errOut, file+`: states.busy.on.CHECK.guard: guard "isDone" is not implemented`+"\n")
	assert.Contains(t, errOut, file+`: states.idle.entyr: warning: unknown key "entyr" (did you mean "entry"?)`+"\n", "warnings are printed with the errors")
	assert.Contains(t, errOut, "chartgate run: --allow-missing-guards runs a machine whose guards have no implementation")

	// With the flag it runs: the warnings on stderr, the trace on stdout,
	// cond ignored as XState ignores it, and the missing guard fails when
	// it is evaluated.
	code, out, errOut = chartgate("run", file, "--allow-missing-guards", "--events", "GO,CHECK")
	assert.Equal(t, exitFail, code)
	assert.Equal(t, strings.Join(warnings, "\n")+"\n"+`chartgate run: statechart: in state "v4.busy" on event "CHECK": guard "isDone" in transition for event "CHECK": guard is not implemented: "isDone"`+"\n", errOut)
	got := lines(out)
	require.Len(t, got, 3)
	assert.Contains(t, got[1], `"value":"busy","status":"active"`)
	assert.Contains(t, got[2], `"status":"error"`)

	code, out, errOut = chartgate("run", file, "--allow-missing-guards", "--events", "GO,+0ms")
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, lines(out)[2], `"value":"idle"`, "the negative delay fires at the next tick")

	code, _, errOut = chartgate("bench", file, "--events", "GO", "-n", "1")
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, "chartgate bench: --allow-missing-guards")
	code, out, errOut = chartgate("bench", file, "--allow-missing-guards", "--events", "GO,+0ms", "-n", "10")
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "events/s")
	assert.Contains(t, errOut, file+`: states.idle.entyr: warning: unknown key "entyr"`)

	// diagram allows missing guards, and prints the warnings on stderr.
	code, out, errOut = chartgate("diagram", file)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "stateDiagram")
	assert.Equal(t, strings.Join(warnings, "\n")+"\n", errOut)
}

func TestValidateCaseFile(t *testing.T) {
	file := writeFile(t, "case.json", `{
  "name": "broken",
  "machine": {
    "id": "c",
    "initial": "a",
    "states": {
      "a": {"on": {"GO": {"target": "b", "guard": "g1", "actions": ["act", "nothere"]}}},
      "b": {"after": {"SLOW": "a"}, "on": {"X": "zzz"}}
    }
  },
  "guards": {"g1": {"field": "context.x", "op": "bogus", "value": 1}},
  "actions": {"act": {"assign": {"x": {"$oops": 1}}}}
}`)
	want := []string{
		file + `: guards.g1.op: unknown op "bogus"`,
		file + `: actions.act.assign.x.$oops: unknown operator "$oops" (use $ref, $inc or $push)`,
		file + `: machine.states.b.on.X: "zzz" is not a sibling of "b": state "c" has no child "zzz"`,
	}
	code, out, _ := chartgate("validate", file)
	assert.Equal(t, exitFail, code)
	// g1 and act are reported once, for their declarations, not again as
	// missing implementations.
	assert.Equal(t, want, lines(out))

	code, out, _ = chartgate("validate", file, "--strict")
	assert.Equal(t, exitFail, code)
	got := lines(out)
	assert.Subset(t, got, want)
	assert.Contains(t, got, file+`: machine.states.a.on.GO.actions[1]: action "nothere" is not implemented`)
	assert.Len(t, got, 5)
}

func TestValidateMalformedAndMissing(t *testing.T) {
	file := writeFile(t, "malformed.json", "{\"id\": \"x\",\n  \"states\": {,}\n}")
	code, out, _ := chartgate("validate", file)
	assert.Equal(t, exitFail, code)
	assert.Equal(t, file+": malformed JSON: line 2, column 14: invalid character ',' looking for beginning of object key string\n", out)

	missing := filepath.Join(t.TempDir(), "nope.json")
	code, out, errOut := chartgate("validate", missing, checkoutFile)
	assert.Equal(t, exitFail, code)
	assert.Equal(t, checkoutFile+": ok (4 states)\n", out, "the other files are still checked")
	assert.True(t, strings.HasPrefix(errOut, "chartgate: "+missing+": cannot read: "), errOut)

	code, out, errOut = chartgate("run", file, "--events", "A")
	assert.Equal(t, exitFail, code)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "malformed JSON")
}

func TestRunCheckoutDemo(t *testing.T) {
	want := `{"step":0,"event":null,"value":"empty","status":"active","context":{"count":0,"items":[]}}
{"step":1,"event":{"type":"ADD_ITEM"},"value":"has_items","status":"active","context":{"count":1,"items":[null]}}
{"step":2,"event":{"type":"CHECKOUT"},"value":"payment","status":"active","context":{"count":1,"items":[null]},"tags":["awaiting_payment"]}
{"step":3,"event":{"type":"PAY"},"value":"confirmed","status":"done","context":{"count":1,"items":[null]},"output":{"confirmed":true}}
`
	for _, args := range [][]string{
		{"run", checkoutFile, "--events", "ADD_ITEM,CHECKOUT,PAY"},
		{"run", "--events", "ADD_ITEM,CHECKOUT,PAY", checkoutFile},
		{"run", "--events=ADD_ITEM", checkoutFile, "--events", "CHECKOUT", "--clock", "simulated", "--events", "PAY"},
	} {
		code, out, errOut := chartgate(args...)
		assert.Equal(t, exitOK, code, args)
		assert.Empty(t, errOut, args)
		assert.Equal(t, want, out, args)
	}
}

func TestRunCheckoutWithData(t *testing.T) {
	code, out, _ := chartgate("run", checkoutFile, "--events",
		`{"type":"ADD_ITEM","sku":"a,1"}, {"type":"ADD_ITEM","sku":"<b2>","qty":2},REMOVE_ITEM,CHECKOUT,ADD_ITEM,CHECKOUT,{"type":"PAY","method":"card"}`)
	require.Equal(t, exitOK, code)
	got := lines(out)
	require.Len(t, got, 8)
	assert.Equal(t, `{"step":1,"event":{"type":"ADD_ITEM","sku":"a,1"},"value":"has_items","status":"active","context":{"count":1,"items":["a,1"]}}`, got[1])
	assert.Equal(t, `{"step":2,"event":{"type":"ADD_ITEM","qty":2,"sku":"<b2>"},"value":"has_items","status":"active","context":{"count":2,"items":["a,1","<b2>"]}}`, got[2])
	assert.Equal(t, `{"step":3,"event":{"type":"REMOVE_ITEM"},"value":"empty","status":"active","context":{"count":0,"items":[]}}`, got[3])
	assert.Equal(t, `{"step":4,"event":{"type":"CHECKOUT"},"value":"empty","status":"active","context":{"count":0,"items":[]}}`, got[4], "CHECKOUT with an empty cart is not handled")
	assert.Equal(t, `{"step":7,"event":{"type":"PAY","method":"card"},"value":"confirmed","status":"done","context":{"count":1,"items":[null],"method":"card"},"output":{"confirmed":true}}`, got[7])
}

func TestRunAdvancesTheSimulatedClock(t *testing.T) {
	file := writeFile(t, "timer.json", `{
  "id": "timer",
  "initial": "waiting",
  "states": {
    "waiting": {"after": {"100": "rung"}, "on": {"SNOOZE": {"target": "waiting", "reenter": true}}},
    "rung": {"type": "final"}
  }
}`)
	code, out, errOut := chartgate("run", file, "--events", "+60ms,SNOOZE,+60ms,+40ms")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, `{"step":0,"event":null,"value":"waiting","status":"active","context":{}}
{"step":1,"event":null,"advance":60,"value":"waiting","status":"active","context":{}}
{"step":2,"event":{"type":"SNOOZE"},"value":"waiting","status":"active","context":{}}
{"step":3,"event":null,"advance":60,"value":"waiting","status":"active","context":{}}
{"step":4,"event":null,"advance":40,"value":"rung","status":"done","context":{}}
`, out)

	code, out, _ = chartgate("run", file, "--events", "+100ms")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, `{"step":1,"event":null,"advance":100,"value":"rung","status":"done","context":{}}`)
}

func TestRunRealClock(t *testing.T) {
	file := writeFile(t, "timer.json", `{"id": "t", "initial": "a", "states": {"a": {"after": {"20": "b"}}, "b": {}}}`)
	code, out, errOut := chartgate("run", file, "--clock", "real", "--events", "+60ms")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, `{"step":0,"event":null,"value":"a","status":"active","context":{}}
{"step":1,"event":null,"advance":60,"value":"b","status":"active","context":{}}
`, out)
}

func TestRunTrafficLight(t *testing.T) {
	code, out, errOut := chartgate("run", trafficFile, "--events", "PUSH,+3s,+1s,MAINTENANCE,+500ms,RESUME,+4000ms")
	require.Equal(t, exitOK, code, errOut)
	var values []string
	for _, l := range lines(out) {
		var v struct {
			Value json.RawMessage `json:"value"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &v))
		values = append(values, string(v.Value))
	}
	assert.Equal(t, []string{
		`{"operating":{"cars":"green","walkers":"dont_walk"}}`,
		`{"operating":{"cars":"green","walkers":"waiting"}}`,
		`{"operating":{"cars":"yellow","walkers":"waiting"}}`,
		`{"operating":{"cars":"red","walkers":"walk"}}`,
		`{"maintenance":"on"}`,
		`{"maintenance":"off"}`,
		`{"operating":{"cars":"red","walkers":"walk"}}`,
		`{"operating":{"cars":"green","walkers":"dont_walk"}}`,
	}, values)
}

func TestRunReportsActorErrors(t *testing.T) {
	file := writeFile(t, "loop.json", `{"id": "loop", "initial": "idle", "states": {
  "idle": {"on": {"GO": "a"}}, "a": {"always": "b"}, "b": {"always": "a"}}}`)
	code, out, errOut := chartgate("run", file, "--events", "GO,GO")
	assert.Equal(t, exitFail, code)
	got := lines(out)
	require.Len(t, got, 2, "no line after the failing step")
	var last traceLine
	require.NoError(t, json.Unmarshal([]byte(got[1]), &last))
	// The loop runs out of the step budget, which leaves the state as it was.
	assert.Equal(t, "active", string(last.Status))
	assert.Equal(t, "idle", last.Value)
	assert.Contains(t, last.Error, "more than 100000 steps")
	assert.Contains(t, errOut, "chartgate run: statechart: on event \"GO\": more than 100000 steps in one call (Options.MaxSteps): the machine loops")
}

func TestSplitEvents(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{`A`, []string{`A`}},
		{`A,B,C`, []string{`A`, `B`, `C`}},
		{`A,{"type":"B","s":"x,y"},C`, []string{`A`, `{"type":"B","s":"x,y"}`, `C`}},
		{` A , {"type":"B", "o":{"a":[1,2,{"b":","}]}} ,C `, []string{`A`, `{"type":"B", "o":{"a":[1,2,{"b":","}]}}`, `C`}},
		{`{"type":"Q","s":"a \"quoted\", } text"},+250ms`, []string{`{"type":"Q","s":"a \"quoted\", } text"}`, `+250ms`}},
		{`{"type":"E","s":"\\"},X`, []string{`{"type":"E","s":"\\"}`, `X`}},
		{`A,,B`, []string{`A`, ``, `B`}},
	} {
		got, err := splitEvents(tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
	for _, bad := range []string{`A,{"type":"B"`, `A}`, `{"type":"B","s":"x}`, `[1,2]]`} {
		_, err := splitEvents(bad)
		assert.Error(t, err, bad)
	}
}

func TestParseSteps(t *testing.T) {
	steps, err := parseSteps(`A, {"type":"B","n":1,"s":"x,y"}, +250ms, +2s`)
	require.NoError(t, err)
	require.Len(t, steps, 4)
	assert.Equal(t, "A", steps[0].event.Type)
	assert.Nil(t, steps[0].event.Data)
	assert.Equal(t, "B", steps[1].event.Type)
	assert.Equal(t, map[string]any{"n": 1.0, "s": "x,y"}, steps[1].event.Data)
	assert.Nil(t, steps[2].event)
	assert.Equal(t, "250ms", steps[2].advance.String())
	assert.Equal(t, "2s", steps[3].advance.String())

	steps, err = parseSteps("  ")
	require.NoError(t, err)
	assert.Empty(t, steps)

	for _, bad := range []string{`A,`, `+`, `+soon`, `+-1s`, `{"n":1}`, `{"type":"A"} x`, `{"type":"A"`} {
		_, err := parseSteps(bad)
		assert.Error(t, err, bad)
	}
}

func TestBench(t *testing.T) {
	code, out, errOut := chartgate("bench", checkoutFile, "--events", "ADD_ITEM,REMOVE_ITEM", "-n", "1000")
	require.Equal(t, exitOK, code, errOut)
	assert.Empty(t, errOut)
	got := lines(out)
	require.Len(t, got, 2)
	assert.Regexp(t, `^1000 events in \S+ \(\d+\.\d ns/event\)$`, got[0])
	assert.Regexp(t, regexp.MustCompile(`^\d+ events/s$`), got[1])

	// +DURATION items move the clock and are not counted; a machine that
	// finishes is noted.
	code, out, errOut = chartgate("bench", "-n", "7", "--events", "ADD_ITEM,+1s,CHECKOUT,PAY", checkoutFile)
	require.Equal(t, exitOK, code)
	assert.True(t, strings.HasPrefix(out, "7 events in "), out)
	assert.Regexp(t, `\n\d+ events/s\n$`, out)
	assert.Contains(t, errOut, "status done")
}

// TestValidateTools: --tools checks the names the machine's meta.mcp gives
// against the server's tools, with did-you-mean; meta.mcp itself is
// checked as mcpbind checks it.
func TestValidateTools(t *testing.T) {
	file := writeFile(t, "doc.json", `{
  "id": "doc", "initial": "draft",
  "states": {
    "draft": {"on": {"APPROVE": "approved"}, "meta": {"mcp": {"tools": ["edit_doc", "aprove_doc"], "events": {"aprove_doc": "APPROVE"}}}},
    "approved": {"meta": {"mcp": {"tools": ["publish_*"]}}}
  }
}`)
	code, out, errOut := chartgate("validate", file, "--tools", "edit_doc,approve_doc,publish_doc,help")
	assert.Equal(t, exitFail, code)
	assert.Empty(t, errOut)
	assert.Equal(t, []string{
		file + `: states.draft.meta.mcp.events.aprove_doc: "aprove_doc" matches no tool of the server (did you mean "approve_doc"?)`,
		file + `: states.draft.meta.mcp.tools[1]: "aprove_doc" matches no tool of the server (did you mean "approve_doc"?)`,
	}, lines(out))

	code, out, _ = chartgate("validate", file, "--tools", "edit_doc,aprove_doc,publish_doc,help")
	assert.Equal(t, exitOK, code)
	assert.Equal(t, file+": ok (2 states)\n"+file+": note: tools the workflow does not name (always visible; refused with mcpbind.Options.DefaultDeny unless meta.mcp.ungated lists them): help\n", out)

	bad := writeFile(t, "bad.json", `{"id": "m", "initial": "a", "states": {"a": {"meta": {"mcp": {"tool": ["x"]}}}}}`)
	code, out, _ = chartgate("validate", bad)
	assert.Equal(t, exitFail, code)
	assert.Equal(t, bad+`: states.a.meta.mcp.tool: unknown key "tool" (did you mean "tools"?)`+"\n", out)
}

// TestValidateMachineThatNeedsImplementationsToStart: an exported machine
// whose initial state invokes an actor or evaluates a guard it has no
// implementation for is valid; that it cannot start without them is a
// warning that names the src, and an error only with --strict.
func TestValidateMachineThatNeedsImplementationsToStart(t *testing.T) {
	file := writeFile(t, "loading.json", `{"initial": "loading", "states": {
  "loading": {"invoke": {"src": "fetchUser", "onDone": "checking"}},
  "checking": {"always": {"guard": "isAdmin", "target": "done"}},
  "done": {}}}`)
	code, out, errOut := chartgate("validate", file)
	assert.Equal(t, exitOK, code, errOut)
	assert.Equal(t, []string{
		file + `: states.loading.invoke.src: warning: no actor logic is named "fetchUser": XState starts nothing for it (and fails to start when an initial state invokes it)`,
		file + `: states.checking.always.guard: warning: guard "isAdmin" is not implemented: evaluating it is an error, as in XState`,
		file + `: warning: the machine does not start without the implementations it names: statechart: on event "xstate.init": invoke or spawn of "fetchUser" (id "0.(machine).loading"): no actor logic is named "fetchUser"`,
		file + `: ok (3 states, 3 warnings)`,
	}, lines(out))

	code, _, _ = chartgate("validate", "--strict", file)
	assert.Equal(t, exitFail, code)
}
