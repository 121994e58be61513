// This file defines Gate, its options and bindings: which tools are
// visible in which states, and which event a successful call sends.

package mcpbind

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/internal/core"
	"github.com/chartgate/chartgate/statechart"
)

// Options configures [New]. The zero value (or nil) means the defaults.
// A panic in one of its functions is recovered and logged, and the gate
// goes on without it (see the package documentation, "Callbacks").
type Options struct {
	// Store keeps the workflow state of each session. Default: a new
	// [MemoryStore] with its defaults.
	Store Store
	// KeyPrefix starts every store key, so that several gates can share
	// one store. Default "mcpbind:<machine id>:".
	KeyPrefix string
	// SessionKey, if set, names the workflow of a session; the store key is
	// KeyPrefix + "session:" + the name, the same as [Ref].Name's. Use it to
	// key workflows by something other than the session: an id the client
	// presents, a user, an agent session that hooks share (see package
	// hook). A named workflow belongs to its name, not to the session: it
	// outlives the session (a reconnecting client finds it), and expires
	// with the store's TTL. An empty name means the default: the session's
	// Mcp-Session-Id (Streamable HTTP), else a key private to this process
	// (stdio, in-memory); those workflows end with their session.
	SessionKey func(*mcp.ServerSession) string
	// Now returns the current time, for delayed transitions. Default
	// time.Now.
	Now func() time.Time
	// Logger receives store and engine failures. Default slog.Default().
	Logger *slog.Logger
	// MaxRetries bounds how often a save is retried after a
	// compare-and-swap conflict (with a short randomised backoff). A call
	// waiting to take the workflow's lease, whose conflicts are other
	// calls taking it, is bounded by BusyWait instead. Default 100.
	MaxRetries int
	// StoreTimeout bounds the store operations that save a transition
	// after the tool ran; they do not stop when the request is cancelled,
	// since the tool has already had its effect. Default 10 s.
	StoreTimeout time.Duration
	// OnTransition, if set, is called after each saved transition that a
	// tool call (or workflow_transition) caused, before the call's result
	// is returned, and after each saved transition of a job's result (on
	// the job's goroutine; see "Jobs" in the package documentation). Every such transition is also logged at Info level and
	// kept in the workflow's run history.
	OnTransition func(context.Context, Transition)
	// HistoryLimit bounds the run history kept with each workflow (see
	// [Gate.Workflow]): the newest HistoryLimit entries are kept.
	// Default 20; a negative value keeps none.
	HistoryLimit int
	// HistoryBytes bounds the size of the run history kept with each
	// workflow: the oldest entries go first. Default 256 KiB.
	HistoryBytes int
	// AuditCalls records every gated call in the run history too, not only
	// the transitions: the calls that ran (or failed) and those that were
	// refused, with the refusal's code. Each costs a write to the store.
	AuditCalls bool
	// WorkflowVersion names the workflow definition the gate runs, such as
	// a digest of its file; every record the gate saves is stamped with it.
	// A record stamped with another version is migrated when its active
	// states are all states of this one (by state id), and refused with a
	// [*VersionError] otherwise (see version.go). Empty: records are not
	// stamped, and the stamps of others are not checked.
	WorkflowVersion string

	// LeaseTTL is how long a call whose tool may send an event holds its
	// workflow without renewing the hold (see the package documentation,
	// "Concurrent calls"). The gate renews it every third of LeaseTTL
	// while the tool runs, so it matters only when a server instance dies
	// during a call: the workflow is free again at most LeaseTTL later.
	// It is also the lease of a job (see the package documentation,
	// "Jobs"): the job of an instance that died is resumed LeaseTTL
	// after its last renewal at the earliest. Default 30 s.
	LeaseTTL time.Duration
	// ResumeJobsEvery, if positive, makes the gate call [Gate.ResumeJobs]
	// when it is created and then every ResumeJobsEvery until
	// [Gate.Close], so that the jobs of an instance that died are resumed
	// by another (or by the restarted one) within LeaseTTL plus
	// ResumeJobsEvery. It needs a store that implements [Lister] and a
	// machine with actors; otherwise it does nothing. Default 0: jobs are
	// resumed only by ResumeJobs and by the saves of their workflows (a
	// call of a tool of the workflow claims its jobs whose lease expired).
	ResumeJobsEvery time.Duration
	// BusyWait bounds how long such a call waits for another call of the
	// same workflow to finish before it is refused with
	// CodeWorkflowBusy; the request's cancellation also ends the wait.
	// Default 30 s.
	BusyWait time.Duration
	// MaxArgumentBytes bounds the size of a gated call's arguments, as
	// JSON; a larger call is refused with CodeTooLarge without running.
	// Default 1 MiB.
	MaxArgumentBytes int
	// MaxRecordBytes bounds the size of a workflow's record in the store
	// (its state, context included, and its run history, whose entries
	// keep large values as digests). A call after which the record would
	// be larger is refused with CodeTooLarge without running. The call's
	// result is not known then: a machine that copies results into its
	// context may exceed the bound by one result. Default 4 MiB.
	MaxRecordBytes int

	// Handles says when workflows are keyed by explicit handles instead of
	// sessions (see the package documentation, "Workflow handles"). Default
	// HandlesAuto.
	Handles HandleMode
	// StartTool names the tool that starts a workflow and returns its
	// handle, the workflow_id. Default "workflow_start".
	StartTool string
	// StartLimit, if set, limits how often each client may call the start
	// tool. Recommended for servers open to clients you do not trust.
	StartLimit *StartLimit
	// ListAllTools lists every tool to sessions of every protocol, as
	// protocol 2026-07-28 does: the same list at every call, each gated
	// tool with a sentence in its description saying in which states it
	// works, no notifications/tools/list_changed when the state changes;
	// a call is refused by the session's state, as in a session whose
	// list follows its workflow. For clients that read a server's tools
	// once and ignore list_changed (Codex): with the default list, a tool
	// that only a later state allows stays unknown to them. Sessions keyed
	// by handles list every tool anyway.
	ListAllTools bool

	// DefaultDeny refuses every tool that the workflow does not name: a
	// tool that no state lists in meta.mcp.tools, that sends no event
	// (meta.mcp.events) and that has no Go binding is hidden and refused
	// like a tool of another state, unless it is declared ungated
	// (meta.mcp.ungated on the machine's root state, or Ungated). Without
	// it such a tool is always visible, so a misspelt name in the machine
	// leaves the tool it meant ungated (the gate logs, once, every name
	// the machine gives that no tool of the server has; see
	// [Gate.CheckTools]). Recommended.
	DefaultDeny bool
	// Ungated lists tools, by name or pattern ("*" matches any run of
	// characters), that DefaultDeny leaves visible, in addition to the
	// machine's meta.mcp.ungated.
	Ungated []string
	// ExternalTools lists tools the workflow names that run outside the
	// server, gated through [Gate.Check] and [Gate.Record] (an agent host's
	// own tools, gated by its hooks): [Gate.CheckTools] and the gate's log
	// do not report them as names no tool of the server has.
	ExternalTools []string
	// GatedAs, if set, gives a second name under which the workflow gates
	// a tool of the server, "" for none: a gateway that lists a tool as
	// "up1__x" because two upstreams have an "x" gates it as "x" too. A
	// pattern of the workflow (meta.mcp.tools, deny, ungated) matches the
	// tool when it matches either name, and the tool sends the event given
	// for its own name, else the one given for the second. It must
	// depend on the name only: the gate remembers its answer.
	GatedAs func(tool string) string

	// ElicitApprovals asks the user, through the client, to approve a
	// transition that workflow_transition parks for approval (a state with
	// meta.mcp.approval), when the client supports MCP elicitation: by
	// elicitation before protocol 2026-07-28, by an input-required result
	// the client answers on retry under 2026-07-28 (see the package
	// documentation, "Approvals"). Otherwise, or when the user declines,
	// the transition waits for [Gate.Approve] (chartgate approve).
	ElicitApprovals bool
	// ApprovalTTL is how long a pending approval can be approved after
	// the workflow entered its approval state; once it expired, an attempt
	// to approve it rejects it. Default 24 h.
	ApprovalTTL time.Duration
	// ApproverKey verifies the grants of [Gate.Approve] (chartgate
	// approve): each carries an [ApprovalToken] made with this key. Without
	// it Gate.Approve refuses every grant. Keep it where the agent cannot
	// read it (see the package documentation, "Threat model").
	ApproverKey []byte

	// AfterCall, if set, is called after a gated call of a tool ran (its
	// own event recorded), and returns events to send to the workflow
	// next: a gateway's file interrupts (a tool that wrote a file the
	// workflow watches). Each is sent as [Gate.Send] sends, with its
	// reason as the sender; one that moves the workflow appends a notice
	// to the call's result, and the session is notified once if its tools
	// changed.
	AfterCall func(context.Context, Call) []FollowUp

	// CheckpointNotice, if set, writes the notice appended to the result
	// of a call past a budget whose meta.mcp.onMaxCalls is "warn". The
	// default says how many calls ran of how many allowed, and to move the
	// workflow on.
	CheckpointNotice func(CallLimit) string

	// OwnTools names tools the server adds besides the workflow tools that
	// the gate never gates: always listed and run, whatever the state
	// (the gateway's statewright_* tools). Their handlers must not let the
	// agent change the workflow.
	OwnTools []string

	// CheckpointListsOwnTools lists only the gate's own tools (the
	// workflow tools) while a budget whose onMaxCalls is "warn" is used
	// up, as Statewright's gateway does at a checkpoint; calls of the
	// other tools still run, with the notice.
	CheckpointListsOwnTools bool
	// ResetCallsOnTransition starts every call count afresh on each
	// transition, also one that re-enters the state it leaves, as
	// Statewright resets its iteration count; by default a state that
	// stays active keeps its count.
	ResetCallsOnTransition bool
}

