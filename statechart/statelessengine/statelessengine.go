// Package statelessengine runs a github.com/qmuntal/stateless state machine
// as a [statechart.Engine], so that a program that already describes its
// workflow with stateless can gate MCP tools with it (package mcpbind), as
// it would with an XState machine.
//
// A stateless machine keeps its state in its storage; an Engine keeps none
// (every instance's state is a [statechart.State] value it is given). The
// machine is therefore built on this package's storage, which reads and
// writes the state of the call being made:
//
//	sm := stateless.NewStateMachineWithExternalStorage(statelessengine.State, statelessengine.SetState, stateless.FiringImmediate)
//	sm.Configure("draft").Permit("SUBMIT", "review")
//	sm.Configure("review").Permit("APPROVE", "published", isReviewer).Permit("REJECT", "draft")
//	engine, err := statelessengine.New(sm, &statelessengine.Options{
//		ID:      "doc",
//		States:  []any{"draft", "review", "published"},
//		Final:   []any{"published"},
//		Triggers: []any{"SUBMIT", "APPROVE", "REJECT"},
//		Meta:    map[any]any{"draft": map[string]any{"mcp": map[string]any{"tools": []any{"edit_doc"}}}},
//	})
//
// [New] refuses a machine built on any other storage.
//
// How stateless maps onto the Engine:
//
//   - States: stateless cannot list its states, so [Options.States] names
//     them, the initial one first; [statechart.State.Value] is the state's
//     name (fmt.Sprint of the value), and its id is "<ID>.<name>". A state
//     in [Options.Final] is done: it takes no more events. Substates
//     (SubstateOf) are not described: every state is a child of the root.
//   - Events are triggers: an event's type is looked up among
//     [Options.Triggers] by name. The event itself (a [statechart.Event],
//     whose Data mcpbind fills with the tool, its input and output) is the
//     one argument the guards, actions and dynamic destinations receive.
//   - Can is stateless's CanFire; Send fires the trigger when CanFire is
//     true and otherwise leaves the state as it was, as XState ignores an
//     event no transition accepts. A guard that returns false therefore
//     makes mcpbind refuse (or hide) the event's tool.
//   - Nodes lists every trigger as a transition of every state that is not
//     final: stateless does not say where a trigger leads without firing it
//     (guards, dynamic destinations), so mcpbind's static checks accept any
//     declared trigger and its guidance knows no targets.
//   - There are no delayed events and no context: Advance returns its
//     state, Context is empty.
//   - The persisted form is {"status":…,"value":"<name>"}; Restore refuses
//     a state that is not in Options.States.
//
// Fires are serialized (stateless's queued mode would run one caller's
// trigger with another caller's state); guards and actions run on the
// caller's goroutine with its context.
package statelessengine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/qmuntal/stateless"

	"github.com/chartgate/chartgate/statechart"
)

// Options describes the machine to the Engine: what stateless cannot say
// about itself.
type Options struct {
	// ID is the machine's id (the root node's); "" means "stateless".
	ID string
	// States lists every state, the initial one first. Required.
	States []stateless.State
	// Final lists the states in which the machine is done.
	Final []stateless.State
	// Triggers lists the triggers events may name. A trigger's event type
	// is its fmt.Sprint.
	Triggers []stateless.Trigger
	// Meta gives a state's meta, as an XState config's "meta" (mcpbind
	// reads its "mcp" member); the root's is Meta[nil].
	Meta map[any]any
}

type engine struct {
	sm       *stateless.StateMachine
	id       string
	states   []stateless.State
	names    []string
	final    []bool
	triggers map[string]stateless.Trigger
	nodes    []statechart.Node
	mu       sync.Mutex // serializes fires
}

// New returns an Engine running sm, which must be built on this package's
// storage ([State] and [SetState]).
func New(sm *stateless.StateMachine, opts *Options) (statechart.Engine, error) {
	if sm == nil || opts == nil || len(opts.States) == 0 {
		return nil, errors.New("statelessengine: New needs a machine and Options.States")
	}
	e := &engine{sm: sm, id: opts.ID, triggers: map[string]stateless.Trigger{}}
	if e.id == "" {
		e.id = "stateless"
	}
	seen := map[string]bool{}
	for i, s := range opts.States {
		name := fmt.Sprint(s)
		if name == "" || seen[name] {
			return nil, fmt.Errorf("statelessengine: Options.States[%d]: the name %q is empty or given twice", i, name)
		}
		seen[name] = true
		e.states = append(e.states, s)
		e.names = append(e.names, name)
		e.final = append(e.final, slices.Contains(opts.Final, s))
	}
	for i, s := range opts.Final {
		if !slices.Contains(opts.States, s) {
			return nil, fmt.Errorf("statelessengine: Options.Final[%d]: %v is not in Options.States", i, s)
		}
	}
	for i, t := range opts.Triggers {
		name := fmt.Sprint(t)
		if _, dup := e.triggers[name]; dup || name == "" {
			return nil, fmt.Errorf("statelessengine: Options.Triggers[%d]: the name %q is empty or given twice", i, name)
		}
		e.triggers[name] = t
	}
	// The machine must read and write the state this package gives it.
	// A sentinel no other storage can hold shows it.
	sentinel := new(cell)
	probe := &cell{state: sentinel}
	if got, err := sm.State(context.WithValue(context.Background(), cellKey{}, probe)); err != nil || got != stateless.State(sentinel) {
		return nil, errors.New("statelessengine: the machine does not keep its state in this package's storage: build it with stateless.NewStateMachineWithExternalStorage(statelessengine.State, statelessengine.SetState, stateless.FiringImmediate)")
	}
	e.nodes = e.describe(opts.Meta)
	return e, nil
}

