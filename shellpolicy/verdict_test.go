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

// TestVerdictUnlisted: Unlisted marks the entries refused for matching
// none of the allowed commands, and only those: an entry an allowed
// command matches but the protection or a class refuses is not unlisted.
func TestVerdictUnlisted(t *testing.T) {
	protect := &shellpolicy.Protection{Programs: []string{"chartgate"}, Dir: "/work"}
	for _, c := range []struct {
		name     string
		line     string
		policy   shellpolicy.Policy
		allowed  bool
		pattern  string
		unlisted bool
	}{
		{"protected program, listed", "chartgate approve", shellpolicy.Policy{AllowedCommands: []string{"chartgate"}, Protect: protect}, false, "", false},
		{"protected program, unlisted", "chartgate approve", shellpolicy.Policy{AllowedCommands: []string{"go test"}, Protect: protect}, false, "", true},
		{"allowed prefix", "go test ./...", shellpolicy.Policy{AllowedCommands: []string{"pytest", "go test"}}, true, "go test", false},
		{"allowed prefix, class refused", "go test ./... > out.txt", shellpolicy.Policy{AllowedCommands: []string{"go test"}, AllowedTools: []string{"Read"}}, false, "go test", false},
		{"no match", "rm -rf target", shellpolicy.Policy{AllowedCommands: []string{"pytest", "go test"}}, false, "", true},
		{"no allowed list", "rm -rf target", shellpolicy.Policy{AllowedTools: []string{"Read"}}, false, "", false},
		{"no allowed list, allowed", "ls", shellpolicy.Policy{}, true, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := c.policy.Check(c.line)
			if d.Allowed != c.allowed {
				t.Fatalf("%q: allowed %v, want %v (%s)", c.line, d.Allowed, c.allowed, d.Reason)
			}
			if len(d.Commands) == 0 {
				t.Fatalf("%q: no entries decided (%s)", c.line, d.Reason)
			}
			v := d.Commands[0]
			for _, w := range d.Commands {
				if !w.Allowed {
					v = w
					break
				}
			}
			if v.Unlisted != c.unlisted || v.Pattern != c.pattern {
				t.Errorf("%q: Unlisted %v, Pattern %q; want %v, %q (%s)", c.line, v.Unlisted, v.Pattern, c.unlisted, c.pattern, d.Reason)
			}
		})
	}
}
