package sqlitestore_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/mcpbind/sqlitestore"
)

// TestConcurrentWritesCommittedInGroups writes from many goroutines at
// once, so that writes are committed together: each write on its own key
// succeeds, of the writes racing on one key exactly one does (the others
// conflict alone, without undoing their group), and everything
// acknowledged is in the file when it is opened again.
func TestConcurrentWritesCommittedInGroups(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := sqlitestore.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	const n = 32
	var wg sync.WaitGroup
	var won, conflicted atomic.Int64
	versions := make([]uint64, n)
	for i := range n {
		wg.Go(func() {
			v, err := s.CompareAndSwap(ctx, fmt.Sprintf("own/%d", i), 0, []byte(fmt.Sprint(i)))
			if err != nil {
				t.Error(err)
			}
			versions[i] = v
		})
		wg.Go(func() {
			_, err := s.CompareAndSwap(ctx, "shared", 0, []byte(fmt.Sprint(i)))
			switch {
			case err == nil:
				won.Add(1)
			case errors.Is(err, mcpbind.ErrConflict):
				conflicted.Add(1)
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if won.Load() != 1 || conflicted.Load() != n-1 {
		t.Fatalf("racing on one key: %d won, %d conflicted; want 1 and %d", won.Load(), conflicted.Load(), n-1)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openAt(t, path, nil)
	seen := map[uint64]bool{}
	for i := range n {
		data, v, err := s.Load(ctx, fmt.Sprintf("own/%d", i))
		if err != nil || string(data) != fmt.Sprint(i) || v != versions[i] {
			t.Fatalf("own/%d: %q, version %d, %v; want %q, version %d", i, data, v, err, fmt.Sprint(i), versions[i])
		}
		if seen[v] {
			t.Fatalf("version %d handed out twice", v)
		}
		seen[v] = true
	}
	if data, _, err := s.Load(ctx, "shared"); err != nil || data == nil {
		t.Fatalf("shared: %q, %v", data, err)
	}
}

// TestGroupWithFailingWrite: a write that fails in a group gets its
// error alone; the writes before and after it in the group are committed
// with the versions they returned.
func TestGroupWithFailingWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s := openAt(t, path, nil)
	release := s.HoldWriter()
	const n = 6
	var wg sync.WaitGroup
	versions := make([]uint64, n)
	var failed error
	for i := range n {
		wg.Go(func() {
			if i == n/2 {
				failed = s.WriteFailing(ctx)
				return
			}
			v, err := s.CompareAndSwap(ctx, fmt.Sprintf("k%d", i), 0, []byte(fmt.Sprint(i)))
			if err != nil {
				t.Errorf("k%d: %v", i, err)
			}
			versions[i] = v
		})
	}
	for s.Queued() < n {
		time.Sleep(time.Millisecond)
	}
	release()
	wg.Wait()
	if failed == nil || !strings.Contains(failed.Error(), "CHECK constraint failed") {
		t.Fatalf("the failing write: %v; want its CHECK constraint error", failed)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openAt(t, path, nil)
	for i := range n {
		if i == n/2 {
			continue
		}
		data, v, err := s.Load(ctx, fmt.Sprintf("k%d", i))
		if err != nil || string(data) != fmt.Sprint(i) || v != versions[i] {
			t.Errorf("k%d: %q, version %d, %v; want %q, version %d", i, data, v, err, fmt.Sprint(i), versions[i])
		}
	}
}
