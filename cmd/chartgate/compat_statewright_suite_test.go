// This file ports, case by case, the tests of Statewright's engine
// (crates/engine: validate.rs, guard.rs, transition.rs, interrupt.rs), of
// its agent (crates/agent: tool_enforcer.rs, validator.rs, executor.rs's
// invoke tests) and of its gateway (crates/mcp-gateway: enforcement.rs,
// interceptors.rs, bash_classifier.rs, session.rs, config.rs,
// upstream.rs) to chartgate's commands: chartgate validate for the
// validator, chartgate serve --compat statewright driven by a go-sdk
// client for the gateway, chartgate hook claude-code --compat statewright
// for the interceptors and the shell classifier. Each case names the
// Statewright test it ports. The helpers (serveCompat, swAgent) are
// compat_statewright_test.go's. testdata/statewright-ledger.md lists every
// Statewright test with the test here or in compat_statewright_test.go
// that ports it, or why it does not apply.
//
// Not applicable, with the reason (where chartgate differs on purpose, the
// table "Compared with Statewright" in the workflow package's docs says
// so, with its switch):
//
//   - mcp-gateway/gateway.rs initialize_returns_server_info: chartgate
//     names itself; unknown_method_returns_error and
//     notification_returns_none: the MCP protocol is go-sdk's, and
//     resources and prompts are relayed from the upstream servers, so
//     resources/list is served; deactivated_workflow_passes_tool_through:
//     deactivate holds the workflow (table: statewright_pause,
//     statewright_deactivate); plugin_interrupt_skipped_when_already_in_
//     handler and plugin_interrupt_then_return_full_roundtrip: the agent
//     cannot send INTERRUPT:<name> (table; TestStatewrightSuitePluginInterrupt);
//     implicit_transition_auto_advances_and_calls_tool by default (table;
//     with --implicit-transitions: TestStatewrightCompatImplicitTransition).
//   - mcp-gateway/custom_tools.rs custom_tool_definitions_has_all_tools
//     and is_custom_tool_identifies_correctly in Statewright's newer
//     gateway (eleven tools): statewright_search_references,
//     statewright_run_agent and statewright_get_model_traits are not
//     served, nor statewright_force_state (table); the eight are
//     (TestStatewrightCompatTools).
//   - mcp-gateway/remote.rs: the hosted transport's API keys, PocketBase
//     workflows, SSE endpoints, /health and callback secret
//     (health_returns_ok, *_unauthorized_*, message_*,
//     approval_callback_unauthorized_with_wrong_secret,
//     approval_callback_invalid_status): chartgate serve has its own
//     transports and trust (serve_trust_test.go), and approvals are signed
//     by chartgate approve's key; streamable_session_key's tests: sessions
//     are keyed by the MCP session or --session, isolation is ported
//     (TestStatewrightSuiteRemote); fresh_remote_session_starts_inactive_
//     until_workflow_is_loaded: serve always enforces the workflow a
//     person gave.
//   - mcp-gateway/usage.rs: the hosts' token usage ledger
//     (records_exact_totals_and_tool_estimates_without_payloads,
//     rejects_stale_and_wrong_state_reports,
//     retains_completed_state_at_transition): chartgate keeps no token
//     usage (get_status's usage has no plan limits: table).
//   - agent/executor.rs parse_llm_response_*: parsing a model's text;
//     chartgate runs no model. reject_fails_execution: table (a rejected
//     approval). agent/tool_protocol.rs, ollama_client.rs, harmony.rs,
//     prompt_templates.rs, generator.rs: Statewright's own agent runner,
//     its model client, wire formats and prompts; chartgate gates agents,
//     it runs none.

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStatewrightSuiteValidate ports engine/validate.rs: chartgate
// validate accepts what validate_definition accepts and refuses what it
// refuses, naming the same culprit.
func TestStatewrightSuiteValidate(t *testing.T) {
	cases := []struct {
		port string
		file string
		want string // "" for a valid workflow, else a substring of the error
	}{
		{"engine/validate.rs/accepts_valid_machine", `{"id": "test", "initial": "start", "states": {
			"start": {"on": {"GO": "end", "FAIL": "failed"}}, "end": {"type": "final"}, "failed": {"type": "final"}}, "guards": {}}`, ""},
		{"engine/validate.rs/rejects_missing_initial_state_in_states", `{"id": "bad", "initial": "nonexistent", "states": {
			"start": {"on": {"GO": "end"}}, "end": {"type": "final"}}, "guards": {}}`, `initial: "nonexistent" is not a state`},
		{"engine/validate.rs/rejects_no_final_state", `{"id": "bad", "initial": "start", "states": {
			"start": {"on": {"GO": "middle"}}, "middle": {"on": {"GO": "start"}}}, "guards": {}}`, "final"},
		{"engine/validate.rs/rejects_unreachable_states", `{"id": "bad", "initial": "start", "states": {
			"start": {"on": {"GO": "end"}}, "end": {"type": "final"}, "orphan": {"on": {"GO": "end"}}}, "guards": {}}`, `states.orphan: state "orphan" is unreachable`},
		{"engine/validate.rs/rejects_transition_to_nonexistent_state", `{"id": "bad", "initial": "start", "states": {
			"start": {"on": {"GO": "nowhere"}}, "end": {"type": "final"}}, "guards": {}}`, `states.start.on.GO: "nowhere"`},
		{"engine/validate.rs/rejects_undefined_guard_reference", `{"id": "bad", "initial": "start", "states": {
			"start": {"on": {"GO": {"target": "end", "guard": "nonexistent_guard"}}}, "end": {"type": "final"}}, "guards": {}}`, "nonexistent_guard"},
		{"engine/validate.rs/accepts_complex_agent_machine", `{"id": "bug-fix", "initial": "planning",
			"meta": {"task_type": "bug_fix", "danger_level": "moderate"}, "states": {
			"planning": {"allowed_tools": ["read_file", "search_files"], "instructions": "Analyze the bug", "on": {"PLAN_READY": "implementing", "FAIL": "failed"}},
			"implementing": {"allowed_tools": ["read_file", "write_file"], "on": {"DONE": "testing", "FAIL": "failed"}},
			"testing": {"allowed_tools": ["read_file", "run_test"], "on": {"TESTS_PASS": {"target": "review", "requires_approval": true}, "TESTS_FAIL": "implementing", "FAIL": "failed"}},
			"review": {"on": {"APPROVED": "completed", "REJECTED": "implementing"}},
			"completed": {"type": "final"}, "failed": {"type": "final"}}, "guards": {}}`, ""},
		{"engine/validate.rs/rejects_interrupt_target_nonexistent", `{"id": "bad", "initial": "start", "states": {
			"start": {"on": {"GO": "end"}}, "end": {"type": "final"}}, "guards": {},
			"interrupts": {"bad_interrupt": {"trigger": {"file_pattern": "**/*.js"}, "target": "ghost_state"}}}`, "ghost_state"},
		{"engine/validate.rs/interrupt_target_state_not_flagged_unreachable, return_target_not_flagged_as_nonexistent", `{"id": "test", "initial": "working", "states": {
			"working": {"on": {"DONE": "completed"}}, "pb_validating": {"on": {"VALIDATED": "$return", "FAIL": "failed"}},
			"completed": {"type": "final"}, "failed": {"type": "final"}}, "guards": {},
			"interrupts": {"pb_check": {"trigger": {"file_pattern": "site/pb/**/*.js"}, "target": "pb_validating"}}}`, ""},
		{"engine/validate.rs/accepts_valid_interrupt_workflow", `{"id": "tdd-with-pb-check", "initial": "implementing", "states": {
			"implementing": {"on": {"DONE": "testing", "FAIL": "failed"}}, "testing": {"on": {"PASS": "completed", "FAIL": "implementing"}},
			"pb_validating": {"on": {"VALIDATED": "$return", "FAIL": "failed"}},
			"completed": {"type": "final"}, "failed": {"type": "final"}}, "guards": {},
			"interrupts": {"pb_check": {"trigger": {"file_pattern": "site/pb/**/*.js"}, "target": "pb_validating"}}}`, ""},
		{"engine/validate.rs/accepts_valid_fork_workflow", `{"id": "pipeline", "initial": "building", "states": {
			"building": {"on": {"BUILD_DONE": {"fork": {"branches": {
				"lint": {"initial": "lint_run", "terminal": "lint_done"}, "types": {"initial": "types_run", "terminal": "types_done"}},
				"on_complete": "deploying"}}}},
			"lint_run": {"on": {"PASS": "lint_done"}}, "lint_done": {"type": "final"},
			"types_run": {"on": {"PASS": "types_done"}}, "types_done": {"type": "final"},
			"deploying": {"on": {"DONE": "completed"}}, "completed": {"type": "final"}}, "guards": {}}`, ""},
		{"engine/validate.rs/rejects_fork_with_nonexistent_branch_initial", `{"id": "bad", "initial": "start", "states": {
			"start": {"on": {"GO": {"fork": {"branches": {"a": {"initial": "ghost", "terminal": "a_done"}}, "on_complete": "end"}}}},
			"a_done": {"type": "final"}, "end": {"type": "final"}}, "guards": {}}`, "ghost"},
		{"engine/validate.rs/rejects_fork_with_nonexistent_on_complete", `{"id": "bad", "initial": "start", "states": {
			"start": {"on": {"GO": {"fork": {"branches": {"a": {"initial": "a_run", "terminal": "a_done"}}, "on_complete": "nowhere"}}}},
			"a_run": {"on": {"DONE": "a_done"}}, "a_done": {"type": "final"}}, "guards": {}}`, "nowhere"},
		{"engine/validate.rs/fork_branch_states_not_flagged_unreachable", `{"id": "pipeline", "initial": "building", "states": {
			"building": {"on": {"BUILD_DONE": {"fork": {"branches": {"lint": {"initial": "lint_run", "terminal": "lint_done"}}, "on_complete": "done"}}}},
			"lint_run": {"on": {"PASS": "lint_done"}}, "lint_done": {"type": "final"}, "done": {"type": "final"}}, "guards": {}}`, ""},
		{"engine/interrupt.rs/machine_definition_with_interrupts (every interrupt target is checked)", `{"id": "tdd", "initial": "implementing", "states": {
			"implementing": {"on": {"DONE": "completed", "FAIL": "failed"}}, "pb_validating": {"on": {"VALIDATED": "$return", "FAIL": "failed"}},
			"completed": {"type": "final"}, "failed": {"type": "final"}}, "guards": {},
			"interrupts": {"pb_validation": {"trigger": {"file_pattern": "site/pb/**/*.js"}, "target": "pb_validating"},
			               "security_scan": {"trigger": {"file_pattern": "**/*.env*"}, "target": "env_checking"}}}`, "env_checking"},
		{"agent/validator.rs/accepts_valid_bug_fix_machine", `{"id": "bug-fix", "initial": "planning",
			"meta": {"task_type": "bug_fix", "danger_level": "moderate"}, "states": {
			"planning": {"allowed_tools": ["read_file", "search_files", "grep"], "instructions": "Analyze the bug. Read relevant files.", "on": {"PLAN_READY": "implementing", "FAIL": "failed"}},
			"implementing": {"allowed_tools": ["read_file", "write_file", "edit_file"], "instructions": "Implement the fix.", "on": {"DONE": "testing", "FAIL": "failed"}},
			"testing": {"allowed_tools": ["read_file", "run_test"], "instructions": "Run tests to verify.", "on": {
				"TESTS_PASS": {"target": "review", "requires_approval": true, "approval_message": "Tests passed. Review the changes?"}, "TESTS_FAIL": "implementing", "FAIL": "failed"}},
			"review": {"allowed_tools": ["read_file"], "on": {"APPROVED": "committing", "REJECTED": "implementing"}},
			"committing": {"allowed_tools": ["git_add", "git_commit"], "on": {"COMMITTED": "completed", "FAIL": "failed"}},
			"completed": {"type": "final"}, "failed": {"type": "final"}}, "guards": {}}`, ""},
		{"agent/validator.rs/accepts_valid_research_machine", `{"id": "research", "initial": "gathering",
			"meta": {"task_type": "research", "danger_level": "safe"}, "states": {
			"gathering": {"allowed_tools": ["read_file", "search_files", "grep", "http_request"], "on": {"DATA_COLLECTED": "analyzing", "FAIL": "failed"}},
			"analyzing": {"allowed_tools": ["read_file"], "on": {"ANALYSIS_DONE": "summarizing", "FAIL": "failed"}},
			"summarizing": {"allowed_tools": ["read_file", "write_file"], "on": {"DONE": "completed", "FAIL": "failed"}},
			"completed": {"type": "final"}, "failed": {"type": "final"}}, "guards": {}}`, ""},
		{"agent/validator.rs/passes_structural_validation_from_engine", `{"id": "bad", "initial": "nonexistent", "meta": {"danger_level": "safe"}, "states": {
			"start": {"on": {"GO": "end", "FAIL": "failed"}}, "end": {"type": "final"}, "failed": {"type": "final"}}, "guards": {}}`, `initial: "nonexistent" is not a state`},
		{"engine/interrupt.rs/machine_definition_without_interrupts_defaults_empty", `{"id": "simple", "initial": "start", "states": {
			"start": {"on": {"GO": "end"}}, "end": {"type": "final"}}, "guards": {}}`, ""},
	}
	for _, c := range cases {
		t.Run(c.port, func(t *testing.T) {
			file := writeFile(t, "workflow.json", c.file)
			code, out, errOut := chartgate("validate", file)
			if c.want == "" {
				assert.Equal(t, exitOK, code, out+errOut)
				assert.True(t, strings.HasPrefix(out, file+": ok (Statewright workflow, "), out)
				return
			}
			assert.Equal(t, exitFail, code, out+errOut)
			assert.Contains(t, out, c.want)
		})
	}
}

