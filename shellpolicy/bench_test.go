package shellpolicy_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chartgate/chartgate/shellpolicy"
)

// benchCommands are typical agent command lines; the hook checks one on
// every Bash call.
var benchCommands = []struct{ name, cmd string }{
	{"simple", "git status"},
	{"pipeline", "go test ./... 2>&1 | tail -20"},
	{"chain", "cd backend && pytest -x tests/test_api.py -k 'login and not slow' --tb=short"},
	{"nested", `find . -name '*.go' -exec grep -l "TODO" {} + | xargs -I{} sh -c 'wc -l {}'`},
	{"inline", `python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])' < package.json`},
	{"heredoc", "cat > notes.md <<'EOF'\n" + strings.Repeat("A line of notes with $dollars and `ticks`.\n", 50) + "EOF"},
}

func BenchmarkAnalyze(b *testing.B) {
	for _, bc := range benchCommands {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := shellpolicy.Analyze(bc.cmd); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkCheck(b *testing.B) {
	p := shellpolicy.Policy{
		AllowedCommands: []string{"git status", "go test *", "tail *", "cd *", "pytest*", "find *", "grep *", "xargs *",
			"sh -c *", "wc *", "python3 *", "cat *"},
		AllowedTools: []string{"Bash", "Read", "Grep", "Glob", "Write"},
		BlockedEnv:   []string{"AWS_*", "GITHUB_TOKEN"},
	}
	for _, bc := range benchCommands {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if d := p.Check(bc.cmd); d.Err != nil {
					b.Fatal(d.Err)
				}
			}
		})
	}
}

// BenchmarkNesting checks a line nested deeper and deeper through $(...)
// (refused past 64 levels), and a line 40 levels deep repeated, as the
// line grows: both should cost time and memory linear in its length.
func BenchmarkNesting(b *testing.B) {
	var p shellpolicy.Policy
	for _, n := range []int{1000, 2000, 4000, 8000} {
		b.Run(fmt.Sprintf("subst-depth-%d", n), func(b *testing.B) {
			line := nestedSubst(n)
			b.ReportAllocs()
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				p.Check(line)
			}
		})
	}
	for _, n := range []int{25, 50, 100, 200} {
		b.Run(fmt.Sprintf("depth40-x%d", n), func(b *testing.B) {
			line := wide(n)
			b.ReportAllocs()
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				p.Check(line)
			}
		})
	}
}
