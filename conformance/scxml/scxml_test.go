// This test runs the SCION/W3C SCXML test suite (npm
// @scion-scxml/test-framework, installed by `npm ci` in this folder and
// never committed) on chartgate: each .scxml document is converted with
// statechart/scxml, run on a SimulatedClock, and the full set of active
// atomic states is compared with the expected configuration after the
// initial step and after every event. Per-group pass counts must not drop
// below baseline.json; every failing test must be listed there with the
// reason we differ.
//
// Regenerate the counts (keeping the reasons) with
//
//	go test ./conformance/scxml -run TestSCXMLSuite -scxml.update
package scxml_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/statechart/scxml"
)

const (
	suiteDir       = "node_modules/@scion-scxml/test-framework/test"
	installCommand = "(cd conformance/scxml && npm ci --ignore-scripts)"
	baselineFile   = "baseline.json"
)

var update = flag.Bool("scxml.update", false, "rewrite baseline.json pass counts from this run (keeps the recorded reasons)")

// suiteTest is one SCION test's expectations.
type suiteTest struct {
	InitialConfiguration []string `json:"initialConfiguration"`
	Events               []struct {
		After *float64 `json:"after"`
		Event struct {
			Name string `json:"name"`
		} `json:"event"`
		NextConfiguration []string `json:"nextConfiguration"`
	} `json:"events"`
}

// baseline is the committed record of what must keep passing.
type baseline struct {
	Comment string                    `json:"comment"`
	Groups  map[string]*baselineGroup `json:"groups"`
	// Differences lists every test (group/name) that runs but fails, with
	// the reason chartgate (following XState) differs from SCXML.
	Differences map[string]string `json:"differences"`
}

type baselineGroup struct {
	Pass   int `json:"pass"`   // our pass count must not drop below this
	XState int `json:"xstate"` // tests XState's own scxml.test.ts runs (and passes) in this group
}

type outcome int

const (
	pass outcome = iota
	skip
	fail
)

type result struct {
	name   string
	out    outcome
	reason string
}

