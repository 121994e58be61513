package shellpolicy_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"github.com/chartgate/chartgate/shellpolicy"
)

func analyze(t *testing.T, cmd string) *shellpolicy.Analysis {
	t.Helper()
	a, err := shellpolicy.Analyze(cmd)
	if err != nil {
		t.Fatalf("Analyze(%q): %v", cmd, err)
	}
	return a
}

// TestWords checks quote removal and the dynamic and split flags.
func TestWords(t *testing.T) {
	tests := []struct {
		cmd   string
		words []shellpolicy.Word
	}{
		{`echo 'a b' "c d" e\ f`, []shellpolicy.Word{{Value: "echo"}, {Value: "a b"}, {Value: "c d"}, {Value: "e f"}}},
		{`\rm "r"m r''m $'\x72m'`, []shellpolicy.Word{{Value: "rm"}, {Value: "rm"}, {Value: "rm"}, {Value: "rm"}}},
		{`echo "\$x \"q\" \a"`, []shellpolicy.Word{{Value: "echo"}, {Value: `$x "q" \a`}}},
		{`echo $X "$X" *.go '*.go' \*.go {a,b} '{a,b}' ~/x "~/x"`, []shellpolicy.Word{
			{Value: "echo"}, {Value: "$X", Dynamic: true, Split: true}, {Value: `"$X"`, Dynamic: true},
			{Value: "*.go", Dynamic: true, Split: true}, {Value: "*.go"}, {Value: "*.go"},
			{Value: "{a,b}", Dynamic: true, Split: true}, {Value: "{a,b}"}, {Value: "~/x", Dynamic: true}, {Value: "~/x"}}},
		{`echo $(date) "$(date)" <(ls) $((1+2))`, []shellpolicy.Word{
			{Value: "echo"}, {Value: "$(date)", Dynamic: true, Split: true}, {Value: `"$(date)"`, Dynamic: true},
			{Value: "<(ls)", Dynamic: true}, {Value: "$((1+2))", Dynamic: true, Split: true}}},
		{`[ -f x ]`, []shellpolicy.Word{{Value: "["}, {Value: "-f"}, {Value: "x"}, {Value: "]"}}},
		{`ls a[0-9]`, []shellpolicy.Word{{Value: "ls"}, {Value: "a[0-9]", Dynamic: true, Split: true}}},
	}
	for _, tc := range tests {
		a := analyze(t, tc.cmd)
		if len(a.Commands) == 0 {
			t.Fatalf("%q: no command", tc.cmd)
		}
		got := a.Commands[0].Words
		if len(got) != len(tc.words) {
			t.Fatalf("%q: words %+v, want %+v", tc.cmd, got, tc.words)
		}
		for i := range got {
			if got[i].Value != tc.words[i].Value || got[i].Dynamic != tc.words[i].Dynamic || got[i].Split != tc.words[i].Split {
				t.Errorf("%q: word %d = %+v, want %+v", tc.cmd, i, got[i], tc.words[i])
			}
		}
	}
}

// TestPrefixes checks that transparent prefixes move to Prefix and what
// they set.
func TestPrefixes(t *testing.T) {
	a := analyze(t, `timeout -s KILL 60 env -u HOME FOO=1 nice -n 5 nohup stdbuf -oL pytest -x`)
	c := a.Commands[0]
	if got := c.Values(); !slices.Equal(got, []string{"pytest", "-x"}) {
		t.Errorf("words %q", got)
	}
	if len(c.Prefix) != 14 || c.Prefix[0].Value != "timeout" || c.Prefix[13].Value != "-oL" {
		t.Errorf("prefix %+v", c.Prefix)
	}
	if !slices.Equal(c.EnvSets, []string{"HOME", "FOO"}) {
		t.Errorf("sets %q", c.EnvSets)
	}
	// command -v only looks the name up; env alone prints the environment.
	if got := analyze(t, "command -v rm").Commands[0]; got.Name() != "command" || got.Class != 0 {
		t.Errorf("command -v rm: %s %s", got.Name(), got.Class)
	}
	if got := analyze(t, "env").Commands[0]; !slices.Contains(got.EnvReads, "*") {
		t.Errorf("env reads %q", got.EnvReads)
	}
}

