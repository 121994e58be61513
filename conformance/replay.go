// Package conformance replays conformance cases, machines with event traces
// whose expected snapshots were recorded from real XState v5, against
// chartgate's engines, and reports the first difference of each case.
//
// A case (format v1) is a machine, declarative guards/actions/delays, steps
// ({"event": {...}} or {"advance": ms}) and the expected snapshot before the
// first step and after each one. Format v2 adds machine input, declarative
// actors, the event-loop clock and persist/restore/query steps, which
// RunStatechart runs (RunFlat does not: see format_v2.go). The format
// is described in docs/conformance-case-format.md; cases live under
// conformance/cases/; the node program in conformance/oracle/ records their
// expected snapshots, and its README says what it does with every key.
package conformance

// Re-record every case's expected snapshots from the pinned XState (needs
// node and npm); CI runs `node record.mjs --check ../cases` to prove the
// recorded corpus and the pinned XState agree.
//go:generate sh -c "cd oracle && npm ci --no-audit --no-fund --loglevel=error && node record.mjs ../cases"

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/chartgate/chartgate/statechart"
)

// Case is one conformance case file.
type Case struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Machine     json.RawMessage `json:"machine"`
	Guards      json.RawMessage `json:"guards,omitempty"`
	Actions     json.RawMessage `json:"actions,omitempty"`
	Delays      json.RawMessage `json:"delays,omitempty"`
	// Input, Actors and Clock are format v2 (see format_v2.go): the
	// machine's input, the declarative actors its invoke/spawn src names
	// refer to, and "simulated" (the default) or "eventloop".
	Input  json.RawMessage `json:"input,omitempty"`
	Actors json.RawMessage `json:"actors,omitempty"`
	Clock  *string         `json:"clock,omitempty"`
	// Snapshot, format v2, is a persisted snapshot the actor starts from
	// instead of the machine's initial state (the input is then unused).
	Snapshot      json.RawMessage   `json:"snapshot,omitempty"`
	Steps         []Step            `json:"steps"`
	Expected      []json.RawMessage `json:"expected"`
	ExpectedError string            `json:"expectedError,omitempty"`

	// Path is the file the case was read from.
	Path string `json:"-"`
	raw  []byte
}

// Step is one step of a case: an event to send, or milliseconds to advance
// the simulated clock by; in format v2 also a persist, restore or query step.
// Exactly one field is set.
type Step struct {
	Event   *statechart.Event `json:"event,omitempty"`
	Advance *float64          `json:"advance,omitempty"`
	Persist *string           `json:"persist,omitempty"`
	Restore *string           `json:"restore,omitempty"`
	Query   *Query            `json:"query,omitempty"`
}

func (s Step) String() string {
	switch {
	case s.Event != nil:
		b, _ := json.Marshal(s.Event)
		return "event " + string(b)
	case s.Advance != nil:
		return fmt.Sprintf("advance %gms", *s.Advance)
	case s.Persist != nil:
		return fmt.Sprintf("persist %q", *s.Persist)
	case s.Restore != nil:
		return fmt.Sprintf("restore %q", *s.Restore)
	case s.Query != nil:
		return "query " + s.Query.String()
	}
	return "empty step"
}

// ReadCase reads one case file.
func ReadCase(path string) (*Case, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseCase(data, path)
}