// TestStatewrightSuiteAgentValidator ports the cases agent/validator.rs
// rejects: chartgate validate accepts each workflow (Statewright's gateway
// runs it too) and warns with what Statewright's agent refuses; with
// --strict the warnings are errors.
func TestStatewrightSuiteAgentValidator(t *testing.T) {
	cases := []struct {
		port string
		file string
		want string // the warning, with its path
	}{
		{"agent/validator.rs/rejects_missing_failed_state", `{"id": "bad", "initial": "start", "meta": {"danger_level": "safe"}, "states": {
			"start": {"on": {"GO": "end"}}, "end": {"type": "final"}}, "guards": {}}`,
			`: states: warning: no "failed" state of type final`},
		{"agent/validator.rs/rejects_dangerous_machine_without_approval_gate", `{"id": "bad", "initial": "planning", "meta": {"danger_level": "dangerous"}, "states": {
			"planning": {"allowed_tools": ["read_file"], "on": {"GO": "executing", "FAIL": "failed"}},
			"executing": {"allowed_tools": ["write_file", "deploy"], "on": {"DONE": "completed", "FAIL": "failed"}},
			"completed": {"type": "final"}, "failed": {"type": "final"}}, "guards": {}}`,
			`: meta.danger_level: warning: a dangerous workflow without a transition with requires_approval: true`},
		{"agent/validator.rs/rejects_write_tools_in_initial_state", `{"id": "bad", "initial": "start", "meta": {"danger_level": "moderate"}, "states": {
			"start": {"allowed_tools": ["read_file", "write_file", "delete_file"], "on": {"GO": "end", "FAIL": "failed"}},
			"end": {"type": "final"}, "failed": {"type": "final"}}, "guards": {}}`,
			`: states.start.allowed_tools: warning: the initial state of a moderate workflow has write, execute or external tools (write_file, delete_file)`},
		{"agent/validator.rs/rejects_tool_escalation_without_approval", `{"id": "bad", "initial": "reading", "meta": {"danger_level": "moderate"}, "states": {
			"reading": {"allowed_tools": ["read_file"], "on": {"GO": "deploying", "FAIL": "failed"}},
			"deploying": {"allowed_tools": ["deploy", "database_mutate"], "on": {"DONE": "completed", "FAIL": "failed"}},
			"completed": {"type": "final"}, "failed": {"type": "final"}}, "guards": {}}`,
			`: states.reading.on.GO: warning: tool escalation from "reading" (privilege 1) to "deploying" (privilege 4) without requires_approval`},
		{"agent/validator.rs/rejects_state_without_fail_transition (failed reachable from start only: the case's own file, where no state reaches it, is refused as engine/validate.rs refuses an unreachable state)", `{"id": "bad", "initial": "start", "meta": {"danger_level": "safe"}, "states": {
			"start": {"on": {"GO": "middle", "FAIL": "failed"}}, "middle": {"on": {"GO": "completed"}},
			"completed": {"type": "final"}, "failed": {"type": "final"}}, "guards": {}}`,
			`: states.middle: warning: no path to the "failed" state`},
	}
	for _, c := range cases {
		t.Run(c.port, func(t *testing.T) {
			file := writeFile(t, "workflow.json", c.file)
			code, out, errOut := chartgate("validate", file)
			assert.Equal(t, exitOK, code, out+errOut)
			assert.Contains(t, out, file+c.want)
			assert.Contains(t, out, file+": ok (Statewright workflow, ")

			code, out, errOut = chartgate("validate", "--strict", file)
			assert.Equal(t, exitFail, code, out+errOut)
			assert.Contains(t, out, file+strings.Replace(c.want, "warning: ", "", 1))
		})
	}

	// rejects_state_without_fail_transition's own file: "failed" is
	// unreachable, an error for the engine's validation too.
	unreachable := writeFile(t, "unreachable.json", `{"id": "bad", "initial": "start", "meta": {"danger_level": "safe"}, "states": {
		"start": {"on": {"GO": "middle"}}, "middle": {"on": {"GO": "completed"}},
		"completed": {"type": "final"}, "failed": {"type": "final"}}, "guards": {}}`)
	code, out, errOut := chartgate("validate", unreachable)
	assert.Equal(t, exitFail, code, out+errOut)
	assert.Contains(t, out, unreachable+`: states.failed: state "failed" is unreachable`)

	// The accepted machines of validator.rs get no warning.
	bugFix := writeFile(t, "bugfix.json", `{"id": "bug-fix", "initial": "planning", "meta": {"danger_level": "moderate"}, "states": {
		"planning": {"allowed_tools": ["read_file", "grep"], "on": {"PLAN_READY": "implementing", "FAIL": "failed"}},
		"implementing": {"allowed_tools": ["read_file", "write_file"], "on": {"DONE": {"target": "review", "requires_approval": true}, "FAIL": "failed"}},
		"review": {"allowed_tools": ["read_file"], "on": {"APPROVED": "completed", "REJECTED": "implementing"}},
		"completed": {"type": "final"}, "failed": {"type": "final"}}, "guards": {}}`)
	code, out, errOut = chartgate("validate", "--strict", bugFix)
	assert.Equal(t, exitOK, code, out+errOut)
	assert.Equal(t, bugFix+": ok (Statewright workflow, 5 states)\n", out)
}

// guardWorkflow has one guarded event per guard of engine/guard.rs, each
// leading from "probe" to "passed" and back with BACK; SET merges its data
// into the context with a self-transition.
const guardWorkflow = `{
  "id": "guards", "initial": "probe",
  "states": {
    "probe": {"on": {"SET": "probe",
      "EQ": {"target": "passed", "guard": "eq"}, "NEQ": {"target": "passed", "guard": "neq"},
      "GT": {"target": "passed", "guard": "gt"}, "LT": {"target": "passed", "guard": "lt"},
      "EXISTS": {"target": "passed", "guard": "exists"}, "IN": {"target": "passed", "guard": "in"},
      "IN2": {"target": "passed", "guard": "in2"}, "CONTAINS": {"target": "passed", "guard": "contains"},
      "MISSING": {"target": "passed", "guard": "missing"}, "DONE": "done"}},
    "passed": {"on": {"BACK": "probe"}},
    "done": {"type": "final"}
  },
  "guards": {
    "eq": {"field": "status", "op": "eq", "value": "draft"},
    "neq": {"field": "status", "op": "neq", "value": "cancelled"},
    "gt": {"field": "item_count", "op": "gt", "value": 0},
    "lt": {"field": "retry_count", "op": "lt", "value": 3},
    "exists": {"field": "payment_method", "op": "exists"},
    "in": {"field": "region", "op": "in", "value": ["east", "west", "central"]},
    "in2": {"field": "region", "op": "in", "value": ["east", "west"]},
    "contains": {"field": "error", "op": "contains", "value": "timeout"},
    "missing": {"field": "nonexistent", "op": "gt", "value": 0}
  }
}`