// HandleMode says when a [Gate] keys workflows by explicit handles.
type HandleMode uint8

const (
	// HandlesAuto keys requests of protocol 2026-07-28 and later over
	// HTTP, which have no sessions, by handles; older ones, and every
	// request over a connection that lasts (stdio, in-memory), by their
	// session.
	HandlesAuto HandleMode = iota
	// HandlesAlways keys every request by a handle: for stateless
	// Streamable HTTP servers (every request a new session) serving older
	// clients too.
	HandlesAlways
	// HandlesNever keys every request by its session, and adds no start
	// tool. Requests of protocol 2026-07-28 see every tool listed and are
	// gated by their connection.
	HandlesNever
)

// Gate gates the tools of go-sdk servers by the state of a statechart, one
// workflow instance per MCP session. It is safe for concurrent use; create
// it with [New], bind tools with [Gate.Bind] or the machine's meta, and
// install it with [Gate.Attach].
type Gate struct {
	core *core.Core

	handles    HandleMode    // when workflows are keyed by handles
	startLimit *startLimiter // nil: no limit
	listAll    bool          // Options.ListAllTools
	// Options.CheckpointListsOwnTools.
	checkpointOwn bool
	elicit        bool
	afterCall     func(context.Context, Call) []FollowUp
	names         nameCheck

	noLayerWarned atomic.Bool // the misordering of the chain was logged
	unkeyedLogged atomic.Bool // HandlesNever on a stateless server was logged

	amu      sync.Mutex
	attached map[*mcp.Server]*attachment // guarded by amu
}

