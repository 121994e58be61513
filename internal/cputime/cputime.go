// Package cputime reads the CPU time the process has used, which
// benchmarks report per operation: on a machine shared with other work,
// the CPU a benchmark used moves less than the time it took.
package cputime

import "time"

// Process returns the CPU time (user and system) this process has used,
// or 0 where it is not read.
func Process() time.Duration { return process() }
