package main

import (
	"fmt"
	"strings"
	"testing"
)

// FuzzAgentWarnings feeds agentWarnings any bytes: it never panics, and
// everything it reports is a warning with a path in the file.
func FuzzAgentWarnings(f *testing.F) {
	f.Add([]byte(`{"id": "bad", "initial": "r", "meta": {"danger_level": "moderate"}, "states": {
		"r": {"allowed_tools": ["read_file"], "on": {"GO": "d", "X": [{"target": "f"}, "r"]}},
		"d": {"allowed_tools": ["deploy"], "on": {"DONE": {"target": "c", "requires_approval": true}}},
		"c": {"type": "final"}, "f": {"type": "final"}}}`))
	f.Add([]byte(`{"meta": {"danger_level": 1}, "states": []}`))
	f.Add([]byte(`{"meta": {"danger_level": "dangerous"}, "initial": "a.b", "states": {"a.b": {"on": {"*": "a.b"}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, p := range agentWarnings(data) {
			if !p.warning || p.path == "" || p.msg == "" {
				t.Fatalf("%+v", p)
			}
		}
	})
}

// Every state of a long chain that ends in "failed" reaches it: no
// warning.
func TestAgentWarningsChain(t *testing.T) {
	var b strings.Builder
	const n = 20000
	b.WriteString(`{"initial": "s0", "meta": {"danger_level": "safe"}, "states": {`)
	for i := range n {
		fmt.Fprintf(&b, `"s%d": {"on": {"NEXT": "s%d"}},`, i, i+1)
	}
	fmt.Fprintf(&b, `"s%d": {"on": {"FAIL": "failed"}}, "failed": {"type": "final"}}}`, n)
	if ws := agentWarnings([]byte(b.String())); len(ws) != 0 {
		t.Fatalf("a chain that reaches failed: %v", ws)
	}
}
