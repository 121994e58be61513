package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart"
)

// cmdValidate checks every FILE and prints, on stdout, either every problem
// (one line each: FILE: path: message) or FILE: ok (N states). N counts
// the state nodes below the machine root, history states included.
//
// The machine's meta.mcp (the tool bindings of package mcpbind) is checked
// too. With --tools, the names it gives are checked against the server's
// tool names: a name no tool has is a problem (a misspelt name leaves the
// tool it meant ungated), and the tools the workflow does not name are
// listed in a note.
func cmdValidate(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("validate")
	strict := fs.Bool("strict", false, "also report actions and delays that have no implementation")
	toolList := fs.String("tools", "", "the server's tool names, comma-separated: check the machine's meta.mcp names against them")
	files, err := parseArgs(fs, args)
	if err != nil {
		return argsError(stdout, stderr, "validate", err)
	}
	if len(files) == 0 {
		return usageError(stderr, "validate", errors.New("missing FILE"))
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
		m, probs := src.compile(statechart.Options{Strict: *strict})
		var unnamed []string
		if len(probs) == 0 {
			unnamed, probs = checkBindings(m, tools(*toolList), src.prefix())
		}
		if len(probs) > 0 {
			for _, p := range probs {
				fmt.Fprintln(stdout, p.format(displayName(name)))
			}
			code = exitFail
			continue
		}
		n := len(m.StateIDs()) - 1
		unit := "states"
		if n == 1 {
			unit = "state"
		}
		fmt.Fprintf(stdout, "%s: ok (%d %s)\n", displayName(name), n, unit)
		if len(unnamed) > 0 {
			fmt.Fprintf(stdout, "%s: note: tools the workflow does not name (always visible; refused with mcpbind.Options.DefaultDeny unless meta.mcp.ungated lists them): %s\n",
				displayName(name), strings.Join(unnamed, ", "))
		}
	}
	return code
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
// tools are given, its names against them. It returns the tools the
// workflow does not name, and the problems, their paths under prefix.
func checkBindings(m *statechart.Machine, tools []string, prefix string) ([]string, []problem) {
	gate, err := mcpbind.New(m.Engine(), &mcpbind.Options{Logger: slog.New(slog.DiscardHandler)})
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