func (e *engine) describe(meta map[any]any) []statechart.Node {
	root := statechart.Node{ID: e.id, Type: "compound", Initial: e.id + "." + e.names[0], Meta: meta[nil]}
	nodes := []statechart.Node{root}
	events := make([]string, 0, len(e.triggers))
	for name := range e.triggers {
		events = append(events, name)
	}
	slices.Sort(events)
	for i, s := range e.states {
		n := statechart.Node{ID: e.id + "." + e.names[i], Key: e.names[i], Parent: e.id, Type: "atomic", Meta: meta[s]}
		if e.final[i] {
			n.Type = "final"
		} else {
			for _, ev := range events {
				n.Transitions = append(n.Transitions, statechart.TransitionInfo{Event: ev})
			}
		}
		nodes = append(nodes, n)
	}
	return nodes
}

// cell holds the state of one call while stateless runs it.
type cell struct{ state stateless.State }

type cellKey struct{}

// State is the state accessor of a machine an Engine runs: pass it to
// stateless.NewStateMachineWithExternalStorage. It returns the state of
// the Engine call ctx belongs to, and an error outside one.
func State(ctx context.Context) (stateless.State, error) {
	c, _ := ctx.Value(cellKey{}).(*cell)
	if c == nil {
		return nil, errors.New("statelessengine: the machine's state is read outside an Engine call")
	}
	return c.state, nil
}

// SetState is the state mutator that goes with [State].
func SetState(ctx context.Context, s stateless.State) error {
	c, _ := ctx.Value(cellKey{}).(*cell)
	if c == nil {
		return errors.New("statelessengine: the machine's state is set outside an Engine call")
	}
	c.state = s
	return nil
}

// state is an immutable state of one instance: the index of its state in
// Options.States.
type state struct {
	e *engine
	i int
}

func (s *state) Value() any { return s.e.names[s.i] }

func (s *state) Status() statechart.Status {
	if s.e.final[s.i] {
		return statechart.StatusDone
	}
	return statechart.StatusActive
}

func (s *state) Context() map[string]any { return map[string]any{} }

func (s *state) StateIDs() []string { return []string{s.e.id, s.e.id + "." + s.e.names[s.i]} }

type persisted struct {
	Status statechart.Status `json:"status"`
	Value  string            `json:"value"`
}

func (s *state) MarshalJSON() ([]byte, error) {
	return json.Marshal(persisted{Status: s.Status(), Value: s.e.names[s.i]})
}

func (e *engine) ID() string               { return e.id }
func (e *engine) Nodes() []statechart.Node { return slices.Clone(e.nodes) }

func (e *engine) Start(context.Context, time.Time) (statechart.State, error) {
	return &state{e, 0}, nil
}

func (e *engine) own(s statechart.State) (*state, error) {
	st, ok := s.(*state)
	if !ok || st.e != e {
		return nil, fmt.Errorf("statelessengine: state %T does not belong to machine %q", s, e.id)
	}
	return st, nil
}

func (e *engine) index(s stateless.State) (int, error) {
	for i, x := range e.states {
		if x == s {
			return i, nil
		}
	}
	return 0, fmt.Errorf("statelessengine: machine %q entered %v, which is not in Options.States", e.id, s)
}

func (e *engine) Send(ctx context.Context, s statechart.State, ev statechart.Event, _ time.Time) (statechart.State, error) {
	st, err := e.own(s)
	if err != nil {
		return s, err
	}
	trig, ok := e.triggers[ev.Type]
	if !ok || e.final[st.i] {
		return s, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	c := &cell{state: e.states[st.i]}
	cctx := context.WithValue(ctx, cellKey{}, c)
	can, err := e.sm.CanFireCtx(cctx, trig, ev)
	if err != nil || !can {
		return s, err
	}
	if err := e.sm.FireCtx(cctx, trig, ev); err != nil {
		return s, fmt.Errorf("statelessengine: firing %s: %w", ev.Type, err)
	}
	i, err := e.index(c.state)
	if err != nil {
		return s, err
	}
	return &state{e, i}, nil
}

func (e *engine) Advance(_ context.Context, s statechart.State, _ time.Time) (statechart.State, error) {
	_, err := e.own(s)
	return s, err
}

func (e *engine) Can(ctx context.Context, s statechart.State, ev statechart.Event) (bool, error) {
	st, err := e.own(s)
	if err != nil {
		return false, err
	}
	trig, ok := e.triggers[ev.Type]
	if !ok || e.final[st.i] {
		return false, nil
	}
	return e.sm.CanFireCtx(context.WithValue(ctx, cellKey{}, &cell{state: e.states[st.i]}), trig, ev)
}

func (e *engine) Restore(data []byte) (statechart.State, error) {
	var p persisted
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("statelessengine: restoring a state of %q: %w", e.id, err)
	}
	i := slices.Index(e.names, p.Value)
	if i < 0 {
		return nil, fmt.Errorf("statelessengine: restoring a state of %q: %q is not one of its states", e.id, p.Value)
	}
	return &state{e, i}, nil
}
