package shellpolicy

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestScanSed checks what the sed script scanner finds in scripts, and
// that it gives up on scripts it does not understand.
func TestScanSed(t *testing.T) {
	tests := []struct {
		script string
		writes []string
		exec   bool
		ok     bool
	}{
		{"s/a/b/", nil, false, true},
		{"s/a/b/g;s|x|y|2", nil, false, true},
		{"1,5p", nil, false, true},
		{"/start/,/end/d", nil, false, true},
		{"$!N;P;D", nil, false, true},
		{"0~3d", nil, false, true},
		{"/x/I,+2{s/a/b/;p}", nil, false, true},
		{"\\,^/usr,d", nil, false, true},
		{"s/a/b/w out.txt", []string{"out.txt"}, false, true},
		{"s/a/b/gw out.txt\np", []string{"out.txt"}, false, true},
		{"w log.txt", []string{"log.txt"}, false, true},
		{"1W first.txt", []string{"first.txt"}, false, true},
		{"/x/w a\n/y/w b", []string{"a", "b"}, false, true},
		{"1e id", nil, true, true},
		{"s/.*/date/e", nil, true, true},
		{"e", nil, true, true},
		{"r in.txt", nil, false, true},
		{"a\\\nappended text w not a command", nil, false, true},
		{"a hello; w not-a-file", nil, false, true},
		{"s/w/e/", nil, false, true},
		{"s/\\/w x/y/", nil, false, true},
		{"y/abc/xyz/", nil, false, true},
		{":a;N;$!ba;s/\\n/ /g", nil, false, true},
		{"# comment w x\np", nil, false, true},
		{"q5", nil, false, true},
		{"s/a/b", nil, false, false},
		{"k", nil, false, false},
		{"/unterminated", nil, false, false},
	}
	for _, tc := range tests {
		writes, exec, ok := scanSed(tc.script)
		if ok != tc.ok || ok && (exec != tc.exec || !slices.Equal(writes, tc.writes)) {
			t.Errorf("scanSed(%q) = %q, %v, %v; want %q, %v, %v", tc.script, writes, exec, ok, tc.writes, tc.exec, tc.ok)
		}
	}
}

// TestScanAwk checks what the awk program scanner finds.
func TestScanAwk(t *testing.T) {
	tests := []struct {
		prog    string
		writes  []string
		dynamic bool
		exec    bool
	}{
		{"{print $1}", nil, false, false},
		{"$3 > 100", nil, false, false},
		{"{ if ($1 > 0) print $2 }", nil, false, false},
		{"/a|b/ {n++} END {print n}", nil, false, false},
		{"$0 ~ /x|y/", nil, false, false},
		{"{print (a > b)}", nil, false, false},
		{"{print $1 > \"out.txt\"}", []string{"out.txt"}, false, false},
		{"{print $1 >> \"log\"; print $2 > \"b\"}", []string{"log", "b"}, false, false},
		{"{printf(\"%s\\n\", $1) > \"o\"}", []string{"o"}, false, false},
		{"{print > $1 \".txt\"}", nil, true, false},
		{"{print $1/2 > \"f\"}", []string{"f"}, false, false},
		{"{print 10/2 > \"f\"}", []string{"f"}, false, false},
		{"{print \"x\" > \"/dev/stderr\"}", []string{"/dev/stderr"}, false, false},
		{"{system(\"id\")}", nil, false, true},
		{"{print | \"sort\"}", nil, false, true},
		{"BEGIN { while ((\"ls\" | getline l) > 0) print l }", nil, false, true},
		{"BEGIN { \"date\" |& getline d }", nil, false, true},
		{"@load \"fork\"", nil, false, true},
		{"{print \"a|b > c\"}", nil, false, false},
		{"# print > \"x\"\n{print}", nil, false, false},
		{"{x = a || b; print x}", nil, false, false},
	}
	for _, tc := range tests {
		writes, dynamic, exec := scanAwk(tc.prog)
		if !slices.Equal(writes, tc.writes) || dynamic != tc.dynamic || exec != tc.exec {
			t.Errorf("scanAwk(%q) = %q, %v, %v; want %q, %v, %v", tc.prog, writes, dynamic, exec, tc.writes, tc.dynamic, tc.exec)
		}
	}
}

