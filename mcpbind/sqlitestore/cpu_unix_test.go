//go:build unix

// This file holds cpuTime, which the benchmarks report per operation: on
// a machine shared with other work, the CPU a benchmark used moves less
// than the time it took.

package sqlitestore_test

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user and system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
