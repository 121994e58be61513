package statechart_test

import (
	"testing"

	"github.com/chartgate/chartgate/statechart"
)

func TestMatchesEvent(t *testing.T) {
	for _, c := range []struct {
		ev, descriptor string
		want           bool
	}{
		{"cart", "cart", true},
		{"cart", "*", true},
		{"cart", "cart.*", true},
		{"cart.add", "cart.*", true},
		{"cart.add.one", "cart.*", true},
		{"carts", "cart.*", false},
		{"cart.add", "cart", false},
		{"a.x.b", "a.*.b", false},
		{"a.x.b", "a.*.b.*", false},
	} {
		if got := statechart.MatchesEvent(c.ev, c.descriptor); got != c.want {
			t.Errorf("MatchesEvent(%q, %q) = %v, want %v", c.ev, c.descriptor, got, c.want)
		}
	}
}
