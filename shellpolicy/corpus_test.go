package shellpolicy_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/chartgate/chartgate/shellpolicy"
)

// corpusPolicy is a policy of testdata/corpus.json, in the state fields'
// names.
type corpusPolicy struct {
	AllowedCommands []string `json:"allowed_commands"`
	AllowedTools    []string `json:"allowed_tools"`
	BlockedEnv      []string `json:"blocked_env"`
	AllowUnknown    bool     `json:"allow_unknown"`
	Dialect         string   `json:"dialect"`
}

func (p corpusPolicy) policy(t testing.TB) shellpolicy.Policy {
	out := shellpolicy.Policy{
		AllowedCommands: p.AllowedCommands,
		AllowedTools:    p.AllowedTools,
		BlockedEnv:      p.BlockedEnv,
		AllowUnknown:    p.AllowUnknown,
	}
	switch p.Dialect {
	case "", "bash":
	case "zsh":
		out.Dialect = shellpolicy.Zsh
	case "posix":
		out.Dialect = shellpolicy.POSIX
	default:
		t.Fatalf("unknown dialect %q", p.Dialect)
	}
	return out
}

// corpusCase is one command line with its expected verdict.
type corpusCase struct {
	Policy string `json:"policy"`
	Cmd    string `json:"cmd"`
	Allow  bool   `json:"allow"`
	// Reason, when set, must appear in the refusal's reason.
	Reason string `json:"reason"`
	// Writes, when present, are the paths the line writes, in order; a
	// dynamic path is "dyn:" followed by its text.
	Writes *[]string `json:"writes"`
	Note   string    `json:"note"`
}

type corpus struct {
	Policies map[string]corpusPolicy `json:"policies"`
	Cases    []corpusCase            `json:"cases"`
}

func loadCorpus(t testing.TB) corpus {
	t.Helper()
	data, err := os.ReadFile("testdata/corpus.json")
	if err != nil {
		t.Fatal(err)
	}
	var c corpus
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("testdata/corpus.json: %v", err)
	}
	return c
}

// writeStrings renders paths as the corpus writes them.
func writeStrings(ps []shellpolicy.Path) []string {
	out := []string{}
	for _, p := range ps {
		if p.Dynamic {
			out = append(out, "dyn:"+p.Path)
		} else {
			out = append(out, p.Path)
		}
	}
	return out
}

// TestCorpus checks every command line of testdata/corpus.json against its
// policy: the verdict, the reason, the files written, and that a line is
// allowed exactly when each of its entries is.
func TestCorpus(t *testing.T) {
	c := loadCorpus(t)
	if len(c.Cases) < 200 {
		t.Errorf("the corpus has %d cases, want at least 200", len(c.Cases))
	}
	seen := map[string]bool{}
	for i, tc := range c.Cases {
		key := tc.Policy + "\x00" + tc.Cmd
		if seen[key] {
			t.Errorf("case %d: %q under %q is in the corpus twice", i, tc.Cmd, tc.Policy)
		}
		seen[key] = true
		cp, ok := c.Policies[tc.Policy]
		if !ok {
			t.Fatalf("case %d: unknown policy %q", i, tc.Policy)
		}
		p := cp.policy(t)
		d := p.Check(tc.Cmd)
		if d.Allowed != tc.Allow {
			t.Errorf("case %d (%s): %q: allowed = %v, want %v; reason: %s", i, tc.Policy, tc.Cmd, d.Allowed, tc.Allow, d.Reason)
			continue
		}
		if d.Allowed && d.Reason != "" {
			t.Errorf("case %d: %q: allowed with a reason: %s", i, tc.Cmd, d.Reason)
		}
		if !d.Allowed && d.Reason == "" {
			t.Errorf("case %d: %q: refused without a reason", i, tc.Cmd)
		}
		if tc.Reason != "" && !strings.Contains(d.Reason, tc.Reason) {
			t.Errorf("case %d: %q: reason %q does not contain %q", i, tc.Cmd, d.Reason, tc.Reason)
		}
		if d.Analysis == nil {
			if d.Err == nil {
				t.Errorf("case %d: %q: no analysis and no error", i, tc.Cmd)
			}
			continue
		}
		all := true
		for _, v := range d.Commands {
			all = all && v.Allowed
		}
		if all != d.Allowed {
			t.Errorf("case %d: %q: allowed = %v but every entry allowed = %v", i, tc.Cmd, d.Allowed, all)
		}
		if tc.Writes != nil {
			if got := writeStrings(d.Analysis.Writes()); !slices.Equal(got, *tc.Writes) {
				t.Errorf("case %d: %q: writes %q, want %q", i, tc.Cmd, got, *tc.Writes)
			}
		}
	}
}
