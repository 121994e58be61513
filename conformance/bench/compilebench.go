// This file defines the compile part of the run: how long statechart.Compile
// takes on flat and nested machines of 100, 1,000 and 10,000 states, and
// how that grows from one size to the next (10× the states should cost
// about 10× the time: compile is linear).

package main

import (
	"fmt"
	"io"
	"time"

	"github.com/chartgate/chartgate/internal/benchgen"
	"github.com/chartgate/chartgate/statechart"
)

// compileSizes are the machine sizes compiled, in states.
var compileSizes = []int{100, 1_000, 10_000}

// compileRun is the compile time of one machine.
type compileRun struct {
	Shape  string `json:"shape"` // flat or nested
	States int    `json:"states"`
	NS     int64  `json:"ns"` // the fastest of the runs
	// Growth is NS divided by the NS of the previous size of the shape
	// (0 for the first).
	Growth float64 `json:"growth,omitempty"`
}

// measureCompile compiles each machine repeatedly for about budget (at
// least 3 times) and keeps the fastest time, the least disturbed by other
// work on the machine.
func measureCompile(sizes []int, budget time.Duration) ([]compileRun, error) {
	var out []compileRun
	for _, shape := range []struct {
		name string
		gen  func(int) []byte
	}{{"flat", benchgen.Flat}, {"nested", benchgen.Nested}} {
		var prev int64
		for _, n := range sizes {
			data := shape.gen(n)
			best := int64(-1)
			start := time.Now()
			for i := 0; i < 3 || time.Since(start) < budget; i++ {
				t0 := time.Now()
				m, err := statechart.Compile(data, nil)
				d := time.Since(t0).Nanoseconds()
				if err != nil {
					return nil, fmt.Errorf("compile %s %d: %w", shape.name, n, err)
				}
				if got := len(m.StateIDs()); got < n {
					return nil, fmt.Errorf("compile %s %d: %d states", shape.name, n, got)
				}
				if best < 0 || d < best {
					best = d
				}
			}
			r := compileRun{Shape: shape.name, States: n, NS: best}
			if prev > 0 {
				r.Growth = float64(best) / float64(prev)
			}
			prev = best
			out = append(out, r)
		}
	}
	return out, nil
}

// writeCompileTable prints the compile times as a markdown table.
func writeCompileTable(w io.Writer, runs []compileRun) {
	fmt.Fprintln(w, "| machine | states | compile | per state | growth |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: |")
	for _, r := range runs {
		growth := "–"
		if r.Growth > 0 {
			growth = fmt.Sprintf("%.1f×", r.Growth)
		}
		fmt.Fprintf(w, "| %s | %s | %.2f ms | %.1f µs | %s |\n", r.Shape, thousands(int64(r.States)),
			float64(r.NS)/1e6, float64(r.NS)/1e3/float64(r.States), growth)
	}
}
