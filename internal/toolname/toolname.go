// Package toolname holds chartgate's one rule for MCP tool names and the
// patterns that select them: what a name may be made of ([Check]) and
// which names a pattern matches ([Match]). A workflow's meta.mcp (tools,
// deny, ungated, the names under events, and the patterns under
// invalidates), Go bindings, a Statewright workflow's allowed_tools and
// disallowed_tools, package statesync's policies (Match and Invalidates)
// and the gateway's server names are all checked by it, and every gate
// (the MCP middleware, chartgate serve and the hooks) and statesync match
// tool names by it: the same pattern means the same set of names wherever
// it is written.
//
// A name is 1 to 128 ASCII letters, digits, "_", "-" and "." (the MCP
// specification's rule). A pattern may also hold "*", which matches any
// run of characters, none and dots included: "cart.*" matches
// cart.items.list, "cart_*" matches cart_pay, "*" every name. Every other
// character matches itself, case-sensitively.
//
// ("**" is thus the same as "*", where MCP Fusion, whose State Sync
// statesync follows, reads "*" as one dot-separated segment and "**" as
// any number: a pattern here names at least what it names there, which
// for a cache invalidation is the safe direction.)
//
// This is not the language of file patterns (workflow.MatchFile: "*"
// stops at "/", "**" crosses it) nor of shell paths (package shellpolicy,
// path.Match per element): those match paths, not tool names. The shell's
// command patterns use the same "*" as tool patterns, and share [Match].
package toolname

import (
	"fmt"
	"strings"
)

// MaxLen is the longest tool name, in bytes.
const MaxLen = 128

// ValidRune reports whether r may appear in a tool name.
func ValidRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.'
}

// Check returns why s is not a valid tool name (or, if pattern, a valid
// name or pattern), or "".
func Check(s string, pattern bool) string {
	if s == "" {
		return "a tool name must not be empty"
	}
	if len(s) > MaxLen {
		return fmt.Sprintf("%q is longer than %d characters", s, MaxLen)
	}
	for _, r := range s {
		switch {
		case ValidRune(r):
		case r == '*' && pattern:
		case pattern:
			return fmt.Sprintf(`%q is not a tool name or pattern: use letters, digits, "_", "-", "." and "*"`, s)
		default:
			return fmt.Sprintf(`%q is not a tool name: use letters, digits, "_", "-" and "."`, s)
		}
	}
	return ""
}

// Match reports whether name matches pattern, where "*" matches any run of
// characters (none included) and every other character matches itself.
// The literal runs between stars are each found at their leftmost place,
// which is enough when a star matches anything: matching never
// backtracks, costs about len(name) comparisons per literal run, and does
// not allocate.
func Match(pattern, name string) bool {
	first := strings.IndexByte(pattern, '*')
	if first < 0 {
		return pattern == name
	}
	if !strings.HasPrefix(name, pattern[:first]) {
		return false
	}
	name = name[first:]
	last := strings.LastIndexByte(pattern, '*')
	suffix := pattern[last+1:]
	if !strings.HasSuffix(name, suffix) {
		return false
	}
	name = name[:len(name)-len(suffix)]
	for mid := pattern[first:last]; mid != ""; {
		mid = mid[1:] // the star
		lit, rest, _ := strings.Cut(mid, "*")
		if lit != "" {
			i := strings.Index(name, lit)
			if i < 0 {
				return false
			}
			name = name[i+len(lit):]
		}
		mid = "*" + rest
		if rest == "" {
			break
		}
	}
	return true
}