var startInfo = &core.ToolInfo{Mode: core.ModeStart}

// New returns a gate for the engine's machine. It reads and validates the
// "mcp" object of every state node's meta (see [StateMCP]); on failure the
// error is a [statechart.ErrorList] with the JSON path of every problem.
// opts may be nil.
func New(engine statechart.Engine, opts *Options) (*Gate, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Handles > HandlesNever {
		return nil, fmt.Errorf("mcpbind: Options.Handles: unknown mode %d", o.Handles)
	}
	start := o.StartTool
	if o.Handles == HandlesNever {
		start = ""
	} else if start == "" {
		start = core.DefaultStartTool
	}
	g := &Gate{
		handles:       o.Handles,
		startLimit:    newStartLimiter(o.StartLimit),
		listAll:       o.ListAllTools,
		checkpointOwn: o.CheckpointListsOwnTools,
		elicit:        o.ElicitApprovals,
	}
	c, err := core.New(engine, &core.Options{
		Store:                  o.Store,
		KeyPrefix:              o.KeyPrefix,
		Now:                    o.Now,
		Logger:                 o.Logger,
		MaxRetries:             o.MaxRetries,
		StoreTimeout:           o.StoreTimeout,
		OnTransition:           o.OnTransition,
		HistoryLimit:           o.HistoryLimit,
		HistoryBytes:           o.HistoryBytes,
		AuditCalls:             o.AuditCalls,
		WorkflowVersion:        o.WorkflowVersion,
		LeaseTTL:               o.LeaseTTL,
		BusyWait:               o.BusyWait,
		MaxArgumentBytes:       o.MaxArgumentBytes,
		MaxRecordBytes:         o.MaxRecordBytes,
		ResetCallsOnTransition: o.ResetCallsOnTransition,
		StartTool:              start,
		DefaultDeny:            o.DefaultDeny,
		ExternalTools:          o.ExternalTools,
		GatedAs:                o.GatedAs,
		ApprovalTTL:            o.ApprovalTTL,
		ApproverKey:            o.ApproverKey,
		CheckpointNotice:       o.CheckpointNotice,
		Ungated:                o.Ungated,
		OwnTools:               o.OwnTools,
		ResumeJobsEvery:        o.ResumeJobsEvery,
		Named:                  g.sessionKey(o.SessionKey),
		Sweeper:                g.sweep,
		Invalidated:            g.invalidate,
		Moved:                  g.jobMoved,
		Watchers:               g.watchers,
	})
	if err != nil {
		return nil, err
	}
	g.core = c
	g.guardCallbacks(&o)
	return g, nil
}

