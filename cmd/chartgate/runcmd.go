package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/workflow"
)

// traceLine is one line of `chartgate run`: the snapshot after a step.
type traceLine struct {
	Step    int               `json:"step"`
	Event   json.RawMessage   `json:"event"`             // null for the initial snapshot and +DURATION steps
	Advance *float64          `json:"advance,omitempty"` // ms the clock moved, for +DURATION steps
	Value   any               `json:"value"`
	Status  statechart.Status `json:"status"`
	Context map[string]any    `json:"context"`
	Tags    []string          `json:"tags,omitempty"`
	Output  any               `json:"output,omitempty"` // only when done
	Error   string            `json:"error,omitempty"`  // only with status error
	// Children are the child actors, by id: src, status, output or error,
	// and a child machine's value and context.
	Children map[string]traceChild `json:"children,omitempty"`
	// Emitted are the events the machine emitted during the step.
	Emitted []json.RawMessage `json:"emitted,omitempty"`
}

// traceChild is one child actor in a trace line.
type traceChild struct {
	Src     string            `json:"src"`
	Status  statechart.Status `json:"status"`
	Output  any               `json:"output,omitempty"`
	Error   any               `json:"error,omitempty"`
	Value   any               `json:"value,omitempty"`
	Context map[string]any    `json:"context,omitempty"`
}

// cmdRun starts an actor and prints its snapshot before the first step and
// after each one.
func cmdRun(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("run")
	var steps stepList
	fs.Var(&steps, "events", "events to send")
	clockName := fs.String("clock", "simulated", "simulated, eventloop or real")
	inputFlag := fs.String("input", "", "the machine's input, as JSON")
	allowMissingGuards := fs.Bool("allow-missing-guards", false, "run a machine whose guards have no implementation (evaluating one is an error)")
	format := fs.String("format", "auto", "the file's format: auto, xstate or statewright")
	subflows := fs.String("subflows", "", "the directory of the Statewright workflows invoke names (default: the file's)")
	file, code, ok := oneFile(fs, "run", args, stdout, stderr)
	if !ok {
		return code
	}
	switch workflow.Format(*format) {
	case "auto", workflow.FormatXState, workflow.FormatStatewright:
	default:
		return usageError(stderr, "run", fmt.Errorf("--format %q: use auto, xstate or statewright", *format))
	}
	var clock statechart.Clock
	var advance func(time.Duration)
	switch *clockName {
	case "simulated":
		sim := statechart.NewSimulatedClock()
		clock, advance = sim, sim.Advance
	case "eventloop":
		loop := statechart.NewEventLoopClock()
		clock, advance = loop, loop.Advance
	case "real":
		clock = statechart.RealClock{}
	default:
		return usageError(stderr, "run", fmt.Errorf("unknown clock %q (simulated, eventloop or real)", *clockName))
	}
	var input json.RawMessage
	if *inputFlag != "" {
		if !json.Valid([]byte(*inputFlag)) {
			return usageError(stderr, "run", fmt.Errorf("--input: not valid JSON: %s", *inputFlag))
		}
		input = json.RawMessage(*inputFlag)
	}
	withData := false
	for _, st := range steps {
		withData = withData || st.event != nil && len(st.event.Data) > 0
	}
	src, m, code := loadRunnable(file, workflow.Format(*format), *subflows, withData, statechart.Options{AllowMissingGuards: *allowMissingGuards}, stdin, stderr)
	if code != exitOK {
		return code
	}
	if input == nil {
		input = src.input()
	}

	ctx := context.Background()
	opts := &statechart.ActorOptions{Clock: clock}
	if input != nil {
		opts.Input = input
	}
	actor := statechart.NewActor(m, opts)
	var emitted []json.RawMessage
	actor.On("*", func(ev statechart.Event) { emitted = append(emitted, eventJSON(ev)) })
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	emit := func(i int, st *step, err error) int {
		line := snapshotLine(i, st, actor.Snapshot(), err)
		line.Emitted, emitted = emitted, nil
		if e := enc.Encode(line); e != nil {
			fmt.Fprintf(stderr, "chartgate run: %v\n", e)
			return exitFail
		}
		if line.Error != "" {
			fmt.Fprintf(stderr, "chartgate run: %s\n", line.Error)
			return exitFail
		}
		return exitOK
	}
	if code := emit(0, nil, actor.Start(ctx)); code != exitOK {
		return code
	}
	for i := range steps {
		st := &steps[i]
		var err error
		switch {
		case st.event != nil:
			err = actor.Send(ctx, *st.event)
		case advance != nil:
			advance(st.advance)
		default:
			time.Sleep(st.advance)
			settle(actor, clock)
		}
		if code := emit(i+1, st, err); code != exitOK {
			return code
		}
	}
	return exitOK
}