// ParseCase parses a case from JSON; path is used in messages only.
func ParseCase(data []byte, path string) (*Case, error) {
	var c Case
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(c.Machine) == 0 {
		return nil, fmt.Errorf("%s: no \"machine\"", path)
	}
	if err := c.checkV2(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if c.Name == "" {
		c.Name = strings.TrimSuffix(filepath.Base(path), ".json")
	}
	c.Path, c.raw = path, data
	return &c, nil
}

// ReadDir reads every *.json case file under dir, recursively, sorted by path.
func ReadDir(dir string) ([]*Case, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "node_modules" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".json") {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	cases := make([]*Case, 0, len(paths))
	for _, p := range paths {
		c, err := ReadCase(p)
		if err != nil {
			return nil, err
		}
		cases = append(cases, c)
	}
	return cases, nil
}

// Snapshot is the comparable form of a snapshot in a case file: value,
// status, context, tags and output, and children (format v2) when it has
// any.
func Snapshot(s *statechart.Snapshot) map[string]any {
	out := map[string]any{
		"value":   s.Value(),
		"status":  string(s.Status()),
		"context": s.Context(),
	}
	if tags := s.Tags(); len(tags) > 0 {
		t := make([]any, len(tags))
		for i, x := range tags {
			t[i] = x
		}
		out["tags"] = t
	}
	if s.Status() == statechart.StatusDone && s.HasOutput() {
		out["output"] = s.Output()
	}
	if children := s.Children(); len(children) > 0 {
		list := make(map[string]any, len(children))
		for _, c := range children {
			list[c.ID] = childSnapshot(c)
		}
		out["children"] = list
	}
	return out
}

// childSnapshot is the comparable form of a child: src and status, output
// when done, error when failed (a Go error is XState's Error object through
// JSON, {}), and a child machine's value and context.
func childSnapshot(c statechart.Child) map[string]any {
	out := map[string]any{"src": c.Src, "status": string(c.Status)}
	if c.Status == statechart.StatusDone && c.HasOutput {
		out["output"] = c.Output
	}
	if c.Status == statechart.StatusError && c.Error != nil {
		if _, isErr := c.Error.(error); isErr {
			out["error"] = map[string]any{}
		} else {
			out["error"] = c.Error
		}
	}
	if c.Snapshot != nil {
		out["value"] = c.Snapshot.Value()
		out["context"] = c.Snapshot.Context()
	}
	return out
}

// Runner runs a case on one engine and returns the snapshot before the
// first step and after each step, in the comparable form of [Snapshot].
// errored reports whether the engine ended in an error.
type Runner func(ctx context.Context, c *Case) (snapshots []map[string]any, errored bool, err error)

// Mismatch describes how a case failed.
type Mismatch struct {
	Case *Case
	Step int // index into expected: 0 is the initial snapshot, i the snapshot after steps[i-1]; -1 when not about a step
	Want string
	Got  string
	Err  error // the case could not run at all
}

func (m *Mismatch) String() string {
	if m.Err != nil {
		return fmt.Sprintf("%s: %v", m.Case.Name, m.Err)
	}
	where := "initial snapshot"
	if m.Step > 0 {
		where = fmt.Sprintf("step %d (%s)", m.Step, m.Case.Steps[m.Step-1])
	} else if m.Step < 0 {
		where = "error"
	}
	return fmt.Sprintf("%s: %s: want %s, got %s", m.Case.Name, where, m.Want, m.Got)
}

// Check runs the case with run and compares every snapshot with the
// recorded ones. It returns nil when they all agree.
func Check(ctx context.Context, c *Case, run Runner) *Mismatch {
	if len(c.Expected) != len(c.Steps)+1 {
		return &Mismatch{Case: c, Err: fmt.Errorf("has %d expected snapshots for %d steps; record it with the oracle", len(c.Expected), len(c.Steps))}
	}
	got, errored, err := run(ctx, c)
	if err != nil {
		return &Mismatch{Case: c, Err: err}
	}
	for i, raw := range c.Expected {
		var want any
		if err := json.Unmarshal(raw, &want); err != nil {
			return &Mismatch{Case: c, Err: fmt.Errorf("expected[%d]: %w", i, err)}
		}
		if i >= len(got) {
			return &Mismatch{Case: c, Step: i, Want: compact(raw), Got: "nothing"}
		}
		g := normalize(got[i])
		if !equalJSON(want, g) {
			gb, _ := json.Marshal(g)
			return &Mismatch{Case: c, Step: i, Want: compact(raw), Got: string(gb)}
		}
	}
	if (c.ExpectedError != "") != errored {
		want, got := "no error", "an error"
		if c.ExpectedError != "" {
			want, got = fmt.Sprintf("error %q", c.ExpectedError), "no error"
		}
		return &Mismatch{Case: c, Step: -1, Want: want, Got: got}
	}
	return nil
}

func compact(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// normalize round-trips a value through JSON so it compares with decoded JSON.
func normalize(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func equalJSON(a, b any) bool {
	ab, _ := json.Marshal(a)
	bb, _ := json.Marshal(b)
	return string(ab) == string(bb)
}
