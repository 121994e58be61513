// This file defines the per-state policies (allowed_commands, blocked_env,
// max_edit_lines …) and the machine meta of a workflow, and reads both from
// a Statewright file or from an XState machine's meta.chartgate, with the
// same rules and messages.

package workflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"slices"

	"github.com/tidwall/gjson"

	"github.com/chartgate/chartgate/internal/jsonx"
	"github.com/chartgate/chartgate/shellpolicy"
)

// StatePolicy is what a state asks of the tools beyond their visibility.
// The workflow package only reads and checks it; the gateway and the hooks
// apply it to the calls they see. Optional numbers are nil when not set.
type StatePolicy struct {
	// AllowedCommands lists the shell commands allowed in this state
	// (Statewright's allowed_commands); nil when not set.
	AllowedCommands []string
	// AllowedCommandsTool is the tool whose commands AllowedCommands
	// restricts; "Bash" unless set.
	AllowedCommandsTool string
	// BlockedEnv lists environment variables that commands must not use
	// (blocked_env, alias deny_env).
	BlockedEnv []string
	// EnvOverrides are environment variables set for this state
	// (env_overrides, alias env): names are shell identifiers and values
	// hold no NUL byte (a load error otherwise). The hook sets them for the
	// shell tool where the agent host lets it rewrite the command.
	EnvOverrides map[string]string
	// MaxEditLines bounds the lines one edit may change.
	MaxEditLines *int
	// MaxFilesPerState bounds the files edited while the state is active.
	MaxFilesPerState *int
	// ContextBudgetBytes bounds the bytes of tool output the agent reads in
	// this state.
	ContextBudgetBytes *int64
	// MaxIterations is Statewright's checkpoint budget of tool calls; the
	// workflow compiles it to meta.mcp.maxCalls.
	MaxIterations *int
	// Model and ThinkingLevel name the model a host should run this state
	// with; ModelLadder is Statewright's list of fallbacks, kept as JSON.
	Model, ThinkingLevel string
	ModelLadder          json.RawMessage
}

// MachineMeta is the workflow-wide meta of a Statewright file (its "meta"
// object); for XState workflows, meta.chartgate.workflow of the root.
type MachineMeta struct {
	TaskType              string
	EstimatedSteps        *int
	DangerLevel           string // "", "safe", "moderate" or "dangerous"
	RequiresHumanApproval bool
	CaptureOutput         bool
	Debug                 bool   // Statewright's debug mode (force_state)
	ApprovalMode          string // how approvals are asked for ("ui" in Statewright)
	// Extra holds every other key, as compact JSON.
	Extra map[string]json.RawMessage
}

// policyKeys are the canonical policy keys, in the order they are written.
var policyKeys = []string{
	"allowed_commands", "allowed_commands_tool", "blocked_env", "env_overrides",
	"max_edit_lines", "max_files_per_state", "context_budget_bytes", "max_iterations",
	"model", "thinking_level", "model_ladder",
}

// policyAliases are Statewright's serde aliases.
var policyAliases = map[string]string{"deny_env": "blocked_env", "env": "env_overrides"}

// policyReader reads the policy keys of one state.
type policyReader struct {
	p    StatePolicy
	set  map[string]string // canonical key -> the key written (alias or not)
	raw  map[string]json.RawMessage
	errs *errs
}

func newPolicyReader(e *errs) *policyReader {
	return &policyReader{set: map[string]string{}, raw: map[string]json.RawMessage{}, errs: e}
}

// read handles key if it is a policy key (or an alias) and reports
// whether it was one.
func (r *policyReader) read(key string, v gjson.Result, p jsonx.Path) bool {
	canon := key
	if a, ok := policyAliases[key]; ok {
		canon = a
	}
	if !slices.Contains(policyKeys, canon) {
		return false
	}
	if prev, dup := r.set[canon]; dup {
		r.errs.add(p, "%q and %q are the same setting (%s); give only one", prev, key, canon)
		return true
	}
	r.set[canon] = key
	if v.Type == gjson.Null {
		return true // null means not set, as serde's Option reads it
	}
	ok := true
	switch canon {
	case "allowed_commands":
		r.p.AllowedCommands, ok = stringList(v, p, r.errs)
	case "blocked_env":
		r.p.BlockedEnv, ok = stringList(v, p, r.errs)
	case "allowed_commands_tool":
		if v.Type != gjson.String || v.String() == "" {
			r.errs.add(p, "must be a tool name, not %s", kind(v))
			return true
		}
		r.p.AllowedCommandsTool = v.String()
	case "env_overrides":
		if !v.IsObject() {
			r.errs.add(p, "must be an object of variable names to string values, not %s", kind(v))
			return true
		}
		r.p.EnvOverrides = map[string]string{}
		for _, mb := range jsonx.Members(v, func(k string) { r.errs.add(p.Key(k), "duplicate key %q", k) }) {
			if mb.Value.Type != gjson.String {
				r.errs.add(p.Key(mb.Key), "must be a string, not %s", kind(mb.Value))
				ok = false
				continue
			}
			var ee *shellpolicy.EnvError
			if err := shellpolicy.CheckEnv(mb.Key, mb.Value.String()); errors.As(err, &ee) {
				r.errs.add(p.Key(mb.Key), "%s", ee.Reason)
				ok = false
				continue
			}
			r.p.EnvOverrides[mb.Key] = mb.Value.String()
		}
	case "max_edit_lines":
		r.p.MaxEditLines, ok = intIn(v, p, 0, math.MaxUint32, r.errs)
	case "max_files_per_state":
		r.p.MaxFilesPerState, ok = intIn(v, p, 0, math.MaxUint32, r.errs)
	case "max_iterations":
		r.p.MaxIterations, ok = intIn(v, p, 1, math.MaxInt32, r.errs)
	case "context_budget_bytes":
		var n *int
		n, ok = intIn(v, p, 0, 1<<53, r.errs)
		if ok {
			b := int64(*n)
			r.p.ContextBudgetBytes = &b
		}
	case "model", "thinking_level":
		if v.Type != gjson.String {
			r.errs.add(p, "must be a string, not %s", kind(v))
			return true
		}
		if canon == "model" {
			r.p.Model = v.String()
		} else {
			r.p.ThinkingLevel = v.String()
		}
	case "model_ladder":
		if !v.IsArray() {
			r.errs.add(p, "must be an array, not %s", kind(v))
			return true
		}
		r.p.ModelLadder = compact(v.Raw)
	}
	if ok {
		r.raw[canon] = compact(v.Raw)
	}
	return true
}