// TestOrigins checks the nesting chains and the order of entries: a
// command comes before the commands nested in it.
func TestOrigins(t *testing.T) {
	a := analyze(t, `echo $(ls `+"`pwd`"+`) && bash -c 'eval "sudo rm x"' | xargs -I{} find {} -exec cat {} +`)
	var got []string
	for _, c := range a.Commands {
		got = append(got, strings.Join(c.Origin, ">")+":"+c.Name())
	}
	want := []string{":echo", "$(...):ls", "$(...)>`...`:pwd", ":bash", "bash -c:eval", "bash -c>eval:sudo",
		"bash -c>eval>sudo:rm", ":xargs", "xargs:find", "xargs>find -exec:cat"}
	if !slices.Equal(got, want) {
		t.Errorf("entries\n got %q\nwant %q", got, want)
	}
}

// TestPositions checks line and column of entries, nested ones counted in
// the text they were parsed from.
func TestPositions(t *testing.T) {
	a := analyze(t, "ls\n  cat f; echo $(pwd)\nbash -c 'true;  rm x'")
	want := map[string]shellpolicy.Position{"ls": {1, 1}, "cat": {2, 3}, "echo": {2, 10}, "pwd": {2, 17}, "bash": {3, 1}, "true": {1, 1}, "rm": {1, 8}}
	for _, c := range a.Commands {
		if p, ok := want[c.Name()]; !ok || p != c.Pos {
			t.Errorf("%s at %v, want %v", c.Name(), c.Pos, p)
		}
	}
	if a.Commands[1].Text != "cat f" {
		t.Errorf("text %q", a.Commands[1].Text)
	}
}

// TestVariables checks the variables entries read and set.
func TestVariables(t *testing.T) {
	tests := []struct {
		cmd           string
		reads, sets   []string
		kind          shellpolicy.Kind
		readsAnyWhere bool
	}{
		{cmd: `echo $A "${B}" ${C:-x} ${#D} ${E[1]}`, reads: []string{"A", "B", "C", "D", "E"}},
		{cmd: `echo $((F + G * 2))`, reads: []string{"F", "G"}},
		{cmd: `X=1 Y=$Z cmd`, reads: []string{"Z"}, sets: []string{"X", "Y"}},
		{cmd: `X=1`, sets: []string{"X"}, kind: shellpolicy.Assignment},
		{cmd: `export A=1 B; local C`, sets: []string{"A", "B", "C"}},
		{cmd: `read -r -a ARR P Q`, sets: []string{"ARR", "P", "Q"}},
		{cmd: `read`, sets: []string{"REPLY"}},
		{cmd: `unset V W`, sets: []string{"V", "W"}},
		{cmd: `printf -v OUT %s x`, sets: []string{"OUT"}},
		{cmd: `: ${H:=default}`, reads: []string{"H"}, sets: []string{"H"}},
		{cmd: `printenv PATH`, reads: []string{"PATH"}},
		{cmd: `echo ${!ref}`, reads: []string{"*", "ref"}},
		{cmd: `echo ${!PRE*}`},
		{cmd: `echo '$NOT' "\$NOT"`},
		{cmd: `(( I++ ))`, reads: []string{"I"}, sets: []string{"I"}, kind: shellpolicy.Expression},
	}
	for _, tc := range tests {
		a := analyze(t, tc.cmd)
		var reads, sets []string
		for _, c := range a.Commands {
			reads = append(reads, c.EnvReads...)
			sets = append(sets, c.EnvSets...)
		}
		if !slices.Equal(reads, tc.reads) || !slices.Equal(sets, tc.sets) {
			t.Errorf("%q: reads %q sets %q, want %q %q", tc.cmd, reads, sets, tc.reads, tc.sets)
		}
		if len(a.Commands) > 0 && a.Commands[0].Kind != tc.kind {
			t.Errorf("%q: kind %s, want %s", tc.cmd, a.Commands[0].Kind, tc.kind)
		}
	}
}

