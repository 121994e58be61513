// This file defines BenchmarkValidate: chartgate validate of machines of
// 1,000 states, in process, next to statechart.Compile of the same file
// (what validate cannot avoid doing).

package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/chartgate/chartgate/internal/benchgen"
	"github.com/chartgate/chartgate/statechart"
)

func BenchmarkValidate(b *testing.B) {
	for _, shape := range []struct {
		name string
		gen  func(int) []byte
	}{{"flat", benchgen.Flat}, {"nested", benchgen.Nested}} {
		data := shape.gen(1000)
		file := filepath.Join(b.TempDir(), shape.name+".json")
		if err := os.WriteFile(file, data, 0o600); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%s/1000/validate", shape.name), func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if code := cmdValidate([]string{file}, nil, io.Discard, io.Discard); code != exitOK {
					b.Fatalf("validate exited %d", code)
				}
			}
		})
		b.Run(fmt.Sprintf("%s/1000/compile", shape.name), func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := statechart.Compile(data, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
