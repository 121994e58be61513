//go:build !race

package statechart_test

// raceEnabled: the race detector allocates on its own, so the tests that
// count allocations skip.
const raceEnabled = false
