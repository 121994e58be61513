package cputime_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/chartgate/chartgate/internal/cputime"
)

func TestProcessCountsWork(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("CPU time is not read on", runtime.GOOS)
	}
	before := cputime.Process()
	x := 0
	for deadline := time.Now().Add(50 * time.Millisecond); time.Now().Before(deadline); {
		x++
	}
	if used := cputime.Process() - before; used < 10*time.Millisecond {
		t.Fatalf("50 ms of busy work counted as %v of CPU (%d rounds)", used, x)
	}
}
