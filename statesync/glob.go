// This file defines the patterns of policies and invalidations: chartgate's
// one tool-name pattern language (package internal/toolname), compiled
// once for matching and for overlap detection.

package statesync

import (
	"errors"
	"math/bits"
	"strings"

	"github.com/chartgate/chartgate/internal/toolname"
)

// segKind is the kind of one pattern position.
type segKind uint8

const (
	segLit  segKind = iota // one literal character, compared case-sensitively
	segStar                // "*": any run of characters, none included
)

type segment struct {
	kind segKind
	lit  byte
}

// A Glob is a compiled pattern over canonical tool names, in the language
// every chartgate tool pattern uses (a workflow's meta.mcp tools, deny and
// invalidates, Statewright's allowed_tools, the gates): "*" matches any
// run of characters, none and dots included, and every other character
// matches itself, case-sensitively. "sprints.*" matches sprints.get and
// sprints.tasks.get, "*.get" matches a.b.c.get, "*" every name. A pattern
// is 1 to 128 ASCII letters, digits, "_", "-", "." and "*"; "**" means
// the same as "*". A name may hold any character.
//
// Matching never backtracks and costs about len(name) comparisons per
// literal run of the pattern, whatever the pattern.
//
// A Glob is immutable and safe for concurrent use.
type Glob struct {
	pattern string
	segs    []segment // consecutive "*" collapsed into one
	literal bool      // no wildcard at all: Match is string equality
}

// CompileGlob compiles pattern, or reports why it is not a valid pattern.
func CompileGlob(pattern string) (*Glob, error) {
	if msg := toolname.Check(pattern, true); msg != "" {
		return nil, errors.New(msg)
	}
	g := &Glob{pattern: pattern, literal: !strings.Contains(pattern, "*")}
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c != '*' {
			g.segs = append(g.segs, segment{kind: segLit, lit: c})
		} else if n := len(g.segs); n == 0 || g.segs[n-1].kind != segStar {
			g.segs = append(g.segs, segment{kind: segStar})
		}
	}
	return g, nil
}

// ValidatePattern reports whether pattern is a valid glob, with the reason if
// not. Layers built elsewhere (a gate declaring what its transitions
// invalidate, say) can check their patterns with it when they are built
// rather than when the first call fails.
func ValidatePattern(pattern string) error {
	_, err := CompileGlob(pattern)
	return err
}

// Match reports whether name matches pattern. An invalid pattern matches
// nothing; use [CompileGlob] to learn why it is invalid.
func Match(pattern, name string) bool {
	return toolname.Check(pattern, true) == "" && toolname.Match(pattern, name)
}

// String returns the pattern as written.
func (g *Glob) String() string { return g.pattern }

// Match reports whether name matches g.
func (g *Glob) Match(name string) bool {
	if g.literal {
		return name == g.pattern
	}
	return toolname.Match(g.pattern, name)
}

func words(nbits int) int { return (nbits + 63) / 64 }

// bitset is a set of small non-negative integers.
type bitset []uint64

func (b bitset) set(i int)      { b[i/64] |= 1 << (i % 64) }
func (b bitset) has(i int) bool { return b[i/64]&(1<<(i%64)) != 0 }

// closure adds i+1 for every member i that is also in dbl, carrying across
// words.
func (b bitset) closure(dbl []uint64) {
	var carry uint64
	for i := range b {
		sh := b[i] & dbl[i]
		b[i] |= sh<<1 | carry
		carry = sh >> 63
	}
}

// each yields the members of b below limit, in increasing order.
func (b bitset) each(limit int) func(func(int) bool) {
	return func(yield func(int) bool) {
		for wi, w := range b {
			for ; w != 0; w &= w - 1 {
				i := wi*64 + bits.TrailingZeros64(w)
				if i >= limit {
					return
				}
				if !yield(i) {
					return
				}
			}
		}
	}
}
