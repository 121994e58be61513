// This file defines the dot-separated glob language of policies and its
// matcher, a bit-parallel NFA simulation that never backtracks.

package statesync

import (
	"fmt"
	"math/bits"
	"strings"
)

// segKind is the kind of one pattern segment.
type segKind uint8

const (
	segLit    segKind = iota // a literal segment, compared case-sensitively
	segStar                  // "*": exactly one segment, possibly empty
	segDouble                // "**": zero or more segments
)

type segment struct {
	kind segKind
	lit  string
}

// A Glob is a compiled dot-separated pattern. The pattern is split on "."
// into segments: "*" matches exactly one segment of a name, "**" matches zero
// or more segments, and any other segment matches itself, case-sensitively.
// Pattern segments are made of ASCII letters, digits, "_" and "-", or are
// exactly "*" or "**". A name is split on "." the same way; its segments may
// hold any character, and may be empty.
//
// Matching costs O(len(name) + s·k), where s is the number of segments in the
// name and k the number of segments in the pattern, whatever the pattern: the
// matcher tracks every pattern position a prefix of the name can reach at
// once (one bit each), so it never backtracks and needs no iteration cap.
//
// A Glob is immutable and safe for concurrent use.
type Glob struct {
	pattern string
	segs    []segment // consecutive "**" collapsed into one
	double  []uint64  // bit i set when segs[i] is "**"
	literal bool      // no wildcard at all: Match is string equality
	any     bool      // the pattern is "**" alone: Match is always true
}

// CompileGlob compiles pattern, or reports the first invalid segment.
func CompileGlob(pattern string) (*Glob, error) {
	if pattern == "" {
		return nil, fmt.Errorf("pattern must be a non-empty string")
	}
	g := &Glob{pattern: pattern, literal: true}
	for _, s := range strings.Split(pattern, ".") {
		if !validSegment(s) {
			return nil, fmt.Errorf("pattern %q has invalid segment %q. Allowed: alphanumeric, \"_\", \"-\", \"*\", \"**\"", pattern, s)
		}
		switch s {
		case "*":
			g.literal = false
			g.segs = append(g.segs, segment{kind: segStar})
		case "**":
			g.literal = false
			if n := len(g.segs); n > 0 && g.segs[n-1].kind == segDouble {
				continue // "**.**" has the language of "**"
			}
			g.segs = append(g.segs, segment{kind: segDouble})
		default:
			g.segs = append(g.segs, segment{kind: segLit, lit: s})
		}
	}
	g.double = make([]uint64, words(len(g.segs)+1))
	for i, s := range g.segs {
		if s.kind == segDouble {
			g.double[i/64] |= 1 << (i % 64)
		}
	}
	g.any = len(g.segs) == 1 && g.segs[0].kind == segDouble
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
// nothing; use [CompileGlob] to learn why it is invalid, and to match many
// names without compiling the pattern again each time.
func Match(pattern, name string) bool {
	g, err := CompileGlob(pattern)
	return err == nil && g.Match(name)
}

// String returns the pattern as written.
func (g *Glob) String() string { return g.pattern }

// validSegment reports whether s is "*", "**" or a non-empty run of
// [A-Za-z0-9_-].
func validSegment(s string) bool {
	if s == "*" || s == "**" {
		return true
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func words(nbits int) int { return (nbits + 63) / 64 }

// Match reports whether name matches g.
func (g *Glob) Match(name string) bool {
	switch {
	case g.any:
		return true
	case g.literal:
		return name == g.pattern
	case len(g.segs) < 64:
		return g.match64(name)
	}
	return g.matchWide(name)
}

// match64 is Match for patterns of at most 63 segments: the set of reachable
// positions 0..len(segs) fits one word. Position i means "the first i pattern
// segments have consumed the name so far"; position len(segs) accepts.
func (g *Glob) match64(name string) bool {
	n := len(g.segs)
	dbl := g.double[0]
	// closure adds the epsilon move over a "**": since runs of "**" are
	// collapsed, one shift reaches every position an epsilon chain can.
	closure := func(set uint64) uint64 { return set | (set&dbl)<<1 }
	cur := closure(1)
	for rest := name; ; {
		seg, tail, more := strings.Cut(rest, ".")
		var next uint64
		for m := cur &^ (1 << n); m != 0; m &= m - 1 {
			i := bits.TrailingZeros64(m)
			switch s := &g.segs[i]; s.kind {
			case segDouble:
				next |= 1 << i
			case segStar:
				next |= 1 << (i + 1)
			default:
				if s.lit == seg {
					next |= 1 << (i + 1)
				}
			}
		}
		cur = closure(next)
		if cur == 0 {
			return false
		}
		if !more {
			return cur&(1<<n) != 0
		}
		rest = tail
	}
}

// matchWide is Match for patterns of 64 segments or more; it is match64 over
// a multi-word bit set.
func (g *Glob) matchWide(name string) bool {
	n := len(g.segs)
	cur := make(bitset, len(g.double))
	next := make(bitset, len(g.double))
	cur.set(0)
	cur.closure(g.double)
	for rest := name; ; {
		seg, tail, more := strings.Cut(rest, ".")
		next.clear()
		for i := range cur.each(n) {
			switch s := &g.segs[i]; s.kind {
			case segDouble:
				next.set(i)
			case segStar:
				next.set(i + 1)
			default:
				if s.lit == seg {
					next.set(i + 1)
				}
			}
		}
		cur, next = next, cur
		cur.closure(g.double)
		if cur.empty() {
			return false
		}
		if !more {
			return cur.has(n)
		}
		rest = tail
	}
}

// bitset is a set of small non-negative integers.
type bitset []uint64

func (b bitset) set(i int)      { b[i/64] |= 1 << (i % 64) }
func (b bitset) has(i int) bool { return b[i/64]&(1<<(i%64)) != 0 }

func (b bitset) clear() {
	for i := range b {
		b[i] = 0
	}
}

func (b bitset) empty() bool {
	for _, w := range b {
		if w != 0 {
			return false
		}
	}
	return true
}

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
