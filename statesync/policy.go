// This file defines policies, cache directives and their validation.

package statesync

import (
	"fmt"
	"strings"
)

// CacheControl is a cache directive attached to a tool's description. The
// vocabulary is deliberately binary: a model has no clock, so a max-age would
// mean nothing to it.
type CacheControl string

const (
	// NoStore marks data that may change at any time: re-read it before
	// relying on it.
	NoStore CacheControl = "no-store"
	// Immutable marks reference data that never changes: a copy read once
	// stays valid.
	Immutable CacheControl = "immutable"
)

// Valid reports whether c is [NoStore] or [Immutable].
func (c CacheControl) Valid() bool { return c == NoStore || c == Immutable }

// A Policy is one rule of a [Layer]. Policies are tried in order and the
// first whose Match matches a tool's canonical name wins, even when it sets
// neither field (it then stops later policies from applying, and the tool
// gets [Options.Default]).
type Policy struct {
	// Match is a glob (see [Glob]) over canonical, dot-separated tool names,
	// such as "sprints.update" or "countries.*".
	Match string
	// CacheControl is appended to the description of matching tools. Empty
	// means [Options.Default].
	CacheControl CacheControl
	// Invalidates lists globs naming the data a successful call of a
	// matching tool makes stale, such as "sprints.*".
	Invalidates []string
}

// A Problem is one thing wrong with a configuration.
type Problem struct {
	// Index is the position of the faulty policy, or -1 when the problem is
	// in the [Options].
	Index int
	// Field names what is wrong: "match", "cacheControl",
	// "invalidates[2]" for a policy, or the Options field ("Default",
	// "URIScheme", "Separator").
	Field string
	// Message says what is wrong, without the "policy[i]: " prefix.
	Message string
}

func (p Problem) String() string {
	if p.Index < 0 {
		return p.Message
	}
	return fmt.Sprintf("policy[%d]: %s", p.Index, p.Message)
}

// ConfigError lists every problem found in a configuration, in policy order,
// then the problems in the options. [New] and [Validate] return it.
type ConfigError struct {
	Problems []Problem
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("statesync: ")
		b.WriteString(p.String())
	}
	return b.String()
}

// Validate checks policies and a default directive the way [New] does, and
// returns a *[ConfigError] listing every problem, or nil.
func Validate(policies []Policy, def CacheControl) error {
	probs := validatePolicies(policies)
	probs = append(probs, validateDefault(def)...)
	if len(probs) > 0 {
		return &ConfigError{Problems: probs}
	}
	return nil
}

func validatePolicies(policies []Policy) []Problem {
	var probs []Problem
	for i, p := range policies {
		if p.Match == "" {
			probs = append(probs, Problem{i, "match", "'match' must be a non-empty string"})
		} else if err := ValidatePattern(p.Match); err != nil {
			probs = append(probs, Problem{i, "match", "'match' " + err.Error()})
		}
		if p.CacheControl != "" && !p.CacheControl.Valid() {
			probs = append(probs, Problem{i, "cacheControl", fmt.Sprintf("invalid cacheControl %q. Allowed: %q, %q", p.CacheControl, NoStore, Immutable)})
		}
		for k, inv := range p.Invalidates {
			if msg := invalidatesProblem(k, inv); msg != "" {
				probs = append(probs, Problem{i, fmt.Sprintf("invalidates[%d]", k), msg})
			}
		}
	}
	return probs
}

// invalidatesProblem describes what is wrong with entry k of an Invalidates
// list, or returns "".
func invalidatesProblem(k int, pattern string) string {
	if pattern == "" {
		return fmt.Sprintf("'invalidates' entries must be non-empty strings. Entry %d is empty", k)
	}
	if err := ValidatePattern(pattern); err != nil {
		return fmt.Sprintf("'invalidates' entry %d: %v", k, err)
	}
	return ""
}

func validateDefault(def CacheControl) []Problem {
	if def == "" || def.Valid() {
		return nil
	}
	return []Problem{{-1, "Default", fmt.Sprintf("default cacheControl %q is invalid. Allowed: %q, %q", def, NoStore, Immutable)}}
}

// compiledPolicy is a validated Policy with its globs compiled.
type compiledPolicy struct {
	match       *Glob
	cache       CacheControl
	invalidates []string
}
