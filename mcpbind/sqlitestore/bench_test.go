// This file holds the benchmarks: Open (what a hook process pays on every
// tool call), Load and CompareAndSwap (synced or not), and a whole hook
// process.

package sqlitestore_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/chartgate/chartgate/internal/cputime"
	"github.com/chartgate/chartgate/internal/histrec/histrectest"
	"github.com/chartgate/chartgate/mcpbind/sqlitestore"
)

// record is a workflow record of a typical size.
var record = bytes.Repeat([]byte(`{"value":"payment","context":{}}`), 32) // 1 KiB

// BenchmarkOpen opens and closes a store on a file that is set up: alone
// (Close is the file's last connection, so SQLite checkpoints and removes
// the WAL, and the next Open creates it again), and beside a gateway that
// keeps the file open, as hook processes do.
func BenchmarkOpen(b *testing.B) {
	for _, gateway := range []bool{false, true} {
		name := "alone"
		if gateway {
			name = "beside-gateway"
		}
		b.Run(name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "state.db")
			g := openAt(b, path, nil)
			if _, err := g.CompareAndSwap(context.Background(), "k", 0, record); err != nil {
				b.Fatal(err)
			}
			if !gateway {
				g.Close()
			}
			b.ReportAllocs()
			for b.Loop() {
				s, err := sqlitestore.Open(path, nil)
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkHookCall is what a hook process does with the store for one
// tool call, beside a gateway: open, load, one compare-and-swap, close.
func BenchmarkHookCall(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "state.db")
	openAt(b, path, nil) // the gateway
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		s, err := sqlitestore.Open(path, nil)
		if err != nil {
			b.Fatal(err)
		}
		_, v, err := s.Load(ctx, "k")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.CompareAndSwap(ctx, "k", v, record); err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHookProcess runs a whole process: "start" is the test binary
// starting and exiting, "hook" the same process doing BenchmarkHookCall's
// work once, beside a gateway (this process) that keeps the file open.
func BenchmarkHookProcess(b *testing.B) {
	path := filepath.Join(b.TempDir(), "state.db")
	openAt(b, path, nil)
	for _, mode := range []string{"start", "hook"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				if out, err := helper(mode, path, 0).CombinedOutput(); err != nil {
					b.Fatalf("%v\n%s", err, out)
				}
			}
		})
	}
}

func BenchmarkLoad(b *testing.B) {
	ctx := context.Background()
	s := open(b, nil)
	if _, err := s.CompareAndSwap(ctx, "k", 0, record); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if d, _, err := s.Load(ctx, "k"); err != nil || len(d) != len(record) {
			b.Fatal(len(d), err)
		}
	}
}