// refGlob is an independent matcher for the glob rule, by regular
// expression.
func refGlob(pattern, text string) bool {
	segs := strings.Split(pattern, "*")
	for i, s := range segs {
		segs[i] = regexp.QuoteMeta(s)
	}
	return regexp.MustCompile(`(?s)\A` + strings.Join(segs, ".*") + `\z`).MatchString(text)
}

// refProtected is an independent, exhaustive matcher for globProtected.
func refProtected(pattern, text string, protected []bool) bool {
	if pattern == "" {
		return text == ""
	}
	if pattern[0] == '*' {
		for n := 0; n <= len(text); n++ {
			if n > 0 && protected[n-1] {
				break
			}
			if refProtected(pattern[1:], text[n:], protected[n:]) {
				return true
			}
		}
		return false
	}
	return text != "" && pattern[0] == text[0] && refProtected(pattern[1:], text[1:], protected[1:])
}

// TestGlobAgainstReference compares glob and globProtected with the
// reference matchers on random patterns and texts over a small alphabet.
func TestGlobAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	gen := func(alphabet string, n int) string {
		b := make([]byte, r.IntN(n+1))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	for i := 0; i < 20000; i++ {
		pattern, text := gen("ab *", 7), gen("ab ", 9)
		if got, want := glob(pattern, text), refGlob(pattern, text); got != want {
			t.Fatalf("glob(%q, %q) = %v, want %v", pattern, text, got, want)
		}
		protected := make([]bool, len(text))
		for j := range protected {
			protected[j] = r.IntN(3) == 0
		}
		if got, want := globProtected(pattern, text, protected), refProtected(pattern, text, protected); got != want {
			t.Fatalf("globProtected(%q, %q, %v) = %v, want %v", pattern, text, protected, got, want)
		}
		if !slices.Contains(protected, true) && globProtected(pattern, text, protected) != glob(pattern, text) {
			t.Fatalf("globProtected(%q, %q) without protection differs from glob", pattern, text)
		}
	}
}

// TestNames checks which patterns name a blocked command.
func TestNames(t *testing.T) {
	tests := []struct {
		pattern string
		words   []string
		keys    []int
		want    bool
	}{
		{"rm *", []string{"rm", "-rf", "x"}, []int{0}, true},
		{"rm -rf build*", []string{"rm", "-rf", "build"}, []int{0}, true},
		{"r*", []string{"rm", "x"}, []int{0}, false},
		{"*", []string{"rm", "x"}, []int{0}, false},
		{"* x", []string{"rm", "x"}, []int{0}, false},
		{"git *", []string{"git", "push"}, []int{0, 1}, false},
		{"git push*", []string{"git", "push"}, []int{0, 1}, true},
		{"git push *", []string{"git", "push"}, []int{0, 1}, true},
		{"git pu*", []string{"git", "push"}, []int{0, 1}, false},
		{"git * push", []string{"git", "-C", "push", "push"}, []int{0, 3}, true},
		{"find *", []string{"find", ".", "-delete"}, []int{0, 2}, false},
		{"find * -delete", []string{"find", ".", "-delete"}, []int{0, 2}, true},
		{"rm *", []string{"rm"}, []int{0}, true},
		{"rm *", []string{"rm", "x"}, nil, false},
		{"rm x", []string{"rm", "y"}, []int{0}, false},
	}
	for _, tc := range tests {
		if got := names(tc.pattern, tc.words, tc.keys); got != tc.want {
			t.Errorf("names(%q, %q, %v) = %v, want %v", tc.pattern, tc.words, tc.keys, got, tc.want)
		}
	}
}

// TestANSIC checks the decoding of $'...' strings.
func TestANSIC(t *testing.T) {
	tests := map[string]string{
		`a\nb`:        "a\nb",
		`\x72\x6d`:    "rm",
		`\x3b`:        ";",
		`\'x\'`:       "'x'",
		`\u00e9`:      "é",
		`\101\102`:    "AB",
		`\cA`:         "\x01",
		`\e[0m`:       "\x1b[0m",
		`\q`:          `\q`,
		`\xZZ`:        `\xZZ`,
		`before\0aft`: "before",
	}
	for in, want := range tests {
		if got := ansiC(in); got != want {
			t.Errorf("ansiC(%q) = %q, want %q", in, got, want)
		}
	}
}
