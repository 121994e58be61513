package benchgen

import (
	"encoding/json"
	"testing"
)

// count returns the number of state nodes of a config, the root included.
func count(t *testing.T, cfg map[string]any) int {
	t.Helper()
	n := 1
	states, _ := cfg["states"].(map[string]any)
	for _, c := range states {
		n += count(t, c.(map[string]any))
	}
	return n
}

func TestSizes(t *testing.T) {
	for _, n := range []int{2, 7, 100, 1000} {
		for name, gen := range map[string]func(int) []byte{"flat": Flat, "nested": Nested} {
			var cfg map[string]any
			if err := json.Unmarshal(gen(n), &cfg); err != nil {
				t.Fatalf("%s(%d): %v", name, n, err)
			}
			want := n
			if name == "flat" {
				want = n + 1
			}
			if got := count(t, cfg); got != want {
				t.Errorf("%s(%d) has %d state nodes, want %d", name, n, got, want)
			}
		}
	}
}
