//go:build !race

package mcpbind

// raceEnabled: the race detector allocates on its own, so the tests that
// count allocations skip.
const raceEnabled = false
