// This file defines what the Go side reads of case format v2 (query steps,
// the clock, the checks on steps and persisted-snapshot names) and
// V2Features, which names the v2 features a case uses. RunStatechart runs
// v2 cases; RunFlat returns an *UnsupportedError for them.

package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/chartgate/chartgate/statechart"
)

// The clocks a case can run on (its "clock" key).
const (
	// ClockSimulated is XState's SimulatedClock, the default: advancing it
	// fires every due timer before any promise settlement is delivered.
	ClockSimulated = "simulated"
	// ClockEventLoop fires one timer at a time, earliest due first and then
	// in registration order, and delivers the promise settlements each timer
	// caused before the next one, like Node's event loop.
	ClockEventLoop = "eventloop"
)

// Query is a query step on the root snapshot. Exactly one field is set:
// Can (snapshot.can(event)), Matches (snapshot.matches(value)), HasTag
// (snapshot.hasTag(tag)) or GetMeta (snapshot.getMeta(); its JSON value is
// ignored, cases write {}).
type Query struct {
	Can     *statechart.Event
	Matches json.RawMessage
	HasTag  *string
	GetMeta json.RawMessage
}

var queryKinds = []string{"can", "matches", "hasTag", "getMeta"}

// UnmarshalJSON reads a query object, which must hold exactly one of the
// keys can, matches, hasTag and getMeta.
func (q *Query) UnmarshalJSON(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil || m == nil {
		return errors.New(`a query is an object with one of the keys "can", "matches", "hasTag", "getMeta"`)
	}
	if len(m) != 1 {
		return fmt.Errorf("a query has exactly one of the keys %s, not %d keys", strings.Join(queryKinds, ", "), len(m))
	}
	for k, v := range m {
		switch k {
		case "can":
			var ev statechart.Event
			if err := json.Unmarshal(v, &ev); err != nil {
				return fmt.Errorf("can: %w", err)
			}
			q.Can = &ev
		case "matches":
			if t := bytes.TrimSpace(v); len(t) == 0 || (t[0] != '"' && t[0] != '{') {
				return errors.New("matches: must be a state value (a string or an object)")
			}
			q.Matches = v
		case "hasTag":
			var tag string
			if err := json.Unmarshal(v, &tag); err != nil {
				return errors.New("hasTag: must be a tag string")
			}
			q.HasTag = &tag
		case "getMeta":
			q.GetMeta = v
		default:
			return fmt.Errorf("unknown query %q (use %s)", k, strings.Join(queryKinds, ", "))
		}
	}
	return nil
}

// MarshalJSON writes the query back in its case-file form.
func (q Query) MarshalJSON() ([]byte, error) {
	switch {
	case q.Can != nil:
		return json.Marshal(map[string]any{"can": q.Can})
	case q.Matches != nil:
		return json.Marshal(map[string]json.RawMessage{"matches": q.Matches})
	case q.HasTag != nil:
		return json.Marshal(map[string]string{"hasTag": *q.HasTag})
	default:
		return []byte(`{"getMeta":{}}`), nil
	}
}

func (q Query) String() string {
	b, _ := json.Marshal(q)
	return string(b)
}

// checkV2 checks the parts of a case that v2 added, and that every step is
// exactly one of event, advance, persist, restore and query.
func (c *Case) checkV2() error {
	if c.Clock != nil && *c.Clock != ClockSimulated && *c.Clock != ClockEventLoop {
		return fmt.Errorf("clock: must be %q or %q, not %q", ClockSimulated, ClockEventLoop, *c.Clock)
	}
	if len(c.Actors) > 0 {
		if t := bytes.TrimSpace(c.Actors); len(t) == 0 || t[0] != '{' {
			return errors.New("actors: must be an object of name -> actor")
		}
	}
	if len(c.Snapshot) > 0 {
		if t := bytes.TrimSpace(c.Snapshot); len(t) == 0 || t[0] != '{' {
			return errors.New("snapshot: must be a persisted snapshot object")
		}
	}
	persisted := map[string]bool{}
	for i, s := range c.Steps {
		n := 0
		for _, set := range []bool{s.Event != nil, s.Advance != nil, s.Persist != nil, s.Restore != nil, s.Query != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			return fmt.Errorf(`steps[%d]: a step is exactly one of {"event": {...}}, {"advance": ms}, {"persist": name}, {"restore": name}, {"query": {...}}`, i)
		}
		switch {
		case s.Persist != nil:
			if *s.Persist == "" {
				return fmt.Errorf("steps[%d].persist: needs a snapshot name", i)
			}
			persisted[*s.Persist] = true
		case s.Restore != nil:
			if !persisted[*s.Restore] {
				return fmt.Errorf("steps[%d].restore: no earlier persist step named %q", i, *s.Restore)
			}
		}
	}
	return nil
}

// V2Features lists, sorted, the format v2 features the case uses: "actors",
// "clock", "input", "persist", "query", "restore", "snapshot". A v1 case
// uses none.
// A case that uses any records `received` in every expected snapshot.
func (c *Case) V2Features() []string {
	set := map[string]bool{}
	if len(c.Input) > 0 {
		set["input"] = true
	}
	if len(c.Actors) > 0 {
		set["actors"] = true
	}
	if c.Clock != nil {
		set["clock"] = true
	}
	if len(c.Snapshot) > 0 {
		set["snapshot"] = true
	}
	for _, s := range c.Steps {
		switch {
		case s.Persist != nil:
			set["persist"] = true
		case s.Restore != nil:
			set["restore"] = true
		case s.Query != nil:
			set["query"] = true
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Restores reports whether the case has a restore step.
func (c *Case) Restores() bool {
	for _, s := range c.Steps {
		if s.Restore != nil {
			return true
		}
	}
	return false
}

// UnsupportedError is returned by a runner for a case that uses format v2
// features the runner cannot run.
type UnsupportedError struct {
	Features []string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("uses case format v2 (%s), which this runner does not run yet", strings.Join(e.Features, ", "))
}

// unsupportedV2 returns an *UnsupportedError when the case uses v2 features.
func unsupportedV2(c *Case) error {
	if f := c.V2Features(); len(f) > 0 {
		return &UnsupportedError{Features: f}
	}
	return nil
}
