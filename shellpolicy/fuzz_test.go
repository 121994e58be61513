package shellpolicy_test

import (
	"slices"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"github.com/chartgate/chartgate/shellpolicy"
)

// fuzzPolicies are the policies FuzzCheck decides lines with.
var fuzzPolicies = []shellpolicy.Policy{
	{AllowedCommands: []string{"pytest*", "go test *", "git status"}},
	{AllowedTools: []string{"Bash", "Read", "Grep", "Glob"}},
	{},
	{BlockedEnv: []string{"SECRET*"}},
	{AllowedCommands: []string{"rm -rf build*", "git push origin *", "*"}, Dialect: shellpolicy.Zsh},
	{AllowUnknown: true, Protect: &shellpolicy.Protection{Paths: []string{".chartgate/**", ".claude/settings.json", "~/.claude/settings.json"},
		Secrets: []string{".chartgate/state.db*"}, Programs: []string{"chartgate"}, Dir: "/p", Home: "/h"}},
}

// sameText lists the origins whose commands are parsed from the line's own
// text (the others come from strings parsed again, or are run by another
// command).
var sameText = []string{"$(...)", "`...`", "<(...)", ">(...)", "${ ...;}"}

// FuzzCheck checks, for any text: no panic; the same decision twice; a
// line allowed only when every entry is allowed; a parse error exactly
// when the parser fails; and every simple command the parser sees
// (syntax.Walk, independent of this package's walk) present in the
// analysis.
func FuzzCheck(f *testing.F) {
	for _, tc := range loadCorpus(f).Cases {
		f.Add(tc.Cmd, uint8(0))
	}
	f.Add("a=(1 $(rm x)) b[$(id)]=2 c", uint8(2))
	f.Add("f() { rm x; }; case $(id) in *) :;; esac; [[ $(id) ]]; (( $(id) ))", uint8(1))
	f.Fuzz(func(t *testing.T, cmd string, which uint8) {
		p := fuzzPolicies[int(which)%len(fuzzPolicies)]
		d := p.Check(cmd)
		again := p.Check(cmd)
		if d.Allowed != again.Allowed || d.Reason != again.Reason || len(d.Commands) != len(again.Commands) {
			t.Fatalf("%q: two checks differ: %v %q / %v %q", cmd, d.Allowed, d.Reason, again.Allowed, again.Reason)
		}
		lang := syntax.LangBash
		if p.Dialect == shellpolicy.Zsh {
			lang = syntax.LangZsh
		}
		file, perr := syntax.NewParser(syntax.Variant(lang)).Parse(strings.NewReader(cmd), "")
		if (perr != nil) != (d.Err != nil) {
			t.Fatalf("%q: parser error %v, decision error %v", cmd, perr, d.Err)
		}
		if d.Err != nil {
			if d.Allowed || d.Analysis != nil || d.Reason == "" {
				t.Fatalf("%q: a line that does not parse: allowed=%v analysis=%v reason=%q", cmd, d.Allowed, d.Analysis != nil, d.Reason)
			}
			return
		}
		if len(d.Commands) != len(d.Analysis.Commands) {
			t.Fatalf("%q: %d verdicts for %d entries", cmd, len(d.Commands), len(d.Analysis.Commands))
		}
		for i, v := range d.Commands {
			if v.Command != &d.Analysis.Commands[i] {
				t.Fatalf("%q: verdict %d is not on entry %d", cmd, i, i)
			}
			if d.Allowed && !v.Allowed {
				t.Fatalf("%q: the line is allowed but %q is not: %s", cmd, v.Command.Text, v.Reason)
			}
			if !v.Allowed && v.Reason == "" {
				t.Fatalf("%q: %q refused without a reason", cmd, v.Command.Text)
			}
		}
		if !d.Allowed && !slices.ContainsFunc(d.Commands, func(v shellpolicy.Verdict) bool { return !v.Allowed }) {
			t.Fatalf("%q: refused but every entry is allowed", cmd)
		}
		// Every simple command of the line's own text is an entry.
		have := map[shellpolicy.Position]bool{}
		for _, c := range d.Analysis.Commands {
			if c.Kind == shellpolicy.Simple && !slices.ContainsFunc(c.Origin, func(o string) bool {
				return !slices.Contains(sameText, o) && !strings.HasPrefix(o, "function ")
			}) {
				have[c.Pos] = true
			}
		}
		syntax.Walk(file, func(n syntax.Node) bool {
			s, ok := n.(*syntax.Stmt)
			if !ok {
				return true
			}
			switch cmd := s.Cmd.(type) {
			case *syntax.CallExpr:
				if len(cmd.Args) == 0 {
					return true
				}
			case *syntax.DeclClause, *syntax.LetClause:
			default:
				return true
			}
			pos := shellpolicy.Position{Line: int(s.Pos().Line()), Col: int(s.Pos().Col())}
			if !have[pos] {
				t.Fatalf("%q: the simple command at %s is not in the analysis", cmd, pos)
			}
			return true
		})
	})
}
