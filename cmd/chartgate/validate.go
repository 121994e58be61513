package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/chartgate/chartgate/hook"
	"github.com/chartgate/chartgate/internal/jsonx"
	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/workflow"
)

// cmdValidate checks every FILE and prints, on stdout, every problem, one
// line each: FILE: path: message for an error, FILE: path: warning: message
// for a warning (what XState accepts but is most likely a mistake, see
// statechart.Error). A file without errors ends with FILE: ok (N states),
// or FILE: ok (N states, W warnings); N counts the state nodes below the
// machine root, history states included. The exit code is 1 when some file
// has errors, 0 otherwise.
//
// A guard without implementation is a warning: a machine file's guards
// are implemented by the program that runs it (run and bench refuse it
// unless --allow-missing-guards is given). --strict makes every warning an
// error, and also reports actions and delays without implementation.
//
// The machine's meta.mcp (the tool bindings of package mcpbind) is checked
// too. With --tools, the names it gives are checked against the server's
// tool names: a name no tool has is a problem (a misspelt name leaves the
// tool it meant ungated), and the tools the workflow does not name are
// listed in a note.
//
// A Statewright workflow (detected by package workflow, or forced with
// --format statewright) is loaded by workflow.Load: its problems have
// paths in the file, and it is reported as FILE: ok (Statewright workflow,
// N states), N the states of the file. Its invoked subflows are read from
// --subflows DIR (DIR/<name>.json). A Statewright workflow whose meta sets
// danger_level also gets the checks of Statewright's agent validator, as
// warnings (errors with --strict): a reachable "failed" final state, and
// for moderate and dangerous workflows an approval gate, a read-only
// initial state and no escalation to external tools without approval.
func cmdValidate(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("validate")
	strict := fs.Bool("strict", false, "make warnings errors; also report guards, actions and delays that have no implementation")
	toolList := fs.String("tools", "", "the server's tool names, comma-separated: check the machine's meta.mcp names against them")
	format := fs.String("format", "auto", "the files' format: auto, xstate or statewright")
	subflows := fs.String("subflows", "", "the directory of the Statewright workflows invoke names (DIR/<name>.json, or by DIR/manifest.json; default: the file's)")
	files, err := parseArgs(fs, args)
	if err != nil {
		return argsError(stdout, stderr, "validate", err)
	}
	if len(files) == 0 {
		return usageError(stderr, "validate", errors.New("missing FILE"))
	}
	switch workflow.Format(*format) {
	case "auto", workflow.FormatXState, workflow.FormatStatewright:
	default:
		return usageError(stderr, "validate", fmt.Errorf("--format %q: use auto, xstate or statewright", *format))
	}
	if i := slices.Index(files, stdinName); i >= 0 && slices.Contains(files[i+1:], stdinName) {
		return usageError(stderr, "validate", errors.New(`"-" (stdin) given more than once`))
	}
	code := exitOK
	for _, name := range files {
		src, err := readSource(name, stdin)
		if err != nil {
			fmt.Fprintf(stderr, "chartgate: %v\n", err)
			code = exitFail
			continue
		}
		f := workflow.Format(*format)
		ambiguous := false
		if f == "auto" {
			f = workflow.FormatXState
			if !src.isCase {
				// As workflow.Load reads it (a Statewright gateway
				// configuration is Statewright's); an ambiguous file is
				// validated as XState, with a note.
				var err error
				if f, err = workflow.FormatOf(src.data); err != nil {
					f, ambiguous = workflow.FormatXState, errors.Is(err, workflow.ErrAmbiguousFormat)
				}
			}
		}
		var m *statechart.Machine
		var probs []problem
		var kind string
		var n int
		switch {
		case f == workflow.FormatStatewright:
			m, n, probs = validateWorkflow(src, f, *strict, subflowsOf(*subflows, name))
			kind = "Statewright workflow, "
			if m != nil {
				for _, p := range agentWarnings(src.data) {
					p.warning = !*strict
					probs = append(probs, p)
				}
			}
		case !src.isCase && hasChartgateMeta(src.data):
			m, n, probs = validateWorkflow(src, f, *strict, subflowsOf(*subflows, name))
			kind = "workflow, "
		default:
			m, probs = src.compile(statechart.Options{Strict: *strict, AllowMissingGuards: !*strict})
			if m != nil {
				n = len(m.StateIDs()) - 1
			}
			if m != nil && n == 0 {
				// As a workflow (serve, hook), a machine without states
				// gates nothing: package workflow refuses it.
				probs = append(probs, problem{path: src.prefix(), msg: "the workflow defines no state: it needs at least one state (a workflow without states would gate nothing)"})
			}
		}
		if m != nil && name != stdinName {
			// As serve and hook load it: not in another format than the
			// one the project was installed with.
			if err := hook.CheckFormat(name, f); err != nil {
				probs = append(probs, problem{msg: strings.TrimPrefix(err.Error(), name+": ")})
			}
		}
		var unnamed []string
		if m != nil {
			var bindings []problem
			var text []byte // the file m is compiled from as it is
			if f != workflow.FormatStatewright && kind == "" {
				text = src.data
			}
			unnamed, bindings = checkBindings(m, text, tools(*toolList), src.prefix())
			if f == workflow.FormatStatewright {
				bindings = statewrightPaths(bindings, src.data)
			}
			probs = append(probs, bindings...)
		}
		for _, p := range probs {
			fmt.Fprintln(stdout, p.format(displayName(name)))
		}
		if hasErrors(probs) {
			code = exitFail
			continue
		}
		fmt.Fprintf(stdout, "%s: ok (%s%s%s)\n", displayName(name), kind, plural(n, "state"), warningCount(len(probs)))
		if ambiguous {
			fmt.Fprintf(stdout, "%s: note: validated as an XState machine; as a workflow (serve, hook) it needs --format statewright or --format xstate, or a \"$schema\" naming one: both formats read it, differently (Statewright merges the data sent with an event into the context)\n", displayName(name))
		}
		if len(unnamed) > 0 {
			fmt.Fprintf(stdout, "%s: note: tools the workflow does not name (always visible; refused with mcpbind.Options.DefaultDeny unless meta.mcp.ungated lists them): %s\n",
				displayName(name), strings.Join(unnamed, ", "))
		}
	}
	return code
}

