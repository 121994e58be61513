package main

import (
	"fmt"
	"io"

	"github.com/chartgate/chartgate/internal/diagram"
	"github.com/chartgate/chartgate/statechart"
)

// cmdDiagram draws the machine's structure (package internal/diagram).
// Missing guard implementations do not matter for a drawing, so they are
// allowed (and, like every warning, reported on stderr).
func cmdDiagram(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("diagram")
	format := fs.String("format", "mermaid", "mermaid, dot or svg")
	file, code, ok := oneFile(fs, "diagram", args, stdout, stderr)
	if !ok {
		return code
	}
	var render func(*diagram.Chart) string
	switch *format {
	case "mermaid":
		render = (*diagram.Chart).Mermaid
	case "dot":
		render = (*diagram.Chart).DOT
	case "svg":
		render = func(c *diagram.Chart) string { return c.SVG(nil) }
	default:
		return usageError(stderr, "diagram", fmt.Errorf("unknown format %q (mermaid, dot or svg)", *format))
	}
	src, m, code := loadSource("diagram", file, statechart.Options{AllowMissingGuards: true}, stdin, stderr)
	if code != exitOK {
		return code
	}
	if _, err := io.WriteString(stdout, render(diagram.New(m, src.machine))); err != nil {
		fmt.Fprintf(stderr, "chartgate diagram: %v\n", err)
		return exitFail
	}
	return exitOK
}
