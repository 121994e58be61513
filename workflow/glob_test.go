// This file tests MatchFile against the glob tests of Statewright's
// interrupt.rs, the corners of its semantics, and a plain recursive
// definition of the same semantics.

package workflow_test

import (
	"strings"
	"testing"

	"github.com/chartgate/chartgate/workflow"
)

func TestMatchFile(t *testing.T) {
	for _, tc := range []struct {
		name          string
		pattern, path string
		want          bool
	}{
		// Statewright's interrupt.rs, glob_match tests.
		{"literal_exact_match", "src/main.rs", "src/main.rs", true},
		{"literal_mismatch", "src/main.rs", "src/lib.rs", false},
		{"single_star_matches_filename", "src/*.rs", "src/main.rs", true},
		{"single_star_matches_filename", "src/*.rs", "src/lib.rs", true},
		{"single_star_does_not_cross_directory", "src/*.rs", "src/sub/main.rs", false},
		{"double_star_matches_any_depth", "**/*.rs", "src/main.rs", true},
		{"double_star_matches_any_depth", "**/*.rs", "src/sub/deep/main.rs", true},
		{"double_star_matches_any_depth", "**/*.rs", "main.rs", true},
		{"double_star_in_middle", "site/pb/**/*.js", "site/pb/hooks/auth.pb.js", true},
		{"double_star_in_middle", "site/pb/**/*.js", "site/pb/migrations/001.js", true},
		{"double_star_in_middle", "site/pb/**/*.js", "site/pb/deep/nested/file.js", true},
		{"double_star_no_match_wrong_prefix", "site/pb/**/*.js", "src/pb/hooks/auth.js", false},
		{"double_star_no_match_wrong_extension", "site/pb/**/*.js", "site/pb/hooks/auth.ts", false},
		{"question_mark_matches_single_char", "src/?.rs", "src/a.rs", true},
		{"question_mark_matches_single_char", "src/?.rs", "src/ab.rs", false},
		{"question_mark_does_not_match_slash", "src/?/main.rs", "src//main.rs", false},
		{"star_env_pattern", "**/*.env*", "src/.env", true},
		{"star_env_pattern", "**/*.env*", ".env.local", true},
		{"star_env_pattern", "**/*.env*", "config/.env.production", true},
		{"double_star_at_end", "site/pb/**", "site/pb/hooks/auth.js", true},
		{"double_star_at_end", "site/pb/**", "site/pb/anything", true},
		{"empty_pattern_matches_empty_path", "", "", true},
		{"empty_pattern_does_not_match_nonempty", "", "something", false},

		// The corners of the same semantics.
		{"double star is a run of characters, not of segments", "**/x", "ax", true},
		{"double star crosses slashes inside a segment", "a**b", "a/c/b", true},
		{"trailing slash after double star with the path used up", "x/**/", "x/", false},
		{"double star at the end needs a character", "x/**", "x/", true},
		{"star matches nothing", "a*b", "ab", true},
		{"star does not match a slash", "a*b", "a/b", false},
		{"several stars backtrack", "*a*b*c", "xaybzc", true},
		{"star against a slash later", "*.go", "cmd/main.go", false},
		{"no character classes", "[ab].go", "a.go", false},
		{"brackets are literal", "[ab].go", "[ab].go", true},
		{"no escapes", `\*.go`, `\x.go`, true},
		{"empty path, pattern of stars", "***", "", true},
		{"empty path, pattern with a literal", "*a", "", false},
		{"question mark needs a character", "?", "", false},
	} {
		if got := workflow.MatchFile(tc.pattern, tc.path); got != tc.want {
			t.Errorf("%s: MatchFile(%q, %q) = %v, want %v", tc.name, tc.pattern, tc.path, got, tc.want)
		}
		if got := refMatch(tc.pattern, tc.path); got != tc.want {
			t.Errorf("%s: refMatch(%q, %q) = %v, want %v (the reference disagrees with the table)", tc.name, tc.pattern, tc.path, got, tc.want)
		}
	}
}

// refMatch is the definition MatchFile computes, written as the plain
// exponential recursion: once the path is used up only stars may be left;
// "**" (and a "/" after it) matches any run of characters; "*" a run of
// characters other than "/"; "?" one character other than "/".
func refMatch(p, s string) bool {
	if s == "" {
		return strings.Trim(p, "*") == ""
	}
	if p == "" {
		return false
	}
	if strings.HasPrefix(p, "**") {
		rest := strings.TrimPrefix(p[2:], "/")
		if rest == "" {
			return true
		}
		for i := 0; i <= len(s); i++ {
			if refMatch(rest, s[i:]) {
				return true
			}
		}
		return false
	}
	switch p[0] {
	case '*':
		return refMatch(p[1:], s) || (s[0] != '/' && refMatch(p, s[1:]))
	case '?':
		return s[0] != '/' && refMatch(p[1:], s[1:])
	}
	return p[0] == s[0] && refMatch(p[1:], s[1:])
}

// FuzzMatchFile checks MatchFile against the recursive definition.
func FuzzMatchFile(f *testing.F) {
	for _, seed := range [][2]string{
		{"**/*.env*", "config/.env.local"}, {"site/pb/**/*.js", "site/pb/a/b.js"}, {"src/?.rs", "src/a.rs"},
		{"*a*b", "xaxb"}, {"x/**/", "x/"}, {"a**b**c", "a/b/x/c"}, {"", ""}, {"**", "a"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, pattern, path string) {
		if len(pattern) > 12 || len(path) > 16 || strings.Count(pattern, "*") > 6 {
			return // keep the exponential reference fast
		}
		if got, want := workflow.MatchFile(pattern, path), refMatch(pattern, path); got != want {
			t.Fatalf("MatchFile(%q, %q) = %v, the definition says %v", pattern, path, got, want)
		}
	})
}

func TestMatchFileHostilePattern(t *testing.T) {
	// Exponential for a backtracking matcher; linear passes here.
	pattern := strings.Repeat("**a", 40) + "b"
	path := strings.Repeat("a", 4000)
	if workflow.MatchFile(pattern, path) {
		t.Fatal("matched a path without a b")
	}
}

func BenchmarkMatchFile(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		workflow.MatchFile("site/pb/**/*.js", "site/pb/hooks/deep/nested/auth.pb.js")
	}
}
