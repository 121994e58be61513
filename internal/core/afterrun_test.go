package core

import (
	"context"
	"errors"
	"testing"
	"time"
)

type afterRunKey struct{}

// TestAfterRun: the context of what records a call after its tool ran
// keeps the request's values, outlives the request's cancellation, and
// ends at its deadline (with or without a call of Done before it) or when
// released, as context.WithTimeout(context.WithoutCancel(parent)) does.
func TestAfterRun(t *testing.T) {
	parent, cancelParent := context.WithCancel(context.WithValue(context.Background(), afterRunKey{}, "v"))
	cancelParent()

	ctx := NewAfterRun(parent, time.Hour)
	stop := ctx.Stop
	if ctx.Value(afterRunKey{}) != "v" {
		t.Fatal("the request's values are lost")
	}
	if err := ctx.Err(); err != nil {
		t.Fatalf("cancelled with the request: %v", err)
	}
	if d, ok := ctx.Deadline(); !ok || time.Until(d) < 59*time.Minute {
		t.Fatalf("deadline %v, %v; want one an hour away", d, ok)
	}
	derived, cancelDerived := context.WithCancel(ctx)
	defer cancelDerived()
	select {
	case <-ctx.Done():
		t.Fatal("done before its deadline")
	default:
	}
	stop()
	<-derived.Done() // a context made from it ends with it
	if !errors.Is(ctx.Err(), context.Canceled) || !errors.Is(derived.Err(), context.Canceled) {
		t.Fatalf("after stop: %v, derived %v; want context.Canceled", ctx.Err(), derived.Err())
	}
	stop() // a second release changes nothing

	// Its deadline ends it, for a caller waiting on Done...
	ctx = NewAfterRun(parent, time.Millisecond)
	stop = ctx.Stop
	<-ctx.Done()
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("at the deadline (Done): %v", ctx.Err())
	}
	stop()
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("released after its deadline: %v, want context.DeadlineExceeded still", ctx.Err())
	}

	// ... and for one that only asks Err, then Done.
	ctx = NewAfterRun(parent, time.Millisecond)
	stop = ctx.Stop
	defer stop()
	for ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("at the deadline (Err): %v", ctx.Err())
	}
	select {
	case <-ctx.Done():
	default:
		t.Fatal("Err reports the deadline but Done is open")
	}
}
