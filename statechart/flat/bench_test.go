package flat_test

import (
	"testing"

	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/statechart/flat"
)

const toggle = `{"id": "toggle", "initial": "off", "states": {"off": {"on": {"TOGGLE": "on"}}, "on": {"on": {"TOGGLE": "off"}}}}`

// BenchmarkFlatToggle sends TOGGLE to a two-state on/off machine on this
// engine; one op is one Send.
func BenchmarkFlatToggle(b *testing.B) {
	m := compile(b, toggle)
	benchToggle(b, m)
}

// BenchmarkInterpreterToggle is the same on the full interpreter, through
// the same Engine interface, for comparison.
func BenchmarkInterpreterToggle(b *testing.B) {
	m, err := statechart.Compile([]byte(toggle), nil)
	if err != nil {
		b.Fatal(err)
	}
	benchToggle(b, m.Engine())
}

func benchToggle(b *testing.B, e statechart.Engine) {
	s, err := e.Start(bg, now)
	if err != nil {
		b.Fatal(err)
	}
	ev := statechart.NewEvent("TOGGLE")
	b.ReportAllocs()
	for b.Loop() {
		if s, err = e.Send(bg, s, ev, now); err != nil {
			b.Fatal(err)
		}
	}
	if v := s.Value(); v != "on" && v != "off" {
		b.Fatalf("ended in %v", v)
	}
}

// BenchmarkFlatIgnored sends an event the machine does not handle.
func BenchmarkFlatIgnored(b *testing.B) {
	m := compile(b, toggle)
	s, _ := m.Start(bg, now)
	ev := statechart.NewEvent("NOPE")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Send(bg, s, ev, now); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFlatCan asks Can for a handled event.
func BenchmarkFlatCan(b *testing.B) {
	m := compile(b, toggle)
	s, _ := m.Start(bg, now)
	ev := statechart.NewEvent("TOGGLE")
	b.ReportAllocs()
	for b.Loop() {
		if ok, err := m.Can(bg, s, ev); err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
}

// BenchmarkFlatCompile compiles the job machine of the tests.
func BenchmarkFlatCompile(b *testing.B) {
	data := []byte(job)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := flat.Compile(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFlatMarshalRestore writes a state and reads it back.
func BenchmarkFlatMarshalRestore(b *testing.B) {
	m := compile(b, job)
	s, _ := m.Start(bg, now)
	b.ReportAllocs()
	for b.Loop() {
		data, err := s.MarshalJSON()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := m.Restore(data); err != nil {
			b.Fatal(err)
		}
	}
}
