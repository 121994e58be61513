// Command bench compares chartgate with XState v5 (and, for the flat
// toggle, with github.com/qmuntal/stateless) on the same machines and the
// same event streams, in one run:
//
//	go run ./conformance/bench [-n 200000] [-warmup N] [-rounds 5] [-machines toggle,workflow] [-json]
//
// For every machine in conformance/bench/machines it sends the same stream
// of events through xstate@5 in node (one process per machine, see
// xstate_bench.mjs), through a chartgate statechart.Actor and, for flat
// machines, through raw stateless (Fire) and chartgate's flat engine
// (statechart/flat). Each engine gets the same warm-up events first. It
// then checks that every engine ends in the state XState ends in (value
// and context) and prints a markdown table of events per second, then the
// time statechart.Compile takes on flat and nested machines of 100, 1,000
// and 10,000 states (unless -compile=false), or JSON with -json. It exits 1 if node or xstate is missing (saying how to
// install them) or if any engine ends in another state.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// machineRun is everything measured for one machine.
type machineRun struct {
	Name        string  `json:"name"`
	Description string  `json:"description,omitempty"`
	XState      *result `json:"xstate"`
	Chartgate   *result `json:"chartgate"`
	Stateless   *result `json:"stateless,omitempty"`
	Flat        *result `json:"flat,omitempty"`
	// Ratio is chartgate's events/s divided by XState's.
	Ratio    float64  `json:"chartgateOverXState"`
	Mismatch []string `json:"mismatch,omitempty"`
}

// environment describes where the run happened.
type environment struct {
	GOOS    string `json:"goos"`
	GOARCH  string `json:"goarch"`
	CPUs    int    `json:"cpus"`
	CPU     string `json:"cpu,omitempty"`
	Go      string `json:"go"`
	Node    string `json:"node"`
	XState  string `json:"xstate"`
	Events  int    `json:"events"`
	Warmup  int    `json:"warmup"`
	Rounds  int    `json:"rounds"`
	Summary string `json:"summary"`
}

type report struct {
	Environment environment   `json:"environment"`
	Machines    []*machineRun `json:"machines"`
	Compile     []compileRun  `json:"compile,omitempty"`
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 200_000, "events sent to each engine per machine, timed")
	warmup := fs.Int("warmup", -1, "events sent before timing (default n/10)")
	asJSON := fs.Bool("json", false, "print JSON instead of a markdown table")
	only := fs.String("machines", "", "comma-separated machine names to run (default all)")
	nodeBin := fs.String("node", "node", "the node executable")
	rounds := fs.Int("rounds", 5, "split the timed events into this many rounds and report each engine's fastest round")
	compile := fs.Bool("compile", true, "also time statechart.Compile on flat and nested machines of 100, 1,000 and 10,000 states")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the Go side (chartgate, stateless, statechart/flat) to `file`")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: go run ./conformance/bench [flags]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 || *n <= 0 || *rounds <= 0 {
		fs.Usage()
		return 2
	}
	if *warmup < 0 {
		*warmup = *n / 10
	}

	machines, err := loadMachines()
	if err != nil {
		fmt.Fprintln(stderr, "bench:", err)
		return 1
	}
	if *only != "" {
		if machines, err = selectMachines(machines, *only); err != nil {
			fmt.Fprintln(stderr, "bench:", err)
			return 2
		}
	}
	ns, err := findNode(*nodeBin)
	if err != nil {
		fmt.Fprintln(stderr, "bench:", err)
		return 1
	}

	rep := report{Environment: environment{
		GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPUs: runtime.NumCPU(), CPU: cpuModel(),
		Go: runtime.Version(), Node: ns.version, Events: *n, Warmup: *warmup, Rounds: *rounds,
	}}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintln(stderr, "bench:", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(stderr, "bench:", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	failed := false
	for _, bm := range machines {
		if !*asJSON {
			fmt.Fprintf(stderr, "bench: %s...\n", bm.Name)
		}
		mr, err := runMachine(ns, bm, stream{n: *n, warmup: *warmup, rounds: *rounds})
		if err != nil {
			fmt.Fprintf(stderr, "bench: %s: %v\n", bm.Name, err)
			return 1
		}
		if rep.Environment.XState == "" {
			rep.Environment.XState = mr.xstateVersion
		}
		rep.Machines = append(rep.Machines, mr.machineRun)
		failed = failed || len(mr.Mismatch) > 0
	}
	rep.Environment.Summary = summary(rep.Environment)
	if *compile {
		if !*asJSON {
			fmt.Fprintln(stderr, "bench: compile...")
		}
		if rep.Compile, err = measureCompile(compileSizes, 300*time.Millisecond); err != nil {
			fmt.Fprintln(stderr, "bench:", err)
			return 1
		}
	}

	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintln(stderr, "bench:", err)
			return 1
		}
	} else {
		writeTable(stdout, rep)
	}
	if failed {
		for _, m := range rep.Machines {
			for _, msg := range m.Mismatch {
				fmt.Fprintf(stderr, "bench: FAIL %s: %s\n", m.Name, msg)
			}
		}
		return 1
	}
	return 0
}

