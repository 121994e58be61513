// This file defines the compile part of the run: how long statechart.Compile
// takes on flat and nested machines of 100, 1,000 and 10,000 states, and
// how that grows from one size to the next (10× the states should cost
// about 10× the time: compile is linear).

package main

import (
	"fmt"
	"io"
	"runtime"
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
	NS     int64  `json:"ns"` // the mean time of a compile
	// Growth is NS divided by the NS of the previous size of the shape
	// (0 for the first).
	Growth float64 `json:"growth,omitempty"`
}

// measureCompile compiles each machine repeatedly for about budget (at
// least 3 times) and reports the mean time of a compile, as testing.B
// does: garbage collection is shared out over the compiles that cause
// it. (The fastest compile would not do: a 1,000-state compile allocates
// less than Go's 4 MB minimum heap and is often timed without any
// collection, a 10,000-state one never, so the growth between them would
// measure the collector's threshold, not the compiler.)
func measureCompile(sizes []int, budget time.Duration) ([]compileRun, error) {
	var out []compileRun
	for _, shape := range []struct {
		name string
		gen  func(int) []byte
	}{{"flat", benchgen.Flat}, {"nested", benchgen.Nested}} {
		var prev int64
		for _, n := range sizes {
			data := shape.gen(n)
			runtime.GC() // no garbage of the previous size
			var total time.Duration
			count := 0
			for ; count < 3 || total < budget; count++ {
				t0 := time.Now()
				m, err := statechart.Compile(data, nil)
				total += time.Since(t0)
				if err != nil {
					return nil, fmt.Errorf("compile %s %d: %w", shape.name, n, err)
				}
				if got := len(m.StateIDs()); got < n {
					return nil, fmt.Errorf("compile %s %d: %d states", shape.name, n, got)
				}
			}
			mean := total.Nanoseconds() / int64(count)
			r := compileRun{Shape: shape.name, States: n, NS: mean}
			if prev > 0 {
				r.Growth = float64(mean) / float64(prev)
			}
			prev = mean
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
