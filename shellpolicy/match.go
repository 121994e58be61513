// This file defines the one pattern rule of allowed commands (and of
// blocked variable names): MatchCommand, and the stricter test of whether
// a pattern names a blocked command.

package shellpolicy

import (
	"strings"

	"github.com/chartgate/chartgate/internal/toolname"
)

// MatchCommand reports whether an allowed-command pattern matches a simple
// command given as its words (see [Command.Values]).
//
// A pattern without "*" is a command prefix, matched word by word: its
// words (separated by single spaces) must be the command's first words,
// and any arguments may follow, so "pytest" matches "pytest" and
// "pytest -x tests/" but not "pytester", and "git status" matches
// "git status --short" but not "git stash".
//
// A pattern with "*" must match the whole command: the words are joined
// with single spaces and, in the pattern, "*" matches any run of
// characters, spaces and slashes included, and every other character
// matches itself; there is no escape, and "?" and "[" are ordinary
// characters. A pattern ending in " *" also matches the command with
// nothing after it, so "go test *" matches "go test" and "go test ./...
// -run X", and "pytest*" matches "pytest", "pytest -x" (and
// "pytest-watch").
//
// The pattern is matched against one simple command, never against the
// whole line: the line "pytest; rm -rf /" holds two simple commands, and
// "rm -rf /" must be allowed on its own.
func MatchCommand(pattern string, words []string) bool {
	if !strings.Contains(pattern, "*") {
		return prefixWords(pattern, words) >= 0
	}
	return matchText(pattern, strings.Join(words, " "))
}

// prefixWords returns how many of words a pattern without "*" matches as
// their first words, or -1 if it does not match them. The empty pattern
// matches only the empty command.
func prefixWords(pattern string, words []string) int {
	if pattern == "" {
		if len(words) == 0 || len(words) == 1 && words[0] == "" {
			return 0
		}
		return -1
	}
	n := 0
	for w := range strings.SplitSeq(pattern, " ") {
		if n >= len(words) || words[n] != w {
			return -1
		}
		n++
	}
	return n
}

// matchText matches pattern, which has a "*", against text with the
// rules of MatchCommand.
func matchText(pattern, text string) bool {
	if glob(pattern, text) {
		return true
	}
	if p, ok := strings.CutSuffix(pattern, " *"); ok {
		return glob(p, text)
	}
	return false
}

// glob reports whether pattern, where "*" matches any run of characters,
// matches all of text: the tool-name pattern rule (see package
// internal/toolname), whose "*" is the same.
func glob(pattern, text string) bool { return toolname.Match(pattern, text) }

// names reports whether pattern matches the command words with every
// word in keys (indexes in words) matched by literal characters of the
// pattern, never by a "*": "rm *" names "rm -rf x", "git push*" names
// "git push", but "git *" does not name "git push" and "find *" does not
// name "find . -delete".
func names(pattern string, words []string, keys []int) bool {
	if len(keys) == 0 {
		return false
	}
	if !strings.Contains(pattern, "*") {
		// Every word a prefix pattern matches is literal.
		n := prefixWords(pattern, words)
		for _, k := range keys {
			if k >= n {
				return false
			}
		}
		return n >= 0
	}
	text := strings.Join(words, " ")
	protected := make([]bool, len(text))
	offset := 0
	for i, w := range words {
		for _, k := range keys {
			if k == i {
				for j := offset; j < offset+len(w); j++ {
					protected[j] = true
				}
			}
		}
		offset += len(w) + 1
	}
	if globProtected(pattern, text, protected) {
		return true
	}
	if p, ok := strings.CutSuffix(pattern, " *"); ok {
		return globProtected(p, text, protected)
	}
	return false
}

// globProtected is glob where a star may not match a protected character.
// It simulates the pattern's positions as a set, in time proportional to
// the text times the pattern.
func globProtected(pattern, text string, protected []bool) bool {
	m := len(pattern)
	cur := make([]bool, m+1)
	next := make([]bool, m+1)
	closure := func(set []bool) {
		for p := 0; p < m; p++ {
			if set[p] && pattern[p] == '*' {
				set[p+1] = true
			}
		}
	}
	cur[0] = true
	closure(cur)
	for t := 0; t < len(text); t++ {
		alive := false
		clear(next)
		for p := 0; p < m; p++ {
			if !cur[p] {
				continue
			}
			if pattern[p] == '*' {
				if !protected[t] {
					next[p] = true
					alive = true
				}
			} else if pattern[p] == text[t] {
				next[p+1] = true
				alive = true
			}
		}
		if !alive {
			return false
		}
		closure(next)
		cur, next = next, cur
	}
	return cur[m]
}
