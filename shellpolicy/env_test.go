// This file tests WithEnv by running the lines it writes in real shells.

package shellpolicy_test

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/chartgate/chartgate/shellpolicy"
)

// shells returns the POSIX shells of this machine that WithEnv's lines are
// run in: sh always, bash, dash and zsh when installed.
func shells(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, sh := range []string{"sh", "bash", "dash", "zsh"} {
		if p, err := exec.LookPath(sh); err == nil {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		t.Skip("no POSIX shell on this machine")
	}
	return out
}

// run runs line with `shell -c` in dir, and returns its standard output and
// exit status.
func run(t *testing.T, shell, dir, line string) (string, int) {
	t.Helper()
	cmd := exec.Command(shell, "-c", line)
	cmd.Dir = dir
	out, err := cmd.Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(out), exit.ExitCode()
	}
	require.NoError(t, err)
	return string(out), 0
}

// tricky are values that quoting must keep byte for byte.
var tricky = map[string]string{
	"EMPTY":   "",
	"QUOTES":  `it's "quoted" ''`,
	"EXPAND":  "$HOME ${X:-y} $(id) `id` $((1+1)) ~ *",
	"NEWLINE": "line one\nline two\n",
	"TAB":     "a\tb\\n\\",
	"UNICODE": "héllo wörld ✓",
	"OPS":     "a;b|c&&d>e<f#g!h{i}j[k]",
	"CRLF":    "a\r\nb\r\n",
}

func TestWithEnvKeepsEveryValue(t *testing.T) {
	var b strings.Builder
	for k := range tricky {
		b.WriteString(`printf '%s=[%s]\0' ` + k + ` "$` + k + `"` + "\n")
	}
	line, err := shellpolicy.WithEnv(b.String(), tricky)
	require.NoError(t, err)
	for _, sh := range shells(t) {
		out, status := run(t, sh, t.TempDir(), line)
		assert.Equal(t, 0, status, sh)
		got := map[string]string{}
		for _, rec := range strings.Split(strings.TrimSuffix(out, "\x00"), "\x00") {
			k, v, _ := strings.Cut(rec, "=")
			got[k] = strings.TrimSuffix(strings.TrimPrefix(v, "["), "]")
		}
		assert.Equal(t, tricky, got, sh)
	}
}

func TestWithEnvReachesEveryPartOfTheLine(t *testing.T) {
	env := map[string]string{"GOFLAGS": "-mod=mod", "MODE": "it's on"}
	lines := []struct {
		name, line, want string
		status           int
	}{
		{"pipeline", `echo "$GOFLAGS" | cat`, "-mod=mod\n", 0},
		{"list", `true && echo "$MODE" || echo no`, "it's on\n", 0},
		{"cd", `cd / && pwd && echo "$GOFLAGS"`, "/\n-mod=mod\n", 0},
		{"child process", `sh -c 'echo "$GOFLAGS"'`, "-mod=mod\n", 0},
		{"env of a command", `env | grep '^GOFLAGS='`, "GOFLAGS=-mod=mod\n", 0},
		{"subshell", `( echo "$MODE" )`, "it's on\n", 0},
		{"here-document", "cat <<EOF\n$GOFLAGS\nEOF", "-mod=mod\n", 0},
		{"quoted here-document", "cat <<'EOF'\n$GOFLAGS\nEOF\necho \"$GOFLAGS\"", "$GOFLAGS\n-mod=mod\n", 0},
		{"multi-line", "echo one\necho \"$MODE\"\n", "one\nit's on\n", 0},
		{"reassigned by the line", `GOFLAGS=x; echo "$GOFLAGS"`, "x\n", 0},
		{"exit status of a failure", `echo "$GOFLAGS"; false`, "-mod=mod\n", 1},
		{"exit status of exit", `echo "$GOFLAGS"; exit 3`, "-mod=mod\n", 3},
		{"exit status of a pipeline", `echo x | grep -q y`, "", 1},
		{"comment at the start", "# a comment\necho \"$GOFLAGS\"", "-mod=mod\n", 0},
		{"line continuation", "echo \\\n\"$GOFLAGS\"", "-mod=mod\n", 0},
	}
	for _, sh := range shells(t) {
		for _, tc := range lines {
			line, err := shellpolicy.WithEnv(tc.line, env)
			require.NoError(t, err)
			out, status := run(t, sh, t.TempDir(), line)
			assert.Equal(t, tc.want, out, "%s: %s", sh, tc.name)
			assert.Equal(t, tc.status, status, "%s: %s: the exit status must be the line's own", sh, tc.name)
		}
	}
}

