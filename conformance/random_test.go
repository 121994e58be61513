package conformance_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chartgate/chartgate/conformance"
	"github.com/chartgate/chartgate/conformance/random"
	"github.com/chartgate/chartgate/statechart"
)

// TestRandomDifferential generates a fixed-seed batch of random machines,
// records each with real XState through one `node record.mjs --serve`
// process and replays it on the statechart interpreter. It needs node and
// conformance/oracle/node_modules (CI runs `npm ci` there first); without
// them it is skipped. More seeds: go run ./conformance/cmd/difftest.
func TestRandomDifferential(t *testing.T) {
	if err := random.OracleAvailable("oracle"); err != nil {
		t.Skipf("random differential test needs the XState oracle: %v (run npm ci in conformance/oracle)", err)
	}
	n := 500
	if testing.Short() {
		n = 100
	}
	o, err := random.StartOracle("oracle", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var log strings.Builder
	res, err := random.Run(ctx, random.Options{
		Seed:            20260101,
		N:               n,
		Oracle:          o,
		ShrinkAtMost:    3, // shrinking costs oracle round trips; the rest are listed as generated
		MaxShrinkChecks: 1500,
		Log:             &log,
	})
	if err != nil {
		t.Fatalf("after %d machines: %v", res.Machines, err)
	}
	t.Logf("%s in %s", res.Summary(), res.Elapsed.Round(time.Millisecond))
	if res.Invalid > 0 {
		t.Errorf("XState rejected %d generated machines; the generator must only make valid ones:\n%s", res.Invalid, strings.Join(res.InvalidErrors, "\n"))
	}
	for i, d := range res.Differences {
		if i == 10 {
			t.Errorf("... and %d more differences", len(res.Differences)-i)
			break
		}
		msg := d.Mismatch
		if len(msg) > 600 {
			msg = msg[:600] + "..."
		}
		t.Errorf("%s", msg)
		if i < 3 && d.Case != nil {
			t.Logf("shrunk reproduction of %s (add it to cases/ with: go run ./conformance/cmd/difftest -seed %d -start %d -n 1 -out conformance/cases):\n%s",
				d.Name, d.Machine.Seed, d.Index, d.Case)
		}
	}
}

// TestRandomGeneratorDeterministic checks that a seed and an index fully
// determine the machine, and that different seeds give different machines.
func TestRandomGeneratorDeterministic(t *testing.T) {
	for _, seed := range []uint64{1, 2, 99} {
		g1, g2 := random.NewGenerator(seed), random.NewGenerator(seed)
		for i := 0; i < 50; i++ {
			m1, m2 := g1.Next(), g2.Next()
			a, b := m1.CaseJSON(m1.Name(), ""), m2.CaseJSON(m2.Name(), "")
			if !bytes.Equal(a, b) {
				t.Fatalf("seed %d machine %d differs between two generators", seed, i)
			}
			if c := random.Generate(seed, i); !bytes.Equal(c.CaseJSON(c.Name(), ""), a) {
				t.Fatalf("seed %d: Generate(seed, %d) differs from the %dth Next()", seed, i, i)
			}
		}
	}
	a, b := random.Generate(1, 0), random.Generate(2, 0)
	if bytes.Equal(a.CaseJSON("x", ""), b.CaseJSON("x", "")) {
		t.Error("seeds 1 and 2 generate the same first machine")
	}
}

// TestRandomMachinesCompile checks that every generated machine compiles
// in Go with the case's declarative implementations, reaches the required
// depth, and mixes the features the generator promises.
func TestRandomMachinesCompile(t *testing.T) {
	features := map[string]int{}
	for i := 0; i < 400; i++ {
		m := random.Generate(7, i)
		data := m.CaseJSON(m.Name(), "")
		c, err := conformance.ParseCase(data, m.Name()+".json")
		if err != nil {
			t.Fatalf("%s: %v", m.Name(), err)
		}
		impl, err := c.Implementations()
		if err != nil {
			t.Fatalf("%s: implementations: %v", m.Name(), err)
		}
		// Missing guards are a generator feature: XState fails only when it
		// evaluates one, and so does RunStatechart.
		if _, err := statechart.Compile(c.Machine, &statechart.Options{Implementations: impl, AllowMissingGuards: true}); err != nil {
			t.Fatalf("%s does not compile: %v", m.Name(), err)
		}
		depth := 0
		for _, s := range m.States() {
			depth = max(depth, s.Depth())
		}
		if depth < 4 {
			t.Errorf("%s: depth %d, want at least 4", m.Name(), depth)
		}
		for _, f := range m.FeatureList() {
			features[f]++
		}
	}
	for _, f := range []string{"compound", "parallel", "history-shallow", "history-deep", "history-default-target", "final-in-region",
		"always", "after", "guard", "stateIn", "raise", "delayed-raise", "wildcard", "targetless", "reenter", "multi-target", "advance-step", "unknown-event",
		"invoke", "invoke-onDone", "invoke-onError", "invoke-onSnapshot", "spawn", "stopChild", "sendTo", "forwardTo", "emit", "enqueue", "enqueue-check", "input", "eventloop-clock"} {
		if features[f] == 0 {
			t.Errorf("no generated machine has feature %q", f)
		}
	}
	t.Logf("feature counts over 400 machines: %v", fmt.Sprint(features))
}
