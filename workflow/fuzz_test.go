// This file defines FuzzLoad: no input makes Load panic or fail without an
// error list, and a loaded workflow's JSON loads again as XState into the
// same workflow.

package workflow_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/workflow"
)

func FuzzLoad(f *testing.F) {
	coding, err := os.ReadFile("testdata/coding.json")
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		string(coding), orderMachine, ciMachine, interruptMachine, twoInterrupts, interruptOnly,
		fmt.Sprintf(forkMachine, "all"), fmt.Sprintf(forkMachine, "any"), xstateWorkflow,
		`{"id": "x", "initial": "a", "guards": {}, "states": {"a": {"on": {"GO": "z"}}, "z": {"type": "final"}}}`,
		`{"initial": "a", "states": {"a": {"allowed_tools": [], "on": {"GO": [{"target": "z", "guards": ["g"]}]}}, "z": {"type": "final"}}, "guards": {"g": {"field": "f", "op": "in", "value": [1]}}}`,
		`{"definition": {"initial": "a", "states": {"a": {"on": {"GO": "z"}}, "z": {"type": "final"}}}, "upstream_servers": [{"name": "fs", "command": "npx", "args": ["-y", "x"], "env": {"A": "1"}}]}`,
		`{"$schema": "https://statewright.ai/workflow-schema.json", "initial": "a", "states": {"a": {"on": {"GO": "z"}}, "z": {"type": "final"}}}`,
		`{"initial": "a", "states": {"a": {"on": {"GO": "z"}}, "z": {"type": "final"}}}`,
	} {
		f.Add([]byte(seed))
	}
	opts := &workflow.Options{Resolve: resolver(map[string]string{"debug_machine": debugMachine})}
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := workflow.Load(data, opts)
		if errors.Is(err, workflow.ErrAmbiguousFormat) {
			return // the whole file is in question, not a place in it
		}
		if err != nil {
			var list statechart.ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("Load failed without an error list: %v", err)
			}
			if strings.Contains(err.Error(), "the machine compiled from the Statewright workflow") {
				t.Fatalf("the compilation of a valid Statewright workflow does not load: %v", err)
			}
			return
		}
		again, err := workflow.Load(w.JSON, &workflow.Options{Format: workflow.FormatXState})
		if err != nil {
			t.Fatalf("the compiled JSON does not load as XState: %v\n%s", err, w.JSON)
		}
		if !reflect.DeepEqual(again.Policies, w.Policies) {
			t.Fatalf("policies differ after a reload:\n%+v\n%+v", w.Policies, again.Policies)
		}
		if !reflect.DeepEqual(again.Interrupts, w.Interrupts) {
			t.Fatalf("interrupts differ after a reload:\n%+v\n%+v", w.Interrupts, again.Interrupts)
		}
		if !reflect.DeepEqual(again.Meta, w.Meta) {
			t.Fatalf("meta differs after a reload:\n%+v\n%+v", w.Meta, again.Meta)
		}
		if !reflect.DeepEqual(again.Machine.StateIDs(), w.Machine.StateIDs()) {
			t.Fatal("the state ids differ after a reload")
		}
		if _, err := w.Machine.Start(context.Background(), time.Time{}); err != nil && w.Format == workflow.FormatStatewright {
			t.Fatalf("the compiled machine does not start: %v", err)
		}
	})
}