// BenchmarkCompareAndSwap updates one record, with each commit synced
// (the default), with RelaxedSync, with CompareAndSwapNoSync, and the way
// a call that moves a workflow does: a write without sync (the lease),
// then a synced one (the commit).
func BenchmarkCompareAndSwap(b *testing.B) {
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		relaxed bool
		writes  []bool // synced or not
	}{
		{"full-sync", false, []bool{true}},
		{"relaxed-sync", true, []bool{true}},
		{"no-sync", false, []bool{false}},
		{"lease+commit", false, []bool{false, true}},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := open(b, &sqlitestore.Options{RelaxedSync: c.relaxed})
			var v uint64
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				for _, synced := range c.writes {
					var err error
					if synced {
						v, err = s.CompareAndSwap(ctx, "k", v, record)
					} else {
						v, err = s.CompareAndSwapNoSync(ctx, "k", v, record)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkSplitWrite writes a record with a history of 500 entries
// (~60 KB, what chartgate keeps) the ways a moving call of a named
// session does (histrectest.WriteKinds), with RelaxedSync; "whole" is
// what every write did before histories were kept apart.
func BenchmarkSplitWrite(b *testing.B) {
	for _, c := range histrectest.WriteKinds {
		b.Run(c, func(b *testing.B) {
			s := open(b, &sqlitestore.Options{RelaxedSync: true})
			defer reportCPU(b)()
			histrectest.Writes(b, s, c, 500, nil)
		})
	}
}

// BenchmarkMovingCall is what the gate does with the store for a call
// that moves a workflow: a load, a write without sync (the lease), and a
// durable one (the commit), under the RelaxedSync that chartgate serve
// opens its store with by default, and without.
func BenchmarkMovingCall(b *testing.B) {
	for _, relaxed := range []bool{true, false} {
		name := "relaxed-sync"
		if !relaxed {
			name = "full-sync"
		}
		b.Run(name, func(b *testing.B) {
			s, v := openWithRecord(b, &sqlitestore.Options{RelaxedSync: relaxed})
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				v = movingCall(b, s, "k", v)
			}
		})
	}
}

// openWithRecord opens a store in a new file, with record under key "k",
// and returns it with the record's version.
func openWithRecord(b *testing.B, opts *sqlitestore.Options) (*sqlitestore.Store, uint64) {
	b.Helper()
	s := open(b, opts)
	v, err := s.CompareAndSwap(context.Background(), "k", 0, record)
	if err != nil {
		b.Fatal(err)
	}
	return s, v
}

// reportCPU returns a function that reports the CPU time the process
// used per operation since reportCPU was called ("cpu-ns/op"; 0 where it
// is not read). Call it when the benchmark's loop is done.
func reportCPU(b *testing.B) func() {
	start := cputime.Process()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(cputime.Process()-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

// movingCall does what the gate does with the store for a call that
// moves the workflow of key, whose record has version v: it loads the
// record, writes the lease without sync and the commit with it, and
// returns the record's new version.
func movingCall(b *testing.B, s *sqlitestore.Store, key string, v uint64) uint64 {
	ctx := context.Background()
	data, cur, err := s.Load(ctx, key)
	if err != nil || cur != v || len(data) != len(record) {
		b.Fatalf("load: %d bytes, version %d, %v; want %d, %d", len(data), cur, err, len(record), v)
	}
	if v, err = s.CompareAndSwapNoSync(ctx, key, v, record); err != nil {
		b.Fatal(err)
	}
	if v, err = s.CompareAndSwap(ctx, key, v, record); err != nil {
		b.Fatal(err)
	}
	return v
}

// BenchmarkCompareAndSwapConcurrent has 8 goroutines per CPU write each
// its own key, as the sessions of a gateway do: writes that wait for each
// other are committed together.
func BenchmarkCompareAndSwapConcurrent(b *testing.B) {
	s := open(b, nil)
	var next atomic.Int64
	b.ReportAllocs()
	defer reportCPU(b)()
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		key := "k" + strconv.FormatInt(next.Add(1), 10)
		var v uint64
		for pb.Next() {
			var err error
			if v, err = s.CompareAndSwap(ctx, key, v, record); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkMovingCallConcurrent is BenchmarkMovingCall with 8 goroutines
// per CPU, each a session with its own key, as a gateway's sessions move
// their workflows at once: writes that wait for each other are committed
// together.
func BenchmarkMovingCallConcurrent(b *testing.B) {
	for _, relaxed := range []bool{true, false} {
		name := "relaxed-sync"
		if !relaxed {
			name = "full-sync"
		}
		b.Run(name, func(b *testing.B) {
			s := open(b, &sqlitestore.Options{RelaxedSync: relaxed})
			var next atomic.Int64
			b.ReportAllocs()
			defer reportCPU(b)()
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				ctx := context.Background()
				key := "k" + strconv.FormatInt(next.Add(1), 10)
				v, err := s.CompareAndSwap(ctx, key, 0, record)
				if err != nil {
					b.Fatal(err)
				}
				for pb.Next() {
					v = movingCall(b, s, key, v)
				}
			})
		})
	}
}

// BenchmarkFreshGoroutine runs each operation on a goroutine of its own,
// started for it, as the MCP SDK runs each request of a session: a
// compare-and-swap, a load, and a moving call (load, lease and commit),
// under RelaxedSync. A new goroutine starts with a small stack, which
// SQLite's code, compiled to Go, grows; the other benchmarks run on one
// goroutine, whose stack stays grown.
func BenchmarkFreshGoroutine(b *testing.B) {
	ctx := context.Background()
	for _, op := range []string{"compare-and-swap", "load", "moving-call"} {
		b.Run(op, func(b *testing.B) {
			s, v := openWithRecord(b, &sqlitestore.Options{RelaxedSync: true})
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				done := make(chan struct{})
				go func() {
					defer close(done)
					switch op {
					case "compare-and-swap":
						var err error
						if v, err = s.CompareAndSwap(ctx, "k", v, record); err != nil {
							b.Error(err)
						}
					case "load":
						if d, _, err := s.Load(ctx, "k"); err != nil || len(d) != len(record) {
							b.Error(len(d), err)
						}
					default:
						v = movingCall(b, s, "k", v)
					}
				}()
				<-done
			}
		})
	}
}
