// This file defines Load, its options, the loaded Workflow, and the rule
// that tells a Statewright workflow from an XState machine.

package workflow

import (
	"fmt"

	"github.com/tidwall/gjson"

	"github.com/chartgate/chartgate/statechart"
)

// Format is the format of a workflow file.
type Format string

// The formats. The zero value (or "auto") detects the format with
// [DetectFormat].
const (
	FormatAuto        Format = ""
	FormatXState      Format = "xstate"
	FormatStatewright Format = "statewright"
)

// Checkpoint says what happens to a tool call once a Statewright state's
// max_iterations calls ran.
type Checkpoint string

// The checkpoint behaviours. The zero value is soft.
const (
	// CheckpointSoft is Statewright's behaviour: the call runs, and its
	// result carries a checkpoint notice asking the agent to move on
	// (meta.mcp.onMaxCalls "warn").
	CheckpointSoft Checkpoint = "soft"
	// CheckpointHard refuses the calls that do not leave the state
	// (meta.mcp.onMaxCalls "refuse").
	CheckpointHard Checkpoint = "hard"
)

// Options configures [Load]. The zero value (or nil) means the defaults.
type Options struct {
	// Format of the file: FormatAuto (the default, also "auto"),
	// FormatXState or FormatStatewright.
	Format Format
	// Resolve returns the Statewright workflow an invoke names, for
	// subflows. Without it, a workflow that invokes one does not load.
	Resolve func(name string) ([]byte, error)
	// Checkpoint is what max_iterations does: CheckpointSoft (the default,
	// also "") or CheckpointHard.
	Checkpoint Checkpoint
	// Compat, CompatStatewright, compiles a Statewright workflow to behave
	// as Statewright does where the default differs (see the package
	// documentation, "Compared with Statewright").
	Compat Compat
	// Pausable compiles a Statewright workflow's paused state (see
	// "Compared with Statewright"), as CompatStatewright does, without
	// the rest of compat mode: a person's commands read and resume a
	// workflow that a compat gateway paused.
	Pausable bool
	// Statechart passes options to [statechart.Compile]: limits, Strict,
	// and Go implementations of the guards and actions an XState workflow
	// names. The workflow's own guards and the built-ins (see
	// [ActionMerge]) are added to them; a name given twice is an error.
	Statechart statechart.Options
}

// Workflow is a loaded workflow: a compiled machine whose states carry
// meta.mcp for package mcpbind, and what the gateway and the hooks need
// besides.
type Workflow struct {
	// Format is the format the file was read as.
	Format Format
	// Compat is the compatibility mode the workflow was loaded with
	// ([Options.Compat]); with [CompatStatewright] the hooks word their
	// refusals and warnings as Statewright's gateway does as well.
	Compat Compat
	// Machine is the compiled machine, with every implementation it needs.
	Machine *statechart.Machine
	// JSON is the XState machine config Machine was compiled from: the
	// file itself for an XState workflow, the compilation of a Statewright
	// one. Loading it again as FormatXState gives the same workflow.
	JSON []byte
	// Interrupts are the workflow's file interrupts, sorted by name: the
	// first that matches a file is the one Statewright applies.
	Interrupts []Interrupt
	// Policies are the per-state policies, by state id (as
	// [statechart.Snapshot.StateIDs] gives them), for the states that set
	// any.
	Policies map[string]StatePolicy
	// Meta is the workflow-wide meta.
	Meta MachineMeta
	// Upstreams are the upstream_servers of a Statewright gateway
	// configuration file ({"definition": {...}, "upstream_servers":
	// [...]}), whose definition is the workflow; nil for a workflow file.
	Upstreams []Upstream
	// forks are the top-level forks of a Statewright workflow, by the key
	// of their parallel state, in Statewright's shape.
	forks map[string]map[string]any
	// invokes are the subflows the top-level states of a Statewright
	// workflow invoke, by the key of their state, in Statewright's shape.
	invokes map[string]map[string]any
	// views are what Statewright's tools show of the states of a
	// Statewright workflow file, by state name; nil for XState.
	views map[string]*swStateView
	// guards index the Statewright guards the machine's transitions name,
	// for ExplainGuard.
	guards guardIndex
}

// Interrupt sends Event to the workflow when a file matching FilePattern
// (see [MatchFile]) changes.
type Interrupt struct {
	Name        string
	FilePattern string
	Event       string
}

// MatchInterrupt returns the first interrupt (by name) whose pattern
// matches path.
func (w *Workflow) MatchInterrupt(path string) (Interrupt, bool) {
	for _, in := range w.Interrupts {
		if MatchFile(in.FilePattern, path) {
			return in, true
		}
	}
	return Interrupt{}, false
}

