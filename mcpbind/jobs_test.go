package mcpbind_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/mcpbind/storetest"
	"github.com/chartgate/chartgate/statechart"
)

// TestMemoryStoreJobs: jobs resume across two gates on one memory store,
// and move their workflow once (storetest.RunJobs).
func TestMemoryStoreJobs(t *testing.T) {
	storetest.RunJobs(t, func(*testing.T) (mcpbind.Store, mcpbind.Store) {
		s := mcpbind.NewMemoryStore(nil)
		return s, s
	})
}

// testsJSON is the deploy workflow of the package documentation: a
// successful run_tests enters "testing", which runs the test suite as a
// job; deploy is visible only once it passed.
const testsJSON = `{
  "id": "release",
  "initial": "idle",
  "states": {
    "idle": {"on": {"RUN_TESTS": "testing"},
      "meta": {"mcp": {"tools": ["run_tests"], "events": {"run_tests": "RUN_TESTS"}}}},
    "testing": {
      "invoke": {"id": "suite", "src": "suite", "input": {"$ref": "event.input"},
        "onDone": "green", "onError": "red"},
      "on": {"CANCEL": "idle"},
      "meta": {"mcp": {"tools": ["cancel_tests"], "events": {"cancel_tests": "CANCEL"}}}
    },
    "green": {"on": {"DEPLOY": "deployed"},
      "meta": {"mcp": {"tools": ["deploy"], "events": {"deploy": "DEPLOY"}}}},
    "red": {"on": {"RUN_TESTS": "testing"},
      "meta": {"mcp": {"tools": ["run_tests"], "events": {"run_tests": "RUN_TESTS"}}}},
    "deployed": {"type": "final"}
  }
}`

// suiteRun is one run of the test suite's job, as the test sees it.
type suiteRun struct {
	input  any
	ctx    context.Context
	result chan error // nil: passed
	over   chan struct{}
}