// TestStatewrightSuiteGuards ports engine/guard.rs: each guard of a
// statewright_transition sees the context as the earlier transitions left
// it, and passes or refuses as evaluate_guard does.
func TestStatewrightSuiteGuards(t *testing.T) {
	a := serveCompat(t, guardWorkflow)
	cases := []struct {
		port    string
		context map[string]any
		event   string
		pass    bool
	}{
		{"engine/guard.rs/eq_operator_matches", map[string]any{"status": "draft"}, "EQ", true},
		{"engine/guard.rs/eq_operator_rejects_mismatch", map[string]any{"status": "confirmed"}, "EQ", false},
		{"engine/guard.rs/neq_operator_passes_on_different", map[string]any{"status": "active"}, "NEQ", true},
		{"engine/guard.rs/gt_operator_passes", map[string]any{"item_count": 3}, "GT", true},
		{"engine/guard.rs/gt_operator_fails_on_equal", map[string]any{"item_count": 0}, "GT", false},
		{"engine/guard.rs/lt_operator_passes", map[string]any{"retry_count": 1}, "LT", true},
		{"engine/guard.rs/exists_operator_fails_when_missing", map[string]any{"other_field": "value"}, "EXISTS", false},
		{"engine/guard.rs/exists_operator_passes_when_present", map[string]any{"payment_method": "card_4242"}, "EXISTS", true},
		{"engine/guard.rs/exists_operator_fails_when_null", map[string]any{"payment_method": nil}, "EXISTS", false},
		{"engine/guard.rs/in_operator_matches_value_in_array", map[string]any{"region": "east"}, "IN", true},
		{"engine/guard.rs/in_operator_rejects_value_not_in_array", map[string]any{"region": "north"}, "IN2", false},
		{"engine/guard.rs/contains_operator_matches_substring", map[string]any{"error": "connection timeout occurred"}, "CONTAINS", true},
		{"engine/guard.rs/missing_field_returns_false_for_comparison", map[string]any{"other": 5}, "MISSING", false},
	}
	for _, c := range cases {
		res := a.json("statewright_transition", map[string]any{"event": "SET", "data": c.context})
		require.Equal(t, true, res["transitioned"], c.port)
		text, isErr := a.transition(c.event, nil)
		if !c.pass {
			assert.True(t, isErr, "%s: %s", c.port, text)
			assert.Contains(t, text, "was refused by a guard", c.port)
			assert.Equal(t, "probe", a.json("statewright_get_state", nil)["state"], c.port)
			continue
		}
		if assert.False(t, isErr, "%s: %s", c.port, text) {
			assert.Equal(t, "passed", a.json("statewright_get_state", nil)["state"], c.port)
			a.json("statewright_transition", map[string]any{"event": "BACK"})
		}
	}
}

// TestStatewrightSuiteTransitions ports engine/transition.rs on the order
// machine (orderWorkflow): each statewright_transition moves, or is
// refused, as resolve_transition does, and its data is merged into the
// context as apply_context_patch merges it.
func TestStatewrightSuiteTransitions(t *testing.T) {
	t.Run("engine/transition.rs/simple_transition_changes_state", func(t *testing.T) {
		a := serveCompat(t, orderWorkflow)
		res := a.json("statewright_transition", map[string]any{"event": "CANCEL"})
		assert.Equal(t, true, res["transitioned"])
		assert.Equal(t, "cancelled", res["to"])
		assert.NotContains(t, res, "fork", "engine/transition.rs/non_fork_transition_has_no_fork")
		assert.NotContains(t, res, "invoke", "engine/transition.rs/non_invoke_transition_has_no_invoke")
	})
	t.Run("engine/transition.rs/full_lifecycle_draft_to_delivered, self_transition_stays_in_same_state, unhandled_event_returns_error", func(t *testing.T) {
		a := serveCompat(t, orderWorkflow)
		text, isErr := a.transition("SHIP", nil)
		assert.True(t, isErr, text)
		assert.Contains(t, text, `No transition for event "SHIP" in state "draft".`)
		res := a.json("statewright_transition", map[string]any{"event": "ADD_ITEM", "data": map[string]any{"item_count": 2, "payment_method": "card_4242"}})
		assert.Equal(t, true, res["transitioned"])
		assert.Equal(t, "draft", res["to"])
		for _, step := range [][2]string{{"SUBMIT", "pending_payment"}, {"CONFIRM_PAYMENT", "confirmed"}, {"SHIP", "shipped"}, {"DELIVER", "delivered"}} {
			res := a.json("statewright_transition", map[string]any{"event": step[0]})
			assert.Equal(t, step[1], res["to"], step[0])
		}
		assert.Equal(t, true, a.json("statewright_get_state", nil)["is_final"])
	})
	t.Run("engine/transition.rs/context_patch_merges_fields, context_patch_with_empty_patch_returns_clone, context_patch_with_null_patch_returns_clone", func(t *testing.T) {
		a := serveCompat(t, `{"id": "patch", "initial": "s", "context": {"a": 1, "b": 2},
		  "states": {"s": {"on": {"PATCH": "t"}}, "t": {"on": {"PATCH": "u"}}, "u": {"on": {"PATCH": "v"}}, "v": {"type": "final"}}, "guards": {}}`)
		a.json("statewright_transition", map[string]any{"event": "PATCH", "data": map[string]any{"b": 99, "c": 3}})
		want := map[string]any{"a": 1.0, "b": 99.0, "c": 3.0}
		assert.Equal(t, want, a.json("statewright_get_state", nil)["context"])
		a.json("statewright_transition", map[string]any{"event": "PATCH", "data": map[string]any{}})
		assert.Equal(t, want, a.json("statewright_get_state", nil)["context"])
		a.json("statewright_transition", map[string]any{"event": "PATCH", "data": nil})
		assert.Equal(t, want, a.json("statewright_get_state", nil)["context"])
	})
	t.Run("engine/transition.rs/approval_flag_propagated", func(t *testing.T) {
		a := serveCompat(t, `{"id": "agent", "initial": "planning", "states": {
		  "planning": {"on": {"READY": {"target": "executing", "requires_approval": true, "approval_message": "Agent wants to start executing"}}},
		  "executing": {"type": "final"}}, "guards": {}}`)
		res := a.json("statewright_transition", map[string]any{"event": "READY"})
		assert.Equal(t, true, res["requires_approval"])
		assert.Equal(t, "Agent wants to start executing", res["approval_message"])
	})
	scout := func(postCount int) string {
		return `{"id": "scout", "initial": "posting", "context": {"post_count": ` + strconv.Itoa(postCount) + `}, "states": {
		  "posting": {"on": {"POSTED": [{"guard": "under_limit", "target": "evaluating"}, {"guard": "at_limit", "target": "reporting"}]}},
		  "evaluating": {"type": "final"}, "reporting": {"type": "final"}},
		  "guards": {"under_limit": {"field": "post_count", "op": "lt", "value": 5}, "at_limit": {"field": "post_count", "op": "gte", "value": 5}}}`
	}
	t.Run("engine/transition.rs/guarded_transition_takes_first_matching_branch", func(t *testing.T) {
		assert.Equal(t, "evaluating", serveCompat(t, scout(2)).json("statewright_transition", map[string]any{"event": "POSTED"})["to"])
		assert.Equal(t, "reporting", serveCompat(t, scout(5)).json("statewright_transition", map[string]any{"event": "POSTED"})["to"])
	})
	t.Run("engine/transition.rs/guarded_transition_no_match_returns_error", func(t *testing.T) {
		a := serveCompat(t, `{"id": "test", "initial": "a", "states": {
		  "a": {"on": {"GO": [{"guard": "never_true", "target": "b"}]}}, "b": {"type": "final"}},
		  "guards": {"never_true": {"field": "x", "op": "eq", "value": "impossible"}}}`)
		text, isErr := a.transition("GO", nil)
		assert.True(t, isErr, text)
		assert.Contains(t, text, "was refused by a guard")
		assert.Equal(t, "a", a.json("statewright_get_state", nil)["state"])
	})
}

// interruptWorkflow returns transition.rs's interrupt_machine.
func interruptWorkflow(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../workflow/testdata/statewright-interrupt.json")
	require.NoError(t, err)
	return string(b)
}

// TestStatewrightSuiteReturn ports transition.rs's $return tests: an
// edit of a file an interrupt watches moves to its handler, "$return"
// goes back to the state the interrupt left and takes _interrupt_return
// out of the context, and other targets ignore it.
func TestStatewrightSuiteReturn(t *testing.T) {
	a := serveCompat(t, interruptWorkflow(t))
	a.json("statewright_transition", map[string]any{"event": "DONE", "data": map[string]any{"some_data": "kept"}})
	text, isErr := a.call("edit_file", map[string]any{"path": "site/pb/hooks/auth.pb.js"})
	require.False(t, isErr, text)
	st := a.json("statewright_get_state", nil)
	require.Equal(t, "pb_validating", st["state"])
	// engine/transition.rs/return_target_resolves_from_context
	res := a.json("statewright_transition", map[string]any{"event": "VALIDATED"})
	assert.Equal(t, true, res["transitioned"])
	assert.Equal(t, "testing", res["to"])
	// engine/transition.rs/return_target_cleans_up_context
	assert.Equal(t, map[string]any{"some_data": "kept"}, a.json("statewright_get_state", nil)["context"])

	// engine/transition.rs/normal_target_ignores_interrupt_return_in_context:
	// in the handler, a transition to a named state goes there.
	_, isErr = a.call("edit_file", map[string]any{"path": "site/pb/migrations/001.js"})
	require.False(t, isErr)
	res = a.json("statewright_transition", map[string]any{"event": "FAIL"})
	assert.Equal(t, "failed", res["to"])
}

// TestStatewrightSuiteReturnUnset ports
// engine/transition.rs/return_target_errors_when_not_in_context: a
// handler reached by a plain transition has nowhere to return to, and
// "$return" is refused; data cannot set _interrupt_return.
func TestStatewrightSuiteReturnUnset(t *testing.T) {
	a := serveCompat(t, strings.Replace(interruptWorkflow(t), `"DONE": "testing",`, `"DONE": "testing", "CHECK": "pb_validating",`, 1))
	a.json("statewright_transition", map[string]any{"event": "CHECK", "data": map[string]any{"_interrupt_return": "completed"}})
	assert.Equal(t, map[string]any{}, a.json("statewright_get_state", nil)["context"], "_interrupt_return is reserved")
	text, isErr := a.transition("VALIDATED", nil)
	assert.True(t, isErr, text)
	assert.Equal(t, "pb_validating", a.json("statewright_get_state", nil)["state"])
}

