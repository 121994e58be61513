package main

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/chartgate/chartgate/statechart"
)

// cmdValidate checks every FILE and prints, on stdout, either every problem
// (one line each: FILE: path: message) or FILE: ok (N states). N counts
// the state nodes below the machine root, history states included.
func cmdValidate(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("validate")
	strict := fs.Bool("strict", false, "also report actions and delays that have no implementation")
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
	}
	return code
}
