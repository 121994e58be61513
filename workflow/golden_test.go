// This file tests a whole coding workflow (plan, implement, test, a fork
// of lint and review, an interrupt on .env files): its compiled machine
// against a golden file and at its key points, mcpbind's reading of it,
// and a walk through it.

package workflow_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"log/slog"
	"os"
	"reflect"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/workflow"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func loadCoding(t *testing.T) *workflow.Workflow {
	t.Helper()
	data, err := os.ReadFile("testdata/coding.json")
	if err != nil {
		t.Fatal(err)
	}
	w, err := workflow.Load(data, nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return w
}

func TestCodingGolden(t *testing.T) {
	w := loadCoding(t)
	if w.Format != workflow.FormatStatewright {
		t.Fatalf("format %q", w.Format)
	}
	var got bytes.Buffer
	if err := json.Indent(&got, w.JSON, "", "  "); err != nil {
		t.Fatal(err)
	}
	got.WriteByte('\n')
	const golden = "testdata/coding.xstate.json"
	if *update {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("the compiled machine differs from %s (run with -update to rewrite it, then review the diff)", golden)
	}

	// Key points, whatever the golden file says.
	for _, tc := range []struct{ path, want string }{
		{"initial", `"plan"`},
		{"context", `{"attempts":0}`},
		{"states.plan.meta.mcp", `{"tools":["Read","Grep","Glob"],"instructions":"Read the code and write a plan. Do not edit.","maxCalls":10,"onMaxCalls":"warn"}`},
		{"states.implement.meta.mcp.deny", `["WebFetch"]`},
		{"states.implement.meta.chartgate", `{"allowed_commands":["go build","go vet"],"blocked_env":["AWS_SECRET_ACCESS_KEY"],"env_overrides":{"GOFLAGS":"-mod=mod"},"max_edit_lines":200,"max_files_per_state":8,"max_iterations":30,"model":"large"}`},
		{"states.done.type", `"final"`},
		{"states.done.meta.mcp.tools", `["*"]`},
		// safe_next: plan's unhandled events of the workflow go to implement.
		{"states.plan.on.IMPLEMENTED.target", `"implement"`},
		{"states.plan.on.PLAN_READY.actions", `"statewright.merge"`},
		// Guarded branches, in order.
		{"states.test.on.NEXT.#.target", `["verify","implement"]`},
		{"states.test.on.NEXT.#.guard", `["tests_passed","tests_failed"]`},
		// The interrupt, on working states only.
		{`states.implement.on.chartgate\.interrupt\.env.target`, `"env_check"`},
		{`states.implement.on.chartgate\.interrupt\.env.guard`, `"statewright.notInterrupted"`},
		{`states.env_check.on.chartgate\.interrupt\.env`, ``},
		{`states.done.on`, ``},
		// $return: one guarded branch per state an interrupt may leave; into
		// the fork through its deep history.
		{`states.env_check.on.CLEAN.#(guard.params.state=="verify:START:fork").target`, `"#coding.verify:START:fork.history"`},
		{`states.env_check.on.CLEAN.#(guard.params.state=="implement").target`, `"#coding.implement"`},
		// The fork.
		{`states.verify:START:fork.type`, `"parallel"`},
		{`states.verify:START:fork.onDone.target`, `"done"`},
		{`states.verify:START:fork.states.history`, `{"type":"history","history":"deep"}`},
		{`states.verify:START:fork.states.lint.initial`, `"lint_run"`},
		{`states.verify:START:fork.states.lint.states.lint_run.on.lint\.ISSUES.target`, `"lint_failed"`},
		{`states.verify:START:fork.states.lint.states.lint_ok.type`, `"final"`},
		{`states.verify:START:fork.states.lint.states.lint_failed.always.target`, `"#coding.implement"`},
		{`states.verify:START:fork.states.review.states.review_read:APPROVE:approval.meta.mcp.approval`, `{"event":"review.APPROVE","from":"review_read","to":"review_ok","message":"Merge the change?"}`},
		// The root: interrupts, guards and the workflow meta.
		{`meta.chartgate.interrupts`, `{"env":{"file_pattern":"**/*.env*","event":"chartgate.interrupt.env"}}`},
		{`meta.chartgate.guards.tests_passed`, `{"field":"test_result","op":"eq","value":"pass"}`},
		{`meta.chartgate.workflow`, `{"task_type":"feature","estimated_steps":12,"danger_level":"moderate","approval_mode":"ui","default_model":"small"}`},
	} {
		path := tc.path
		if got := gjson.GetBytes(w.JSON, path).Raw; got != tc.want {
			t.Errorf("%s = %s, want %s", tc.path, got, tc.want)
		}
	}

	// What the workflow exposes besides the machine.
	if want := []workflow.Interrupt{{Name: "env", FilePattern: "**/*.env*", Event: "chartgate.interrupt.env"}}; !reflect.DeepEqual(w.Interrupts, want) {
		t.Errorf("Interrupts %+v", w.Interrupts)
	}
	steps := 12
	if want := (workflow.MachineMeta{TaskType: "feature", EstimatedSteps: &steps, DangerLevel: "moderate", ApprovalMode: "ui",
		Extra: map[string]json.RawMessage{"default_model": json.RawMessage(`"small"`)}}); !reflect.DeepEqual(w.Meta, want) {
		t.Errorf("Meta %+v", w.Meta)
	}
	impl := w.Policies["coding.implement"]
	if impl.AllowedCommandsTool != "Bash" || *impl.MaxEditLines != 200 || impl.EnvOverrides["GOFLAGS"] != "-mod=mod" || impl.BlockedEnv[0] != "AWS_SECRET_ACCESS_KEY" || impl.Model != "large" {
		t.Errorf("Policies[coding.implement] %+v", impl)
	}
	if p, ok := w.Policies["coding.verify:START:fork.lint.lint_run"]; !ok || p.AllowedCommands[0] != "golangci-lint run" {
		t.Errorf("the copy of lint_run in the fork has policy %+v, %v", p, ok)
	}
	if _, ok := w.Policies["coding.plan"]; !ok {
		t.Errorf("plan's max_iterations is a policy too")
	}
}