// TestStatewrightSuiteInterrupts ports engine/interrupt.rs: an edit of a
// path moves to an interrupt's handler exactly when glob_match matches
// its pattern (match_interrupts), and "$return" comes back.
func TestStatewrightSuiteInterrupts(t *testing.T) {
	cases := []struct {
		port    string
		pattern string
		match   []string
		noMatch []string
	}{
		{"engine/interrupt.rs/literal_exact_match, literal_mismatch", "src/main.rs", []string{"src/main.rs"}, []string{"src/lib.rs"}},
		{"engine/interrupt.rs/single_star_matches_filename, single_star_does_not_cross_directory", "src/*.rs",
			[]string{"src/main.rs", "src/lib.rs"}, []string{"src/sub/main.rs"}},
		{"engine/interrupt.rs/double_star_matches_any_depth", "**/*.rs", []string{"src/main.rs", "src/sub/deep/main.rs", "main.rs"}, nil},
		{"engine/interrupt.rs/double_star_in_middle, double_star_no_match_wrong_prefix, double_star_no_match_wrong_extension", "site/pb/**/*.js",
			[]string{"site/pb/hooks/auth.pb.js", "site/pb/migrations/001.js", "site/pb/deep/nested/file.js"},
			[]string{"src/pb/hooks/auth.js", "site/pb/hooks/auth.ts"}},
		{"engine/interrupt.rs/question_mark_matches_single_char", "src/?.rs", []string{"src/a.rs"}, []string{"src/ab.rs"}},
		{"engine/interrupt.rs/question_mark_does_not_match_slash", "src/?/main.rs", nil, []string{"src//main.rs"}},
		{"engine/interrupt.rs/star_env_pattern", "**/*.env*", []string{"src/.env", ".env.local", "config/.env.production"}, nil},
		{"engine/interrupt.rs/double_star_at_end", "site/pb/**", []string{"site/pb/hooks/auth.js", "site/pb/anything"}, nil},
	}
	for _, c := range cases {
		t.Run(c.port, func(t *testing.T) {
			a := serveCompat(t, `{"id": "glob", "initial": "working", "states": {
			  "working": {"on": {"DONE": "completed"}}, "handler": {"on": {"BACK": "$return"}}, "completed": {"type": "final"}},
			  "guards": {}, "interrupts": {"watch": {"trigger": {"file_pattern": `+strconv.Quote(c.pattern)+`}, "target": "handler"}}}`)
			for _, path := range c.match {
				text, isErr := a.call("edit_file", map[string]any{"path": path})
				require.False(t, isErr, text)
				if assert.Equal(t, "handler", a.json("statewright_get_state", nil)["state"], path) {
					assert.Equal(t, "working", a.json("statewright_transition", map[string]any{"event": "BACK"})["to"])
				}
			}
			for _, path := range c.noMatch {
				text, isErr := a.call("edit_file", map[string]any{"path": path})
				require.False(t, isErr, text)
				assert.Equal(t, "working", a.json("statewright_get_state", nil)["state"], path)
			}
		})
	}
}

// TestStatewrightSuiteMatchInterrupts ports engine/interrupt.rs's
// match_interrupts tests on machine_with_interrupts: of two interrupts,
// the one whose pattern matches moves to its own handler.
func TestStatewrightSuiteMatchInterrupts(t *testing.T) {
	a := serveCompat(t, `{"id": "test", "initial": "working", "states": {
	  "working": {"on": {"DONE": "completed"}},
	  "pb_validating": {"on": {"VALIDATED": "$return"}},
	  "env_checking": {"on": {"CHECKED": "$return"}},
	  "completed": {"type": "final"}},
	  "guards": {},
	  "interrupts": {
	    "pb_check": {"trigger": {"file_pattern": "site/pb/**/*.js"}, "target": "pb_validating"},
	    "env_audit": {"trigger": {"file_pattern": "**/*.env*"}, "target": "env_checking"}}}`)
	edit := func(path string) string {
		text, isErr := a.call("edit_file", map[string]any{"path": path})
		require.False(t, isErr, text)
		return a.json("statewright_get_state", nil)["state"].(string)
	}
	// match_interrupts_returns_matching_interrupt
	assert.Equal(t, "pb_validating", edit("site/pb/hooks/auth.pb.js"))
	a.json("statewright_transition", map[string]any{"event": "VALIDATED"})
	// match_interrupts_returns_empty_for_no_match
	assert.Equal(t, "working", edit("src/components/App.vue"))
	// match_interrupts_can_match_multiple (its one match)
	assert.Equal(t, "env_checking", edit("config/.env.local"))
	a.json("statewright_transition", map[string]any{"event": "CHECKED"})

	// match_interrupts_empty_when_no_interrupts_defined
	b := serveCompat(t, `{"id": "simple", "initial": "start", "states": {"start": {"on": {"GO": "end"}}, "end": {"type": "final"}}, "guards": {}}`)
	text, isErr := b.call("edit_file", map[string]any{"path": "any/file.rs"})
	require.False(t, isErr, text)
	assert.Equal(t, "start", b.json("statewright_get_state", nil)["state"])
}

// TestStatewrightSuiteEmptyPattern ports engine/interrupt.rs
// empty_pattern_matches_empty_path and
// empty_pattern_does_not_match_nonempty: Statewright's empty pattern
// matches only the empty path, which no edit has, so the interrupt never
// fires; chartgate validate refuses it (the table in the workflow
// package's docs).
func TestStatewrightSuiteEmptyPattern(t *testing.T) {
	file := writeFile(t, "workflow.json", `{"id": "glob", "initial": "working", "states": {
	  "working": {"on": {"DONE": "completed"}}, "handler": {"on": {"BACK": "$return"}}, "completed": {"type": "final"}},
	  "guards": {}, "interrupts": {"watch": {"trigger": {"file_pattern": ""}, "target": "handler"}}}`)
	code, out, _ := chartgate("validate", file)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, out, `interrupts.watch.trigger.file_pattern: must be a glob such as "**/*.env*", not ""`)
}

// agentMachine is tool_enforcer.rs's agent_machine, with "unrestricted"
// reachable (FREE), as chartgate validate requires.
const agentMachine = `{
  "id": "test-agent", "initial": "planning",
  "states": {
    "planning": {"allowed_tools": ["read_file", "search_files", "grep"], "on": {"READY": "executing", "FREE": "unrestricted", "FAIL": "failed"}},
    "executing": {"allowed_tools": ["read_file", "write_file", "edit_file", "run_test"], "on": {"DONE": "completed", "FAIL": "failed"}},
    "unrestricted": {"on": {"DONE": "completed", "FAIL": "failed"}},
    "completed": {"type": "final"},
    "failed": {"type": "final"}
  },
  "guards": {}
}`

// TestStatewrightSuiteToolEnforcer ports agent/tool_enforcer.rs: a state's
// allowed_tools are the tools that run and are listed, a state without
// allowed_tools allows every tool, and a final state blocks every one.
func TestStatewrightSuiteToolEnforcer(t *testing.T) {
	a := serveCompat(t, agentMachine)
	runs := func(tool string) bool {
		text, isErr := a.call(tool, map[string]any{"path": "a.go"})
		return !isErr && strings.HasPrefix(text, tool+" ")
	}
	// allows_permitted_tools, blocks_unpermitted_tools
	assert.True(t, runs("read_file"))
	assert.True(t, runs("grep"))
	assert.False(t, runs("write_file"))
	text, isErr := a.call("write_file", map[string]any{"path": "a.go"})
	assert.True(t, isErr)
	assert.Contains(t, text, "write_file")
	assert.Contains(t, text, "planning")
	// get_allowed_tools_returns_list_for_restricted_state (search_files is
	// not a tool of the upstream, so it is not listed)
	assert.ElementsMatch(t, append([]string{"read_file", "grep"}, compatTools...), a.tools())

	// allows_all_tools_when_no_restrictions,
	// get_allowed_tools_returns_none_for_unrestricted_state
	a.json("statewright_transition", map[string]any{"event": "FREE"})
	assert.ElementsMatch(t, append([]string{"read_file", "grep", "edit_file", "write_file"}, compatTools...), a.tools())
	for _, tool := range []string{"read_file", "grep", "edit_file", "write_file"} {
		assert.True(t, runs(tool), tool)
	}
	// blocks_all_tools_in_final_state
	a.json("statewright_transition", map[string]any{"event": "DONE"})
	for _, tool := range []string{"read_file", "write_file"} {
		assert.False(t, runs(tool), tool)
	}
}

// TestStatewrightSuiteUnknownToolNames: a name of a Statewright state's
// allowed_tools that no upstream has (tool_enforcer.rs's search_files and
// run_test) only keeps that tool from the state, so with --compat
// statewright serve starts, as Statewright's gateway does; by default it
// refuses to start, naming the name (the table in the workflow package's
// docs). A name that would leave a tool ungated stops serve in both.
func TestStatewrightSuiteUnknownToolNames(t *testing.T) {
	config := fileUpstream(t)
	serve := func(workflowJSON string, extra ...string) (int, string) {
		wf := writeFile(t, "workflow.json", workflowJSON)
		args := append([]string{"serve", "--log-level", "error", "--workflow", wf, "--store", "memory", "--config", config}, extra...)
		code, _, errOut := chartgate(args...)
		return code, errOut
	}
	code, errOut := serve(agentMachine)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, `states.planning.meta.mcp.tools[1]: "search_files" matches no tool of the server`)
	assert.Contains(t, errOut, `states.executing.meta.mcp.tools[3]: "run_test" matches no tool of the server`)

	code, errOut = serve(`{"id": "deny", "initial": "a", "states": {
	  "a": {"disallowed_tools": ["wirte_file"], "on": {"DONE": "b"}}, "b": {"type": "final"}}, "guards": {}}`, "--compat", "statewright")
	assert.Equal(t, exitFail, code, "a misspelt disallowed tool would run")
	assert.Contains(t, errOut, `"wirte_file" matches no tool of the server (did you mean "write_file"?)`)

	code, errOut = serve(`{"id": "x", "initial": "a", "states": {"a": {"meta": {"mcp": {"tools": ["raed_file"]}}}}}`, "--compat", "statewright")
	assert.Equal(t, exitFail, code, "an XState workflow's unknown name leaves the tool it meant ungated")
	assert.Contains(t, errOut, `"raed_file" matches no tool of the server`)
}