// Bind binds a tool in Go. A Go binding replaces whatever the machine's
// meta says about the tool (its states and its event); binding a tool
// again replaces the earlier binding. Bind may be called while the gate
// serves; sessions see the new binding from their next request.
func (g *Gate) Bind(tool string, b Binding) error {
	if msg := core.CheckToolName(tool, false); msg != "" {
		return fmt.Errorf("mcpbind: Bind: %s", msg)
	}
	ti := &core.ToolInfo{Event: b.Event, OutputGuards: b.OutputGuards}
	if b.OutputGuards && b.Event == "" {
		return fmt.Errorf("mcpbind: Bind(%q): OutputGuards needs an Event: without one no guard reads the result", tool)
	}
	for i, p := range b.Invalidates {
		if msg := core.CheckInvalidates(p); msg != "" {
			return fmt.Errorf("mcpbind: Bind(%q): Invalidates[%d]: %s", tool, i, msg)
		}
		ti.Invalidates = core.Dedupe(ti.Invalidates, []string{p})
	}
	if len(ti.Invalidates) > 0 && b.Event == "" {
		return fmt.Errorf("mcpbind: Bind(%q): Invalidates needs an Event: without one the call causes no transition", tool)
	}
	if b.Event != "" {
		if core.ReservedEvent(b.Event) {
			return fmt.Errorf("mcpbind: Bind(%q): event %q is reserved: the chartgate.* events are sent by the gate, never by a tool", tool, b.Event)
		}
		if msg := g.core.Events.Check(b.Event); msg != "" {
			return fmt.Errorf("mcpbind: Bind(%q): machine %q: %s", tool, g.core.Engine().ID(), msg)
		}
	}
	if len(b.States) == 0 {
		if b.Event == "" {
			return fmt.Errorf("mcpbind: Bind(%q): a binding needs States, an Event, or both", tool)
		}
		ti.Mode = core.ModeCan
	} else {
		ti.Mode = core.ModeStates
		ti.Nodes = core.NewBitset(len(g.core.Nodes))
		for _, st := range b.States {
			i, err := g.core.ResolveState(st)
			if err != nil {
				return fmt.Errorf("mcpbind: Bind(%q): %w", tool, err)
			}
			ti.Nodes.Set(i)
		}
	}
	for {
		old := g.core.Rules.Load()
		bound := make(map[string]*core.ToolInfo, len(old.Bound)+1)
		for k, v := range old.Bound {
			bound[k] = v
		}
		bound[tool] = ti
		if g.core.Rules.CompareAndSwap(old, g.core.BuildRules(bound)) {
			return nil
		}
	}
}