// Load reads a workflow, in either format, and compiles it. On failure the
// error is a [statechart.ErrorList] holding every problem found, each with
// its JSON path in the file.
func Load(data []byte, opts *Options) (*Workflow, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	switch o.Compat {
	case CompatNone, CompatStatewright:
	default:
		return nil, fmt.Errorf("workflow: Options.Compat is %q: it must be %q or %q", o.Compat, CompatNone, CompatStatewright)
	}
	switch o.Checkpoint {
	case "":
		o.Checkpoint = CheckpointSoft
	case CheckpointSoft, CheckpointHard:
	default:
		return nil, fmt.Errorf("workflow: Options.Checkpoint is %q: it must be %q or %q", o.Checkpoint, CheckpointSoft, CheckpointHard)
	}
	if def, at, ups, ok, err := unwrapGatewayConfig(data); ok {
		// A Statewright gateway configuration: its definition is the
		// workflow, Statewright's unless the format says otherwise.
		if err != nil {
			return nil, err
		}
		inner := o
		if inner.Format == FormatAuto || inner.Format == "auto" {
			inner.Format = FormatStatewright
		}
		w, err := Load(def, &inner)
		if err != nil {
			return nil, prefixErrors(err, at)
		}
		w.Upstreams = ups
		return w, nil
	}
	format := o.Format
	switch format {
	case FormatAuto, "auto":
		var ambiguous bool
		if format, ambiguous = detect(data); ambiguous {
			return nil, ErrAmbiguousFormat
		}
	case FormatXState, FormatStatewright:
	default:
		return nil, fmt.Errorf("workflow: Options.Format is %q: it must be %q, %q or %q", o.Format, "auto", FormatXState, FormatStatewright)
	}
	if format == FormatXState {
		return loadXState(data, o)
	}
	var e errs
	d := parseStatewright(data, o.Statechart, &e)
	if d == nil {
		return nil, e.err()
	}
	d.validate(&e)
	if len(e.list) > 0 {
		return nil, e.err()
	}
	machine := compile(d, o, &e)
	if len(e.list) > 0 {
		return nil, e.err()
	}
	w, err := loadXState(machine, o)
	if err != nil {
		// The compilation is ours: a failure is a bug, or a limit of
		// Options.Statechart.
		return nil, fmt.Errorf("workflow: the machine compiled from the Statewright workflow does not load: %w", err)
	}
	w.Format = FormatStatewright
	w.forks, w.invokes = forksAndInvokes(d)
	w.views = swViews(d)
	return w, nil
}

// statewrightStateKeys are the state keys only Statewright uses.
var statewrightStateKeys = func() []string {
	ks := []string{"allowed_tools", "disallowed_tools", "instructions", "safe_next"}
	ks = append(ks, policyKeys...)
	for a := range policyAliases {
		ks = append(ks, a)
	}
	return ks
}()

// DetectFormat tells a Statewright workflow from an XState machine config.
// A document is a Statewright workflow when it is a JSON object with a
// "states" object and one of:
//
//   - a top-level "guards" or "interrupts" key (XState configs have
//     neither);
//   - a state (a member of the top-level "states") with a key only
//     Statewright states have: allowed_tools, disallowed_tools,
//     instructions, safe_next, max_iterations, max_edit_lines,
//     allowed_commands, allowed_commands_tool, max_files_per_state,
//     context_budget_bytes, blocked_env, deny_env, env_overrides, env,
//     model, thinking_level or model_ladder;
//   - a transition (a value of a state's "on") in a form only Statewright
//     has: "$return", an object with "fork", "invoke", "guards",
//     "requires_approval" or "approval_message", or an array element with
//     "guards".
//
// A top-level "$schema" naming statewright or xstate decides, and a
// Statewright gateway configuration ({"definition": {...},
// "upstream_servers": [...]}, or {"default": name, "workflows": {...}})
// is Statewright's. Anything else, including
// a file both formats would read (states with only "on" and "type":
// "final"), is XState here; [Load] with [FormatAuto] refuses such a file
// when it has transitions ([ErrAmbiguousFormat]).
func DetectFormat(data []byte) Format {
	f, _ := detect(data)
	return f
}

func statewrightTransition(t gjson.Result) bool {
	switch {
	case t.Type == gjson.String:
		return t.String() == returnTarget
	case t.IsObject():
		for _, k := range []string{"fork", "invoke", "guards", "requires_approval", "approval_message"} {
			if t.Get(k).Exists() {
				return true
			}
		}
		return t.Get("target").String() == returnTarget
	case t.IsArray():
		for _, e := range t.Array() {
			if e.IsObject() && (e.Get("guards").Exists() || e.Get("target").String() == returnTarget) {
				return true
			}
		}
	}
	return false
}
