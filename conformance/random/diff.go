package random

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/chartgate/chartgate/conformance"
)

// Options configures a differential run.
type Options struct {
	Seed   uint64
	N      int    // number of machines
	Start  int    // index of the first machine (default 0)
	Config Config // generator shape
	// Oracle is the running XState oracle; required.
	Oracle *Oracle
	// OutDir, when set, receives every shrunk difference as the case file
	// OutDir/random/<seed>-<index>.json, its expected snapshots recorded by
	// the oracle. Use conformance/cases to add them to the corpus.
	OutDir string
	// NoShrink reports differences as generated.
	NoShrink bool
	// ShrinkAtMost, when positive, shrinks only the first that many
	// differences; later ones are reported as generated.
	ShrinkAtMost int
	// MaxShrinkChecks bounds the oracle round trips spent shrinking one
	// difference (default 4000).
	MaxShrinkChecks int
	// Log receives one line per difference and per invalid machine; nil
	// for none.
	Log io.Writer
}

// Difference is a machine on which XState and chartgate disagree.
type Difference struct {
	Index    int
	Name     string // random/<seed>-<index>
	Original string // the first difference of the generated machine
	Mismatch string // the first difference of the shrunk machine
	Case     []byte // the shrunk case with its recorded expected snapshots, indented
	Path     string // where Case was written, if OutDir was set
	Machine  *Machine
}

// Result summarizes a differential run.
type Result struct {
	Machines int
	// Invalid counts machines XState could not build or run to the end
	// without an infinite loop, or that the oracle did not answer in time.
	// The generator is meant to make none.
	Invalid       int
	InvalidErrors []string // the first few, with machine names
	Differences   []Difference
	Elapsed       time.Duration
}

// Summary is the line "N machines, D differences".
func (r *Result) Summary() string {
	s := fmt.Sprintf("%d machines, %d differences", r.Machines, len(r.Differences))
	if r.Invalid > 0 {
		s += fmt.Sprintf(" (%d invalid machines)", r.Invalid)
	}
	return s
}

// outcome is what one machine did on both sides.
type outcome struct {
	invalid  string                // why XState could not judge the machine
	mismatch *conformance.Mismatch // nil when both agree
	filled   []byte                // the case filled by the oracle
}

// Run generates opts.N machines, records each with the oracle, checks it on
// chartgate's statechart interpreter and shrinks every difference.
func Run(ctx context.Context, opts Options) (*Result, error) {
	if opts.Oracle == nil {
		return nil, errors.New("random.Run needs an Oracle")
	}
	if opts.MaxShrinkChecks <= 0 {
		opts.MaxShrinkChecks = 4000
	}
	start := time.Now()
	res := &Result{}
	gen := &Generator{Seed: opts.Seed, Config: opts.Config, next: opts.Start}
	for i := 0; i < opts.N; i++ {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		m := gen.Next()
		res.Machines++
		out, err := check(ctx, opts.Oracle, m, m.Name(), "")
		if err != nil {
			return res, err
		}
		if out.invalid != "" {
			res.Invalid++
			msg := fmt.Sprintf("%s: %s", m.Name(), out.invalid)
			if len(res.InvalidErrors) < 10 {
				res.InvalidErrors = append(res.InvalidErrors, msg)
			}
			logf(opts.Log, "invalid %s\n", msg)
			continue
		}
		if out.mismatch == nil {
			continue
		}
		d := Difference{Index: m.Index, Name: m.Name(), Original: out.mismatch.String(), Machine: m}
		shrunk, final := m, out
		if !opts.NoShrink && (opts.ShrinkAtMost <= 0 || len(res.Differences) < opts.ShrinkAtMost) {
			shrunk, final, err = Shrink(ctx, opts.Oracle, m, out.mismatch, opts.MaxShrinkChecks)
			if err != nil {
				return res, err
			}
		}
		// Record the reproduction once more, with its description.
		desc := fmt.Sprintf("Found by random differential testing (seed %d, machine %d), shrunk. chartgate differed from XState at %s.",
			m.Seed, m.Index, where(final.mismatch))
		last, err := check(ctx, opts.Oracle, shrunk, m.Name(), desc)
		if err != nil {
			return res, err
		}
		if last.mismatch != nil && last.invalid == "" {
			final = last
		}
		d.Machine = shrunk
		d.Mismatch = final.mismatch.String()
		d.Case = indent(final.filled)
		if opts.OutDir != "" {
			p := filepath.Join(opts.OutDir, filepath.FromSlash(m.Name())+".json")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return res, err
			}
			if err := os.WriteFile(p, d.Case, 0o644); err != nil {
				return res, err
			}
			d.Path = p
		}
		res.Differences = append(res.Differences, d)
		logf(opts.Log, "DIFF %s\n  generated: %s\n  shrunk:    %s\n", d.Name, d.Original, d.Mismatch)
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

func where(m *conformance.Mismatch) string {
	switch {
	case m == nil:
		return "no step"
	case m.Err != nil:
		return "compile time"
	case m.Step == 0:
		return "the initial snapshot"
	case m.Step < 0:
		return "the final status (error or not)"
	}
	return fmt.Sprintf("step %d (%s)", m.Step, m.Case.Steps[m.Step-1])
}

func logf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format, args...)
	}
}

func indent(compact []byte) []byte {
	var b bytes.Buffer
	if err := json.Indent(&b, compact, "", "  "); err != nil {
		return compact
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// check records m with the oracle and replays it on the statechart engine.
// A returned error means the oracle itself failed.
func check(ctx context.Context, o *Oracle, m *Machine, name, description string) (outcome, error) {
	data := m.CaseJSON(name, description)
	filled, oerr, err := o.Record(data)
	if errors.Is(err, ErrOracleTimeout) {
		return outcome{invalid: err.Error()}, nil
	}
	if err != nil {
		return outcome{}, err
	}
	if oerr != "" {
		return outcome{invalid: "XState: " + oerr}, nil
	}
	c, err := conformance.ParseCase(filled, name+".json")
	if err != nil {
		return outcome{}, fmt.Errorf("oracle answer for %s: %w", name, err)
	}
	if strings.Contains(c.ExpectedError, "Infinite loop") {
		return outcome{invalid: "XState: " + c.ExpectedError}, nil
	}
	return outcome{mismatch: safeCheck(ctx, c), filled: filled}, nil
}

// safeCheck runs conformance.Check, turning a panic of the engine into a
// difference.
func safeCheck(ctx context.Context, c *conformance.Case) (m *conformance.Mismatch) {
	defer func() {
		if p := recover(); p != nil {
			m = &conformance.Mismatch{Case: c, Err: fmt.Errorf("panic: %v", p)}
		}
	}()
	return conformance.Check(ctx, c, conformance.RunStatechart)
}
