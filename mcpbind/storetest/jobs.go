// This file defines RunJobs, which checks that the jobs of a gate (the
// promise children its workflows invoke) survive the instance that runs
// them on a store shared by several instances.

package storetest

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart"
)

// jobsJSON runs a test suite as a job: RUN enters "testing", whose invoke
// runs the "suite" logic; its result moves the workflow to "green" (with
// the output in the context) or "red".
const jobsJSON = `{
  "id": "jobs",
  "context": {"report": null},
  "initial": "idle",
  "states": {
    "idle": {"on": {"RUN": "testing"}},
    "testing": {
      "invoke": {"id": "suite", "src": "suite", "input": {"branch": {"$ref": "event.branch"}},
        "onDone": {"target": "green", "actions": {"type": "xstate.assign", "params": {"report": {"$ref": "event.output"}}}},
        "onError": "red"},
      "on": {"CANCEL": "idle"}
    },
    "green": {},
    "red": {}
  }
}`

// clock is a time the test moves.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// suite is the job's logic of one instance: each run reports that it
// started (with its input), then waits for a result to return or for its
// context to end.
type suite struct {
	started chan any
	result  chan string
	stopped chan struct{} // a run whose context was cancelled
}

func newSuite() *suite {
	return &suite{started: make(chan any, 4), result: make(chan string, 4), stopped: make(chan struct{}, 4)}
}

func (s *suite) run(ctx context.Context, input any) (any, error) {
	s.started <- input
	select {
	case r := <-s.result:
		return map[string]any{"passed": r}, nil
	case <-ctx.Done():
		s.stopped <- struct{}{}
		return nil, ctx.Err()
	}
}

// leaseTTL is long enough that no renewal happens during a test: leases
// expire when the test moves the clock.
const leaseTTL = time.Hour

