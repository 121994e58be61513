package main

import (
	"strings"
	"testing"
)

// TestValidCreatedName checks the form statewright_create_workflow
// accepts for a workflow's name: 1 to 128 of [A-Za-z0-9_.-], starting
// with a letter or digit.
func TestValidCreatedName(t *testing.T) {
	for name, want := range map[string]bool{
		"a":                      true,
		"data-pipeline":          true,
		"v1.2_final":             true,
		"9lives":                 true,
		strings.Repeat("a", 128): true,
		"":                       false,
		strings.Repeat("a", 129): false,
		"-x":                     false,
		".hidden":                false,
		"_x":                     false,
		"a b":                    false,
		"a/b":                    false,
		"../etc":                 false,
		"é":                      false,
		"a\n":                    false,
		"a:b":                    false,
	} {
		if got := validCreatedName(name); got != want {
			t.Errorf("validCreatedName(%q) = %v, want %v", name, got, want)
		}
	}
}