// policy returns the policy read, and whether any key was set.
func (r *policyReader) policy() (StatePolicy, bool) {
	p := r.p
	if p.AllowedCommandsTool == "" {
		p.AllowedCommandsTool = "Bash"
	}
	return p, len(r.raw) > 0
}

// json returns the policy as a meta.chartgate object, canonical keys in
// order, or nil if no key was set.
func (r *policyReader) json() *obj {
	if len(r.raw) == 0 {
		return nil
	}
	o := newObj()
	for _, k := range policyKeys {
		if v, ok := r.raw[k]; ok {
			o.set(k, v)
		}
	}
	return o
}

// metaKeys are the known keys of the machine meta.
var metaKeys = []string{"task_type", "estimated_steps", "danger_level", "requires_human_approval", "capture_output", "debug", "approval_mode"}

// readMachineMeta reads a Statewright machine meta object. It returns the
// meta and the object to write into the compiled machine (keys in order).
func readMachineMeta(v gjson.Result, p jsonx.Path, e *errs) (MachineMeta, *obj) {
	var m MachineMeta
	out := newObj()
	if v.Type == gjson.Null || !v.Exists() {
		return m, out
	}
	if !v.IsObject() {
		e.add(p, "must be an object, not %s", kind(v))
		return m, out
	}
	for _, mb := range jsonx.Members(v, func(k string) { e.add(p.Key(k), "duplicate key %q", k) }) {
		kp := p.Key(mb.Key)
		val := mb.Value
		ok := true
		if val.Type == gjson.Null && slices.Contains(metaKeys, mb.Key) {
			continue
		}
		switch mb.Key {
		case "task_type", "approval_mode":
			if val.Type != gjson.String {
				e.add(kp, "must be a string, not %s", kind(val))
				ok = false
			} else if mb.Key == "task_type" {
				m.TaskType = val.String()
			} else {
				m.ApprovalMode = val.String()
			}
		case "estimated_steps":
			m.EstimatedSteps, ok = intIn(val, kp, 0, math.MaxUint32, e)
		case "danger_level":
			s := val.String()
			if val.Type != gjson.String || (s != "safe" && s != "moderate" && s != "dangerous") {
				e.add(kp, `must be "safe", "moderate" or "dangerous", not %s`, kind(val))
				ok = false
			} else {
				m.DangerLevel = s
			}
		case "requires_human_approval", "capture_output", "debug":
			if val.Type != gjson.True && val.Type != gjson.False {
				e.add(kp, "must be true or false, not %s", kind(val))
				ok = false
				break
			}
			b := val.Type == gjson.True
			switch mb.Key {
			case "requires_human_approval":
				m.RequiresHumanApproval = b
			case "capture_output":
				m.CaptureOutput = b
			default:
				m.Debug = b
			}
		default:
			if m.Extra == nil {
				m.Extra = map[string]json.RawMessage{}
			}
			m.Extra[mb.Key] = compact(val.Raw)
		}
		if ok {
			out.set(mb.Key, compact(val.Raw))
		}
	}
	return m, out
}

// stringList reads an array of strings.
func stringList(v gjson.Result, p jsonx.Path, e *errs) ([]string, bool) {
	if !v.IsArray() {
		e.add(p, "must be an array of strings, not %s", kind(v))
		return nil, false
	}
	out := []string{}
	ok := true
	for i, x := range v.Array() {
		if x.Type != gjson.String {
			e.add(p.Index(i), "must be a string, not %s", kind(x))
			ok = false
			continue
		}
		out = append(out, x.String())
	}
	return out, ok
}

// intIn reads an integer in [lo, hi].
func intIn(v gjson.Result, p jsonx.Path, lo, hi float64, e *errs) (*int, bool) {
	f := v.Float()
	if v.Type != gjson.Number || f != math.Trunc(f) || f < lo || f > hi {
		if v.Type == gjson.Number && f == math.Trunc(f) && f < lo && lo == 1 {
			e.add(p, "must be at least 1, not %s", v.Raw)
		} else {
			e.add(p, "must be an integer from %.0f to %.0f, not %s", lo, hi, kind(v))
		}
		return nil, false
	}
	n := int(f)
	return &n, true
}

// kind describes a JSON value for messages: its kind, or the value itself
// when it is short.
func kind(v gjson.Result) string {
	switch v.Type {
	case gjson.String:
		if len(v.Raw) <= 40 {
			return v.Raw
		}
		return "a string"
	case gjson.Number:
		if len(v.Raw) <= 20 {
			return v.Raw
		}
	}
	return jsonx.Kind(v)
}

// compact returns raw JSON without insignificant space.
func compact(raw string) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(raw)); err != nil {
		return json.RawMessage(raw)
	}
	return b.Bytes()
}
