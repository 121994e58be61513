package diagram

import (
	"fmt"
	"testing"

	"github.com/chartgate/chartgate/internal/benchgen"
	"github.com/chartgate/chartgate/statechart"
)

// BenchmarkSVG draws flat and nested machines of growing size: the time
// per state should stay about flat (the layout is linear in the states
// plus the transitions times the depth).
func BenchmarkSVG(b *testing.B) {
	for _, gen := range []struct {
		name string
		f    func(int) []byte
	}{{"flat", benchgen.Flat}, {"nested", benchgen.Nested}} {
		for _, n := range []int{100, 1000, 10000} {
			config := gen.f(n)
			m, err := statechart.Compile(config, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/%d", gen.name, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					_ = New(m, config).SVG(nil)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/state")
			})
		}
	}
}
