package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestMeasureCompile(t *testing.T) {
	runs, err := measureCompile([]int{10, 100}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 4 {
		t.Fatalf("%d runs, want flat and nested at 2 sizes", len(runs))
	}
	for i, r := range runs {
		if r.NS <= 0 {
			t.Errorf("%s %d: time %d", r.Shape, r.States, r.NS)
		}
		if first := i%2 == 0; first != (r.Growth == 0) {
			t.Errorf("%s %d: growth %v", r.Shape, r.States, r.Growth)
		}
	}
	if runs[0].Shape != "flat" || runs[2].Shape != "nested" || runs[3].States != 100 {
		t.Errorf("runs %+v", runs)
	}
}

func TestCompileTable(t *testing.T) {
	var buf bytes.Buffer
	writeCompileTable(&buf, []compileRun{{Shape: "flat", States: 1000, NS: 4_500_000}, {Shape: "flat", States: 10000, NS: 49_500_000, Growth: 11}})
	for _, want := range []string{"| flat | 1,000 | 4.50 ms | 4.5 µs | – |", "| flat | 10,000 | 49.50 ms | 5.0 µs | 11.0× |"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("table:\n%s\nwant a row %s", buf.String(), want)
		}
	}
}
