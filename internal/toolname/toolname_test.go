package toolname_test

import (
	"strings"
	"testing"

	"github.com/chartgate/chartgate/internal/toolname"
)

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		pattern, name string
		want          bool
	}{
		{"cart.*", "cart.items.list", true},
		{"cart.*", "cart.", true},
		{"cart.*", "cart", false},
		{"cart_*", "cart_pay", true},
		{"cart_*", "carts_pay", false},
		{"*", "", true},
		{"*", "anything.at.all", true},
		{"*_list", "cart_items_list", true},
		{"a*b*c", "abc", true},
		{"a*b*c", "aXbYc", true},
		{"a*b*c", "acb", false},
		{"ab*ba", "aba", false}, // prefix and suffix must not overlap
		{"ab*ba", "abba", true},
		{"a**b", "ab", true},
		{"x", "x", true},
		{"x", "X", false},
		{"*.list", "cart.list", true},
		{"*a*", "bbb", false},
	} {
		if got := toolname.Match(c.pattern, c.name); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.pattern, c.name, got, c.want)
		}
	}
}

// reference is matching by dynamic programming over the whole pattern.
func reference(p, n string) bool {
	ok := make([]bool, len(n)+1) // ok[j]: p[:i] matches n[:j]
	ok[0] = true
	for i := 0; i < len(p); i++ {
		next := make([]bool, len(n)+1)
		for j := 0; j <= len(n); j++ {
			if p[i] == '*' {
				next[j] = ok[j] || (j > 0 && next[j-1])
			} else {
				next[j] = j > 0 && ok[j-1] && p[i] == n[j-1]
			}
		}
		ok = next
	}
	return ok[len(n)]
}

func FuzzMatch(f *testing.F) {
	f.Add("a*b*c", "aXbYc")
	f.Add("ab*ba", "aba")
	f.Fuzz(func(t *testing.T, p, n string) {
		if len(p) > 64 || len(n) > 256 {
			return
		}
		if got, want := toolname.Match(p, n), reference(p, n); got != want {
			t.Fatalf("Match(%q, %q) = %v, want %v", p, n, got, want)
		}
	})
}

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		s       string
		pattern bool
		want    string
	}{
		{"cart.items.list", false, ""},
		{"cart_*", true, ""},
		{"cart_*", false, `"cart_*" is not a tool name: use letters, digits, "_", "-" and "."`},
		{"a b", true, `"a b" is not a tool name or pattern: use letters, digits, "_", "-", "." and "*"`},
		{"", true, "a tool name must not be empty"},
		{strings.Repeat("a", 129), false, `"` + strings.Repeat("a", 129) + `" is longer than 128 characters`},
	} {
		if got := toolname.Check(c.s, c.pattern); got != c.want {
			t.Errorf("Check(%q, %v) = %q, want %q", c.s, c.pattern, got, c.want)
		}
	}
}
