// This file defines overlap detection: which policies can never match
// (shadowed) and which pairs of policies compete for some names (partial
// overlaps), decided exactly on the pattern languages.

package statesync

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// OverlapKind says how two or more policies overlap.
type OverlapKind uint8

const (
	// Shadowed: the later policy can never match, because the earlier
	// policies listed in [Overlap.By] match every name it matches.
	Shadowed OverlapKind = iota + 1
	// Partial: some names that reach the earlier policy also match the later
	// one, so they go to the earlier one; the later policy still matches
	// other names, and the earlier one is not merely an exception carved
	// out of it (as "sprints.get" before "sprints.*" is, which is not
	// reported).
	Partial
)

func (k OverlapKind) String() string {
	switch k {
	case Shadowed:
		return "shadowed"
	case Partial:
		return "partial"
	}
	return fmt.Sprintf("OverlapKind(%d)", uint8(k))
}

// An Overlap is one finding of [DetectOverlaps].
type Overlap struct {
	Kind OverlapKind
	// Policy is the index of the later policy: the one that never matches
	// (Shadowed) or that loses names to an earlier one (Partial).
	Policy int
	// By lists the earlier policies responsible, in increasing order. For
	// Shadowed without Union, every earlier policy listed matches all the
	// names Policy matches on its own. For Shadowed with Union, no single
	// earlier policy does, and By lists the earlier live policies that
	// together do. For Partial, By holds the one earlier policy.
	By []int
	// Union is set when only several earlier policies together shadow
	// Policy. The analysis is exact for any set of patterns, but with
	// "*" matching any run this does not happen: a name with a character
	// no policy spells out in each of Policy's stars is matched by one of
	// the earlier policies, which then matches every name Policy matches.
	Union bool
	// Example is, for Partial, a shortest name that matches both policies
	// and reaches By[0] first. A character that no policy spells out is
	// written "x" (or the first letter or digit no policy uses).
	Example string

	patterns []string // Match of every policy, for String
}

// String describes the overlap in one sentence. A policy shadowed by exactly
// one earlier policy is described as MCP Fusion's detectOverlaps does.
func (o Overlap) String() string {
	at := func(i int) string {
		if i >= 0 && i < len(o.patterns) {
			return fmt.Sprintf("policy[%d] (match: %q)", i, o.patterns[i])
		}
		return fmt.Sprintf("policy[%d]", i)
	}
	list := func(idx []int) string {
		parts := make([]string, len(idx))
		for k, i := range idx {
			parts[k] = at(i)
		}
		return strings.Join(parts, ", ")
	}
	switch {
	case o.Kind == Shadowed && len(o.By) == 1 && !o.Union:
		return fmt.Sprintf("%s shadows %s. The later policy will never match because first-match-wins applies.", at(o.By[0]), at(o.Policy))
	case o.Kind == Shadowed && o.Union:
		return fmt.Sprintf("%s together shadow %s. The later policy will never match because first-match-wins applies.", list(o.By), at(o.Policy))
	case o.Kind == Shadowed:
		return fmt.Sprintf("%s each shadow %s. The later policy will never match because first-match-wins applies.", list(o.By), at(o.Policy))
	case o.Kind == Partial && len(o.By) == 1:
		return fmt.Sprintf("%s partially overlaps %s: a name such as %q matches both and goes to policy[%d] because first-match-wins applies.", at(o.By[0]), at(o.Policy), o.Example, o.By[0])
	}
	return fmt.Sprintf("%s overlap (%s) with %v", at(o.Policy), o.Kind, o.By)
}

// ErrTooComplex is returned (wrapped) by [DetectOverlaps] when deciding one
// question would need more than the analysis budget of states. It takes
// deliberately pathological policies to get there, such as four that each
// ask for thirteen of one letter ("*a*a*…") before one that asks for all
// of them. The undecided policy is treated as live: no finding is ever
// guessed.
var ErrTooComplex = errors.New("statesync: overlap analysis exceeded its state budget")

// overlapBudget bounds the states one decision may explore.
const overlapBudget = 1 << 15

// DetectOverlaps reports, in policy order, every policy that can never match
// because earlier policies match every name it matches (Shadowed), then every
// pair of live policies that compete for some names (Partial). It decides on
// the pattern languages themselves, not on the patterns' spelling:
// "sprints.tasks.*" after "sprints.*" is shadowed, "a*.b" after "a.*" is
// not (ab.b escapes it), and "*.get" against "sprints.*" is a partial
// overlap on "sprints.get".
//
// Invalid policies give a *[ConfigError] and no findings. A question too
// costly to decide (see [ErrTooComplex]) is skipped and reported in the
// error, alongside the findings that could be decided.
func DetectOverlaps(policies []Policy) ([]Overlap, error) {
	if probs := validatePolicies(policies); len(probs) > 0 {
		return nil, &ConfigError{Problems: probs}
	}
	globs := make([]*Glob, len(policies))
	for i, p := range policies {
		globs[i], _ = CompileGlob(p.Match)
	}
	return detectOverlaps(globs)
}