// TestParseErrors checks the errors of lines that do not parse: typed,
// with the position, wrapping the parser's error.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		cmd        string
		dialect    shellpolicy.Dialect
		pos        shellpolicy.Position
		incomplete bool
		msg        string
	}{
		{cmd: "echo 'abc", pos: shellpolicy.Position{1, 6}, incomplete: true, msg: "reached EOF without closing quote"},
		{cmd: "ls\nif true; then", pos: shellpolicy.Position{2, 10}, incomplete: true, msg: "must be followed by a statement list"},
		{cmd: "ls )", pos: shellpolicy.Position{1, 4}, msg: "a command can only contain words and redirects"},
		{cmd: "a=(1 2)", dialect: shellpolicy.POSIX, pos: shellpolicy.Position{1, 3}, msg: "tried parsing as posix"},
	}
	for _, tc := range tests {
		_, err := shellpolicy.AnalyzeDialect(tc.cmd, tc.dialect)
		var pe *shellpolicy.ParseError
		if !errors.As(err, &pe) {
			t.Errorf("%q: error %v, want a *ParseError", tc.cmd, err)
			continue
		}
		if pe.Pos != tc.pos || pe.Incomplete != tc.incomplete || !strings.Contains(pe.Msg, tc.msg) {
			t.Errorf("%q: %+v, want pos %v incomplete %v message with %q", tc.cmd, pe, tc.pos, tc.incomplete, tc.msg)
		}
		if !strings.HasPrefix(err.Error(), "shellpolicy: cannot parse the command: "+tc.pos.String()+": ") {
			t.Errorf("%q: error text %q", tc.cmd, err)
		}
		var se syntax.ParseError
		var le syntax.LangError
		if !errors.As(err, &se) && !errors.As(err, &le) {
			t.Errorf("%q: %v does not wrap the parser's error", tc.cmd, err)
		}
		d := (&shellpolicy.Policy{Dialect: tc.dialect}).Check(tc.cmd)
		if d.Allowed || d.Err != err && d.Err.Error() != err.Error() || !strings.Contains(d.Reason, tc.pos.String()) {
			t.Errorf("%q: decision %+v", tc.cmd, d)
		}
	}
}

// TestClassNames checks the class names and their text form.
func TestClassNames(t *testing.T) {
	c := shellpolicy.Network | shellpolicy.FileWrite
	if c.String() != "FileWrite|Network" {
		t.Errorf("String = %q", c)
	}
	if shellpolicy.Class(0).String() != "Passthrough" {
		t.Errorf("zero = %q", shellpolicy.Class(0))
	}
	for _, class := range shellpolicy.AllClasses {
		back, err := shellpolicy.ParseClass(class.String())
		if err != nil || back != class {
			t.Errorf("ParseClass(%q) = %v, %v", class, back, err)
		}
	}
	data, err := json.Marshal(map[string]shellpolicy.Class{"c": c})
	if err != nil || string(data) != `{"c":"FileWrite|Network"}` {
		t.Errorf("json %s %v", data, err)
	}
	var back map[string]shellpolicy.Class
	if err := json.Unmarshal(data, &back); err != nil || back["c"] != c {
		t.Errorf("unmarshal %v %v", back, err)
	}
	if _, err := shellpolicy.ParseClass("FileWrite|Nope"); err == nil || !strings.Contains(err.Error(), `"Nope"`) {
		t.Errorf("ParseClass of a bad name: %v", err)
	}
}

