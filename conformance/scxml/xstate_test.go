package scxml_test

// TestSCXMLSuiteOnXState runs the same converted machines on real XState,
// through the conformance oracle's --serve mode (used as a black box), and
// scores them with the same strict check: the full set of active atomic
// states initially and after every event. It is opt-in:
//
//	(cd conformance/oracle && npm ci)
//	go test ./conformance/scxml -run TestSCXMLSuiteOnXState -scxml.xstate -v

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

var onXState = flag.Bool("scxml.xstate", false, "also run the converted suite on real XState via conformance/oracle (needs node and its npm ci)")

const oracleDir = "../oracle"

type oracleSnapshot struct {
	Value   any            `json:"value"`
	Status  string         `json:"status"`
	Context map[string]any `json:"context"`
}

type oracleCase struct {
	Name          string           `json:"name"`
	Machine       json.RawMessage  `json:"machine"`
	Steps         []map[string]any `json:"steps"`
	Expected      []oracleSnapshot `json:"expected,omitempty"`
	ExpectedError string           `json:"expectedError,omitempty"`
	OracleError   string           `json:"oracleError,omitempty"`
}

// xstateSteps mirrors runOne's driving of the clock as oracle steps and
// returns, per expectation (initial first), the index into expected of
// the snapshot to check.
func xstateSteps(st suiteTest) (steps []map[string]any, check []int) {
	add := func(s map[string]any) { steps = append(steps, s) }
	if len(st.Events) == 0 {
		// Run to completion: let zero-delay and then timed sends fire.
		add(map[string]any{"advance": 0})
		add(map[string]any{"advance": 0})
		for range 10 {
			add(map[string]any{"advance": 500})
		}
		return steps, []int{len(steps)}
	}
	check = []int{0}
	for _, ev := range st.Events {
		add(map[string]any{"advance": 0}) // the external queue, as settle does
		add(map[string]any{"advance": 0})
		if ev.After != nil && *ev.After > 0 {
			add(map[string]any{"advance": *ev.After})
		}
		add(map[string]any{"event": map[string]any{"type": ev.Event.Name}})
		check = append(check, len(steps))
	}
	return steps, check
}

func TestSCXMLSuiteOnXState(t *testing.T) {
	if !*onXState {
		t.Skip("opt-in: -scxml.xstate")
	}
	if _, err := os.Stat(suiteDir); err != nil {
		t.Skipf("SCXML suite not installed; run %s", installCommand)
	}
	if _, err := os.Stat(filepath.Join(oracleDir, "node_modules", "xstate")); err != nil {
		t.Skip("oracle not installed; run (cd conformance/oracle && npm ci)")
	}
	cmd := exec.Command("node", "record.mjs", "--serve")
	cmd.Dir = oracleDir
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	}()
	in := bufio.NewScanner(stdout)
	in.Buffer(make([]byte, 1<<20), 64<<20)

	type count struct{ pass, skip, fail int }
	counts := map[string]*count{}
	var groups []string
	for _, f := range suiteFiles(t) {
		c := counts[f.group]
		if c == nil {
			c = &count{}
			counts[f.group] = c
			groups = append(groups, f.group)
		}
		l, r := load(f.scxml, f.json, f.name)
		if r == nil && l.config == nil {
			r = &result{f.name, skip, "needs the ECMAScript data model, which XState cannot run from JSON"}
		}
		if r != nil {
			if r.out == skip {
				c.skip++
			} else {
				c.fail++
			}
			continue
		}
		steps, check := xstateSteps(l.test)
		line, err := json.Marshal(oracleCase{Name: "scxml/" + f.group + "/" + f.name, Machine: l.config, Steps: steps})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := stdin.Write(append(line, '\n')); err != nil {
			t.Fatal(err)
		}
		if !in.Scan() {
			t.Fatalf("oracle stopped: %v", in.Err())
		}
		var got oracleCase
		if err := json.Unmarshal(in.Bytes(), &got); err != nil {
			t.Fatalf("oracle output: %v", err)
		}
		if msg := scoreXState(l, got, check); msg != "" {
			c.fail++
			t.Logf("XState FAIL %s/%s: %s", f.group, f.name, msg)
		} else {
			c.pass++
		}
	}
	var tp int
	for _, g := range groups {
		c := counts[g]
		tp += c.pass
		t.Logf("XState group %-34s pass %3d  skip %3d  fail %3d", g, c.pass, c.skip, c.fail)
	}
	t.Logf("XState total pass %d", tp)
}

func scoreXState(l *loaded, got oracleCase, check []int) string {
	if got.OracleError != "" {
		return "oracle: " + got.OracleError
	}
	want := [][]string{l.test.InitialConfiguration}
	for _, ev := range l.test.Events {
		want = append(want, ev.NextConfiguration)
	}
	for i, idx := range check {
		if idx >= len(got.Expected) {
			return fmt.Sprintf("no snapshot %d (error %q)", idx, got.ExpectedError)
		}
		snap := got.Expected[idx]
		s, err := l.m.ResolveState(snap.Value, snap.Context)
		if err != nil {
			return fmt.Sprintf("step %d: value %v: %v", idx, snap.Value, err)
		}
		if msg := compare(s, l.atomic, want[i]); msg != "" {
			return fmt.Sprintf("expectation %d (status %s): %s", i, snap.Status, msg)
		}
	}
	return ""
}