func detectOverlaps(globs []*Glob) ([]Overlap, error) {
	patterns := make([]string, len(globs))
	for i, g := range globs {
		patterns[i] = g.pattern
	}
	var (
		out  []Overlap
		errs []error
	)
	// meets[i][j] (i < j): some name matches both policies.
	meets := make([][]bool, len(globs))
	for j := range globs {
		meets[j] = make([]bool, len(globs))
		for i := range j {
			ok, err := intersects(globs[i], globs[j])
			if err != nil {
				errs = append(errs, fmt.Errorf("%w: policy[%d] against policy[%d]", err, i, j))
				ok = true // undecided: assume they meet, which only costs work
			}
			meets[i][j] = ok
		}
	}
	live := make([]bool, len(globs))
	for j, gj := range globs {
		var rel []int // earlier live policies that meet j
		for i := range j {
			if live[i] && meets[i][j] {
				rel = append(rel, i)
			}
		}
		if len(rel) == 0 {
			live[j] = true
			continue
		}
		_, escapes, err := search([]*Glob{gj}, pick(globs, rel))
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: policy[%d] against the policies before it", err, j))
			live[j] = true
			continue
		}
		if escapes {
			live[j] = true
			continue
		}
		o := Overlap{Kind: Shadowed, Policy: j, patterns: patterns}
		for i := range j {
			if !meets[i][j] {
				continue
			}
			_, escapes, err := search([]*Glob{gj}, []*Glob{globs[i]})
			if err == nil && !escapes {
				o.By = append(o.By, i)
			}
		}
		if len(o.By) == 0 {
			o.By, o.Union = rel, true
		}
		out = append(out, o)
	}
	for i := range globs {
		for j := i + 1; j < len(globs); j++ {
			if !live[i] || !live[j] || !meets[i][j] || globs[i].literal || globs[j].literal {
				// A literal earlier policy that reaches j is an exception
				// carved out of j; a literal later policy that meets a live
				// earlier one is shadowed. Neither is a partial overlap.
				continue
			}
			var before []int // live policies before i that meet i and j
			for k := range i {
				if live[k] && meets[k][i] && meets[k][j] {
					before = append(before, k)
				}
			}
			ex, found, err := search([]*Glob{globs[i], globs[j]}, pick(globs, before))
			if err != nil {
				errs = append(errs, fmt.Errorf("%w: policy[%d] against policy[%d]", err, i, j))
				continue
			}
			if !found {
				continue // everything both match is taken by earlier policies
			}
			// Is all of what reaches i also matched by j? Then i is an
			// exception to j, written on purpose before it.
			var beforeI []int
			for k := range i {
				if live[k] && meets[k][i] {
					beforeI = append(beforeI, k)
				}
			}
			_, outside, err := search([]*Glob{globs[i]}, append(pick(globs, beforeI), globs[j]))
			if err != nil {
				errs = append(errs, fmt.Errorf("%w: policy[%d] against policy[%d]", err, i, j))
				continue
			}
			if !outside {
				continue
			}
			out = append(out, Overlap{Kind: Partial, Policy: j, By: []int{i}, Example: ex, patterns: patterns})
		}
	}
	return out, errors.Join(errs...)
}

func pick(globs []*Glob, idx []int) []*Glob {
	out := make([]*Glob, len(idx))
	for k, i := range idx {
		out[k] = globs[i]
	}
	return out
}

// intersects reports whether some name matches both a and b.
func intersects(a, b *Glob) (bool, error) {
	switch {
	case a.literal && b.literal:
		return a.pattern == b.pattern, nil
	case a.literal:
		return b.Match(a.pattern), nil
	case b.literal:
		return a.Match(b.pattern), nil
	}
	_, found, err := search([]*Glob{a, b}, nil)
	return found, err
}

