package statechart

import (
	"math"
	"strconv"
	"testing"
)

// TestSessionIDs checks the session ids handed out from shared runs: every
// number gives "x:N", in order, across the runs' digit boundaries, after
// jumps (a restored system continues from a later number) and at the end
// of the range.
func TestSessionIDs(t *testing.T) {
	var s sessionIDs
	check := func(n uint64) {
		t.Helper()
		if got, want := s.id(n), "x:"+strconv.FormatUint(n, 10); got != want {
			t.Fatalf("id(%d) = %q, want %q", n, got, want)
		}
	}
	for n := range uint64(2000) {
		check(n)
	}
	for _, n := range []uint64{5, 99_999, 100_000, 100_001, 42, 1 << 40, math.MaxUint64 - 1, math.MaxUint64, 7} {
		check(n)
		check(n)
	}
	if len(s.ids) > maxSessionRun*len("x:18446744073709551615") {
		t.Errorf("a run holds %d bytes", len(s.ids))
	}
}
