// This file holds the benchmarks: Open (what a hook process pays on every
// tool call, on top of connecting), Load, and CompareAndSwap (with its
// notification), with and without a watcher.

package pgstore_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/chartgate/chartgate/internal/histrec/histrectest"
	"github.com/chartgate/chartgate/mcpbind/pgstore"
)

// record is a workflow record of a typical size.
var record = bytes.Repeat([]byte(`{"value":"payment","context":{}}`), 32) // 1 KiB

// BenchmarkOpen opens and closes a store on a schema that is set up: a
// pool, its first connection, and the schema check.
func BenchmarkOpen(b *testing.B) {
	ctx := context.Background()
	schema := open(b, nil).Schema()
	b.ReportAllocs()
	for b.Loop() {
		s, err := pgstore.Open(ctx, dsn(b), &pgstore.Options{Schema: schema})
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
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

// BenchmarkCompareAndSwap updates one record; "watched" with a watcher
// on another store of the schema that receives every notification.
func BenchmarkCompareAndSwap(b *testing.B) {
	ctx := context.Background()
	for _, watched := range []bool{false, true} {
		name := "unwatched"
		if watched {
			name = "watched"
		}
		b.Run(name, func(b *testing.B) {
			s := open(b, nil)
			if watched {
				w := openAt(b, &pgstore.Options{Schema: s.Schema()})
				wctx, cancel := context.WithCancel(ctx)
				b.Cleanup(cancel)
				ch, err := w.Watch(wctx, "")
				if err != nil {
					b.Fatal(err)
				}
				go func() {
					for range ch {
					}
				}()
			}
			var v uint64
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if v, err = s.CompareAndSwap(ctx, "k", v, record); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSplitWrite writes a record with a history of 500 entries, as
// chartgate serve keeps, the ways a moving call does
// (histrectest.WriteKinds); "whole" is what version 1 did. It reports the
// WAL each write generates (wal-B/op).
func BenchmarkSplitWrite(b *testing.B) {
	for _, c := range histrectest.WriteKinds {
		b.Run(c, func(b *testing.B) {
			s := open(b, nil)
			var wal0 int64
			histrectest.Writes(b, s, c, 500, func() { wal0 = query(b, `SELECT pg_current_wal_insert_lsn() - '0/0'::pg_lsn`) })
			b.ReportMetric(float64(query(b, `SELECT pg_current_wal_insert_lsn() - '0/0'::pg_lsn`)-wal0)/float64(b.N), "wal-B/op")
		})
	}
}
