package redisstore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/chartgate/chartgate/internal/histrec"
	"github.com/chartgate/chartgate/internal/histrec/histrectest"
	"github.com/chartgate/chartgate/internal/redistest"
	"github.com/chartgate/chartgate/mcpbind/redisstore"
)

// BenchmarkSplitWrite writes a record with a history of 500 entries, as
// chartgate serve keeps, the way a moving call does: "commit" drops the
// oldest entry and appends one (CompareAndSwapSplit with a delta), "lease"
// changes the head alone, and "whole" writes the same record whole
// (CompareAndSwap), as before records were split; "whole-20" writes a
// record with mcpbind's default history of 20 entries whole.
func BenchmarkSplitWrite(b *testing.B) {
	ctx := context.Background()
	client := redistest.Start(b)
	head := []byte(`{"state":{"value":"a","context":{"n":1}}}`)
	run := 0
	for _, c := range []string{"lease", "commit", "whole", "whole-20"} {
		b.Run(c, func(b *testing.B) {
			run++
			s := redisstore.New(client, &redisstore.Options{Prefix: fmt.Sprint(run, ":")})
			n := 500
			if c == "whole-20" {
				n = 20
			}
			hist := histrectest.Entries(0, n)
			v, err := s.CompareAndSwapSplit(ctx, "k", 0, &histrec.Write{Head: head, History: hist}, true)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				switch c {
				case "lease":
					v, err = s.CompareAndSwapSplit(ctx, "k", v, &histrec.Write{Head: head, History: hist, Delta: true}, false)
				case "commit":
					hist = append(hist[1:len(hist):len(hist)], histrectest.Entries(n+i, 1)...)
					v, err = s.CompareAndSwapSplit(ctx, "k", v, &histrec.Write{Head: head, History: hist, Delta: true, Dropped: 1, Appended: 1}, true)
				default:
					hist = append(hist[1:len(hist):len(hist)], histrectest.Entries(n+i, 1)...)
					buf := histrec.AppendEntries(append(head[:len(head)-1:len(head)-1], `,"history":[`...), hist)
					v, err = s.CompareAndSwap(ctx, "k", v, append(buf, "]}"...))
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
