// Package hint holds chartgate's one did-you-mean rule: which known name a
// misspelt one most likely meant, and how the hint is written.
//
// A candidate is close enough when its edit distance to the name, compared
// without regard to case, is at most len(name)/2+1 (rounded down):
// "confirmd" is close to "confirmed" (1 edit), "echo" to "echo_v2" (3
// edits), a one-letter name to any other of one or two letters. The closest
// candidate wins, the first of equals. A candidate equal to the name gives
// no hint (it is not misspelt). Names longer than 64 bytes are never close
// (see [jsonx.Distance]).
//
// Every loader and front door (statechart, statechart/flat, workflow,
// mcpbind, the gateway's configuration) calls [DidYouMean] or [Closest], so
// the same misspelling gets the same hint wherever it is made. A loader
// that may give many hints against many candidates (a misspelt target
// among thousands of states, thousands of times) spends them from one
// [Budget] per document, so that its work stays linear.
package hint

import (
	"fmt"
	"strings"

	"github.com/chartgate/chartgate/internal/jsonx"
)

// Closest returns the candidate closest to s, if one is close enough to be
// a likely misspelling of it, else "".
func Closest(s string, candidates []string) string {
	best, _ := ClosestWork(s, candidates)
	return best
}

// ClosestWork is Closest that also returns the number of edit-distance
// table cells it computed, for callers that bound their total work.
// Candidates whose length alone puts them too far are skipped uncounted.
func ClosestWork(s string, candidates []string) (best string, work int) {
	bestD := len(s)/2 + 2 // a distance below this is close enough
	ls := strings.ToLower(s)
	for _, c := range candidates {
		if d := len(c) - len(s); d >= bestD || -d >= bestD {
			continue // the distance is at least the difference in length
		}
		work += len(s) * len(c)
		if d := jsonx.Distance(ls, strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	if best == s {
		return "", work
	}
	return best, work
}

// DidYouMean returns ` (did you mean "x"?)` for the candidate [Closest]
// finds, or "".
func DidYouMean(s string, candidates []string) string {
	return Format(Closest(s, candidates))
}

// Format returns ` (did you mean "best"?)`, or "" when best is "".
func Format(best string) string {
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// MaxWork is the edit-distance work (table cells) a [Budget] spends on
// the hints of one document. Past it, problems come without hints.
const MaxWork = 20_000_000

// A Budget bounds the did-you-mean work spent on one document. The zero
// value has [MaxWork] to spend. A Budget is not safe for concurrent use.
type Budget struct{ spent int }

// DidYouMean is [DidYouMean] within the budget: it returns "" once the
// budget is spent, and calls candidates only while it lasts.
func (b *Budget) DidYouMean(s string, candidates func() []string) string {
	if b.spent >= MaxWork {
		return ""
	}
	cs := candidates()
	best, work := ClosestWork(s, cs)
	b.spent += work + len(cs)
	return Format(best)
}
