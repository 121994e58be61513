package shellpolicy_test

import (
	"testing"

	"github.com/chartgate/chartgate/shellpolicy"
)

// TestVerdictClass: a refused entry names the class whose requirement
// refused it; an allowed one, or one refused by allowed_commands, none.
func TestVerdictClass(t *testing.T) {
	for _, c := range []struct {
		line    string
		policy  shellpolicy.Policy
		refused shellpolicy.Class
	}{
		{"cat > file.rs", shellpolicy.Policy{AllowedTools: []string{"Read"}}, shellpolicy.FileWrite},
		{"sed -i s/a/b/ f.rs", shellpolicy.Policy{AllowedTools: []string{"Read"}}, shellpolicy.FileModify},
		{"rm -rf target/", shellpolicy.Policy{AllowedTools: []string{"Read", "Write", "Edit"}}, shellpolicy.Destructive},
		{"cat f.rs", shellpolicy.Policy{AllowedTools: []string{"Read"}}, 0},
		{"rm -rf /", shellpolicy.Policy{AllowedCommands: []string{"pytest"}}, 0},
	} {
		d := c.policy.Check(c.line)
		var got shellpolicy.Class
		for _, v := range d.Commands {
			if !v.Allowed && got == 0 {
				got = v.Class
			}
		}
		if got != c.refused {
			t.Errorf("%q: refused by class %v, want %v (%s)", c.line, got, c.refused, d.Reason)
		}
		if c.line == "rm -rf /" && d.Allowed {
			t.Errorf("%q: allowed", c.line)
		}
	}
}
