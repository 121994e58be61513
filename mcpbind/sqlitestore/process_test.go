// This file holds the tests with several OS processes on one file: the
// test binary runs itself again as TestHelperProcess, in the mode an
// environment variable names.

package sqlitestore_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/mcpbind/sqlitestore"
)

// The environment of a helper process.
const (
	envMode = "SQLITESTORE_HELPER" // "count" or "hook"
	envPath = "SQLITESTORE_PATH"   // the database file
	envN    = "SQLITESTORE_N"      // increments, for "count"
)

// helper returns the command that runs the test binary as TestHelperProcess
// in mode on the file at path.
func helper(mode, path string, n int) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), envMode+"="+mode, envPath+"="+path, envN+"="+strconv.Itoa(n))
	return cmd
}

// TestHelperProcess is not a test: it is the body of the child processes
// of TestProcessesRace and BenchmarkHookProcess, and skips when run
// otherwise.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(envMode)
	if mode == "" {
		t.Skip("the body of the helper processes of other tests")
	}
	n, _ := strconv.Atoi(os.Getenv(envN))
	var err error
	switch mode {
	case "count":
		err = helperCount(os.Getenv(envPath), n)
	case "hook":
		err = helperHook(os.Getenv(envPath))
	case "nosync":
		err = helperNoSync(os.Getenv(envPath))
	case "start":
	default:
		err = fmt.Errorf("unknown mode %q", mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(0)
}

// counterKey is the key the helpers increment.
const counterKey = "counter"

// helperCount prints "ready", waits until its standard input is closed
// (the start signal), opens the store (perhaps creating the file, as the other helpers do at
// the same time), and increments the counter n times by load and
// compare-and-swap, retrying on conflicts. It prints "version V" for each
// successful compare-and-swap and "conflicts C" at the end.
func helperCount(path string, n int) error {
	if _, err := fmt.Println("ready"); err != nil {
		return err
	}
	if _, err := io.Copy(io.Discard, os.Stdin); err != nil {
		return err
	}
	s, err := sqlitestore.Open(path, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	ctx := context.Background()
	out := bufio.NewWriter(os.Stdout)
	conflicts := 0
	for range n {
		for {
			data, v, err := s.Load(ctx, counterKey)
			if err != nil {
				return err
			}
			c := 0
			if data != nil {
				if c, err = strconv.Atoi(string(data)); err != nil {
					return fmt.Errorf("the counter is %q: %w", data, err)
				}
			}
			nv, err := s.CompareAndSwap(ctx, counterKey, v, []byte(strconv.Itoa(c+1)))
			if errors.Is(err, mcpbind.ErrConflict) {
				conflicts++
				continue
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "version %d\n", nv)
			// A pause, as between two tool calls, lets the others'
			// waits for the lock end: without it, the one that holds the
			// lock takes it again before their next try, until it is
			// done.
			time.Sleep(rand.N(time.Millisecond))
			break
		}
	}
	fmt.Fprintf(out, "conflicts %d\n", conflicts)
	if err := out.Flush(); err != nil {
		return err
	}
	return s.Close()
}

// helperHook does what a hook process does with the store for one tool
// call: open, load, one transition, close.
func helperHook(path string) error {
	s, err := sqlitestore.Open(path, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	ctx := context.Background()
	_, v, err := s.Load(ctx, "session")
	if err != nil {
		return err
	}
	if _, err := s.CompareAndSwap(ctx, "session", v, []byte(`{"value":"payment"}`)); err != nil {
		return err
	}
	return s.Close()
}

// helperNoSync writes key "k" without sync, prints "written" and waits
// until its standard input is closed (or it is killed).
func helperNoSync(path string) error {
	s, err := sqlitestore.Open(path, nil)
	if err != nil {
		return err
	}
	if _, err := s.CompareAndSwapNoSync(context.Background(), "k", 0, []byte("leased")); err != nil {
		return err
	}
	if _, err := fmt.Println("written"); err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, os.Stdin)
	return err
}

// TestProcessesRace: processes that increment one counter in one file at
// once, from a file none of them has created yet, never both win a
// compare-and-swap: the counter ends at the number of successful
// compare-and-swaps, and no version is handed out twice.
func TestProcessesRace(t *testing.T) {
	t.Parallel()
	const procs, each = 4, 100
	path := filepath.Join(t.TempDir(), "state.db")
	type child struct {
		cmd    *exec.Cmd
		stdin  io.WriteCloser
		out    *bufio.Reader
		stderr bytes.Buffer
	}
	children := make([]*child, procs)
	for i := range children {
		c := &child{cmd: helper("count", path, each)}
		c.cmd.Stderr = &c.stderr
		stdout, err := c.cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		c.out = bufio.NewReader(stdout)
		if c.stdin, err = c.cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
		if err := c.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		children[i] = c
	}
	for i, c := range children { // all ready: start them at once
		if line, err := c.out.ReadString('\n'); line != "ready\n" {
			t.Fatalf("child %d printed %q, %v; want ready\n%s", i, line, err, c.stderr.String())
		}
	}
	for _, c := range children {
		c.stdin.Close()
	}
	versions := map[uint64]int{} // version -> child
	var last uint64
	conflicts := 0
	for i, c := range children {
		out, err := io.ReadAll(c.out) // before Wait, which closes the pipe
		if err != nil {
			t.Fatal(err)
		}
		if err := c.cmd.Wait(); err != nil {
			t.Fatalf("child %d: %v\n%s", i, err, c.stderr.String())
		}
		wins := 0
		for line := range strings.Lines(string(out)) {
			var v uint64
			var n int
			if _, err := fmt.Sscanf(line, "version %d\n", &v); err == nil {
				if j, ok := versions[v]; ok {
					t.Errorf("version %d handed out to child %d and child %d", v, j, i)
				}
				versions[v] = i
				last = max(last, v)
				wins++
			} else if _, err := fmt.Sscanf(line, "conflicts %d\n", &n); err == nil {
				conflicts += n
			} else {
				t.Errorf("child %d printed %q", i, line)
			}
		}
		if wins != each {
			t.Errorf("child %d won %d compare-and-swaps, want %d", i, wins, each)
		}
	}
	t.Logf("%d processes, %d increments each: %d conflicts", procs, each, conflicts)
	s := openAt(t, path, nil)
	data, v, err := s.Load(context.Background(), counterKey)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != strconv.Itoa(len(versions)) || len(versions) != procs*each {
		t.Errorf("counter = %s after %d successful compare-and-swaps; want %d", data, len(versions), procs*each)
	}
	if v != last {
		t.Errorf("the counter's version is %d, want the last one handed out, %d", v, last)
	}
}