func TestWithEnvText(t *testing.T) {
	line, err := shellpolicy.WithEnv("go build ./...", map[string]string{"GOFLAGS": "-mod=mod", "A": "it's"})
	require.NoError(t, err)
	assert.Equal(t, "export A='it'\\''s' GOFLAGS='-mod=mod'\ngo build ./...", line)

	same, err := shellpolicy.WithEnv("go build ./...", nil)
	require.NoError(t, err)
	assert.Equal(t, "go build ./...", same)
}

func TestWithEnvRefusesBadNamesAndValues(t *testing.T) {
	for _, name := range []string{"", "1A", "BAD-NAME", "A B", "A=B", "é", "$(id)"} {
		_, err := shellpolicy.WithEnv("true", map[string]string{name: "x"})
		var e *shellpolicy.EnvError
		require.ErrorAs(t, err, &e, "%q", name)
		assert.Equal(t, name, e.Name)
		assert.Contains(t, err.Error(), "not a shell variable name")
	}
	_, err := shellpolicy.WithEnv("true", map[string]string{"A": "a\x00b"})
	assert.ErrorContains(t, err, "NUL")
	for _, name := range []string{"A", "_", "_a1", "GOFLAGS", "a_B_9"} {
		assert.NoError(t, shellpolicy.CheckEnv(name, "x"), name)
	}
}

// FuzzWithEnv checks, for any name and value: a name CheckEnv accepts is a
// shell identifier, and the line WithEnv writes parses (bash and POSIX) to
// one export of exactly that value, then the line itself.
func FuzzWithEnv(f *testing.F) {
	for k, v := range tricky {
		f.Add(k, v)
	}
	f.Add("A", "'\\''")
	f.Add("9", "x")
	f.Fuzz(func(t *testing.T, name, value string) {
		line, err := shellpolicy.WithEnv("echo done", map[string]string{name: value})
		if err != nil {
			if shellpolicy.CheckEnv(name, value) == nil {
				t.Fatalf("WithEnv refused %q=%q, which CheckEnv accepts: %v", name, value, err)
			}
			return
		}
		if !utf8.ValidString(value) {
			return // the parser reads UTF-8 text; the shells take any bytes
		}
		for _, lang := range []syntax.LangVariant{syntax.LangBash, syntax.LangPOSIX} {
			file, perr := syntax.NewParser(syntax.Variant(lang)).Parse(strings.NewReader(line), "")
			if perr != nil {
				t.Fatalf("%v: %q does not parse: %v", lang, line, perr)
			}
			if len(file.Stmts) != 2 {
				t.Fatalf("%v: %q: %d statements, want 2", lang, line, len(file.Stmts))
			}
			// bash reads export as a declaration, POSIX sh as a command
			// whose argument is NAME=value; both must give the value back.
			var word *syntax.Word
			switch c := file.Stmts[0].Cmd.(type) {
			case *syntax.DeclClause:
				if c.Variant.Value == "export" && len(c.Args) == 1 && c.Args[0].Name.Value == name {
					word = c.Args[0].Value
				}
			case *syntax.CallExpr:
				if len(c.Args) == 2 && c.Args[0].Lit() == "export" {
					word = c.Args[1]
				}
			}
			if word == nil {
				t.Fatalf("%v: %q: the first statement is not one export", lang, line)
			}
			want := value
			if _, isCall := file.Stmts[0].Cmd.(*syntax.CallExpr); isCall {
				want = name + "=" + value
			}
			if strings.Contains(value, "\r\n") {
				// The parser reads CR LF as a newline, as a script
				// written on Windows means; shells keep the CR inside
				// quotes, so a shell says what the value is.
				continue
			}
			got, xerr := expand.Fields(&expand.Config{}, word)
			if xerr != nil || len(got) != 1 || got[0] != want {
				t.Fatalf("%v: %q: the value reads as %q (%v), want %q", lang, line, got, xerr, want)
			}
		}
		if strings.Contains(value, "\r\n") {
			line, err := shellpolicy.WithEnv(`printf %s "$`+name+`"`, map[string]string{name: value})
			require.NoError(t, err)
			if got, status := run(t, "sh", t.TempDir(), line); status != 0 || got != value {
				t.Fatalf("sh: %q: the value reads as %q (exit %d), want %q", line, got, status, value)
			}
		}
	})
}
