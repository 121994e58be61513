// This file holds the internal tests of a gate's watch of its store.

package mcpbind

import (
	"io"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMemoryStoreWatchGoroutines: a gate follows a MemoryStore on one
// goroutine, which the store's writes do not wake (the store hands them
// to the gate on the writer's goroutine), not on one that takes them from
// a channel besides it.
func TestMemoryStoreWatchGoroutines(t *testing.T) {
	g := compileGate(t, `{"id": "m", "initial": "a", "states": {"a": {}}}`, &Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	defer g.Close()
	g.core.StartWatch()
	// follow returns the stacks of the goroutines that follow the store
	// for g (the one StartWatch started on this goroutine, and those it
	// started), once that one waits (it has started all there are).
	me := make([]byte, 64)
	me = me[:runtime.Stack(me, false)]
	myID, _, _ := strings.Cut(strings.TrimPrefix(string(me), "goroutine "), " ")
	self := "created by github.com/chartgate/chartgate/internal/core.(*Core).StartWatch in goroutine " + myID + "\n"
	follow := func() []string {
		for range 5000 {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			all := strings.Split(string(buf), "\n\n")
			for _, st := range all {
				if !strings.Contains(st, self) {
					continue
				}
				if !strings.Contains(st, "[select") && !strings.Contains(st, "[chan receive") {
					break // it has not started all yet
				}
				id, _, _ := strings.Cut(strings.TrimPrefix(st, "goroutine "), " ")
				sts := []string{st}
				for _, o := range all {
					if strings.Contains(o, "created by github.com/chartgate/chartgate/internal/core.(*Core).follow in goroutine "+id+"\n") {
						sts = append(sts, o)
					}
				}
				return sts
			}
			time.Sleep(time.Millisecond)
		}
		t.Fatal("no goroutine follows the store")
		return nil
	}
	if sts := follow(); len(sts) != 1 {
		t.Fatalf("%d goroutines follow the store, want 1:\n%s", len(sts), strings.Join(sts, "\n\n"))
	}
}