func selectMachines(all []*benchMachine, list string) ([]*benchMachine, error) {
	var out []*benchMachine
	var names []string
	for _, bm := range all {
		names = append(names, bm.Name)
	}
	for _, want := range strings.Split(list, ",") {
		want = strings.TrimSpace(want)
		found := false
		for _, bm := range all {
			if bm.Name == want {
				out, found = append(out, bm), true
			}
		}
		if !found {
			return nil, fmt.Errorf("no machine %q (have %s)", want, strings.Join(names, ", "))
		}
	}
	return out, nil
}

type machineResult struct {
	*machineRun
	xstateVersion string
}

// runMachine runs one machine on every engine and compares the final
// states with XState's.
func runMachine(ns *nodeSetup, bm *benchMachine, st stream) (*machineResult, error) {
	xr, xres, err := ns.runXState(bm, st)
	if err != nil {
		return nil, err
	}
	mr := &machineRun{Name: bm.Name, Description: bm.Description, XState: xres}
	if mr.Chartgate, err = runActor(bm, st); err != nil {
		return nil, err
	}
	if mr.Stateless, err = runStateless(bm, st); errors.Is(err, errNotFlat) {
		mr.Stateless = nil
	} else if err != nil {
		return nil, err
	}
	if mr.Flat, err = runFlat(bm, st); errors.Is(err, errNotFlat) {
		mr.Flat = nil
	} else if err != nil {
		return nil, err
	}
	if xres.EventsPerSec > 0 {
		mr.Ratio = mr.Chartgate.EventsPerSec / xres.EventsPerSec
	}
	for _, r := range []*result{mr.Chartgate, mr.Stateless, mr.Flat} {
		if r == nil {
			continue
		}
		if msg := compareFinal(xres, r); msg != "" {
			mr.Mismatch = append(mr.Mismatch, msg)
		}
	}
	return &machineResult{mr, xr.XState}, nil
}

// compareFinal reports how r's final state differs from XState's, or "".
func compareFinal(want, got *result) string {
	var diffs []string
	if w, g := normalize(want.Value), normalize(got.Value); !reflect.DeepEqual(w, g) {
		diffs = append(diffs, fmt.Sprintf("value: xstate %s, %s %s", show(w), got.Engine, show(g)))
	}
	if w, g := normalizeContext(want.Context), normalizeContext(got.Context); !reflect.DeepEqual(w, g) {
		diffs = append(diffs, fmt.Sprintf("context: xstate %s, %s %s", show(w), got.Engine, show(g)))
	}
	if want.Status != got.Status {
		diffs = append(diffs, fmt.Sprintf("status: xstate %s, %s %s", want.Status, got.Engine, got.Status))
	}
	if len(diffs) == 0 {
		return ""
	}
	return fmt.Sprintf("after %d events, %s ends in another state than XState: %s",
		want.Events, got.Engine, strings.Join(diffs, "; "))
}

// normalize gives a value the shape encoding/json decodes into, so values
// from Go and from node's JSON compare with reflect.DeepEqual.
func normalize(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("unmarshalable %T", v)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return fmt.Sprintf("unmarshalable %T", v)
	}
	return out
}

func normalizeContext(c map[string]any) any {
	if c == nil {
		c = map[string]any{}
	}
	return normalize(c)
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// cpuModel returns the CPU model from /proc/cpuinfo, or "".
func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func summary(e environment) string {
	cpu := ""
	if e.CPU != "" {
		cpu = " (" + e.CPU + ")"
	}
	rounds := ""
	if e.Rounds > 1 {
		rounds = fmt.Sprintf(" in %d rounds (the fastest counts)", e.Rounds)
	}
	return fmt.Sprintf("%s/%s, %d CPUs%s, %s, node %s, xstate %s; %d timed events per engine and machine%s after %d warm-up events",
		e.GOOS, e.GOARCH, e.CPUs, cpu, e.Go, e.Node, e.XState, e.Events, rounds, e.Warmup)
}

// writeTable prints the markdown table and the environment line.
func writeTable(w io.Writer, rep report) {
	fmt.Fprintln(w, "| machine | XState events/s | chartgate events/s | chartgate allocs/event | stateless events/s | statechart/flat events/s | chartgate/XState |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, m := range rep.Machines {
		allocs := "–"
		if a := m.Chartgate.AllocsPerEvent; a != nil {
			allocs = fmt.Sprintf("%.2f", *a)
		}
		name := m.Name
		if len(m.Mismatch) > 0 {
			name += " **MISMATCH**"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %.1f× |\n",
			name, rate(m.XState), rate(m.Chartgate), allocs, rate(m.Stateless), rate(m.Flat), m.Ratio)
	}
	fmt.Fprintln(w)
	if len(rep.Compile) > 0 {
		writeCompileTable(w, rep.Compile)
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, rep.Environment.Summary)
}

// rate formats events per second with thousands separators, or a dash.
func rate(r *result) string {
	if r == nil {
		return "–"
	}
	return thousands(int64(r.EventsPerSec + 0.5))
}

// thousands formats n with thousands separators.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