func TestSCXMLSuite(t *testing.T) {
	if _, err := os.Stat(suiteDir); err != nil {
		t.Skipf("SCXML suite not installed; run %s", installCommand)
	}
	start := time.Now()
	var bl baseline
	data, err := os.ReadFile(baselineFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &bl); err != nil {
		t.Fatalf("%s: %v", baselineFile, err)
	}
	results := map[string][]result{}
	var groups []string
	for _, f := range suiteFiles(t) {
		if len(results[f.group]) == 0 {
			groups = append(groups, f.group)
		}
		results[f.group] = append(results[f.group], runOne(f.scxml, f.json, f.name))
	}

	var tp, ts, tf, tx int
	for _, g := range groups {
		var p, s, f int
		for _, r := range results[g] {
			key := g + "/" + r.name
			switch r.out {
			case pass:
				p++
				if _, listed := bl.Differences[key]; listed {
					t.Logf("%s now passes; remove it from %s differences", key, baselineFile)
				}
			case skip:
				s++
				t.Logf("SKIP %s: %s", key, r.reason)
			case fail:
				f++
				reason, listed := bl.Differences[key]
				if listed {
					t.Logf("FAIL (expected: %s) %s: %s", reason, key, r.reason)
				} else if !*update {
					t.Errorf("FAIL %s (not listed in %s differences): %s", key, baselineFile, r.reason)
				}
			}
		}
		want := bl.Groups[g]
		if want == nil {
			want = &baselineGroup{}
			if bl.Groups == nil {
				bl.Groups = map[string]*baselineGroup{}
			}
			bl.Groups[g] = want
		}
		t.Logf("group %-34s pass %3d  skip %3d  fail %3d  (baseline %d; XState runs %d)", g, p, s, f, want.Pass, want.XState)
		if p < want.Pass && !*update {
			t.Errorf("group %s: %d pass, below the baseline of %d", g, p, want.Pass)
		}
		if *update {
			want.Pass = p
		}
		tp, ts, tf, tx = tp+p, ts+s, tf+f, tx+want.XState
	}
	t.Logf("total: pass %d  skip %d  fail %d  (XState runs %d) in %v", tp, ts, tf, tx, time.Since(start).Round(time.Millisecond))
	if *update {
		if bl.Differences == nil {
			bl.Differences = map[string]string{}
		}
		for _, g := range groups {
			for _, r := range results[g] {
				key := g + "/" + r.name
				if _, ok := bl.Differences[key]; r.out == fail && !ok {
					bl.Differences[key] = "TODO: explain: " + r.reason
				} else if ok && r.out != fail {
					delete(bl.Differences, key)
				}
			}
		}
		out, err := json.MarshalIndent(bl, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(baselineFile, append(out, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// loaded is one suite test converted and compiled.
type loaded struct {
	test   suiteTest
	config []byte // the converted XState config; nil with the data model (scxml.Compile)
	m      *statechart.Machine
	atomic map[string]string // XState id -> SCXML id, for atomic and final nodes
}

// load reads, converts and compiles one test; on failure it returns the
// skip or fail result instead.
func load(scxmlPath, jsonPath, name string) (*loaded, *result) {
	src, err := os.ReadFile(scxmlPath)
	if err != nil {
		return nil, &result{name, fail, err.Error()}
	}
	raw, err := os.ReadFile(jsonPath)
	if err != nil {
		return nil, &result{name, fail, err.Error()}
	}
	var l loaded
	if err := json.Unmarshal(raw, &l.test); err != nil {
		return nil, &result{name, fail, "expectations: " + err.Error()}
	}
	l.config, err = scxml.Convert(src)
	var ue *scxml.UnsupportedError
	switch {
	case errors.As(err, &ue):
		// It needs a data model, or has no XState form at all.
		l.config = nil
		dir := filepath.Dir(scxmlPath)
		l.m, err = scxml.Compile(src, &scxml.Options{Source: func(name string) ([]byte, error) {
			// Only a file of the test's own folder.
			if name != filepath.Base(name) {
				return nil, fmt.Errorf("%q is not a file of the test's folder", name)
			}
			return os.ReadFile(filepath.Join(dir, name))
		}})
		if errors.As(err, &ue) {
			return nil, &result{name, skip, ue.Error()}
		}
		if err != nil {
			return nil, &result{name, fail, "compile with the data model: " + err.Error()}
		}
	case err != nil:
		return nil, &result{name, fail, "convert: " + err.Error()}
	default:
		l.m, err = statechart.Compile(l.config, nil)
		if err != nil {
			return nil, &result{name, fail, "compile: " + err.Error()}
		}
	}
	l.atomic = map[string]string{}
	for _, n := range l.m.Nodes() {
		if n.Type == "atomic" || n.Type == "final" {
			l.atomic[n.ID] = scxml.OriginalID(n.ID, n.Meta)
		}
	}
	return &l, nil
}

// suiteFile is one test of the suite: an SCXML document and its
// expectations.
type suiteFile struct{ group, name, scxml, json string }

// suiteFiles lists the suite's tests, grouped by folder, in name order.
func suiteFiles(t *testing.T) []suiteFile {
	t.Helper()
	entries, err := os.ReadDir(suiteDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []suiteFile
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		files, err := filepath.Glob(filepath.Join(suiteDir, e.Name(), "*.scxml"))
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(files)
		for _, f := range files {
			j := strings.TrimSuffix(f, ".scxml") + ".json"
			if _, err := os.Stat(j); err != nil {
				continue // a document without expectations (e.g. an invoked child)
			}
			out = append(out, suiteFile{e.Name(), strings.TrimSuffix(filepath.Base(f), ".scxml"), f, j})
		}
	}
	return out
}

func runOne(scxmlPath, jsonPath, name string) result {
	l, r := load(scxmlPath, jsonPath, name)
	if r != nil {
		return *r
	}
	st, m, atomic := l.test, l.m, l.atomic
	clock := statechart.NewSimulatedClock()
	// The initial configuration is the one the initial macrostep leaves:
	// an invoked child's events (and its done event) reach the parent
	// during Start, while SCION puts them on its external queue, so it is
	// observed before the first of them is taken.
	starting, initialMsg, observed := true, "", false
	inspect := func(in statechart.Inspection) {
		if starting && !observed && len(in.Actor) == 0 && in.Event.Type != statechart.EventInit && in.Snapshot != nil {
			initialMsg, observed = compare(in.Snapshot, atomic, st.InitialConfiguration), true
		}
	}
	a := statechart.NewActor(m, &statechart.ActorOptions{Clock: clock, Inspect: inspect})
	defer a.Stop()
	ctx := context.Background()
	if err := a.Start(ctx); err != nil {
		return result{name, fail, "start: " + err.Error()}
	}
	starting = false
	// The initial configuration is observed before zero-delay <send>s (the
	// external queue) are processed, as SCION does; they run before the
	// next event is sent.
	if len(st.Events) == 0 {
		runToCompletion(a, clock)
		observed = false
	}
	if !observed {
		initialMsg = compare(a.Snapshot(), atomic, st.InitialConfiguration)
	}
	if initialMsg != "" {
		return result{name, fail, "initial configuration: " + initialMsg}
	}
	for i, ev := range st.Events {
		settle(a, clock)
		if ev.After != nil && *ev.After > 0 {
			advance(a, clock, time.Duration(*ev.After*float64(time.Millisecond)))
		}
		if err := a.Send(ctx, statechart.NewEvent(ev.Event.Name)); err != nil {
			return result{name, fail, fmt.Sprintf("event %d %q: %v", i+1, ev.Event.Name, err)}
		}
		settle(a, clock)
		if msg := compare(a.Snapshot(), atomic, ev.NextConfiguration); msg != "" {
			return result{name, fail, fmt.Sprintf("after event %d %q: %s", i+1, ev.Event.Name, msg)}
		}
	}
	return result{name, pass, ""}
}

// settle runs timers that are already due (the zero-delay sends the
// converter uses for SCXML's external queue) until none is left.
func settle(a *statechart.Actor, clock *statechart.SimulatedClock) {
	for range 1000 {
		due, ok := a.Snapshot().NextDue()
		if !ok || due.After(clock.Now()) {
			return
		}
		clock.Advance(0)
	}
}

// advance moves the clock forward by d, one pending timer at a time, so
// that events scheduled by the timers it fires are delivered within d too,
// as they are on SCION's real clock.
func advance(a *statechart.Actor, clock *statechart.SimulatedClock, d time.Duration) {
	end := clock.Now().Add(d)
	for range 1000 {
		due, ok := a.Snapshot().NextDue()
		if !ok || due.After(end) {
			break
		}
		clock.Advance(max(due.Sub(clock.Now()), 0))
	}
	clock.Advance(max(end.Sub(clock.Now()), 0))
}

// runToCompletion advances the clock to each pending timer in turn, for
// W3C-style tests that run on their own until they reach pass or fail.
func runToCompletion(a *statechart.Actor, clock *statechart.SimulatedClock) {
	for range 1000 {
		s := a.Snapshot()
		if s.Status() != statechart.StatusActive {
			return
		}
		due, ok := s.NextDue()
		if !ok {
			return
		}
		clock.Advance(max(due.Sub(clock.Now()), 0))
	}
}

func compare(s *statechart.Snapshot, atomic map[string]string, want []string) string {
	var got []string
	for _, id := range s.StateIDs() {
		if orig, ok := atomic[id]; ok {
			got = append(got, orig)
		}
	}
	sort.Strings(got)
	w := slices.Clone(want)
	sort.Strings(w)
	if slices.Equal(got, w) {
		return ""
	}
	msg := fmt.Sprintf("active atomic states %v, want %v", got, w)
	if s.Status() == statechart.StatusError {
		msg += fmt.Sprintf(" (actor error: %v)", s.Err())
	}
	return msg
}
