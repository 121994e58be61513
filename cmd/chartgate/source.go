package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/tidwall/gjson"

	"github.com/chartgate/chartgate/internal/jsonx"
	"github.com/chartgate/chartgate/statechart"
)

// source is one input file: a machine config, or a case file holding one.
type source struct {
	name    string // as given on the command line ("-": stdin)
	data    []byte // the whole file
	machine []byte // the machine config: data itself, or the case's "machine"
	isCase  bool
}

// problem is one error or warning found in a file, with the JSON path of
// the offending value relative to the file (empty: the file itself).
type problem struct {
	path    string
	msg     string
	warning bool
	// missingGuard: the problem is a guard without implementation
	// (statechart.ErrGuardNotImplemented), which --allow-missing-guards
	// accepts.
	missingGuard bool
}

// format writes the problem as FILE: path: message, or
// FILE: path: warning: message.
func (p problem) format(file string) string {
	msg := p.msg
	if p.warning {
		msg = "warning: " + msg
	}
	if p.path == "" {
		return file + ": " + msg
	}
	return file + ": " + p.path + ": " + msg
}

// hasErrors reports whether some of probs are errors, not warnings.
func hasErrors(probs []problem) bool {
	for _, p := range probs {
		if !p.warning {
			return true
		}
	}
	return false
}

// stdinName is the FILE that stands for standard input, and stdinPretty
// what messages call it.
const (
	stdinName   = "-"
	stdinPretty = "<stdin>"
)

// displayName is how messages name the file given as name.
func displayName(name string) string {
	if name == stdinName {
		return stdinPretty
	}
	return name
}

// utf8BOM is the byte order mark some editors put at the start of a UTF-8
// file. JSON forbids it (RFC 8259 §8.1) and statechart.Compile refuses it,
// so the CLI drops it.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// readSource reads a file ("-": stdin), drops a leading UTF-8 byte order
// mark, and tells a case file (a top-level object with a "machine" object)
// from a plain machine config.
func readSource(name string, stdin io.Reader) (*source, error) {
	var data []byte
	var err error
	if name == stdinName {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(name)
	}
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s: cannot read: %w", displayName(name), err)
	}
	data = bytes.TrimPrefix(data, utf8BOM)
	s := &source{name: name, data: data, machine: data}
	if raw, ok := caseMachine(data); ok {
		s.machine, s.isCase = raw, true
	}
	return s, nil
}

// caseMachine returns the "machine" object of a case file: data is a JSON
// object whose (last) "machine" key holds an object.
func caseMachine(data []byte) ([]byte, bool) {
	if !gjson.ValidBytes(data) {
		return nil, false
	}
	top := gjson.ParseBytes(data)
	if !top.IsObject() {
		return nil, false
	}
	var machine gjson.Result
	top.ForEach(func(k, v gjson.Result) bool {
		if k.String() == "machine" {
			machine = v
		}
		return true
	})
	if !machine.IsObject() {
		return nil, false
	}
	return []byte(machine.Raw), true
}

// compile compiles the machine with the implementations a case file
// declares. It returns every problem found, warnings included, paths
// relative to the file; the machine is nil when some are errors.
func (s *source) compile(opts statechart.Options) (*statechart.Machine, []problem) {
	var probs []problem
	if s.isCase {
		impl, err := statechart.ParseImplementationsWith(s.data, &statechart.Options{AllowMissingGuards: opts.AllowMissingGuards, Strict: opts.Strict})
		probs = append(probs, problems(err, "")...)
		if err != nil {
			s.stubBroken(&impl)
		}
		opts.Implementations = opts.Implementations.Merge(impl)
	}
	m, err := statechart.Compile(s.machine, &opts)
	probs = append(probs, problems(err, s.prefix())...)
	if hasErrors(probs) {
		return nil, probs
	}
	if ws := m.Warnings(); len(ws) > 0 {
		probs = append(probs, problems(ws, s.prefix())...)
	}
	return m, probs
}

// prefix is the JSON path of the machine in the file.
func (s *source) prefix() string {
	if s.isCase {
		return "machine"
	}
	return ""
}

// stubBroken gives the guards and actions of a case file that failed to
// parse (and so were reported already) a placeholder implementation, so
// that Compile does not report them a second time as missing.
func (s *source) stubBroken(impl *statechart.Implementations) {
	var top struct {
		Guards  map[string]json.RawMessage `json:"guards"`
		Actions map[string]json.RawMessage `json:"actions"`
	}
	if json.Unmarshal(s.data, &top) != nil {
		return
	}
	broken := errors.New("invalid declaration")
	for name := range top.Guards {
		if _, ok := impl.Guards[name]; !ok {
			impl.Guards[name] = func(context.Context, statechart.GuardArgs) (bool, error) { return false, broken }
		}
	}
	for name := range top.Actions {
		if _, ok := impl.Actions[name]; !ok {
			impl.Actions[name] = func(context.Context, *statechart.ActionArgs) error { return broken }
		}
	}
}

// problems turns an error of statechart's loader (or a list of warnings)
// into problems, with prefix put before every path.
func problems(err error, prefix string) []problem {
	if err == nil {
		return nil
	}
	var list statechart.ErrorList
	if !errors.As(err, &list) {
		return []problem{{path: prefix, msg: err.Error()}}
	}
	out := make([]problem, len(list))
	for i, e := range list {
		out[i] = problem{path: string(jsonx.Path(prefix).Join(jsonx.Path(e.Path))), msg: e.Msg, warning: e.Warning,
			missingGuard: errors.Is(e, statechart.ErrGuardNotImplemented)}
	}
	return out
}

// load reads and compiles FILE ("-": stdin) for the commands that use the
// machine, and prints its warnings on stderr; on failure it reports the
// errors there too and returns exitFail. cmd names the command, for the
// hint a guard without implementation gets when cmd has the flag
// --allow-missing-guards.
func load(cmd, name string, opts statechart.Options, stdin io.Reader, stderr io.Writer) (*statechart.Machine, int) {
	_, m, code := loadSource(cmd, name, opts, stdin, stderr)
	return m, code
}

// loadSource is load that also returns the source.
func loadSource(cmd, name string, opts statechart.Options, stdin io.Reader, stderr io.Writer) (*source, *statechart.Machine, int) {
	src, err := readSource(name, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "chartgate: %v\n", err)
		return nil, nil, exitFail
	}
	m, code := compileSource(cmd, src, opts, stderr)
	return src, m, code
}

// compileSource is loadSource for a source already read.
func compileSource(cmd string, src *source, opts statechart.Options, stderr io.Writer) (*statechart.Machine, int) {
	name := src.name
	m, probs := src.compile(opts)
	missingGuard := false
	for _, p := range probs {
		fmt.Fprintln(stderr, p.format(displayName(name)))
		missingGuard = missingGuard || (p.missingGuard && !p.warning)
	}
	if m == nil {
		if missingGuard && !opts.AllowMissingGuards {
			fmt.Fprintf(stderr, "chartgate %s: --allow-missing-guards runs a machine whose guards have no implementation (evaluating one then puts it in status error, as in XState)\n", cmd)
		}
		return nil, exitFail
	}
	return m, exitOK
}

// input is the "input" of a case file, nil for none.
func (s *source) input() json.RawMessage {
	if !s.isCase {
		return nil
	}
	var top struct {
		Input json.RawMessage `json:"input"`
	}
	if json.Unmarshal(s.data, &top) != nil || len(top.Input) == 0 {
		return nil
	}
	return top.Input
}