// search looks for a name matched by every glob in must and by no glob in
// mustNot, and returns a shortest one (the first in byte order among the
// shortest).
//
// Globs tell characters apart only by comparing them with their literals,
// so the possible characters collapse to a finite alphabet: each literal
// character that occurs in some glob, plus one "other" character equal to
// none of them. search runs a breadth-first search over the product of all
// the globs' position sets (a subset construction done on the fly),
// reading one alphabet symbol per step, so it is exact; overlapBudget
// bounds the states it may visit.
func search(must, mustNot []*Glob) (witness string, found bool, err error) {
	all := append(slices.Clip(must), mustNot...)
	if len(must) == 1 && len(mustNot) == 0 {
		// Every valid pattern matches at least one name.
		return exampleOf(must[0]), true, nil
	}
	p := newProduct(all)
	seen := map[string]int{}
	type node struct {
		state  bitset
		parent int
		sym    int
	}
	// The start node (nothing read) is not in seen: a name has at least
	// one character, so reaching the same position sets again after
	// reading some is a different, possibly accepting, node.
	nodes := []node{{state: p.start(), parent: -1, sym: -1}}
	for head := 0; head < len(nodes); head++ {
		for sym := 0; sym <= len(p.lits); sym++ {
			next := p.step(nodes[head].state, sym)
			if !p.alive(next, len(must)) {
				continue
			}
			k := next.key()
			if _, ok := seen[k]; ok {
				continue
			}
			if len(nodes) >= overlapBudget {
				return "", false, ErrTooComplex
			}
			seen[k] = len(nodes)
			nodes = append(nodes, node{state: next, parent: head, sym: sym})
			if p.accepts(next, len(must)) {
				var name []byte
				for n := len(nodes) - 1; n > 0; n = nodes[n].parent {
					name = append(name, p.char(nodes[n].sym))
				}
				slices.Reverse(name)
				return string(name), true, nil
			}
		}
	}
	return "", false, nil
}

// exampleOf returns a shortest name matching g: its literal characters,
// with nothing for each "*" (or "x" if that leaves nothing).
func exampleOf(g *Glob) string {
	var name []byte
	for _, s := range g.segs {
		if s.kind == segLit {
			name = append(name, s.lit)
		}
	}
	if len(name) == 0 {
		return "x"
	}
	return string(name)
}

// product is the synchronous product of several globs' position automata,
// with every glob's positions laid side by side in one bit set.
type product struct {
	globs  []*Glob
	offset []int  // first bit of each glob
	owner  []int  // bit -> glob
	pos    []int  // bit -> position in its glob
	star   bitset // bits of "*" positions
	lits   []byte // the alphabet's literals; symbol len(lits) is "other"
	other  byte   // how the other symbol is written in witnesses
	nbits  int
}

func newProduct(globs []*Glob) *product {
	p := &product{globs: globs}
	for gi, g := range globs {
		p.offset = append(p.offset, p.nbits)
		for i := 0; i <= len(g.segs); i++ {
			p.owner = append(p.owner, gi)
			p.pos = append(p.pos, i)
		}
		p.nbits += len(g.segs) + 1
		for _, s := range g.segs {
			if s.kind == segLit && !slices.Contains(p.lits, s.lit) {
				p.lits = append(p.lits, s.lit)
			}
		}
	}
	slices.Sort(p.lits)
	p.star = make(bitset, words(p.nbits))
	for gi, g := range globs {
		for i, s := range g.segs {
			if s.kind == segStar {
				p.star.set(p.offset[gi] + i)
			}
		}
	}
	// The other symbol is written as the first name character no pattern
	// spells out; when the patterns use them all, as "~", which stands for
	// any character outside the tool-name alphabet.
	p.other = '~'
	for _, c := range []byte("xyzwvuqponmlkjihgfedcbaXYZWVUTSRQPONMLKJIHGFEDCBA0123456789_-.") {
		if !slices.Contains(p.lits, c) {
			p.other = c
			break
		}
	}
	return p
}

func (p *product) char(sym int) byte {
	if sym < len(p.lits) {
		return p.lits[sym]
	}
	return p.other
}

func (p *product) start() bitset {
	b := make(bitset, words(p.nbits))
	for _, off := range p.offset {
		b.set(off)
	}
	b.closure(p.star)
	return b
}

func (p *product) step(cur bitset, sym int) bitset {
	next := make(bitset, len(cur))
	for bit := range cur.each(p.nbits) {
		g := p.globs[p.owner[bit]]
		i := p.pos[bit]
		if i == len(g.segs) {
			continue // accepting position: no character may follow
		}
		switch s := &g.segs[i]; s.kind {
		case segStar:
			next.set(bit)
		default:
			if sym < len(p.lits) && p.lits[sym] == s.lit {
				next.set(bit + 1)
			}
		}
	}
	next.closure(p.star)
	return next
}

// alive reports whether each of the first nmust globs still has a reachable
// position: otherwise no extension of the name can satisfy them.
func (p *product) alive(b bitset, nmust int) bool {
	for gi := range nmust {
		off, end := p.offset[gi], p.offset[gi]+len(p.globs[gi].segs)
		ok := false
		for bit := off; bit <= end; bit++ {
			if b.has(bit) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// accepts reports whether the first nmust globs all accept and the others
// all reject.
func (p *product) accepts(b bitset, nmust int) bool {
	for gi, g := range p.globs {
		if b.has(p.offset[gi]+len(g.segs)) != (gi < nmust) {
			return false
		}
	}
	return true
}

func (b bitset) key() string {
	buf := make([]byte, 0, 8*len(b))
	for _, w := range b {
		for k := range 8 {
			buf = append(buf, byte(w>>(8*k)))
		}
	}
	return string(buf)
}