func jobGate(t *testing.T, store mcpbind.Store, c *clock, s *suite, dropped chan<- string) *mcpbind.Gate {
	t.Helper()
	m, err := statechart.Compile([]byte(jobsJSON), &statechart.Options{Implementations: statechart.Implementations{
		Actors: map[string]statechart.ActorLogic{"suite": statechart.Promise(s.run)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	g, err := mcpbind.New(m.Engine(), &mcpbind.Options{Store: store, Now: c.Now, LeaseTTL: leaseTTL, Handles: mcpbind.HandlesNever,
		Logger: slog.New(dropLog{dropped})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	return g
}

func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

// awaitState waits until the workflow is in state want.
func awaitState(t *testing.T, g *mcpbind.Gate, ref mcpbind.Ref, want string) *mcpbind.Workflow {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		wf, err := g.WorkflowOf(context.Background(), ref)
		if err != nil {
			t.Fatal(err)
		}
		if wf.State.Value() == want {
			return wf
		}
		if time.Now().After(deadline) {
			t.Fatalf("the workflow is in %v, want %s", wf.State.Value(), want)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// deliveries counts the run-history entries of a job's results.
func deliveries(wf *mcpbind.Workflow) int {
	n := 0
	for _, tr := range wf.History {
		if tr.By == "actor:suite" {
			n++
		}
	}
	return n
}

// RunJobs checks, as subtests of t, that the jobs of gates on the store
// resume across instances: instance A starts a job and is closed
// mid-job, and instance B resumes it once A's lease expired; and a job
// whose lease expired while its instance still ran it moves its workflow
// once, whichever run lands first (the other's result is dropped, and the
// gate logs it). pair returns two handles on one empty
// backend (two connections, two opens of one file), as two server
// instances would have; the store must implement [mcpbind.Lister].
func RunJobs(t *testing.T, pair func(t *testing.T) (a, b mcpbind.Store)) {
	t.Run("ResumeAfterClose", func(t *testing.T) { testResumeAfterClose(t, pair) })
	t.Run("OnceWhenRunTwice", func(t *testing.T) { testOnceWhenRunTwice(t, pair) })
}

func testResumeAfterClose(t *testing.T, pair func(t *testing.T) (a, b mcpbind.Store)) {
	ctx := context.Background()
	storeA, storeB := pair(t)
	c := &clock{now: time.Unix(1_700_000_000, 0)}
	sa, sb := newSuite(), newSuite()
	a := jobGate(t, storeA, c, sa, nil)
	ref := mcpbind.Ref{Name: "w1"}
	if _, err := a.Send(ctx, ref, statechart.Event{Type: "RUN", Data: map[string]any{"branch": "main"}}, "test"); err != nil {
		t.Fatal(err)
	}
	if in := receive(t, sa.started, "the job to start on A"); !sameInput(in, "main") {
		t.Fatalf("the job's input is %v, want {branch: main}", in)
	}
	if err := a.Close(); err != nil { // A goes away mid-job
		t.Fatal(err)
	}
	receive(t, sa.stopped, "A's run to be cancelled")

	b := jobGate(t, storeB, c, sb, nil)
	if n, err := b.ResumeJobs(ctx); err != nil || n != 0 {
		t.Fatalf("ResumeJobs while A's lease is live: %d, %v; want 0", n, err)
	}
	c.add(leaseTTL + time.Second)
	if n, err := b.ResumeJobs(ctx); err != nil || n != 1 {
		t.Fatalf("ResumeJobs after A's lease expired: %d, %v; want 1", n, err)
	}
	if in := receive(t, sb.started, "the job to start on B"); !sameInput(in, "main") {
		t.Fatalf("the resumed job's input is %v, want {branch: main} (the persisted input)", in)
	}
	if n, err := b.ResumeJobs(ctx); err != nil || n != 0 {
		t.Fatalf("ResumeJobs while B runs the job: %d, %v; want 0", n, err)
	}
	sb.result <- "42"
	wf := awaitState(t, b, ref, "green")
	if got := wf.State.Context()["report"]; !sameReport(got, "42") {
		t.Fatalf("context.report is %v, want the job's output", got)
	}
	if n := deliveries(wf); n != 1 {
		t.Fatalf("%d transitions by the job in the run history, want 1", n)
	}
}

func testOnceWhenRunTwice(t *testing.T, pair func(t *testing.T) (a, b mcpbind.Store)) {
	ctx := context.Background()
	storeA, storeB := pair(t)
	c := &clock{now: time.Unix(1_700_000_000, 0)}
	sa, sb := newSuite(), newSuite()
	a := jobGate(t, storeA, c, sa, nil)
	dropped := make(chan string, 4)
	b := jobGate(t, storeB, c, sb, dropped)
	ref := mcpbind.Ref{Name: "w2"}
	if _, err := a.Send(ctx, ref, statechart.Event{Type: "RUN", Data: map[string]any{"branch": "dev"}}, "test"); err != nil {
		t.Fatal(err)
	}
	receive(t, sa.started, "the job to start on A")
	// A's store is unreachable for longer than a lease, say: its lease
	// expires while its run goes on, and B runs the job again.
	c.add(leaseTTL + time.Second)
	if n, err := b.ResumeJobs(ctx); err != nil || n != 1 {
		t.Fatalf("ResumeJobs after A's lease expired: %d, %v; want 1", n, err)
	}
	receive(t, sb.started, "the job to start on B")
	sa.result <- "a"
	awaitState(t, b, ref, "green")
	// B's run lands too, later: the child it ran is over, so its result
	// is dropped.
	sb.result <- "b"
	receive(t, dropped, "B to drop its result")
	wf, err := b.WorkflowOf(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if wf.State.Value() != "green" || !sameReport(wf.State.Context()["report"], "a") || deliveries(wf) != 1 {
		t.Fatalf("after both runs landed: state %v, report %v, %d transitions by the job; want green, A's report, 1",
			wf.State.Value(), wf.State.Context()["report"], deliveries(wf))
	}
}

// dropLog is a log handler that reports the jobs whose results a gate
// dropped.
type dropLog struct{ dropped chan<- string }

func (h dropLog) Enabled(context.Context, slog.Level) bool { return true }
func (h dropLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h dropLog) WithGroup(string) slog.Handler            { return h }
func (h dropLog) Handle(_ context.Context, r slog.Record) error {
	if h.dropped != nil && strings.Contains(r.Message, "result was dropped") {
		h.dropped <- r.Message
	}
	return nil
}

func sameInput(in any, branch string) bool {
	m, ok := in.(map[string]any)
	return ok && m["branch"] == branch
}

func sameReport(r any, passed string) bool {
	m, ok := r.(map[string]any)
	return ok && m["passed"] == passed
}
