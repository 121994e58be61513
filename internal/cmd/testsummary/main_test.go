// This file tests the summary against recordings of go test -json.

package main

import (
	"os"
	"strings"
	"testing"
)

// The recordings in testdata are go test -count=1 -json output of a small
// module: tj/a has a passing test that logs ("chatty"), a skipped test that
// logs before it skips, a parallel subtest that skips and one that fails
// with a two-line message; tj/b does not compile; tj/c has a TestMain that
// prints "from main" and a passing test; tj/d panics; tj/e has no tests.
// passing.json is tj/c and tj/e alone.

func summarizeFile(t *testing.T, name string) (string, bool) {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out strings.Builder
	ok, err := summarize(f, &out)
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), ok
}

func TestMixed(t *testing.T) {
	got, ok := summarizeFile(t, "mixed.json")
	if ok {
		t.Error("ok with failed packages")
	}
	// What plain go test prints: each package's lines in this order (the
	// order of the packages is go test's).
	for _, want := range [][]string{
		{"# tj/b [tj/b.test]\n", "b/b_test.go:3:40: cannot use \"s\" (untyped string constant) as int value in variable declaration\n", "FAIL\ttj/b [build failed]\n"},
		{"    a_test.go:7: boom\n        second line\n--- FAIL: TestSub/y (", "--- FAIL: TestSub (", "FAIL\ttj/a\t"},
		{"ok  \ttj/c\t"},
		{"?   \ttj/e\t[no test files]\n"},
		{"    d_test.go:3: about to panic\n--- FAIL: TestPanics (", "panic: assignment to entry in nil map", "FAIL\ttj/d\t"},
	} {
		rest := got
		for _, w := range want {
			i := strings.Index(rest, w)
			if i < 0 {
				t.Fatalf("the summary lacks %q after %q:\n%s", w, want[0], got)
			}
			rest = rest[i+len(w):]
		}
	}
	const skips = `== skipped tests: 2
tj/a TestSkip
    a_test.go:3: before
    a_test.go:3: no node here
tj/a TestSub/x
    a_test.go:6: sub skipped: 1
`
	if !strings.HasSuffix(got, skips) {
		t.Errorf("the summary does not end with the skipped tests:\n%s", got)
	}
	// What passing tests and passing packages print stays out, and so do
	// the lines -json adds.
	for _, bad := range []string{"chatty", "--- PASS", "=== RUN", "=== CONT", "from main", "\nPASS\n"} {
		if strings.Contains(got, bad) {
			t.Errorf("the summary has %q:\n%s", bad, got)
		}
	}
}

func TestPassing(t *testing.T) {
	got, ok := summarizeFile(t, "passing.json")
	if !ok {
		t.Error("not ok when every package passed")
	}
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != 3 || lines[0] != "?   \ttj/e\t[no test files]" || !strings.HasPrefix(lines[1], "ok  \ttj/c\t") || lines[2] != "== skipped tests: none" {
		t.Errorf("summary:\n%s", got)
	}
}

func TestNoResult(t *testing.T) {
	// go test that could not even start (a bad pattern) prints no JSON.
	var out strings.Builder
	ok, err := summarize(strings.NewReader("no Go files in /x\n"), &out)
	if err != nil || ok {
		t.Fatalf("ok %v, err %v", ok, err)
	}
	if got := out.String(); !strings.HasPrefix(got, "no Go files in /x\n") || !strings.Contains(got, "no package reported a result") {
		t.Errorf("summary:\n%s", got)
	}
}
