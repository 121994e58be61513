// This file runs the flat machines (the toggle) on
// github.com/qmuntal/stateless directly and on chartgate's table-driven
// flat engine, statechart/flat.

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/qmuntal/stateless"

	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/statechart/flat"
)

// errNotFlat means a machine has more than flat states and plain-target
// transitions, so it has no stateless counterpart.
var errNotFlat = errors.New("not a flat machine")

// flatConfig is the subset of an XState config that maps one to one onto a
// stateless machine: atomic states whose transitions are plain target keys.
type flatConfig struct {
	ID      string `json:"id"`
	Initial string `json:"initial"`
	States  map[string]struct {
		On map[string]string `json:"on"`
	} `json:"states"`
}

// readFlat reads the machine as a flatConfig, or returns errNotFlat.
func readFlat(bm *benchMachine) (*flatConfig, error) {
	dec := json.NewDecoder(bytes.NewReader(bm.Machine))
	dec.DisallowUnknownFields()
	var fc flatConfig
	if err := dec.Decode(&fc); err != nil || fc.Initial == "" || len(fc.States) == 0 {
		return nil, errNotFlat
	}
	if _, ok := fc.States[fc.Initial]; !ok {
		return nil, errNotFlat
	}
	for _, st := range fc.States {
		for _, target := range st.On {
			if _, ok := fc.States[target]; !ok || strings.ContainsAny(target, ".#") {
				return nil, errNotFlat
			}
		}
	}
	return &fc, nil
}

// runStateless runs the stream through a github.com/qmuntal/stateless
// machine configured with Permit, firing with Fire: the reference for a
// flat transition in Go. It uses FiringImmediate, stateless's fastest
// mode; the default FiringQueued mode costs one allocation per Fire.
// Events the current state does not handle are ignored, as in XState.
func runStateless(bm *benchMachine, st stream) (*result, error) {
	fc, err := readFlat(bm)
	if err != nil {
		return nil, err
	}
	sm := stateless.NewStateMachineWithMode(fc.Initial, stateless.FiringImmediate)
	for key, st := range fc.States {
		cfg := sm.Configure(key)
		for ev, target := range st.On {
			if target == key {
				cfg.PermitReentry(ev)
			} else {
				cfg.Permit(ev, target)
			}
		}
	}
	sm.OnUnhandledTrigger(func(context.Context, stateless.State, stateless.Trigger, []string) error { return nil })
	// Triggers are boxed once, as a stateless user holding trigger
	// constants would; boxing a string per Fire would cost an allocation.
	triggers := make([]stateless.Trigger, len(bm.Events))
	for i, e := range bm.Events {
		triggers[i] = e.Type
	}
	r, err := measure(st, func(i int) error { return sm.Fire(triggers[i%len(triggers)]) })
	if err != nil {
		return nil, fmt.Errorf("stateless: %w", err)
	}
	r.Engine = "stateless"
	r.Value, r.Context, r.Status = sm.MustState(), map[string]any{}, string(statechart.StatusActive)
	return r, nil
}

// runFlat runs the stream through chartgate's flat engine
// (statechart/flat, a table lookup per transition), through the
// statechart.Engine interface: every Send returns the next immutable
// state.
func runFlat(bm *benchMachine, st stream) (*result, error) {
	if !flat.IsFlat(bm.Machine) {
		return nil, errNotFlat
	}
	m, err := flat.Compile(bm.Machine)
	if err != nil {
		return nil, err
	}
	var e statechart.Engine = m
	ctx := context.Background()
	var now time.Time
	s, err := e.Start(ctx, now)
	if err != nil {
		return nil, err
	}
	r, err := measure(st, func(i int) error {
		var err error
		s, err = e.Send(ctx, s, bm.event(i), now)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("statechart/flat: %w", err)
	}
	r.Engine = "flat"
	r.Value, r.Context, r.Status = s.Value(), s.Context(), string(s.Status())
	return r, nil
}