func TestCodingMcpbindReadsIt(t *testing.T) {
	w := loadCoding(t)
	if _, err := mcpbind.New(w.Machine.Engine(), &mcpbind.Options{Logger: slog.New(slog.DiscardHandler)}); err != nil {
		t.Fatalf("mcpbind.New refuses the compiled machine: %v", err)
	}
	for _, c := range []workflow.Checkpoint{workflow.CheckpointHard} {
		data, _ := os.ReadFile("testdata/coding.json")
		hw, err := workflow.Load(data, &workflow.Options{Checkpoint: c})
		if err != nil {
			t.Fatal(err)
		}
		if got := gjson.GetBytes(hw.JSON, "states.plan.meta.mcp.onMaxCalls").String(); got != "refuse" {
			t.Fatalf("hard checkpoint: onMaxCalls %q", got)
		}
		if _, err := mcpbind.New(hw.Machine.Engine(), &mcpbind.Options{Logger: slog.New(slog.DiscardHandler)}); err != nil {
			t.Fatalf("mcpbind.New: %v", err)
		}
	}
}

func TestCodingWalk(t *testing.T) {
	w := loadCoding(t)
	r := start(t, w)
	r.want("plan")
	r.send("PLAN_READY", map[string]any{"rationale": "the plan is in PLAN.md"})
	r.want("implement")
	if r.ctx()["rationale"] != "the plan is in PLAN.md" || r.ctx()["attempts"] != 0.0 {
		t.Fatalf("context %v", r.ctx())
	}

	// An edit of a .env file detours to env_check, and CLEAN returns.
	in, ok := w.MatchInterrupt("config/.env.local")
	if !ok {
		t.Fatal("no interrupt for config/.env.local")
	}
	r.gate(in.Event)
	r.want("env_check")
	if r.ctx()["_interrupt_return"] != "implement" {
		t.Fatalf("context %v", r.ctx())
	}
	r.send("CLEAN", nil)
	r.want("implement")
	if _, ok := r.ctx()["_interrupt_return"]; ok {
		t.Fatalf("context %v", r.ctx())
	}

	// Tests fail once, then pass.
	r.send("IMPLEMENTED", nil)
	r.want("test")
	if r.send("NEXT", nil) {
		t.Fatal("NEXT handled with no test_result")
	}
	r.send("RESULT", map[string]any{"test_result": "fail"})
	r.send("NEXT", nil)
	r.want("implement")
	r.send("IMPLEMENTED", nil)
	r.send("RESULT", map[string]any{"test_result": "pass"})
	r.send("NEXT", nil)
	r.want("verify")

	// The fork: lint and review in parallel.
	const fork = "verify:START:fork"
	r.send("START", nil)
	r.want(`{"verify:START:fork":{"lint":"lint_run","review":"review_read"}}`)
	r.send("lint.CLEAN", nil)
	r.want(`{"verify:START:fork":{"lint":"lint_ok","review":"review_read"}}`)

	// An interrupt inside the fork leaves it, and $return resumes both
	// branches where they were.
	r.gate(in.Event)
	r.want("env_check")
	if r.ctx()["_interrupt_return"] != fork {
		t.Fatalf("context %v", r.ctx())
	}
	r.send("CLEAN", nil)
	r.want(`{"verify:START:fork":{"lint":"lint_ok","review":"review_read"}}`)

	// The review waits for approval, then the fork joins.
	r.send("review.APPROVE", nil)
	r.want(`{"verify:START:fork":{"lint":"lint_ok","review":"review_read:APPROVE:approval"}}`)
	r.gate("chartgate.approve")
	r.want("done")
	if r.s.Status() != "done" {
		t.Fatalf("status %s", r.s.Status())
	}
}