// TestStatewrightSuiteInvoke ports engine/transition.rs
// invoke_transition_returns_invoke_result and
// invoke_with_no_on_fail_defaults_to_none, and agent/executor.rs
// invoke_transition_sets_awaiting_invoke, complete_invoke_resumes_parent
// and fail_invoke_goes_to_on_fail: the invoking event starts the
// named workflow with the invoke's input as its context, the agent works
// in the child's states (named as Statewright names them), and the
// child's end moves on to on_complete, or to on_fail from its "failed".
func TestStatewrightSuiteInvoke(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "debug_machine.json"), []byte(`{"id": "debug", "initial": "triage", "states": {
	  "triage": {"on": {"FIXED": "done", "GIVE_UP": "failed"}}, "done": {"type": "final"}, "failed": {"type": "final"}}, "guards": {}}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "fixer.json"), []byte(`{"id": "fixer", "initial": "fix", "states": {
	  "fix": {"on": {"FIXED": "done"}}, "done": {"type": "final"}}, "guards": {}}`), 0o644))
	tdd := `{"id": "tdd", "initial": "implementing", "states": {
	  "implementing": {"on": {"DONE": "testing", "FAIL": "failed"}},
	  "testing": {"on": {"TESTS_PASS": "completed", "TESTS_FAIL": {"invoke": "debug_machine", "on_complete": "testing", "on_fail": "failed", "input": {"scope": "last_change"}}}},
	  "completed": {"type": "final"}, "failed": {"type": "final"}}, "guards": {}}`
	for _, end := range []struct{ event, to string }{{"FIXED", "testing"}, {"GIVE_UP", "failed"}} {
		a := serveCompat(t, tdd, "--subflows", dir)
		// agent/executor.rs complete_invoke_when_not_awaiting_errors: the
		// child's events are refused while no subflow runs.
		_, isErr := a.call("statewright_transition", map[string]any{"event": end.event})
		assert.True(t, isErr, end.event)
		assert.Equal(t, "implementing", a.json("statewright_get_state", nil)["state"])
		a.json("statewright_transition", map[string]any{"event": "DONE"})
		// gateway.rs invoke_transition_does_not_advance_to_on_complete:
		// the result names the subflow, and on_complete as "to"; the
		// agent works in the subflow (chartgate runs it).
		res := a.json("statewright_transition", map[string]any{"event": "TESTS_FAIL"})
		assert.Equal(t, true, res["transitioned"])
		assert.Equal(t, "testing", res["from"])
		assert.Equal(t, "testing", res["to"])
		assert.Equal(t, map[string]any{"machine": "debug_machine", "on_complete": "testing", "on_fail": "failed", "input": map[string]any{"scope": "last_change"}}, res["invoke"])
		// gateway.rs invoke_transition_runs_child_then_resumes_parent: the
		// newer gateway's subflow_started and subflow_completed.
		assert.Equal(t, "debug_machine", res["subflow_started"])
		assert.NotContains(t, res, "subflow_completed")
		st := a.json("statewright_get_state", nil)
		assert.Equal(t, "triage", st["state"])
		assert.Equal(t, map[string]any{"scope": "last_change"}, st["context"])
		res = a.json("statewright_transition", map[string]any{"event": end.event, "data": map[string]any{"fix_applied": true}})
		assert.Equal(t, "triage", res["from"])
		assert.Equal(t, end.to, res["to"], end.event)
		assert.Equal(t, true, res["subflow_completed"], end.event)
		assert.NotContains(t, res, "subflow_started", end.event)
		// agent/executor.rs complete_invoke_resumes_parent: the child's
		// context comes back merged into the parent's.
		assert.Equal(t, true, a.json("statewright_get_state", nil)["context"].(map[string]any)["fix_applied"], end.event)
	}

	a := serveCompat(t, `{"id": "test", "initial": "working", "states": {
	  "working": {"on": {"DEBUG": {"invoke": "fixer", "on_complete": "working"}, "DONE": "completed"}},
	  "completed": {"type": "final"}}, "guards": {}}`, "--subflows", dir)
	res := a.json("statewright_transition", map[string]any{"event": "DEBUG"})
	assert.Equal(t, "working", res["to"])
	assert.Equal(t, map[string]any{"machine": "fixer", "on_complete": "working", "on_fail": nil, "input": nil}, res["invoke"])
	assert.Equal(t, "fix", a.json("statewright_get_state", nil)["state"])
	assert.Equal(t, map[string]any{}, a.json("statewright_get_state", nil)["context"], "no input")
	res = a.json("statewright_transition", map[string]any{"event": "FIXED"})
	assert.Equal(t, "working", res["to"])
	assert.Equal(t, true, res["subflow_completed"])
	res = a.json("statewright_transition", map[string]any{"event": "DONE"})
	assert.NotContains(t, res, "subflow_completed", "a transition of the parent leaves no subflow")
	assert.NotContains(t, res, "subflow_started")
}

// TestStatewrightSuiteEnforcement ports mcp-gateway/enforcement.rs on its
// test_definition (enforcementWorkflow): a tool of the state runs, another
// is refused with the tool, the state and the tools available; a tool a
// next state allows is refused with the event that makes it available
// (Statewright sends that event itself: the table in the workflow
// package's docs).
func TestStatewrightSuiteEnforcement(t *testing.T) {
	a := serveCompat(t, enforcementWorkflow)
	// allow_tool_in_current_state
	text, isErr := a.call("read_file", map[string]any{"path": "a.go"})
	assert.False(t, isErr, text)
	// implicit_transition_when_blocked_tool_in_next_state
	text, isErr = a.call("edit_file", map[string]any{"path": "a.go"})
	assert.True(t, isErr, text)
	assert.Contains(t, text, `Tool "edit_file" is not available in the current workflow state ("planning"). To make it available, call statewright_transition with event "READY".`)
	assert.Equal(t, "planning", a.json("statewright_get_state", nil)["state"], "no transition of its own")
	// block_tool_not_in_current_state, block_includes_reason_with_tool_and_state
	a.json("statewright_transition", map[string]any{"event": "READY"})
	a.json("statewright_transition", map[string]any{"event": "DONE"})
	text, isErr = a.call("write_file", map[string]any{"path": "a.go"})
	assert.True(t, isErr, text)
	assert.Contains(t, text, `Tool "write_file" is not available in the current workflow state ("testing").`)
	assert.Contains(t, text, "Tools available now: read_file, statewright_")
}

// swHook answers PreToolUse and PostToolUse events of Claude Code for a
// project whose workflow is workflowJSON, through chartgate hook
// claude-code --compat statewright.
type swHook struct {
	t       *testing.T
	project string
	post    string // the answer to the last PostToolUse
}

func newSWHook(t *testing.T, workflowJSON string) *swHook {
	t.Helper()
	project := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(project, ".chartgate"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(project, ".chartgate", "workflow.json"), []byte(workflowJSON), 0o644))
	return &swHook{t: t, project: project}
}

// call sends the tool's PreToolUse and, when it is not denied, its
// PostToolUse with output; it returns the PreToolUse answer, and keeps
// the PostToolUse one in h.post.
func (h *swHook) call(tool string, input map[string]any, output string) string {
	h.t.Helper()
	event := func(name string, extra map[string]any) string {
		ev := map[string]any{"session_id": "s1", "cwd": h.project, "hook_event_name": name, "tool_name": tool, "tool_input": input}
		for k, v := range extra {
			ev[k] = v
		}
		in, err := json.Marshal(ev)
		require.NoError(h.t, err)
		code, out, errOut := chartgateIn(string(in), "hook", "claude-code", "--compat", "statewright")
		require.Equal(h.t, 0, code, errOut)
		return out
	}
	out := event("PreToolUse", nil)
	if !strings.Contains(out, `"permissionDecision":"deny"`) {
		response := map[string]any{"output": output}
		if tool == "Read" {
			response = map[string]any{"file": map[string]any{"content": output}}
		}
		h.post = event("PostToolUse", map[string]any{"tool_response": response})
	}
	return out
}

// interceptorWorkflow is interceptors.rs's def_with_guards.
const interceptorWorkflow = `{
  "id": "test", "initial": "planning",
  "states": {
    "planning": {"allowed_tools": ["Read", "Grep", "Edit", "Bash"], "max_edit_lines": 10, "allowed_commands": ["pytest", "cargo test"],
                 "max_files_per_state": 3, "context_budget_bytes": 5000, "on": {"READY": "implementing"}},
    "implementing": {"allowed_tools": ["Read", "Edit"], "on": {"DONE": "completed"}},
    "completed": {"type": "final"}
  },
  "guards": {}
}`

// TestStatewrightSuiteInterceptors ports mcp-gateway/interceptors.rs
// through Claude Code's hooks (def_with_guards, with Edit and Bash
// allowed in planning so that the interceptors, not the tool gate, decide).
func TestStatewrightSuiteInterceptors(t *testing.T) {
	denied := func(out string) bool { return strings.Contains(out, `"permissionDecision":"deny"`) }
	edit := func(path string, lines int) map[string]any {
		var b strings.Builder
		for i := range lines {
			fmt.Fprintf(&b, "line %d\n", i)
		}
		return map[string]any{"file_path": path, "old_string": "a", "new_string": b.String()}
	}
	t.Run("edit_guard_allows_small_edits, edit_guard_blocks_large_edits", func(t *testing.T) {
		h := newSWHook(t, interceptorWorkflow)
		assert.False(t, denied(h.call("Edit", map[string]any{"file_path": "test.py", "old_string": "a\nb", "new_string": "a\nb\nc"}, "")))
		out := h.call("Edit", edit("test.py", 20), "")
		assert.True(t, denied(out), out)
		assert.Contains(t, out, "exceeds limit")
		assert.Contains(t, out, "Edit rejected: 20 lines changed exceeds limit of 10 for state 'planning'. Break the edit into smaller changes.")
	})
	t.Run("bash_guard_allows_whitelisted, bash_guard_blocks_non_whitelisted, bash_classifier_skipped_when_allowed_commands_set", func(t *testing.T) {
		h := newSWHook(t, interceptorWorkflow)
		assert.False(t, denied(h.call("Bash", map[string]any{"command": "pytest -x tests/"}, "")))
		out := h.call("Bash", map[string]any{"command": "rm -rf /"}, "")
		assert.True(t, denied(out), out)
		assert.Contains(t, out, "not in the allowed commands")
		assert.Contains(t, out, "Command rejected: 'rm -rf /' is not in the allowed commands for state 'planning'. Allowed: pytest, cargo test")
	})
	t.Run("file_scope_blocks_after_limit, file_scope_allows_re_edit_same_file", func(t *testing.T) {
		h := newSWHook(t, interceptorWorkflow)
		for _, f := range []string{"a.py", "b.py", "c.py"} {
			require.False(t, denied(h.call("Edit", edit(f, 1), "")), f)
		}
		out := h.call("Edit", edit("d.py", 1), "")
		assert.True(t, denied(out), out)
		assert.Contains(t, out, "already edited 3 files")
		assert.Contains(t, out, "Edit rejected: already edited 3 files in state 'planning' (limit: 3). Transition to next state or reduce scope.")
		assert.False(t, denied(h.call("Edit", edit("a.py", 1), "")))
	})
	t.Run("read_dedup_warns_on_third_read", func(t *testing.T) {
		h := newSWHook(t, interceptorWorkflow)
		h.call("Read", map[string]any{"file_path": "test.py"}, "x")
		h.call("Read", map[string]any{"file_path": "test.py"}, "x")
		out := h.call("Read", map[string]any{"file_path": "test.py"}, "x")
		assert.False(t, denied(out), out)
		assert.Contains(t, out, "2 times")
		assert.Contains(t, out, "You have read 'test.py' 2 times in this state. The content is already in your context")
	})
	t.Run("context_budget_warns_at_90pct", func(t *testing.T) {
		h := newSWHook(t, interceptorWorkflow)
		// Statewright warns before the next call; chartgate as soon as the
		// read that crossed 90% ends, and before the next read.
		h.call("Read", map[string]any{"file_path": "big.py"}, strings.Repeat("x", 4600))
		assert.Contains(t, h.post, "Context budget: 92% used (4600/5000 bytes) in state 'planning'.")
		out := h.call("Read", map[string]any{"file_path": "other.py"}, "y")
		assert.False(t, denied(out), out)
		assert.Contains(t, out, "Context budget: 92% used (4600/5000 bytes) in state 'planning'.")
		assert.Contains(t, out, "then move the workflow on with")
	})
	t.Run("no_guards_configured_allows_everything, bash_classifier_skipped_when_no_allowed_tools", func(t *testing.T) {
		h := newSWHook(t, `{"id": "test", "initial": "start", "states": {"start": {"on": {"DONE": "end"}}, "end": {"type": "final"}}, "guards": {}}`)
		assert.Empty(t, h.call("Bash", map[string]any{"command": "cat > file.rs << 'EOF'\ncontent\nEOF"}, ""))
		assert.Empty(t, h.call("Write", map[string]any{"file_path": "x.py", "content": "lots\nof\nlines"}, ""))
		// Deleting files is refused in every state unless an allowed
		// command names it (the table in the workflow package's docs);
		// Statewright's classifier runs only in states with allowed_tools.
		out := h.call("Bash", map[string]any{"command": "rm -rf /tmp/x"}, "")
		assert.True(t, denied(out), out)
		assert.Contains(t, out, "deletes files")
		h = newSWHook(t, `{"id": "test", "initial": "start", "states": {"start": {"allowed_commands": ["*", "rm *"], "on": {"DONE": "end"}}, "end": {"type": "final"}}, "guards": {}}`)
		assert.Empty(t, h.call("Bash", map[string]any{"command": "rm -rf /tmp/x"}, ""))
		assert.Empty(t, h.call("Bash", map[string]any{"command": "cat > file.rs << 'EOF'\ncontent\nEOF"}, ""))
	})
	t.Run("bash classifier integration", func(t *testing.T) {
		h := newSWHook(t, `{"id": "test", "initial": "planning", "states": {
		  "planning": {"allowed_tools": ["Read", "Grep", "Glob", "Bash"], "on": {"READY": "implementing"}},
		  "implementing": {"allowed_tools": ["Read", "Edit", "Write", "Bash"], "on": {"DONE": "completed"}},
		  "completed": {"type": "final"}}, "guards": {}}`)
		for _, c := range []struct {
			port, command string
			deny          bool
			class         string // the phrase Statewright's test checks
		}{
			{"bash_cat_redirect_blocked_in_planning", "cat > file.rs << 'EOF'\nfn main() {}\nEOF", true, "FileWrite"},
			{"bash_cat_read_allowed_in_planning", "cat src/main.rs", false, ""},
			{"bash_grep_allowed_in_planning", "grep -rn 'TODO' src/", false, ""},
			{"bash_sed_inplace_blocked_in_planning", "sed -i 's/old/new/' file.rs", true, "FileModify"},
			{"bash_rm_blocked_in_planning", "rm -rf target/", true, "Destructive"},
			{"bash_passthrough_allowed_in_planning", "echo $PATH", false, ""},
		} {
			out := h.call("Bash", map[string]any{"command": c.command}, "")
			assert.Equal(t, c.deny, denied(out), "%s: %s", c.port, out)
			if c.class != "" {
				assert.Contains(t, out, "Bash command blocked in state 'planning': Command '", c.port)
				assert.Contains(t, out, "performs a "+c.class+" operation", c.port)
			}
		}
	})
}

// TestStatewrightSuiteBashClassifier ports mcp-gateway/bash_classifier.rs
// through Claude Code's PreToolUse hook: a command runs in a state whose
// allowed_tools has Bash and the tools its operations need (with), and is
// refused in one that lacks them (without); a destructive or git-writing
// command is refused whatever the tools (with nil).
func TestStatewrightSuiteBashClassifier(t *testing.T) {
	never := []string(nil)
	bash := []string{}
	cases := []struct {
		port          string
		command       string
		with, without []string
	}{
		{"cat_file_is_file_read, cat_allowed_when_read_in_tools", "cat src/main.rs", []string{"Read"}, []string{"Grep"}},
		{"cat_redirect_is_file_write, cat_redirect_blocked_when_write_not_in_tools, cat_redirect_allowed_when_write_in_tools", "cat > file.rs << 'EOF'\nsome content\nEOF", []string{"Read", "Write"}, []string{"Read", "Grep", "Glob"}},
		{"echo_redirect_is_file_write", "echo 'hello' > output.txt", []string{"Write"}, []string{"Read"}},
		{"append_redirect_is_file_write", "echo 'hello' >> output.txt", []string{"Write"}, []string{"Read"}},
		{"grep_is_content_search", "grep -r 'pattern' .", []string{"Grep"}, []string{"Read"}},
		{"rg_is_content_search", "rg 'TODO' src/", []string{"Grep"}, []string{"Read"}},
		{"find_is_file_search", "find . -name '*.rs'", []string{"Glob"}, []string{"Read"}},
		{"fd_is_file_search", "fd '*.rs'", []string{"Glob"}, []string{"Read"}},
		{"sed_inplace_is_file_modify, sed_inplace_blocked_without_edit, sed_inplace_allowed_with_edit", "sed -i 's/old/new/' file.rs", []string{"Read", "Edit"}, []string{"Read"}},
		{"sed_without_inplace_is_passthrough", "sed 's/old/new/' file.rs", bash, nil},
		{"rm_is_destructive, rm_always_blocked_in_restricted_state", "rm -rf target/", never, []string{"Read", "Write", "Edit"}},
		{"echo_path_is_passthrough", "echo $PATH", bash, nil},
		{"pwd_is_passthrough", "pwd", bash, nil},
		{"git_log_is_git_read", "git log --oneline", []string{"Read"}, []string{"Grep"}},
		{"git_status_is_git_read", "git status", []string{"Read"}, []string{"Grep"}},
		{"git_push_is_git_write, git_push_blocked_in_restricted_state", "git push origin main", never, []string{"Read"}},
		{"git_commit_is_git_write", "git commit -m 'fix bug'", never, []string{"Read", "Write", "Edit"}},
		// Better, in the compat table: git checkout may rewrite any tracked
		// file, the workflow's among them.
		{"git_checkout_branch_is_git_read", "git checkout feature-branch", never, []string{"Read"}},
		{"git_checkout_file_is_git_write", "git checkout -- src/main.rs", never, []string{"Read", "Write", "Edit"}},
		{"curl_is_network", "curl https://example.com", []string{"WebFetch"}, []string{"Read"}},
		// Better, in the compat table: wget also writes the file it fetches,
		// under a name the line does not give.
		{"wget_is_network", "wget https://example.com/file.tar.gz", never, []string{"WebFetch", "Write"}},
		{"wget_is_network (a named file)", "wget -O file.tar.gz https://example.com/file.tar.gz", []string{"WebFetch", "Write"}, []string{"WebFetch"}},
		{"tee_is_file_write", "echo hello | tee output.txt", []string{"Write"}, []string{"Read"}},
		{"cargo_test_is_passthrough, cargo_test_allowed_with_just_bash", "cargo test", bash, nil},
		{"pytest_is_passthrough", "pytest -x tests/", bash, nil},
		{"npm_test_is_passthrough", "npm test", bash, nil},
		{"cp_is_file_write", "cp src.rs dst.rs", []string{"Write"}, []string{"Read"}},
		{"mv_is_file_write", "mv old.rs new.rs", []string{"Write"}, []string{"Read"}},
		// Better, in the compat table: the files patch writes are named in
		// the diff, not the line, so they may be chartgate's own.
		{"patch_is_file_modify", "patch -p1 < fix.patch", never, []string{"Read", "Edit"}},
		{"patch_is_file_modify (a named file)", "patch src/main.rs < fix.patch", []string{"Read", "Edit"}, []string{"Read"}},
		{"git_clean_is_destructive", "git clean -fd", never, []string{"Read", "Write", "Edit"}},
		{"ls_is_passthrough", "ls -la", bash, nil},
		{"pipe_cat_grep_redirect_classifies_all_three, piped_command_all_classes_must_be_allowed, piped_command_allowed_when_all_tools_present", "cat file.rs | grep pattern > output.txt", []string{"Read", "Grep", "Write"}, []string{"Read", "Grep"}},
		{"chained_git_status_and_sed_inplace", "git status && sed -i 's/x/y/' file.rs", []string{"Read", "Edit"}, []string{"Read"}},
		{"semicolon_separated", "echo hello; rm temp.txt", never, []string{"Read", "Write", "Edit"}},
		{"stderr_redirect_not_file_write", "cargo test 2>/dev/null", bash, nil},
		{"redirect_in_single_quotes_not_file_write", "echo '> not a redirect'", bash, nil},
		{"redirect_in_double_quotes_not_file_write", `echo "> not a redirect"`, bash, nil},
		{"env_var_prefix_stripped", "FOO=bar grep 'pattern' .", []string{"Grep"}, []string{"Read"}},
		{"path_prefix_stripped", "/usr/bin/grep 'pattern' .", []string{"Grep"}, []string{"Read"}},
		{"heredoc_to_command_stdin_is_not_file_write", "psql << 'SQL'\nSELECT 1;\nSQL", bash, nil},
	}
	hooks := map[string]*swHook{}
	in := func(tools []string) *swHook {
		all := append([]string{"Bash"}, tools...)
		key := strings.Join(all, ",")
		if hooks[key] == nil {
			list, err := json.Marshal(all)
			require.NoError(t, err)
			hooks[key] = newSWHook(t, `{"id": "test", "initial": "s", "states": {"s": {"allowed_tools": `+string(list)+`, "on": {"DONE": "end"}}, "end": {"type": "final"}}, "guards": {}}`)
		}
		return hooks[key]
	}
	denied := func(out string) bool { return strings.Contains(out, `"permissionDecision":"deny"`) }
	for _, c := range cases {
		if c.with != nil {
			out := in(c.with).call("Bash", map[string]any{"command": c.command}, "")
			assert.False(t, denied(out), "mcp-gateway/bash_classifier.rs/%s: %q with %v: %s", c.port, c.command, c.with, out)
		}
		if c.without != nil {
			out := in(c.without).call("Bash", map[string]any{"command": c.command}, "")
			assert.True(t, denied(out), "mcp-gateway/bash_classifier.rs/%s: %q with %v: %s", c.port, c.command, c.without, out)
		}
	}
}

// TestStatewrightSuiteSession ports mcp-gateway/session.rs on its
// test_definition through statewright_get_state: a session starts in the
// initial state with nothing counted, each tool call is an iteration, a
// transition counts and restarts the iterations, the checkpoint comes at
// max_iterations, and a final state is final.
func TestStatewrightSuiteSession(t *testing.T) {
	a := serveCompat(t, strings.Replace(enforcementWorkflow, `"max_iterations": 3`, `"max_iterations": 5`, 1))
	// create_session_sets_initial_state, get_returns_created_session
	st := a.json("statewright_get_state", nil)
	assert.Equal(t, "planning", st["state"])
	assert.Equal(t, 0.0, st["iteration"])
	assert.Equal(t, 0.0, st["transition_count"])
	// increment_iteration, is_checkpoint_at_max_iterations
	for i := 1; i <= 5; i++ {
		text, isErr := a.call("read_file", map[string]any{"path": "a.go"})
		require.False(t, isErr, text)
		assert.NotContains(t, text, "CHECKPOINT", "call %d", i)
		assert.Equal(t, float64(i), a.json("statewright_get_state", nil)["iteration"])
	}
	text, _ := a.call("read_file", map[string]any{"path": "a.go"})
	assert.Contains(t, text, "[STATEWRIGHT CHECKPOINT: iteration 5/5 in state 'planning'.")
	// update_state_resets_iterations
	a.json("statewright_transition", map[string]any{"event": "READY"})
	st = a.json("statewright_get_state", nil)
	assert.Equal(t, "implementing", st["state"])
	assert.Equal(t, 0.0, st["iteration"])
	assert.Equal(t, 1.0, st["transition_count"])
	// is_final_state
	assert.Equal(t, false, st["is_final"])
	a.json("statewright_transition", map[string]any{"event": "FAIL"})
	assert.Equal(t, true, a.json("statewright_get_state", nil)["is_final"])
}

// TestStatewrightSuiteGatewayConfig ports mcp-gateway/config.rs
// parse_multi_workflow_config and parse_config_with_upstreams: the
// gateway's configuration with named workflows is read as its default
// workflow, with its upstream servers.
func TestStatewrightSuiteGatewayConfig(t *testing.T) {
	simple := func(id string) string {
		return `{"id": "` + id + `", "initial": "start", "states": {"start": {"allowed_tools": ["echo"], "on": {"DONE": "end"}}, "end": {"type": "final"}}, "guards": {}}`
	}
	config := writeFile(t, "config.json", `{"default": "bugfix", "workflows": {"bugfix": `+simple("bugfix")+`, "etl": `+simple("etl")+`},
	  "upstream_servers": [{"name": "up", "command": `+strconv.Quote(testExe(t))+`, "args": [], "env": {"`+envUpstream+`": "1"}}],
	  "workdir": "/project"}`)
	code, out, errOut := chartgate("validate", config)
	assert.Equal(t, exitOK, code, out+errOut)
	assert.Equal(t, config+": ok (Statewright workflow, 2 states)\n", out)

	bad := writeFile(t, "bad.json", `{"default": "nope", "workflows": {"bugfix": `+strings.Replace(simple("bugfix"), `"end"}}`, `"nowhere"}}`, 1)+`}}`)
	code, out, _ = chartgate("validate", bad)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, out, `default: "nope" is not a workflow of "workflows"`)
	bad = writeFile(t, "bad.json", `{"default": "bugfix", "workflows": {"bugfix": `+strings.Replace(simple("bugfix"), `"DONE": "end"`, `"DONE": "nowhere"`, 1)+`}}`)
	code, out, _ = chartgate("validate", bad)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, out, `workflows.bugfix.states.start.on.DONE: "nowhere" is not a state`)

	// Its servers are read as the definition form's are (serve runs them:
	// TestStatewrightTemplates).
	bad = writeFile(t, "bad.json", `{"default": "bugfix", "workflows": {"bugfix": `+simple("bugfix")+`}, "upstream_servers": [{"name": "up"}], "api_key": "k"}`)
	code, out, _ = chartgate("validate", bad)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, out, "upstream_servers[0].command: required: a non-empty string")
	assert.NotContains(t, out, "api_key")
}

// TestStatewrightSuiteUpstream ports mcp-gateway/upstream.rs
// mock_includes_tools_in_all_tools, mock_call_tool_returns_canned_result
// and mock_call_tool_unknown_tool_errors: the upstream's tools are listed
// and answer through the gateway, and a tool no upstream has is refused.
// (empty_manager_has_no_tools and call_tool_on_empty_manager_errors: a
// gateway without servers offers the workflow tools alone,
// serve_trust_test.go.)
func TestStatewrightSuiteUpstream(t *testing.T) {
	a := serveCompat(t, `{"id": "open", "initial": "work", "states": {"work": {"on": {"DONE": "end"}}, "end": {"type": "final"}}, "guards": {}}`)
	assert.ElementsMatch(t, append([]string{"read_file", "grep", "edit_file", "write_file"}, compatTools...), a.tools())
	text, isErr := a.call("edit_file", map[string]any{"path": "test.rs"})
	assert.False(t, isErr)
	assert.Equal(t, "edit_file test.rs", text)
	// gateway.rs tools_call_blocked_returns_error_content: a tool no
	// server has is refused as a tool result naming it and the state.
	text, isErr = a.call("deploy", map[string]any{})
	assert.True(t, isErr)
	assert.Equal(t, `Tool "deploy" is not available in the current workflow state ('work'): no server of this gateway has it. statewright_get_state lists the tools allowed now.`, text)
}

// TestStatewrightSuiteGatewayInterrupts ports gateway.rs's interrupt
// tests on its interrupt_definition (an edit of site/pb/**/*.js moves
// implementing to pb_validating): the edit's result says so with
// Statewright's marker, a non-matching edit moves nothing, VALIDATED
// ($return) comes back, a second edit in the handler does not interrupt
// again, FAIL in the handler goes to failed, and data cannot set
// _interrupt_return.
func TestStatewrightSuiteGatewayInterrupts(t *testing.T) {
	const wf = `{"id": "interrupt-test", "initial": "implementing", "context": {}, "states": {
	  "implementing": {"allowed_tools": ["edit_file", "read_file"], "on": {"DONE": "completed", "FAIL": "failed"}},
	  "pb_validating": {"allowed_tools": ["grep"], "on": {"VALIDATED": "$return", "FAIL": "failed"}},
	  "completed": {"type": "final"}, "failed": {"type": "final"}},
	  "interrupts": {"pb_check": {"trigger": {"file_pattern": "site/pb/**/*.js"}, "target": "pb_validating"}}}`
	// edit_non_matching_file_does_not_trigger_interrupt
	a := serveCompat(t, wf)
	text, isErr := a.call("edit_file", map[string]any{"path": "src/components/App.vue"})
	require.False(t, isErr, text)
	assert.NotContains(t, text, "INTERRUPT")
	st := a.json("statewright_get_state", nil)
	assert.Equal(t, "implementing", st["state"])
	assert.NotContains(t, st["context"], "_interrupt_return")

	// edit_matching_file_triggers_interrupt_auto_transition
	text, isErr = a.call("edit_file", map[string]any{"path": "site/pb/hooks/auth.pb.js"})
	require.False(t, isErr, text)
	assert.Contains(t, text, "edit_file site/pb/hooks/auth.pb.js")
	assert.Contains(t, text, "STATEWRIGHT INTERRUPT")
	assert.Contains(t, text, "pb_check")
	assert.Contains(t, text, "pb_validating")
	st = a.json("statewright_get_state", nil)
	assert.Equal(t, "pb_validating", st["state"])
	assert.Equal(t, "implementing", st["interrupt_handler"].(map[string]any)["return_state"])

	// interrupt_reentrance_prevented_while_in_handler (the handler's own
	// tools exclude edit_file here, so the hook path is tested below)
	text, isErr = a.call("edit_file", map[string]any{"path": "site/pb/hooks/another.pb.js"})
	assert.True(t, isErr, "the handler's tools: %s", text)
	assert.NotContains(t, text, "STATEWRIGHT INTERRUPT")
	assert.Equal(t, "pb_validating", a.json("statewright_get_state", nil)["state"])

	// interrupt_full_round_trip_edit_validate_return
	res := a.json("statewright_transition", map[string]any{"event": "VALIDATED"})
	assert.Equal(t, "implementing", res["to"])
	st = a.json("statewright_get_state", nil)
	assert.NotContains(t, st, "interrupt_handler")
	assert.NotContains(t, st["context"], "_interrupt_return")

	// interrupt_fail_path_goes_to_failed
	_, isErr = a.call("edit_file", map[string]any{"path": "site/pb/hooks/bad.pb.js"})
	require.False(t, isErr)
	assert.Equal(t, "failed", a.json("statewright_transition", map[string]any{"event": "FAIL"})["to"])
	assert.Equal(t, true, a.json("statewright_get_state", nil)["is_final"])

	// interrupt_reentrance_prevented_while_in_handler, with a handler
	// that may edit.
	b := serveCompat(t, strings.Replace(wf, `"allowed_tools": ["grep"]`, `"allowed_tools": ["edit_file"]`, 1))
	_, isErr = b.call("edit_file", map[string]any{"path": "site/pb/hooks/auth.pb.js"})
	require.False(t, isErr)
	text, isErr = b.call("edit_file", map[string]any{"path": "site/pb/hooks/another.pb.js"})
	require.False(t, isErr, text)
	assert.NotContains(t, text, "STATEWRIGHT INTERRUPT")
	st = b.json("statewright_get_state", nil)
	assert.Equal(t, "pb_validating", st["state"])
	assert.Equal(t, "implementing", st["interrupt_handler"].(map[string]any)["return_state"])

	// interrupt_return_stripped_from_user_event_data
	c := serveCompat(t, wf)
	res = c.json("statewright_transition", map[string]any{"event": "DONE", "data": map[string]any{"_interrupt_return": "hacked", "real_field": "kept"}})
	assert.Equal(t, "completed", res["to"])
	assert.Equal(t, map[string]any{"real_field": "kept"}, c.json("statewright_get_state", nil)["context"])
}

// TestStatewrightSuitePluginInterrupt ports gateway.rs's
// plugin_interrupt_* tests: Statewright's plugins send INTERRUPT:<name>
// with statewright_transition when they see a watched file change. Here
// chartgate fires interrupts itself (its tools and hooks see the writes),
// and the agent cannot send one: it would enter a handler, and use its
// tools, at will (the table in the workflow package's docs). An unknown
// name is refused as in Statewright.
func TestStatewrightSuitePluginInterrupt(t *testing.T) {
	a := serveCompat(t, interruptWorkflow(t))
	text, isErr := a.transition("INTERRUPT:pb_check", map[string]any{"trigger_file": "site/pb/hooks/auth.pb.js"})
	assert.True(t, isErr)
	assert.Equal(t, "Interrupt 'pb_check' was not sent: chartgate fires it itself when a tool writes a file matching site/pb/**/*.js (through this gateway, or the agent host's tools through chartgate's hooks); the agent cannot send it.", text)
	assert.Equal(t, "implementing", a.json("statewright_get_state", nil)["state"])
	// plugin_interrupt_unknown_name_errors
	text, isErr = a.transition("INTERRUPT:nonexistent", nil)
	assert.True(t, isErr)
	assert.Equal(t, "Unknown interrupt 'nonexistent'", text)
	// A state with safe_next does not take it either.
	b := serveCompat(t, strings.Replace(interruptWorkflow(t), `"implementing": {`, `"implementing": {"safe_next": "testing", `, 1))
	_, isErr = b.transition("INTERRUPT:pb_check", nil)
	assert.True(t, isErr)
	assert.Equal(t, "implementing", b.json("statewright_get_state", nil)["state"])
}

// TestStatewrightSuiteForkData ports gateway.rs
// fork_strips_fork_from_user_data: data sent with the event that forks
// cannot set the fork's bookkeeping; the rest is merged.
func TestStatewrightSuiteForkData(t *testing.T) {
	a := serveCompat(t, forkWorkflow)
	res := a.json("statewright_transition", map[string]any{"event": "BUILD_DONE", "data": map[string]any{"_fork": "injected", "real": "kept"}})
	assert.Equal(t, true, res["forked"])
	st := a.json("statewright_get_state", nil)
	assert.Equal(t, map[string]any{"real": "kept"}, st["context"])
	assert.Equal(t, true, st["fork"].(map[string]any)["active"])
}

// TestStatewrightSuiteRemote ports what of mcp-gateway/remote.rs applies
// to chartgate serve: approval callbacks (approved_applies_transition,
// rejected_clears_without_transition, not_found_for_unknown_approval)
// through chartgate approve, and client_scoped_keys_keep_mutable_machine_
// state_independent: two clients of one gateway without --session each
// have a workflow of their own. get_state names the workflow
// (fresh_remote_session_starts_inactive_until_workflow_is_loaded's
// "workflow").
func TestStatewrightSuiteRemote(t *testing.T) {
	a := serveCompat(t, approvalWorkflow)
	assert.Equal(t, "approval-test", a.json("statewright_get_state", nil)["workflow"])
	key := filepath.Join(t.TempDir(), "approver.key")
	code, _, errOut := chartgate("approve", "--init", "--key", key)
	require.Equal(t, exitOK, code, errOut)
	code, _, errOut = chartgate(append([]string{"approve", "0123456789abcdef0123456789abcdef01234567", "--yes", "--key", key}, a.project...)...)
	assert.Equal(t, exitFail, code, "an unknown approval")
	assert.NotEmpty(t, errOut)

	res := a.json("statewright_transition", map[string]any{"event": "DEPLOY", "data": map[string]any{"reviewed": true}})
	id, _ := res["approval_id"].(string)
	code, _, errOut = chartgate(append([]string{"approve", "--reject", id, "--yes", "--key", key}, a.project...)...)
	require.Equal(t, exitOK, code, errOut)
	st := a.json("statewright_get_state", nil)
	assert.Equal(t, "working", st["state"], "rejected: no transition")
	assert.NotContains(t, st, "pending_approval")

	// Two clients without a session name: independent workflows.
	wf := writeFile(t, "workflow.json", `{"id": "isolation-test", "initial": "planning", "context": {}, "states": {
	  "planning": {"on": {"DONE": "complete"}}, "complete": {"type": "final"}}, "guards": {}}`)
	store := filepath.Join(t.TempDir(), "state.db")
	project := []string{"--workflow", wf, "--store", store}
	args := append([]string{"serve", "--log-level", "warn", "--compat", "statewright", "--config", fileUpstream(t)}, project...)
	c1, c2 := startCompat(t, store, project, args), startCompat(t, store, project, args)
	c1.json("statewright_transition", map[string]any{"event": "DONE", "data": map[string]any{"by": "a"}})
	assert.Equal(t, "complete", c1.json("statewright_get_state", nil)["state"])
	st = c2.json("statewright_get_state", nil)
	assert.Equal(t, "planning", st["state"])
	assert.Equal(t, map[string]any{}, st["context"])
}

// bugFixMachine is agent/executor.rs's bug_fix_machine.
const bugFixMachine = `{"id": "fix-bug", "initial": "planning", "meta": {"task_type": "bug_fix", "danger_level": "moderate"}, "states": {
  "planning": {"allowed_tools": ["read_file", "grep"], "instructions": "Analyze the bug.", "max_iterations": 3, "on": {"PLAN_READY": "implementing", "FAIL": "failed"}},
  "implementing": {"allowed_tools": ["read_file", "write_file"], "on": {"DONE": "testing", "FAIL": "failed"}},
  "testing": {"allowed_tools": ["read_file", "run_test"], "on": {
    "TESTS_PASS": {"target": "review", "requires_approval": true, "approval_message": "Tests pass. Review changes?"},
    "TESTS_FAIL": "implementing", "FAIL": "failed"}},
  "review": {"on": {"APPROVED": "completed", "REJECTED": "implementing"}},
  "completed": {"type": "final"}, "failed": {"type": "final"}}, "guards": {}}`

// TestStatewrightSuiteExecutor ports agent/executor.rs's lifecycle tests
// on bug_fix_machine, with chartgate serve in the place of the executor
// and the test as the model: new_execution_starts_in_initial_state,
// step_advances_state_on_transition, step_blocks_unauthorized_tools,
// step_parks_at_approval_gate, approve_resumes_execution (chartgate
// approve), step_reaches_final_state, full_lifecycle_planning_to_completed,
// step_refuses_when_not_running, and max_iterations_enforced (with
// --checkpoint hard: the fourth call in planning is refused).
func TestStatewrightSuiteExecutor(t *testing.T) {
	a := serveCompat(t, bugFixMachine)
	st := a.json("statewright_get_state", nil)
	assert.Equal(t, "planning", st["state"])
	assert.Equal(t, "Analyze the bug.", st["instructions"])
	text, isErr := a.call("read_file", map[string]any{"path": "a.py"})
	assert.False(t, isErr, text)
	text, isErr = a.call("write_file", map[string]any{"path": "a.py"})
	assert.True(t, isErr, "write_file is not planning's: %s", text)
	assert.Equal(t, "implementing", a.json("statewright_transition", map[string]any{"event": "PLAN_READY"})["to"])
	assert.Equal(t, "testing", a.json("statewright_transition", map[string]any{"event": "DONE"})["to"])
	res := a.json("statewright_transition", map[string]any{"event": "TESTS_PASS"})
	assert.Equal(t, "pending_approval", res["status"])
	assert.Equal(t, "Tests pass. Review changes?", res["approval_message"])
	assert.Equal(t, "testing", a.json("statewright_get_state", nil)["state"], "parked")
	key := filepath.Join(t.TempDir(), "approver.key")
	code, _, errOut := chartgate("approve", "--init", "--key", key)
	require.Equal(t, exitOK, code, errOut)
	code, _, errOut = chartgate(append([]string{"approve", res["approval_id"].(string), "--yes", "--key", key}, a.project...)...)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "review", a.json("statewright_get_state", nil)["state"])
	assert.Equal(t, "completed", a.json("statewright_transition", map[string]any{"event": "APPROVED"})["to"])
	st = a.json("statewright_get_state", nil)
	assert.Equal(t, true, st["is_final"])
	assert.Equal(t, 4.0, st["transition_count"])
	text, isErr = a.transition("PLAN_READY", nil)
	assert.True(t, isErr)
	assert.Contains(t, text, "final state")

	b := serveCompat(t, bugFixMachine, "--checkpoint", "hard")
	for i := range 3 {
		text, isErr := b.call("read_file", map[string]any{"path": "a.py"})
		require.False(t, isErr, "call %d: %s", i+1, text)
	}
	text, isErr = b.call("read_file", map[string]any{"path": "a.py"})
	assert.True(t, isErr, "max_iterations 3: %s", text)
	assert.Equal(t, "planning", b.json("statewright_get_state", nil)["state"])
}

// TestStatewrightSuiteOrchestrator ports agent/orchestrator.rs on its
// parent_machine and helper_machine, with chartgate serve running the
// subflow in the place of the orchestrator and the test as the model:
// simple_run_without_invoke, invoke_runs_child_then_resumes_parent,
// child_failure_triggers_on_fail and multiple_invocations_in_sequence.
// missing_sub_machine_fails_invoke and
// max_depth_prevents_infinite_recursion fail at run time there; here the
// workflow does not load (chartgate validate names the invoke).
func TestStatewrightSuiteOrchestrator(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "helper.json"), []byte(`{"id": "helper", "initial": "helping", "states": {
	  "helping": {"on": {"HELPED": "completed", "FAIL": "failed"}}, "completed": {"type": "final"}, "failed": {"type": "final"}}, "guards": {}}`), 0o644))
	parent := `{"id": "parent", "initial": "working", "states": {
	  "working": {"on": {"DONE": "completed", "NEED_HELP": {"invoke": "helper", "on_complete": "working", "on_fail": "failed"}, "FAIL": "failed"}},
	  "completed": {"type": "final"}, "failed": {"type": "final"}}, "guards": {}}`

	a := serveCompat(t, parent, "--subflows", dir)
	assert.Equal(t, "completed", a.json("statewright_transition", map[string]any{"event": "DONE"})["to"])

	b := serveCompat(t, parent, "--subflows", dir)
	for range 2 {
		res := b.json("statewright_transition", map[string]any{"event": "NEED_HELP"})
		assert.Equal(t, "helper", res["invoke"].(map[string]any)["machine"])
		assert.Equal(t, "helping", b.json("statewright_get_state", nil)["state"])
		assert.Equal(t, "working", b.json("statewright_transition", map[string]any{"event": "HELPED"})["to"])
	}
	assert.Equal(t, "completed", b.json("statewright_transition", map[string]any{"event": "DONE"})["to"])
	assert.Equal(t, 5.0, b.json("statewright_get_state", nil)["transition_count"])

	c := serveCompat(t, parent, "--subflows", dir)
	c.json("statewright_transition", map[string]any{"event": "NEED_HELP"})
	assert.Equal(t, "failed", c.json("statewright_transition", map[string]any{"event": "FAIL"})["to"])
	assert.Equal(t, true, c.json("statewright_get_state", nil)["is_final"])

	file := writeFile(t, "parent.json", parent)
	code, out, errOut := chartgate("validate", "--subflows", t.TempDir(), file)
	assert.Equal(t, exitFail, code, out+errOut)
	assert.Contains(t, out, "states.working.on.NEED_HELP")
	assert.Contains(t, out, `"helper"`)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "recursive.json"), []byte(`{"id": "recursive", "initial": "looping", "states": {
	  "looping": {"on": {"RECURSE": {"invoke": "recursive", "on_complete": "completed", "on_fail": "failed"}}},
	  "completed": {"type": "final"}, "failed": {"type": "final"}}, "guards": {}}`), 0o644))
	code, out, errOut = chartgate("validate", "--subflows", dir, filepath.Join(dir, "recursive.json"))
	assert.Equal(t, exitFail, code, out+errOut)
	assert.Contains(t, out, "states.looping.on.RECURSE")
}