// TestWritesOnce checks that Analysis.Writes lists each path once.
func TestWritesOnce(t *testing.T) {
	a := analyze(t, "echo a > x; echo b >> x; cp x y; touch y z")
	want := []shellpolicy.Path{{Path: "x"}, {Path: "y"}, {Path: "z"}}
	if got := a.Writes(); !slices.Equal(got, want) {
		t.Errorf("writes %v, want %v", got, want)
	}
}

// TestMatchCommand checks the one pattern rule.
func TestMatchCommand(t *testing.T) {
	tests := []struct {
		pattern string
		cmd     string
		want    bool
	}{
		{"pytest*", "pytest", true},
		{"pytest*", "pytest -x tests", true},
		{"pytest*", "pytest-watch", true},
		{"pytest", "pytest -x", true}, // Statewright's test_allowed_commands: a prefix, word by word
		{"pytest", "pytest -x tests/", true},
		{"pytest", "pytest", true},
		{"pytest", "pytester", false},
		{"git status", "git status --short", true},
		{"git status", "git stash", false},
		{"git status", "git", false},
		{"go test *", "go test", true},
		{"go test *", "go test ./...", true},
		{"go test *", "go testify", false},
		{"go test *", "go vet ./...", false},
		{"npm run *", "npm run build -- --watch", true},
		{"git log*", "git log --oneline", true},
		{"git * --oneline", "git log -5 --oneline", true},
		{"*", "anything at all", true},
		{"", "", true},
		{"", "x", false},
		{"a?c", "abc", false},
		{"a?c", "a?c", true},
		{"rm -rf build/*", "rm -rf build/../../x", true},
	}
	for _, tc := range tests {
		if got := shellpolicy.MatchCommand(tc.pattern, strings.Fields(tc.cmd)); got != tc.want {
			t.Errorf("MatchCommand(%q, %q) = %v, want %v", tc.pattern, tc.cmd, got, tc.want)
		}
	}
}

// TestPolicyOptions checks the policy's fields: the verdicts and the
// pattern matched, an empty tool list, replaced requirements, unknown
// commands.
func TestPolicyOptions(t *testing.T) {
	p := shellpolicy.Policy{AllowedCommands: []string{"go test *", "cat *"}}
	d := p.Check("go test ./... && cat go.mod")
	if !d.Allowed || len(d.Commands) != 2 || d.Commands[0].Pattern != "go test *" || d.Commands[1].Pattern != "cat *" {
		t.Errorf("decision %+v", d)
	}

	none := shellpolicy.Policy{AllowedTools: []string{}}
	if d := none.Check("cat f"); d.Allowed || !strings.Contains(d.Reason, "which are: none") {
		t.Errorf("no tools: %+v", d)
	}
	if d := none.Check("ls"); !d.Allowed {
		t.Errorf("no tools, passthrough: %+v", d)
	}

	req := shellpolicy.DefaultRequirements()
	req[shellpolicy.FileWrite] = []string{"write_file"}
	delete(req, shellpolicy.FileRead)
	custom := shellpolicy.Policy{AllowedTools: []string{"write_file"}, Requires: req}
	if d := custom.Check("cat a > b"); !d.Allowed {
		t.Errorf("custom requirements: %s", d.Reason)
	}
	if d := custom.Check("sed -i s/a/b/ f"); d.Allowed || !strings.Contains(d.Reason, "needs Edit") {
		t.Errorf("custom requirements, FileModify: %+v", d)
	}
	if other := shellpolicy.DefaultRequirements(); len(other[shellpolicy.FileWrite]) != 2 {
		t.Errorf("DefaultRequirements shares its map: %v", other[shellpolicy.FileWrite])
	}

	two := shellpolicy.Policy{}
	d = two.Check("rm a; rm b; rm c")
	if d.Allowed || !strings.HasSuffix(d.Reason, "(2 other parts of the line are refused too.)") {
		t.Errorf("three refusals: %s", d.Reason)
	}
}
