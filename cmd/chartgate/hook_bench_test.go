package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkTrivialProcess starts and waits for a Go program that does
// nothing, built like chartgate: the floor under BenchmarkHookProcess,
// which a hook process is measured against.
func BenchmarkTrivialProcess(b *testing.B) {
	dir := b.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(dir, "trivial")
	if out, err := exec.Command("go", "build", "-o", bin, src).CombinedOutput(); err != nil {
		b.Fatalf("%v: %s", err, out)
	}
	benchProcess(b, func() *exec.Cmd { return exec.Command(bin) })
}

// BenchmarkStartProcess starts and waits for `chartgate version`: the
// binary's start (loading it, the runtime's and every linked package's
// initialization) with no hook work, between BenchmarkTrivialProcess and
// BenchmarkHookProcess.
func BenchmarkStartProcess(b *testing.B) {
	bin := chartgateBinary(b)
	benchProcess(b, func() *exec.Cmd { return exec.Command(bin, "version") })
}

// benchProcess runs the command newCmd makes b.N times and reports the
// median and the 90th percentile of its wall time besides the mean.
func benchProcess(b *testing.B, newCmd func() *exec.Cmd) {
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		cmd := newCmd()
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		times = append(times, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms-median")
	b.ReportMetric(float64(times[len(times)*9/10].Microseconds())/1000, "ms-p90")
}

// BenchmarkHookInProcess answers Claude Code's PreToolUse of a Write with
// `chartgate hook claude-code` run in this process against the project's
// SQLite store: the hook's own work (reading the workflow, opening the
// store, building the gate, deciding), without the process' start.
func BenchmarkHookInProcess(b *testing.B) {
	project := hookProject(b)
	in := fixture(b, "claude-code", "pre-tool-use-write.json", project, "bench")
	b.Setenv("CLAUDE_PROJECT_DIR", "")
	b.Setenv("GEMINI_PROJECT_DIR", "")
	b.ReportAllocs()
	for b.Loop() {
		var out, errOut bytes.Buffer
		if code := run([]string{"hook", "claude-code"}, strings.NewReader(in), &out, &errOut); code != 0 || !strings.Contains(out.String(), `"permissionDecision":"deny"`) {
			b.Fatalf("exit %d: %s %s", code, out.String(), errOut.String())
		}
	}
}
