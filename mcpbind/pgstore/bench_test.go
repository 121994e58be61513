// This file holds the benchmarks: Open (what a hook process pays on every
// tool call, on top of connecting), Load, and CompareAndSwap (with its
// notification), with and without a watcher.

package pgstore_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/chartgate/chartgate/internal/histrec"
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
// chartgate serve keeps, the way a moving call does: "commit" drops the
// oldest entry and appends one (CompareAndSwapSplit with a delta), "lease"
// changes the head alone, and "whole" writes the same record whole
// (CompareAndSwap), as version 1 did. It reports the WAL each write
// generates (wal-B/op).
func BenchmarkSplitWrite(b *testing.B) {
	ctx := context.Background()
	h := histrectest.Entries(0, 500)
	head := []byte(`{"state":{"value":"a","context":{"n":1}}}`)
	for _, c := range []string{"lease", "commit", "whole"} {
		b.Run(c, func(b *testing.B) {
			s := open(b, nil)
			hist := h
			v, err := s.CompareAndSwapSplit(ctx, "k", 0, &histrec.Write{Head: head, History: hist}, true)
			if err != nil {
				b.Fatal(err)
			}
			wal0 := query(b, `SELECT pg_current_wal_insert_lsn() - '0/0'::pg_lsn`)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				switch c {
				case "lease":
					v, err = s.CompareAndSwapSplit(ctx, "k", v, &histrec.Write{Head: head, History: hist, Delta: true}, false)
				case "commit":
					hist = append(hist[1:len(hist):len(hist)], histrectest.Entries(500+i, 1)...)
					v, err = s.CompareAndSwapSplit(ctx, "k", v, &histrec.Write{Head: head, History: hist, Delta: true, Dropped: 1, Appended: 1}, true)
				case "whole":
					hist = append(hist[1:len(hist):len(hist)], histrectest.Entries(500+i, 1)...)
					buf := histrec.AppendEntries(append(head[:len(head)-1:len(head)-1], `,"history":[`...), hist)
					v, err = s.CompareAndSwap(ctx, "k", v, append(buf, "]}"...))
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(query(b, `SELECT pg_current_wal_insert_lsn() - '0/0'::pg_lsn`)-wal0)/float64(b.N), "wal-B/op")
		})
	}
}
