// This file defines MatchFile, the file-pattern glob of interrupt triggers,
// with Statewright's semantics, computed in linear space and
// O(len(pattern)·len(path)) time.

package workflow

// MatchFile reports whether a file path matches an interrupt's
// file_pattern, with the semantics of Statewright's interrupt glob:
//
//   - "*" matches a run of characters other than "/" (none included);
//   - "?" matches one character other than "/";
//   - "**" matches any run of characters, "/" included, and a "/" right
//     after it is optional: "**/*.rs" matches "main.rs" and "src/a/main.rs",
//     and "**/x" matches "ax" too (it is a run of characters, not of path
//     segments);
//   - "**" at the end of the pattern matches the rest of the path;
//   - every other byte matches itself: there are no character classes,
//     braces or escapes;
//   - the empty pattern matches only the empty path, and once the path is
//     used up the rest of the pattern must be stars only ("x/**/" does not
//     match "x/").
//
// Paths are matched as given, byte by byte: callers pass paths relative to
// the project root with "/" separators. The match never backtracks
// exponentially, whatever the pattern.
func MatchFile(pattern, path string) bool {
	// next[i] is whether pattern[i:] matches path[j+1:], cur[i] whether
	// pattern[i:] matches path[j:]; any[i] whether pattern[i:] matches some
	// suffix path[k:] with k > j (for "**", which may skip any run).
	// Columns are computed from the end of the path backwards.
	np := len(pattern)
	next := make([]bool, np+1)
	cur := make([]bool, np+1)
	anyLater := make([]bool, np+1)
	// The column for the empty path: only a tail of stars matches it.
	next[np] = true
	for i := np - 1; i >= 0; i-- {
		next[i] = pattern[i] == '*' && next[i+1]
	}
	copy(anyLater, next)
	for j := len(path) - 1; j >= 0; j-- {
		c := path[j]
		cur[np] = false
		for i := np - 1; i >= 0; i-- {
			switch {
			case pattern[i] == '*' && i+1 < np && pattern[i+1] == '*':
				rest := i + 2
				if rest < np && pattern[rest] == '/' {
					rest++
				}
				// "**" ending the pattern matches everything left; else
				// the rest must match path[k:] for some k >= j.
				cur[i] = rest == np || cur[rest] || anyLater[rest]
			case pattern[i] == '*':
				// A run of non-"/" characters: none, or one more.
				cur[i] = cur[i+1] || (c != '/' && next[i])
			case pattern[i] == '?':
				cur[i] = c != '/' && next[i+1]
			default:
				cur[i] = pattern[i] == c && next[i+1]
			}
		}
		for i := range anyLater {
			anyLater[i] = anyLater[i] || cur[i]
		}
		next, cur = cur, next
	}
	return next[0]
}
