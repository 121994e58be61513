package redisstore_test

import (
	"fmt"
	"testing"

	"github.com/chartgate/chartgate/internal/histrec/histrectest"
	"github.com/chartgate/chartgate/internal/redistest"
	"github.com/chartgate/chartgate/mcpbind/redisstore"
)

// BenchmarkSplitWrite writes a record with a history of 500 entries, as
// chartgate serve keeps, the ways a moving call does
// (histrectest.WriteKinds; "whole" as before records were split), and
// "whole-20" a record with mcpbind's default history of 20 entries whole.
func BenchmarkSplitWrite(b *testing.B) {
	client := redistest.Start(b)
	runs := 0 // each run writes under a prefix of its own
	for _, c := range append(histrectest.WriteKinds, "whole-20") {
		b.Run(c, func(b *testing.B) {
			runs++
			s := redisstore.New(client, &redisstore.Options{Prefix: fmt.Sprint(runs, ":")})
			if c == "whole-20" {
				histrectest.Writes(b, s, "whole", 20, nil)
				return
			}
			histrectest.Writes(b, s, c, 500, nil)
		})
	}
}
