// This file defines the Go benchmarks of the bench machines: BenchmarkSend
// sends each machine's event stream to a started statechart.Actor, the
// same work as the chartgate column of the table, measured by testing.B.

package main

import (
	"context"
	"testing"

	"github.com/chartgate/chartgate/statechart"
)

func BenchmarkSend(b *testing.B) {
	machines, err := loadMachines()
	if err != nil {
		b.Fatal(err)
	}
	for _, bm := range machines {
		b.Run(bm.Name, func(b *testing.B) {
			m, err := bm.compile()
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			a := statechart.NewActor(m, nil)
			if err := a.Start(ctx); err != nil {
				b.Fatal(err)
			}
			evs := make([]statechart.Event, len(bm.Events))
			for i := range evs {
				evs[i] = bm.event(i)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if err := a.Send(ctx, evs[i%len(evs)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
