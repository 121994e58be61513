// This file measures Load: a Statewright workflow compiled and loaded, the
// same machine loaded as XState, and format detection.

package workflow_test

import (
	"os"
	"testing"

	"github.com/chartgate/chartgate/workflow"
)

func BenchmarkLoad(b *testing.B) {
	data, err := os.ReadFile("testdata/coding.json")
	if err != nil {
		b.Fatal(err)
	}
	w, err := workflow.Load(data, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("statewright", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := workflow.Load(data, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("xstate", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := workflow.Load(w.JSON, &workflow.Options{Format: workflow.FormatXState}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("detect", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			workflow.DetectFormat(data)
		}
	})
}
