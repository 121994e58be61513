package shellpolicy_test

import (
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
