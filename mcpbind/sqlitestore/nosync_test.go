package sqlitestore_test

import (
	"bufio"
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/mcpbind/sqlitestore"
)

// TestNoSync: a write without sync is a compare-and-swap like the others
// (seen by another Store on the file at once, versions from the one
// counter, conflicts), and each write's transaction runs with the setting
// it asked for, whatever the connection's previous write was.
func TestNoSync(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s1, s2 := openAt(t, path, nil), openAt(t, path, nil)
	v1, err := s1.CompareAndSwapNoSync(ctx, "k", 0, []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	if data, v, err := s2.Load(ctx, "k"); err != nil || string(data) != "a" || v != v1 {
		t.Fatalf("the other store loads %q, version %d, %v; want %q, version %d", data, v, err, "a", v1)
	}
	if _, err := s1.CompareAndSwapNoSync(ctx, "k", 0, []byte("b")); !errors.Is(err, mcpbind.ErrConflict) {
		t.Fatalf("a write without sync from an old version: err = %v, want a conflict", err)
	}
	v2, err := s2.CompareAndSwap(ctx, "k", v1, []byte("c"))
	if err != nil || v2 <= v1 {
		t.Fatalf("CompareAndSwap after it: version %d, %v; want a version above %d", v2, err, v1)
	}

	for _, tc := range []struct {
		relaxed bool
		durable int // the setting of a durable write
	}{{false, 2}, {true, 1}} {
		s := open(t, &sqlitestore.Options{RelaxedSync: tc.relaxed})
		for i, durable := range []bool{true, false, true, false, false, true} {
			want := 1
			if durable {
				want = tc.durable
			}
			if got, err := s.WriteSynchronous(ctx, durable); err != nil || got != want {
				t.Errorf("RelaxedSync %v, write %d (durable %v): synchronous %d, %v; want %d", tc.relaxed, i, durable, got, err, want)
			}
		}
	}
}

// TestNoSyncInGroup: writes without sync queued with durable ones are
// committed without sync (in a group of their own, before them), and the
// durable ones with it.
func TestNoSyncInGroup(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := open(t, nil)
	release := s.HoldWriter()
	type result struct {
		durable bool
		mode    int
	}
	results := make(chan result, 4)
	for _, durable := range []bool{false, true, false, true} {
		go func() {
			m, err := s.WriteSynchronous(ctx, durable)
			if err != nil {
				t.Error(err)
			}
			results <- result{durable, m}
		}()
	}
	for s.Queued() < 4 {
		time.Sleep(time.Millisecond)
	}
	release()
	for range 4 {
		r := <-results
		if want := map[bool]int{false: 1, true: 2}[r.durable]; r.mode != want {
			t.Errorf("a write (durable %v) queued with others: synchronous %d, want %d", r.durable, r.mode, want)
		}
	}
}

// TestNoSyncKeptAfterKill: a write without sync that returned is in the
// file after its process is killed (SIGKILL) right after it.
func TestNoSyncKeptAfterKill(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.db")
	cmd := helper("nosync", path, 0)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "written\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper said %q, %v; want \"written\"", line, err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	s := openAt(t, path, nil)
	if data, v, err := s.Load(context.Background(), "k"); err != nil || string(data) != "leased" || v == 0 {
		t.Fatalf("after the kill: %q, version %d, %v; want %q", data, v, err, "leased")
	}
}
