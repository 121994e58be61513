package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkHookRatio runs, alternately in one loop, a trivial Go program
// and `chartgate hook claude-code` on Claude Code's PreToolUse of a Write
// against the project's real SQLite store, which no other process holds
// open (no gateway runs: each hook is the file's only connection), so
// that both see the same load; it
// reports each one's median wall time and their ratio ("x-trivial"), the
// figure the hook's cost is stated in. "sqlite" adds a program that only
// opens a SQLite file with modernc.org/sqlite, the floor of any process
// that opens the store itself; "floor" adds testdata/hookfloor, which
// does the hook's work on the same event with only the packages the hook
// needs linked, the floor of a dedicated hook binary. "client" runs the
// hook client (cmd/chartgate-hook) on the same event, answered by a hook
// daemon started once before the loop, as the events after a session's
// first are.
func BenchmarkHookRatio(b *testing.B) {
	dir := b.TempDir()
	trivial := buildProgram(b, dir, "trivial", "package main\n\nfunc main() {}\n")
	sqliteOnly := buildProgram(b, dir, "sqlite", "./testdata/sqliteonly")
	hookFloor := buildProgram(b, dir, "floor", "./testdata/hookfloor")
	bin := chartgateBinary(b)
	project := hookProject(b)
	in := fixture(b, "claude-code", "pre-tool-use-write.json", project, "bench")
	hookCmd := func() *exec.Cmd {
		cmd := exec.Command(bin, "hook", "claude-code")
		cmd.Env = hostlessEnv()
		cmd.Stdin = strings.NewReader(in)
		return cmd
	}
	// The first run creates the store and records the session.
	if out, err := hookCmd().CombinedOutput(); err != nil || !strings.Contains(string(out), `"permissionDecision":"deny"`) {
		b.Fatalf("hook: %v: %s", err, out)
	}
	floorCmd := exec.Command(hookFloor)
	floorCmd.Stdin = strings.NewReader(in)
	if out, err := floorCmd.CombinedOutput(); err != nil || !strings.Contains(string(out), `"permissionDecision":"deny"`) {
		b.Fatalf("hookfloor: %v: %s", err, out)
	}
	clientCmd := hookClientCmd(b, in)
	for _, c := range []struct {
		name string
		cmd  func() *exec.Cmd
	}{
		{"hook", hookCmd},
		{"client", clientCmd},
		{"sqlite", func() *exec.Cmd { return exec.Command(sqliteOnly, filepath.Join(project, ".chartgate", "bench.db")) }},
		{"floor", func() *exec.Cmd {
			cmd := exec.Command(hookFloor)
			cmd.Stdin = strings.NewReader(in)
			return cmd
		}},
	} {
		if c.cmd == nil {
			continue
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			floor := make([]time.Duration, 0, b.N)
			times := make([]time.Duration, 0, b.N)
			for b.Loop() {
				floor = append(floor, timeProcess(b, exec.Command(trivial)))
				times = append(times, timeProcess(b, c.cmd()))
			}
			t, f := median(times), median(floor)
			b.ReportMetric(t.Seconds()*1000, "ms-median")
			b.ReportMetric(f.Seconds()*1000, "ms-trivial")
			b.ReportMetric(float64(t)/float64(f), "x-trivial")
		})
	}
}

// buildProgram writes src, a Go program without imports, in dir and
// builds it as dir/name; a src starting with "./" is instead a package of
// this module, built as such.
func buildProgram(b *testing.B, dir, name, src string) string {
	b.Helper()
	out := filepath.Join(dir, name)
	pkg := src
	if !strings.HasPrefix(src, "./") {
		pkg = filepath.Join(dir, name+".go")
		if err := os.WriteFile(pkg, []byte(src), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if o, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
		b.Fatalf("building %s: %v: %s", name, err, o)
	}
	return out
}

// timeProcess runs cmd to its end and returns its wall time.
func timeProcess(b *testing.B, cmd *exec.Cmd) time.Duration {
	b.Helper()
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%s: %v: %s", cmd.Path, err, out)
	}
	return time.Since(start)
}

// median returns the middle of times, which it sorts.
func median(times []time.Duration) time.Duration {
	slices.Sort(times)
	return times[len(times)/2]
}

// hookClientCmd starts a hook daemon for the benchmark, and returns the
// command of the hook client on the event in (nil where the client runs
// chartgate hook itself: outside Linux).
func hookClientCmd(b *testing.B, in string) func() *exec.Cmd {
	if runtime.GOOS != "linux" {
		return nil
	}
	client := hookClientBinary(b)
	config := b.TempDir()
	daemon := exec.Command(filepath.Join(filepath.Dir(client), "chartgate"), "hook-daemon")
	daemon.Env = append(hostlessEnv(), "XDG_CONFIG_HOME="+config)
	if err := daemon.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = daemon.Process.Kill()
		_ = daemon.Wait()
	})
	clientCmd := func() *exec.Cmd {
		cmd := exec.Command(client, "claude-code")
		cmd.Env = append(hostlessEnv(), "XDG_CONFIG_HOME="+config)
		cmd.Stdin = strings.NewReader(in)
		return cmd
	}
	// Until the daemon listens, the client answers by chartgate hook.
	sock := filepath.Join(config, "chartgate", "hookd", "sock")
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if time.Since(start) > 30*time.Second {
			b.Fatal("the hook daemon does not listen")
		}
	}
	if out, err := clientCmd().CombinedOutput(); err != nil || !strings.Contains(string(out), `"permissionDecision":"deny"`) {
		b.Fatalf("client: %v: %s", err, out)
	}
	return clientCmd
}
