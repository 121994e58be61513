package shellpolicy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chartgate/chartgate/shellpolicy"
)

// hostileCorpus is testdata/hostile.json: command lines an agent could
// use against the gate, each with its state's policy and verdict, under
// the protection the hook gives.
type hostileCorpus struct {
	Protection struct {
		Paths    []string `json:"paths"`
		Secrets  []string `json:"secrets"`
		Programs []string `json:"programs"`
		Dir      string   `json:"dir"`
		Home     string   `json:"home"`
	} `json:"protection"`
	Policies map[string]corpusPolicy `json:"policies"`
	Cases    []struct {
		Policy string `json:"policy"`
		Cmd    string `json:"cmd"`
		Allow  bool   `json:"allow"`
		Reason string `json:"reason"`
		// Run: the line is run in a project holding the protected files
		// (TestHostileAllowedAreHarmless).
		Run bool `json:"run"`
	} `json:"cases"`
}

func loadHostile(t testing.TB) hostileCorpus {
	t.Helper()
	data, err := os.ReadFile("testdata/hostile.json")
	if err != nil {
		t.Fatal(err)
	}
	var c hostileCorpus
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("testdata/hostile.json: %v", err)
	}
	return c
}

func (c hostileCorpus) protection(dir, home string) *shellpolicy.Protection {
	return &shellpolicy.Protection{Paths: c.Protection.Paths, Secrets: c.Protection.Secrets,
		Programs: c.Protection.Programs, Dir: dir, Home: home}
}

// TestHostile decides every line of testdata/hostile.json in its state:
// what is refused is refused in every state, unknown commands allowed
// and every command named by an allowed pattern included.
func TestHostile(t *testing.T) {
	c := loadHostile(t)
	if len(c.Cases) < 200 {
		t.Errorf("the hostile corpus has %d cases, want at least 200", len(c.Cases))
	}
	prot := c.protection(c.Protection.Dir, c.Protection.Home)
	for i, tc := range c.Cases {
		cp, ok := c.Policies[tc.Policy]
		if !ok {
			t.Fatalf("case %d: unknown policy %q", i, tc.Policy)
		}
		p := cp.policy(t)
		p.Protect = prot
		d := p.Check(tc.Cmd)
		if d.Allowed != tc.Allow {
			t.Errorf("case %d (%s): %q: allowed = %v, want %v; reason: %s", i, tc.Policy, tc.Cmd, d.Allowed, tc.Allow, d.Reason)
			continue
		}
		if tc.Reason != "" && !strings.Contains(strings.ToLower(d.Reason), strings.ToLower(tc.Reason)) {
			t.Errorf("case %d: %q: reason %q does not contain %q", i, tc.Cmd, d.Reason, tc.Reason)
		}
		// Without the protection, the lines refused in every state by it
		// would not all be refused: the corpus tests the protection, not
		// only the classes.
		if !tc.Allow && tc.Policy == "named" && !slices.ContainsFunc(d.Commands, func(v shellpolicy.Verdict) bool {
			return strings.Contains(v.Reason, "refused in every state")
		}) {
			t.Errorf("case %d: %q refused in state %q, but not as refused in every state: %s", i, tc.Cmd, tc.Policy, d.Reason)
		}
	}
}

// protectedFiles are created in the project and home of
// TestHostileAllowedAreHarmless, with their content.
var protectedFiles = []string{
	"proj/.chartgate/workflow.json", "proj/.chartgate/state.db", "proj/.claude/settings.json",
	"proj/.claude/settings.local.json", "proj/.mcp.json", "proj/.codex/hooks.json", "proj/.codex/config.toml",
	"proj/.cursor/hooks.json", "proj/.cursor/mcp.json", "proj/.gemini/settings.json", "proj/.github/hooks/a.json",
	"home/.claude/settings.json", "home/.codex/config.toml", "home/.gemini/settings.json", "home/.config/chartgate/secret",
}

// snapshot records every file and link under the protected folders.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, d := range []string{"proj/.chartgate", "proj/.claude", "proj/.codex", "proj/.cursor", "proj/.gemini",
		"proj/.github", "home/.claude", "home/.codex", "home/.gemini", "home/.config/chartgate", "proj/.mcp.json"} {
		filepath.Walk(filepath.Join(root, d), func(p string, fi os.FileInfo, err error) error {
			if err != nil {
				out[p] = "missing"
				return nil
			}
			switch {
			case fi.Mode()&os.ModeSymlink != 0:
				out[p] = "link"
			case fi.IsDir():
				out[p] = "dir"
			default:
				b, _ := os.ReadFile(p)
				out[p] = string(b)
			}
			return nil
		})
	}
	return out
}

// TestHostileAllowedAreHarmless runs every allowed line of the hostile
// corpus marked "run" with bash, in a project that holds every protected
// file (and a home that holds the user-level ones), and checks that none
// of them, nor the folders holding them, changed. Lines that reach the
// network are decided but not run.
func TestHostileAllowedAreHarmless(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	c := loadHostile(t)
	ran := 0
	for i, tc := range c.Cases {
		if !tc.Run {
			continue
		}
		root := t.TempDir()
		proj, home := filepath.Join(root, "proj"), filepath.Join(root, "home")
		for _, f := range append(slices.Clone(protectedFiles), "proj/a", "proj/x", "proj/a.txt", "proj/README.md",
			"proj/src/x.go", "proj/pkg/p.go", "proj/cmd/chartgate/main.go", "proj/docs/d.md", "proj/build/keep") {
			p := filepath.Join(root, f)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("content of "+f+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := exec.Command("tar", "-cf", filepath.Join(proj, "a.tar"), "-C", proj, "a", "x").Run(); err != nil {
			t.Fatal(err)
		}
		cp := c.Policies[tc.Policy]
		p := cp.policy(t)
		p.Protect = c.protection(proj, home)
		d := p.Check(tc.Cmd)
		if !d.Allowed {
			t.Errorf("case %d: %q is refused in a real project: %s", i, tc.Cmd, d.Reason)
			continue
		}
		if slices.ContainsFunc(d.Analysis.Commands, func(c shellpolicy.Command) bool { return c.Class&shellpolicy.Network != 0 }) {
			continue
		}
		before := snapshot(t, root)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		cmd := exec.CommandContext(ctx, bash, "-c", tc.Cmd)
		cmd.Dir = proj
		cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GOFLAGS=-mod=mod", "GOPROXY=off",
			"GOCACHE=" + filepath.Join(root, "gocache"), "GOPATH=" + filepath.Join(root, "gopath"), "TMPDIR=" + root}
		out, _ := cmd.CombinedOutput()
		cancel()
		ran++
		after := snapshot(t, root)
		for k, v := range before {
			if after[k] != v {
				t.Errorf("case %d: %q changed %s (%q -> %q); output: %s", i, tc.Cmd, k, v, after[k], out)
			}
		}
		for k := range after {
			if _, ok := before[k]; !ok {
				t.Errorf("case %d: %q created %s", i, tc.Cmd, k)
			}
		}
	}
	if ran < 20 {
		t.Errorf("only %d lines ran", ran)
	}
}