// testsFixture is a server with the deploy tools, gated by testsJSON,
// whose job is a run the test controls.
func testsFixture(t *testing.T, opts *mcpbind.Options) (*fixture, chan *suiteRun) {
	t.Helper()
	runs := make(chan *suiteRun, 4)
	suite := statechart.Promise(func(ctx context.Context, input any) (any, error) {
		r := &suiteRun{input: input, ctx: ctx, result: make(chan error, 1), over: make(chan struct{})}
		defer close(r.over)
		runs <- r
		select {
		case err := <-r.result:
			if err != nil {
				return nil, err
			}
			return map[string]any{"passed": 12}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	engine := compile(t, "full", testsJSON, &statechart.Options{Implementations: statechart.Implementations{
		Actors: map[string]statechart.ActorLogic{"suite": suite},
	}})
	f := newFixture(t, engine, opts, "run_tests", "cancel_tests", "deploy")
	t.Cleanup(func() { _ = f.gate.Close() })
	return f, runs
}

func nextRun(t *testing.T, runs chan *suiteRun) *suiteRun {
	t.Helper()
	select {
	case r := <-runs:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("the job did not start")
	}
	return nil
}

// TestJobMovesWorkflow: a tool's success enters a state that invokes a
// job; the job runs off the request, and its result moves the workflow
// and sends list_changed to the session, which then sees deploy.
func TestJobMovesWorkflow(t *testing.T) {
	for _, protocol := range protocols {
		t.Run(protocol, func(t *testing.T) {
			var trs = make(chan mcpbind.Transition, 8)
			f, runs := testsFixture(t, &mcpbind.Options{OnTransition: func(_ context.Context, tr mcpbind.Transition) { trs <- tr }})
			c := f.connect(t, protocol)
			c.expectTools("idle", "run_tests")
			ref := refusal(t, c.call("deploy", nil))
			if len(ref.Path) != 2 || ref.Path[0].Tool != "run_tests" || ref.Path[1].Actor != "suite" || ref.Path[1].Event != "xstate.done.actor.suite" {
				t.Fatalf("the path to deploy from idle: %+v", ref.Path)
			}
			if want := `call run_tests, then wait for "suite" (running in the background) to finish.`; !strings.Contains(resultText(c.call("deploy", nil)), want) {
				t.Fatalf("the refusal does not say %q", want)
			}
			c.call("run_tests", map[string]any{"suite": "unit"})
			c.expectChanged("run_tests")
			<-trs
			r := nextRun(t, runs)
			if in, _ := r.input.(map[string]any); in["suite"] != "unit" {
				t.Fatalf("the job's input is %v, want the call's arguments", r.input)
			}
			c.expectTools("while the job runs", "cancel_tests")
			if ref := refusal(t, c.call("deploy", nil)); ref.Code != mcpbind.CodeForbidden || len(ref.Path) != 1 || ref.Path[0].Actor != "suite" {
				t.Fatalf("deploy while testing: %+v", ref)
			}
			r.result <- nil
			c.expectChanged("the job's result")
			tr := <-trs
			if tr.By != "actor:suite" || tr.Event.Type != "xstate.done.actor.suite" || tr.From != "testing" || tr.To != "green" {
				t.Fatalf("the job's transition: %+v", tr)
			}
			if out, _ := tr.Event.Data["output"].(map[string]any); out["passed"] != float64(12) {
				t.Fatalf("the done event's output: %v", tr.Event.Data)
			}
			c.expectTools("after the job", "deploy")
			if res := c.call("deploy", nil); res.IsError {
				t.Fatalf("deploy after the job: %s", resultText(res))
			}
			if s := stateOf(t, f, c); s != "deployed" {
				t.Fatalf("state %v, want deployed", s)
			}
		})
	}
}

// TestJobError: a job that fails sends xstate.error.actor.<id>.
func TestJobError(t *testing.T) {
	f, runs := testsFixture(t, nil)
	c := f.connect(t, "2025-11-25")
	c.call("run_tests", nil)
	c.expectChanged("run_tests")
	nextRun(t, runs).result <- errors.New("3 tests failed")
	c.expectChanged("the job's failure")
	c.expectTools("after the failure", "run_tests")
	if s := stateOf(t, f, c); s != "red" {
		t.Fatalf("state %v, want red", s)
	}
	wf, err := f.gate.SessionWorkflow(context.Background(), c.ss)
	if err != nil {
		t.Fatal(err)
	}
	last := wf.History[len(wf.History)-1]
	if last.Event.Type != "xstate.error.actor.suite" || last.Event.Data["error"] != "3 tests failed" {
		t.Fatalf("the last transition: %+v", last)
	}
}

// TestJobStoppedWithItsState: leaving the invoking state cancels the
// job's context, and its late result changes nothing.
func TestJobStoppedWithItsState(t *testing.T) {
	f, runs := testsFixture(t, nil)
	c := f.connect(t, "2025-11-25")
	c.call("run_tests", nil)
	c.expectChanged("run_tests")
	r := nextRun(t, runs)
	c.call("cancel_tests", nil)
	c.expectChanged("cancel_tests")
	select {
	case <-r.ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the job's context was not cancelled when its state was left")
	}
	<-r.over
	c.expectQuiet("after the cancelled job returned")
	if s := stateOf(t, f, c); s != "idle" {
		t.Fatalf("state %v, want idle", s)
	}
	// Run again: a new child, a new job.
	c.call("run_tests", nil)
	c.expectChanged("run_tests again")
	nextRun(t, runs).result <- nil
	c.expectChanged("the second job's result")
	if s := stateOf(t, f, c); s != "green" {
		t.Fatalf("state %v, want green", s)
	}
}

// TestCloseStopsJobs: Close cancels the running jobs and returns once
// their functions returned; the gate claims no job after it.
func TestCloseStopsJobs(t *testing.T) {
	f, runs := testsFixture(t, nil)
	ctx := context.Background()
	ref := mcpbind.Ref{Name: "w"}
	if _, err := f.gate.Send(ctx, ref, statechart.Event{Type: "RUN_TESTS"}, "test"); err != nil {
		t.Fatal(err)
	}
	r := nextRun(t, runs)
	if err := f.gate.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.over:
	default:
		t.Fatal("Close returned before the job's function did")
	}
	if n, err := f.gate.ResumeJobs(ctx); err != nil || n != 0 {
		t.Fatalf("ResumeJobs after Close: %d, %v", n, err)
	}
	wf, err := f.gate.WorkflowOf(ctx, ref)
	if err != nil || wf.State.Value() != "testing" {
		t.Fatalf("after Close: %v, %v; want the workflow still testing", wf, err)
	}
	if err := f.gate.Close(); err != nil {
		t.Fatal("a second Close:", err)
	}
}

// TestJobOfHandle: a workflow named by a handle (no session) runs its
// jobs too.
func TestJobOfHandle(t *testing.T) {
	f, runs := testsFixture(t, &mcpbind.Options{Handles: mcpbind.HandlesAlways})
	c := f.connect(t, "2025-11-25")
	res := c.call("workflow_start", nil)
	id := res.StructuredContent.(map[string]any)["workflow_id"].(string)
	c.call("run_tests", map[string]any{"workflow_id": id})
	nextRun(t, runs).result <- nil
	deadline := time.Now().Add(10 * time.Second)
	for {
		wf, err := f.gate.Workflow(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if wf.State.Value() == "green" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("state %v, want green", wf.State.Value())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestJobEndsWithSession: when the session that owns the workflow ends,
// its workflow is removed and its job's context cancelled.
func TestJobEndsWithSession(t *testing.T) {
	f, runs := testsFixture(t, nil)
	c := f.connect(t, "2025-11-25")
	c.call("run_tests", nil)
	r := nextRun(t, runs)
	_ = c.cs.Close()
	select {
	case <-r.ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the job's context was not cancelled when its session ended")
	}
	waitFor(t, "the gate to forget the session", func() bool { return f.gate.Sessions() == 0 })
}

// TestJobOfInitialState: a workflow whose initial state invokes a job
// starts it at the session's first request, one job per session.
func TestJobOfInitialState(t *testing.T) {
	runs := make(chan context.Context, 4)
	release := make(chan struct{})
	engine := compile(t, "full", `{"id": "boot", "initial": "warming", "states": {
		"warming": {"invoke": {"src": "warm", "onDone": "ready"}},
		"ready": {"meta": {"mcp": {"tools": ["query"]}}}}}`, &statechart.Options{Implementations: statechart.Implementations{
		Actors: map[string]statechart.ActorLogic{"warm": statechart.Promise(func(ctx context.Context, _ any) (any, error) {
			runs <- ctx
			select {
			case <-release:
				return nil, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})},
	}})
	f := newFixture(t, engine, nil, "query")
	t.Cleanup(func() { _ = f.gate.Close() })
	a, b := f.connect(t, "2025-11-25"), f.connect(t, "2025-11-25")
	a.expectTools("a while warming")
	b.expectTools("b while warming")
	for range 2 {
		select {
		case <-runs:
		case <-time.After(10 * time.Second):
			t.Fatal("a session's job did not start")
		}
	}
	close(release)
	a.expectChanged("a's job")
	b.expectChanged("b's job")
	a.expectTools("a when ready", "query")
	b.expectTools("b when ready", "query")
}

// jobLeaseUntil reads the end of the lease of the workflow's one job from
// its record in the store.
func jobLeaseUntil(t *testing.T, store mcpbind.Store, key string) time.Time {
	t.Helper()
	data, _, err := store.Load(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Jobs []struct {
			Until time.Time `json:"until"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal(data, &rec); err != nil || len(rec.Jobs) != 1 {
		t.Fatalf("the record's jobs: %v, %s", err, data)
	}
	return rec.Jobs[0].Until
}

// TestJobLeaseRenewed: a running job renews its lease, so that another
// instance does not take it over while it runs.
func TestJobLeaseRenewed(t *testing.T) {
	ctx := context.Background()
	store := mcpbind.NewMemoryStore(nil)
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	const ttl = 30 * time.Millisecond // renewed every 10 ms of real time, on the fake clock
	f, runs := testsFixture(t, &mcpbind.Options{Store: store, Now: clock.Now, LeaseTTL: ttl})
	other, err := mcpbind.New(f.gate.Engine(), &mcpbind.Options{Store: store, Now: clock.Now, LeaseTTL: ttl, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })
	ref := mcpbind.Ref{Name: "w"}
	if _, err := f.gate.Send(ctx, ref, statechart.Event{Type: "RUN_TESTS"}, "test"); err != nil {
		t.Fatal(err)
	}
	r := nextRun(t, runs)
	wf, err := f.gate.WorkflowOf(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	first := jobLeaseUntil(t, store, wf.Key)
	clock.Add(ttl * 2 / 3)
	waitFor(t, "a renewal of the job's lease", func() bool { return jobLeaseUntil(t, store, wf.Key).After(first) })
	clock.Add(ttl * 2 / 3) // past the first lease, within the renewed one
	if n, err := other.ResumeJobs(ctx); err != nil || n != 0 {
		t.Fatalf("another instance's ResumeJobs while the job runs and renews its lease: %d, %v; want 0", n, err)
	}
	r.result <- nil
	waitFor(t, "the job to land", func() bool {
		wf, err := f.gate.WorkflowOf(ctx, ref)
		return err == nil && wf.State.Value() == "green"
	})
}

// TestJobBadResult: a job that panics, or returns an output that is not
// JSON, fails: xstate.error.actor.<id> with what went wrong.
func TestJobBadResult(t *testing.T) {
	for name, logic := range map[string]statechart.Promise{
		"panic":   func(context.Context, any) (any, error) { panic("boom") },
		"no JSON": func(context.Context, any) (any, error) { return map[string]any{"c": make(chan int)}, nil },
	} {
		t.Run(name, func(t *testing.T) {
			engine := compile(t, "full", testsJSON, &statechart.Options{Implementations: statechart.Implementations{
				Actors: map[string]statechart.ActorLogic{"suite": logic},
			}})
			f := newFixture(t, engine, nil, "run_tests", "cancel_tests", "deploy")
			t.Cleanup(func() { _ = f.gate.Close() })
			ctx := context.Background()
			ref := mcpbind.Ref{Name: "w"}
			if _, err := f.gate.Send(ctx, ref, statechart.Event{Type: "RUN_TESTS"}, "test"); err != nil {
				t.Fatal(err)
			}
			var wf *mcpbind.Workflow
			waitFor(t, "the job to fail", func() bool {
				var err error
				wf, err = f.gate.WorkflowOf(ctx, ref)
				return err == nil && wf.State.Value() == "red"
			})
			last := wf.History[len(wf.History)-1]
			msg, _ := last.Event.Data["error"].(string)
			if last.Event.Type != "xstate.error.actor.suite" || !strings.Contains(msg, map[string]string{"panic": "panicked: boom", "no JSON": "not JSON"}[name]) {
				t.Fatalf("the job's transition: %+v", last)
			}
		})
	}
}
