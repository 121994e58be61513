package hint_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chartgate/chartgate/internal/hint"
)

func TestClosest(t *testing.T) {
	cands := []string{"idle", "confirmed", "approve_doc", "Payment", "Edit"}
	for _, c := range []struct{ s, want string }{
		{"confirmd", "confirmed"},      // one edit
		{"cnfrmd", "confirmed"},        // three edits
		{"aprove_doc", "approve_doc"},  // a misspelt tool
		{"payment", "Payment"},         // case does not count
		{"idle", ""},                   // not misspelt
		{"xyz", ""},                    // nothing close
		{"echo", "Edit"},               // 3 edits = 4/2+1
		{"ech", ""},                    // "Edit" is 3 edits away: over 3/2+1
		{"c", ""},                      // one letter: one edit allowed, and "c" is 4 or more from each
		{"cnfrm", ""},                  // four edits: over 5/2+1
		{string(make([]byte, 80)), ""}, // too long to be close
	} {
		if got := hint.Closest(c.s, cands); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.s, got, c.want)
		}
	}
	if got := hint.DidYouMean("idel", cands); got != ` (did you mean "idle"?)` {
		t.Errorf("DidYouMean = %q", got)
	}
	if got := hint.DidYouMean("zzzz", cands); got != "" {
		t.Errorf("DidYouMean = %q, want none", got)
	}
}

func TestClosestFirstOfEquals(t *testing.T) {
	if got := hint.Closest("cat", []string{"bat", "cot", "cut"}); got != "bat" {
		t.Errorf("Closest = %q, want the first of equals", got)
	}
}

func TestClosestWorkCountsCells(t *testing.T) {
	_, work := hint.ClosestWork("abcd", []string{"abce", "abcdefghijklmnop"})
	if work != 16 { // the long candidate is skipped on length alone
		t.Errorf("work = %d, want 16", work)
	}
}

// TestBudget: a budget gives the hints DidYouMean gives until MaxWork
// cells are spent, then none, and stops asking for candidates.
func TestBudget(t *testing.T) {
	var b hint.Budget
	cands := []string{"confirmed", "cancelled"}
	asked := 0
	list := func() []string { asked++; return cands }
	if got, want := b.DidYouMean("confirmd", list), hint.DidYouMean("confirmd", cands); got != want || got == "" {
		t.Fatalf("DidYouMean = %q, want %q", got, want)
	}
	// 1,000 candidates of 60 bytes against a name of 60: 3.6M cells a
	// call, so the budget is spent after six.
	long := make([]string, 1000)
	for i := range long {
		long[i] = fmt.Sprintf("%060d", i)
	}
	for range 6 {
		b.DidYouMean(strings.Repeat("x", 60), func() []string { return long })
	}
	if got := b.DidYouMean("confirmd", list); got != "" || asked != 1 {
		t.Errorf("spent budget: %q, candidates asked %d times", got, asked)
	}
}
