package main

import (
	"embed"
	"encoding/json"
	"fmt"
	"path"
	"sort"

	"github.com/chartgate/chartgate/statechart"
)

// machineFiles are the benchmark machines. Each is a plain XState config
// with declarative guards and actions (the conformance case format) and the
// event stream to send, cycled: event i is events[i % len(events)].
//
//go:embed machines/*.json
var machineFiles embed.FS

// benchMachine is one machine file.
type benchMachine struct {
	Name        string             `json:"name"`
	Description string             `json:"description"`
	Machine     json.RawMessage    `json:"machine"`
	Events      []statechart.Event `json:"events"`
	// Settle, when set, is the state the machine is in again once an
	// event's work is over, promise settlements included: the node script
	// awaits microtasks after each event until it is (an Actor delivers a
	// declarative promise's settlement before Send returns).
	Settle string `json:"settle"`

	file string // path inside machineFiles
	raw  []byte // the whole file, as sent to the node script
}

// machineOrder is the order of the table; machines not listed come after,
// by name.
var machineOrder = []string{"toggle", "hierarchy", "parallel", "regions", "workflow", "order", "roundtrip", "spawnstop", "promise"}

// loadMachines reads every machine file.
func loadMachines() ([]*benchMachine, error) {
	names, err := machineFiles.ReadDir("machines")
	if err != nil {
		return nil, err
	}
	var out []*benchMachine
	for _, e := range names {
		file := path.Join("machines", e.Name())
		raw, err := machineFiles.ReadFile(file)
		if err != nil {
			return nil, err
		}
		bm := &benchMachine{file: file, raw: raw}
		if err := json.Unmarshal(raw, bm); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		switch {
		case bm.Name == "":
			return nil, fmt.Errorf("%s: no name", file)
		case len(bm.Machine) == 0:
			return nil, fmt.Errorf("%s: no machine", file)
		case len(bm.Events) == 0:
			return nil, fmt.Errorf("%s: no events", file)
		}
		out = append(out, bm)
	}
	rank := func(name string) int {
		for i, n := range machineOrder {
			if n == name {
				return i
			}
		}
		return len(machineOrder)
	}
	sort.SliceStable(out, func(i, j int) bool {
		ri, rj := rank(out[i].Name), rank(out[j].Name)
		if ri != rj {
			return ri < rj
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// compile compiles the machine with its declarative implementations. Strict
// makes a misspelt action name an error instead of a silent no-op.
func (bm *benchMachine) compile() (*statechart.Machine, error) {
	impl, err := statechart.ParseImplementations(bm.raw)
	if err != nil {
		return nil, fmt.Errorf("%s: implementations: %w", bm.file, err)
	}
	m, err := statechart.Compile(bm.Machine, &statechart.Options{Implementations: impl, Strict: true})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", bm.file, err)
	}
	return m, nil
}

// event returns event i of the cycled stream.
func (bm *benchMachine) event(i int) statechart.Event {
	return bm.Events[i%len(bm.Events)]
}