// plural writes n and the noun, in the plural unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// warningCount is ", N warnings" for the ok line, or "" without warnings.
func warningCount(n int) string {
	if n == 0 {
		return ""
	}
	return ", " + plural(n, "warning")
}

// tools splits the --tools list.
func tools(list string) []string {
	var out []string
	for _, t := range strings.Split(list, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// checkBindings checks the machine's meta.mcp as mcpbind.New does and, if
// tools are given, its names against them. text, when not nil, is the
// file m was compiled from as it is (not through package workflow). It
// returns the tools the workflow does not name, and the problems, their
// paths under prefix.
func checkBindings(m *statechart.Machine, text []byte, tools []string, prefix string) ([]string, []problem) {
	if len(tools) == 0 && !bindsTools(m, text) {
		// Without meta.mcp, mcpbind.New has nothing to check but the
		// machine's start: the gate it builds would go unused.
		if _, err := m.Start(context.Background(), time.Now()); err != nil {
			return nil, []problem{{path: prefix, warning: true, msg: "the machine does not start without the implementations it names: " + err.Error()}}
		}
		return nil, nil
	}
	gate, err := mcpbind.New(m.Engine(), &mcpbind.Options{Logger: slog.New(slog.DiscardHandler)})
	var list statechart.ErrorList
	if err != nil && !errors.As(err, &list) {
		if _, startErr := m.Start(context.Background(), time.Now()); startErr != nil {
			// The bindings are sound (mcpbind checks them before it
			// starts the machine), but the initial macrostep needs an
			// implementation the file does not have, as XState's start
			// would: a warning for a file that is only validated.
			return nil, []problem{{path: prefix, warning: true, msg: "the machine does not start without the implementations it names: " + startErr.Error()}}
		}
	}
	if err != nil {
		return nil, problems(err, prefix)
	}
	if len(tools) == 0 {
		return nil, nil
	}
	if errs := gate.CheckTools(tools); len(errs) > 0 {
		return nil, problems(errs, prefix)
	}
	return gate.Unnamed(tools), nil
}

// bindsTools reports whether some state of m has meta.mcp. A text that
// holds neither "mcp" nor an escape that could spell it has none, which
// is answered without listing m's nodes.
func bindsTools(m *statechart.Machine, text []byte) bool {
	if text != nil && !bytes.Contains(text, []byte("mcp")) && !bytes.Contains(text, []byte(`\u`)) {
		return false
	}
	for _, n := range m.Nodes() {
		if meta, ok := n.Meta.(map[string]any); ok {
			if _, ok := meta["mcp"]; ok {
				return true
			}
		}
	}
	return false
}

// subflowsOf is the directory of the subflows of file: dir, or the file's
// own directory, as serve and hook read them.
func subflowsOf(dir, file string) string {
	if dir == "" && file != stdinName {
		return filepath.Dir(file)
	}
	return dir
}

// gatewayStates returns the states of the workflow a Statewright gateway
// configuration enforces: its definition's, or its default workflow's.
func gatewayStates(data []byte) (gjson.Result, bool) {
	root := gjson.ParseBytes(data)
	if !gjson.ValidBytes(data) || !root.IsObject() || root.Get("states").Exists() {
		return gjson.Result{}, false
	}
	if d := root.Get("definition"); d.IsObject() {
		return d.Get("states"), true
	}
	ws := root.Get("workflows")
	if !ws.IsObject() {
		return gjson.Result{}, false
	}
	var states gjson.Result
	name := root.Get("default").String()
	ws.ForEach(func(k, v gjson.Result) bool {
		if k.String() == name {
			states = v.Get("states")
		}
		return true
	})
	return states, true
}

// hasChartgateMeta reports whether some state of an XState machine has
// meta.chartgate: the machine is a chartgate workflow, which serve and hook
// load with package workflow.
func hasChartgateMeta(data []byte) bool {
	// gjson finds a nested key by scanning each ancestor's text again: a
	// file that cannot hold the key (neither its name nor an escape that
	// could spell it) is answered without the walk.
	if !bytes.Contains(data, []byte("chartgate")) && !bytes.Contains(data, []byte(`\u`)) {
		return false
	}
	var walk func(state gjson.Result, depth int) bool
	walk = func(state gjson.Result, depth int) bool {
		if depth > 256 || !state.IsObject() {
			return false
		}
		if state.Get("meta.chartgate").Exists() {
			return true
		}
		found := false
		state.Get("states").ForEach(func(_, child gjson.Result) bool {
			found = walk(child, depth+1)
			return !found
		})
		return found
	}
	return gjson.ValidBytes(data) && walk(gjson.ParseBytes(data), 0)
}

// validateWorkflow loads a workflow as serve and hook do (package
// workflow: a Statewright file, or an XState machine with meta.chartgate,
// whose guards the workflow declares and whose warnings are errors); it
// returns the compiled machine, the number of states of the file and its
// warnings, or the problems, with their paths in the file. (The machine a
// Statewright workflow compiles to is chartgate's own: its warnings, if
// any, have paths in that machine.)
func validateWorkflow(src *source, format workflow.Format, strict bool, subflows string) (*statechart.Machine, int, []problem) {
	opts := &workflow.Options{Format: format, Statechart: statechart.Options{Strict: strict}}
	if subflows != "" {
		resolve := workflow.DirResolver(subflows) // manifest.json names, or DIR/<name>.json
		opts.Resolve = func(name string) ([]byte, error) {
			if name == "" || name == "." || name == ".." {
				return nil, fmt.Errorf("%q is not a file name in %s", name, subflows)
			}
			data, err := resolve(name)
			if err != nil {
				var pe *os.PathError
				if errors.As(err, &pe) {
					err = fmt.Errorf("%s: %w", pe.Path, pe.Err)
				}
				return nil, err
			}
			return bytes.TrimPrefix(data, utf8BOM), nil
		}
	}
	w, err := workflow.Load(src.data, opts)
	if err != nil {
		return nil, 0, problems(err, "")
	}
	var warnings []problem
	if ws := w.Machine.Warnings(); len(ws) > 0 {
		warnings = problems(ws, "")
	}
	n := len(w.Machine.StateIDs()) - 1
	if format == workflow.FormatStatewright {
		states, ok := gatewayStates(src.data)
		if !ok {
			states = gjson.GetBytes(src.data, "states")
		}
		n = len(states.Map())
	}
	return w.Machine, n, warnings
}

// statewrightPaths puts the problems mcpbind finds in a compiled
// Statewright workflow (tool names the server does not have) at their
// place in the file: states.S.meta.mcp.tools[i] is states.S.allowed_tools[i]
// (and deny, disallowed_tools), also for the copies of S in a fork. The
// same problem found in several copies is given once; problems of the
// states the compilation adds (approvals, forks) are those of the states
// they come from.
func statewrightPaths(probs []problem, file []byte) []problem {
	states := gjson.GetBytes(file, "states")
	var out []problem
	seen := map[string]bool{}
	for _, p := range probs {
		segs := jsonx.Path(p.path).Segments()
		n := len(segs)
		if n >= 4 && segs[n-4] == "meta" && segs[n-3] == "mcp" && (segs[n-2] == "tools" || segs[n-2] == "deny") && n >= 5 {
			key := segs[n-5]
			if !stateExists(states, key) {
				continue // a state the compilation added
			}
			field := "allowed_tools"
			if segs[n-2] == "deny" {
				field = "disallowed_tools"
			}
			p.path = string(jsonx.Path("states").Key(key).Join(jsonx.Path(field + "[" + segs[n-1] + "]")))
		}
		if id := p.path + "\x00" + p.msg; !seen[id] {
			seen[id] = true
			out = append(out, p)
		}
	}
	return out
}

func stateExists(states gjson.Result, key string) bool {
	found := false
	states.ForEach(func(k, _ gjson.Result) bool {
		found = k.String() == key
		return !found
	})
	return found
}
