// Command testsummary turns the output of go test -json into a log as
// short as plain go test's, followed by the list of skipped tests with the
// reason each gave. CI runs
//
//	go test -race -count=1 -json ./... | go run ./internal/cmd/testsummary
//
// For a package that passes it prints only its "ok" (or "?  [no test
// files]") line, as go test does without -v; for one that fails, the output
// of its failed tests and its own, without the "=== RUN" lines -json adds.
// Build errors are printed as they come. Lines that are not JSON are
// copied as they are. It exits 1 when a package or a build failed, or when
// no package reported a result.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	ok, err := summarize(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testsummary: %v\n", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

// event is one line of go test -json (see go doc test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string // of build-output and build-fail
}

// skipped is a skipped test and the lines it logged: the reason it gave
// to t.Skip and what it logged before.
type skipped struct {
	pkg, test string
	lines     []string
}

// pkgLog is what one package has printed so far.
type pkgLog struct {
	own   []string            // output outside any test
	tests map[string][]string // output of each running test, by name
	order []string            // running tests in the order they started
	fail  []string            // output of the tests that failed
}

// summarize reads go test -json from r and writes the summary to w. ok is
// false when something failed.
func summarize(r io.Reader, w io.Writer) (ok bool, err error) {
	pkgs := map[string]*pkgLog{}
	var skips []skipped
	results, failed := 0, false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var ev event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		switch ev.Action {
		case "build-output":
			io.WriteString(w, ev.Output)
			continue
		case "build-fail":
			failed = true
			continue
		}
		p := pkgs[ev.Package]
		if p == nil {
			p = &pkgLog{tests: map[string][]string{}}
			pkgs[ev.Package] = p
		}
		if ev.Test != "" {
			switch ev.Action {
			case "run":
				p.order = append(p.order, ev.Test)
			case "output":
				if !framing(ev.Output) {
					p.tests[ev.Test] = append(p.tests[ev.Test], ev.Output)
				}
			case "pass":
				p.done(ev.Test)
			case "skip":
				skips = append(skips, skipped{pkg: ev.Package, test: ev.Test, lines: reason(p.tests[ev.Test])})
				p.done(ev.Test)
			case "fail":
				p.fail = append(p.fail, p.tests[ev.Test]...)
				p.done(ev.Test)
			}
			continue
		}
		switch ev.Action {
		case "output":
			p.own = append(p.own, ev.Output)
		case "pass", "skip": // skip: a package without tests
			results++
			if last := lastResult(p.own); last != "" {
				io.WriteString(w, last)
			}
			delete(pkgs, ev.Package)
		case "fail":
			results++
			failed = true
			// Tests still running when the package failed (a panic, a
			// timeout) show what they printed, then the package its own.
			for _, t := range p.order {
				p.fail = append(p.fail, p.tests[t]...)
			}
			for _, s := range append(p.fail, p.own...) {
				io.WriteString(w, s)
			}
			delete(pkgs, ev.Package)
		}
	}
	if err := sc.Err(); err != nil {
		return false, err
	}
	writeSkips(w, skips)
	if results == 0 {
		fmt.Fprintln(w, "testsummary: no package reported a result")
		return false, nil
	}
	return !failed, nil
}

// done forgets test, which has ended.
func (p *pkgLog) done(test string) {
	delete(p.tests, test)
	for i, t := range p.order {
		if t == test {
			p.order = append(p.order[:i], p.order[i+1:]...)
			break
		}
	}
}

// framing reports whether s is one of the lines -json adds to a test's
// output: "=== RUN", "=== PAUSE", "=== CONT", "=== NAME".
func framing(s string) bool {
	return strings.HasPrefix(s, "=== ")
}

// reason returns what a skipped test logged, without its "--- SKIP" line,
// unindented and without line ends.
func reason(lines []string) []string {
	var out []string
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "--- SKIP: ") {
			out = append(out, l)
		}
	}
	return out
}

// lastResult returns the "ok" or "?" line of a package that passed or had
// no tests.
func lastResult(own []string) string {
	for i := len(own) - 1; i >= 0; i-- {
		if strings.HasPrefix(own[i], "ok ") || strings.HasPrefix(own[i], "?") {
			return own[i]
		}
	}
	return ""
}

func writeSkips(w io.Writer, skips []skipped) {
	if len(skips) == 0 {
		fmt.Fprintln(w, "== skipped tests: none")
		return
	}
	fmt.Fprintf(w, "== skipped tests: %d\n", len(skips))
	for _, s := range skips {
		fmt.Fprintf(w, "%s %s\n", s.pkg, s.test)
		if len(s.lines) == 0 {
			fmt.Fprintln(w, "    (no reason given)")
		}
		for _, l := range s.lines {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
}
