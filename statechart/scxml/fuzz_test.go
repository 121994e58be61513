package scxml

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chartgate/chartgate/statechart"
)

// FuzzConvert feeds Convert and Compile arbitrary documents, seeded with the documents
// of this package's tests and, when it is installed, the W3C/SCION suite
// of conformance/scxml. Convert must not panic, its errors must say they
// come from it, and whatever it emits must compile and start.
func FuzzConvert(f *testing.F) {
	for _, doc := range []string{
		header + `><state id="a"><transition event="go" target="b"/></state><state id="b"/></scxml>`,
		header + ` initial="p"><parallel id="p"><state id="x"><history id="h"><transition target="x1"/></history><state id="x1"/></state><state id="y"/></parallel></scxml>`,
		header + `><state id="s" initial="h"><history id="h"/><state id="a"/></state></scxml>`,
		header + `><state id="s"><initial><transition target="h"/></initial><history id="h" type="deep"><transition target="b"/></history><state id="a"/><state id="b"/></state></scxml>`,
		header + `><state id="a"><onentry><send event="t" delay="1s" id="x"/><cancel sendid="x"/><raise event="r"/></onentry><transition event="t r" cond="In('a')" target="f"/></state><final id="f"/></scxml>`,
		header + `><state id="a.b"><transition event="done.state.a.b" type="internal" target="a.b"/></state></scxml>`,
	} {
		f.Add([]byte(doc))
	}
	files, _ := filepath.Glob("../../conformance/scxml/node_modules/@scion-scxml/test-framework/test/*/*.scxml")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		compileWithDataModel(t, data)
		out, err := Convert(data)
		if err != nil {
			var u *UnsupportedError
			if !errors.As(err, &u) && !strings.HasPrefix(err.Error(), "scxml: ") {
				t.Fatalf("error %q does not say it comes from the converter", err)
			}
			return
		}
		m, err := statechart.Compile(out, &statechart.Options{MaxSteps: 1000})
		if err != nil {
			t.Fatalf("Convert emitted a machine that does not compile: %v\n%s", err, out)
		}
		_, _ = m.Start(context.Background(), statechart.NewSimulatedClock().Now())
	})
}

// compileWithDataModel compiles data with the data model: an error must
// say it comes from the converter, and a machine must start, run its
// scripts (each cut short quickly) and stop.
func compileWithDataModel(t *testing.T, data []byte) {
	m, err := Compile(data, &Options{EvalTimeout: 20 * time.Millisecond, Machine: &statechart.Options{MaxSteps: 1000}})
	if err != nil {
		var u *UnsupportedError
		if !errors.As(err, &u) && !strings.HasPrefix(err.Error(), "scxml: ") {
			t.Fatalf("Compile: error %q does not say it comes from the converter", err)
		}
		return
	}
	a := statechart.NewActor(m, &statechart.ActorOptions{Clock: statechart.NewSimulatedClock()})
	_ = a.Start(context.Background())
	a.Stop()
}