// loadRunnable reads FILE for run. A workflow is loaded as serve and
// validate load it (package workflow): a Statewright workflow (detected,
// or forced with --format statewright), with its guards, its transition
// data merged into the context and its subflows from subflows (default:
// the file's directory), or an XState machine with meta.chartgate. Any
// other file, and a case file, is an XState machine. A file both formats
// read (states with only "on" and "type": "final") runs as XState in auto
// format unless an event carries data (withData): the formats differ only
// there (Statewright merges the data into the context), so such a run is
// refused, naming --format.
func loadRunnable(name string, format workflow.Format, subflows string, withData bool, opts statechart.Options, stdin io.Reader, stderr io.Writer) (*source, *statechart.Machine, int) {
	src, err := readSource(name, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "chartgate: %v\n", err)
		return nil, nil, exitFail
	}
	if src.isCase {
		m, code := compileSource("run", src, opts, stderr)
		return src, m, code
	}
	if format == "auto" {
		if _, err := workflow.Load(src.data, nil); withData && errors.Is(err, workflow.ErrAmbiguousFormat) {
			fmt.Fprintf(stderr, "chartgate run: %s: %v\n", displayName(name), err)
			return nil, nil, exitUsage
		}
		format = workflow.DetectFormat(src.data)
	}
	if format != workflow.FormatStatewright && !hasChartgateMeta(src.data) {
		m, code := compileSource("run", src, opts, stderr)
		return src, m, code
	}
	m, _, probs := validateWorkflow(src, format, false, subflowsOf(subflows, name))
	for _, p := range probs {
		fmt.Fprintln(stderr, p.format(displayName(name)))
	}
	if m == nil {
		return nil, nil, exitFail
	}
	return src, m, exitOK
}

// snapshotLine describes the snapshot after step i (st nil: the initial
// snapshot). err is what sending the event returned.
func snapshotLine(i int, st *step, s *statechart.Snapshot, err error) traceLine {
	line := traceLine{
		Step:    i,
		Value:   s.Value(),
		Status:  s.Status(),
		Context: s.Context(),
		Tags:    s.Tags(),
	}
	if line.Context == nil {
		line.Context = map[string]any{}
	}
	for _, c := range s.Children() {
		if line.Children == nil {
			line.Children = map[string]traceChild{}
		}
		tc := traceChild{Src: c.Src, Status: c.Status}
		if c.HasOutput {
			tc.Output = c.Output
		}
		if c.Status == statechart.StatusError {
			tc.Error = c.Error
			if e, ok := c.Error.(error); ok {
				tc.Error = e.Error()
			}
		}
		if c.Snapshot != nil {
			tc.Value, tc.Context = c.Snapshot.Value(), c.Snapshot.Context()
		}
		line.Children[c.ID] = tc
	}
	if st != nil {
		if st.event != nil {
			line.Event = eventJSON(*st.event)
		} else {
			ms := float64(st.advance) / float64(time.Millisecond)
			line.Advance = &ms
		}
	}
	switch s.Status() {
	case statechart.StatusDone:
		line.Output = s.Output()
	case statechart.StatusError:
		if err == nil {
			err = s.Err()
		}
		if err == nil {
			err = errors.New("the actor failed")
		}
	}
	if err != nil {
		line.Error = err.Error()
	}
	return line
}

// eventJSON writes an event as one flat object with "type" first and the
// other fields in sorted order.
func eventJSON(ev statechart.Event) json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"type":`)
	writeJSON(&b, ev.Type)
	keys := make([]string, 0, len(ev.Data))
	for k := range ev.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteByte(',')
		writeJSON(&b, k)
		b.WriteByte(':')
		writeJSON(&b, ev.Data[k])
	}
	b.WriteByte('}')
	return b.Bytes()
}

// writeJSON appends v as compact JSON, without escaping <, > and &. The
// values come from parsed JSON, so they always marshal.
func writeJSON(b *bytes.Buffer, v any) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	b.Truncate(b.Len() - 1) // Encode ends with a newline
}

// settle waits, with the real clock, until the delayed events that are due
// have been processed by the actor's timer goroutines (one second at most).
func settle(a *statechart.Actor, clock statechart.Clock) {
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		s := a.Snapshot()
		due, ok := s.NextDue()
		if s.Status() != statechart.StatusActive || !ok || due.After(clock.Now()) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}
