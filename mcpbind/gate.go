// This file defines Gate, its options and bindings: which tools are
// visible in which states, and which event a successful call sends.

package mcpbind

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/internal/core"
	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/statechart/flat"
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
	core *gateCore

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

// gateCore is the part of a Gate that decides and records calls in no
// transport's terms: the machine and its meta.mcp rules, the store, the
// leases, the budgets, approvals, jobs and the store keys of sessions
// (held as a conn). Gate adds the servers it is attached to and what only
// MCP has: the start tool's limits, tool lists and list_changed,
// elicitation, AfterCall, and the sweep that forgets ended sessions.
type gateCore struct {
	engine    statechart.Engine
	nodes     []statechart.Node
	byID      map[string]int
	byPath    map[string]int
	events    core.EventSet
	mcp       []*StateMCP // per node, nil when it has no meta.mcp
	model     *core.Model
	records   *gate.Core // the store's load and compare-and-swap
	store     Store
	values    ValueStore // store, if it can hold records as values
	prefix    string
	now       func() time.Time
	log       *slog.Logger
	retries   int
	timeout   time.Duration
	hlimit    int // run history bound; 0 keeps none
	hbytes    int
	audit     bool
	wversion  string // Options.WorkflowVersion
	leaseTTL  time.Duration
	busyWait  time.Duration
	maxArgs   int
	maxRecord int
	bufs      sync.Pool     // *[]byte: scratch buffers (scratch, release)
	leases    leaseWatchers // calls waiting for a lease
	paths     []string      // key path of each node ("" for the root)
	limited   bool          // some state has maxCalls
	// Options.ResetCallsOnTransition.
	resetCalls bool
	// dataless: the engine ignores event data (the flat engine), so the
	// call's arguments and result need not be decoded into the event.
	dataless bool
	onTrans  func(context.Context, Transition)
	// effects and jobs are set when the machine has actors: the gate runs
	// its promise children as jobs (jobs.go); waits are the steps of a
	// refusal's path that wait for an actor's result.
	effects statechart.EffectEngine
	jobs    *jobRunner
	waits   []core.Move

	rules atomic.Pointer[rules]

	jsonEvents      map[string]string
	jsonInvalidates map[string][]string
	jsonOutput      map[string]bool // meta.mcp.outputGuards
	jsonPatterns    []pattern
	allNodes        core.Bitset    // every node
	refs            []core.NameRef // every tool name and pattern the machine gives

	approvalTTL    time.Duration
	approverKey    []byte
	defaultDeny    bool
	checkpointText func(CallLimit) (string, bool) // false: use the default
	ungated        []string                       // tool names and patterns DefaultDeny leaves visible
	ownTools       nameSet                        // the gate's own tools (start, workflow tools)
	external       []string                       // Options.ExternalTools: gated outside the server
	gatedAs        func(string) string

	initial *view // the initial state, shared by sessions without a record
	// initialTimers: the initial state has pending delayed events, or
	// jobs: persist it per session.
	initialTimers bool

	instance string        // random: distinguishes the keys of sessions without an id, and lease ids, from other instances
	seq      atomic.Uint64 // counts those keys and lease ids

	// Without a ValueStore, the last decoded record (by version) of each
	// workflow:
	decoded sync.Map  // store key -> *view, of sessions
	handled viewCache // of workflows named by handles, bounded

	start string            // the start tool's name ("" with HandlesNever)
	named func(conn) string // Options.SessionKey

	watch atomic.Pointer[gateWatch] // the store's change feed, once attached (watch.go)

	mu       sync.Mutex
	sessions map[conn]*session
	sweeping bool // a goroutine forgets the sessions that ended (sweep)
	// sweeper, run on a goroutine of its own when the first session is
	// registered, forgets the sessions that ended (Gate.sweep).
	sweeper func()
	// invalidated reports the invalidation patterns of a tool that moved
	// its workflow outside any front door (Gate.invalidate); moved tells
	// the sessions whose workflow a job's result moved (Gate.jobMoved).
	invalidated func(ctx context.Context, tool string, ti *core.ToolInfo)
	moved       func(ctx context.Context, c *gatedCall, out committed)
	// watched and told: the sessions of a key that changed in the store,
	// and telling them (Gate.tell).
	watched func(key string) bool
	told    func(ctx context.Context, key string, before, after *view, except conn)
}

var (
	unboundInfo = &core.ToolInfo{}
	startInfo   = &core.ToolInfo{Mode: core.ModeStart}
	deniedInfo  = &core.ToolInfo{Mode: core.ModeDenied}
)

// rules is an immutable set of Go bindings with the derived tables; Bind
// replaces it.
type rules struct {
	bound      map[string]*core.ToolInfo // Go bindings by tool name
	eventTools []string                  // tools that send an event, sorted
	sigTools   []string                  // Go-bound and "can" tools, for change detection
	cache      sync.Map                  // tool name -> *core.ToolInfo
	cached     atomic.Int64
	lists      sync.Map // cursor -> *listMemo
	nlists     atomic.Int64
}

// pattern is one distinct tool pattern of the machine's meta.mcp.tools
// (or, deny set, of its meta.mcp.deny), with the nodes that list it.
type pattern struct {
	glob  string
	deny  bool
	nodes core.Bitset
}

// patterns returns globs as patterns (without nodes, to be compared).
func patterns(globs []string, deny bool) []pattern {
	out := make([]pattern, len(globs))
	for i, g := range globs {
		out[i] = pattern{glob: g, deny: deny}
	}
	return out
}

const maxCachedTools = 100_000

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
		start = "workflow_start"
	}
	g := &Gate{
		handles:       o.Handles,
		startLimit:    newStartLimiter(o.StartLimit),
		listAll:       o.ListAllTools,
		checkpointOwn: o.CheckpointListsOwnTools,
		elicit:        o.ElicitApprovals,
	}
	c, err := newCore(engine, &coreOptions{
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
		Watched:                func(key string) bool { return len(g.sessionsOfKey(key)) > 0 },
		Told:                   g.tell,
	})
	if err != nil {
		return nil, err
	}
	g.core = c
	g.guardCallbacks(&o)
	return g, nil
}

// coreOptions configure the part of a gate in no transport's terms: the
// fields of [Options] it reads, with the same meanings, and what the
// front door gives it.
type coreOptions struct {
	Store                  Store
	KeyPrefix              string
	Now                    func() time.Time
	Logger                 *slog.Logger
	MaxRetries             int
	StoreTimeout           time.Duration
	OnTransition           func(context.Context, Transition)
	HistoryLimit           int
	HistoryBytes           int
	AuditCalls             bool
	WorkflowVersion        string
	LeaseTTL               time.Duration
	BusyWait               time.Duration
	MaxArgumentBytes       int
	MaxRecordBytes         int
	ResetCallsOnTransition bool
	StartTool              string // "": none (workflows are not named by handles)
	DefaultDeny            bool
	ExternalTools          []string
	GatedAs                func(string) string
	ApprovalTTL            time.Duration
	ApproverKey            []byte
	CheckpointNotice       func(CallLimit) string
	Ungated                []string
	OwnTools               []string
	ResumeJobsEvery        time.Duration

	// Named names the workflow of a connection (Options.SessionKey), ""
	// for none.
	Named func(conn) string
	// Sweeper runs on a goroutine of its own when the first session is
	// registered, and forgets the sessions that ended.
	Sweeper func()
	// Invalidated reports the invalidation patterns of a tool that moved
	// its workflow outside any front door; Moved tells the sessions whose
	// workflow a job's result moved.
	Invalidated func(ctx context.Context, tool string, ti *core.ToolInfo)
	Moved       func(ctx context.Context, c *gatedCall, out committed)
	// Watched reports whether a session of this process has the workflow
	// stored under a key; Told tells them of a change made elsewhere, but
	// the one that wrote it (see gateCore.changed).
	Watched func(key string) bool
	Told    func(ctx context.Context, key string, before, after *view, except conn)
}

// newCore makes the part of a gate in no transport's terms: it reads the
// machine's meta.mcp and checks the options.
func newCore(engine statechart.Engine, o *coreOptions) (*gateCore, error) {
	g := &gateCore{
		engine:      engine,
		nodes:       engine.Nodes(),
		store:       o.Store,
		prefix:      o.KeyPrefix,
		now:         o.Now,
		log:         o.Logger,
		retries:     o.MaxRetries,
		timeout:     o.StoreTimeout,
		hlimit:      o.HistoryLimit,
		hbytes:      o.HistoryBytes,
		audit:       o.AuditCalls,
		wversion:    o.WorkflowVersion,
		leaseTTL:    o.LeaseTTL,
		busyWait:    o.BusyWait,
		maxArgs:     o.MaxArgumentBytes,
		maxRecord:   o.MaxRecordBytes,
		resetCalls:  o.ResetCallsOnTransition,
		start:       o.StartTool,
		named:       o.Named,
		sweeper:     o.Sweeper,
		invalidated: o.Invalidated,
		moved:       o.Moved,
		watched:     o.Watched,
		told:        o.Told,
		sessions:    map[conn]*session{},
	}
	switch {
	case g.hlimit == 0:
		g.hlimit = 20
	case g.hlimit < 0:
		g.hlimit = 0
	}
	if g.hbytes <= 0 {
		g.hbytes = 256 << 10
	}
	if g.start != "" {
		if msg := core.CheckToolName(g.start, false); msg != "" {
			return nil, fmt.Errorf("mcpbind: Options.StartTool: %s", msg)
		}
	}
	g.records = gate.NewCore(&gate.CoreOptions{Store: g.store, MaxRetries: g.retries})
	g.store, g.values, g.retries = g.records.Store(), g.records.Values(), g.records.MaxRetries()
	if g.prefix == "" {
		g.prefix = "mcpbind:" + engine.ID() + ":"
	}
	if g.now == nil {
		g.now = time.Now
	}
	if g.log == nil {
		g.log = slog.Default()
	}
	if g.timeout <= 0 {
		g.timeout = 10 * time.Second
	}
	if g.leaseTTL <= 0 {
		g.leaseTTL = 30 * time.Second
	}
	if g.busyWait <= 0 {
		g.busyWait = 30 * time.Second
	}
	if g.maxArgs <= 0 {
		g.maxArgs = 1 << 20
	}
	if g.maxRecord <= 0 {
		g.maxRecord = 4 << 20
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	g.instance = hex.EncodeToString(rnd[:])

	g.byID = make(map[string]int, len(g.nodes))
	g.allNodes = core.NewBitset(len(g.nodes))
	for i, n := range g.nodes {
		g.byID[n.ID] = i
		g.allNodes.Set(i)
	}
	paths := core.NodePaths(g.nodes, g.byID)
	g.byPath = make(map[string]int, len(g.nodes))
	keyPaths := make([]string, len(g.nodes))
	for i, n := range g.nodes {
		if n.Parent == "" {
			continue
		}
		p := n.Key
		if pp := keyPaths[g.byID[n.Parent]]; pp != "" {
			p = pp + "." + n.Key
		}
		keyPaths[i] = p
		g.byPath[p] = i
	}
	g.paths = keyPaths
	_, g.dataless = engine.(*flat.Machine)
	g.events = core.MachineEvents(g.nodes)
	g.model = core.NewModel(g.nodes, g.byID)

	var errs statechart.ErrorList
	g.mcp = make([]*StateMCP, len(g.nodes))
	g.jsonEvents = map[string]string{}
	g.jsonInvalidates = map[string][]string{}
	g.jsonOutput = map[string]bool{}
	eventFrom := map[string]int{}
	invalFrom := map[string]int{}
	type patKey struct {
		glob string
		deny bool
	}
	patIdx := map[patKey]int{}
	for i, n := range g.nodes {
		sm := core.ParseMCP(n, paths[i], g.events, &errs, &g.refs)
		if sm == nil {
			continue
		}
		g.mcp[i] = sm
		g.limited = g.limited || sm.MaxCalls > 0
		g.ungated = append(g.ungated, sm.Ungated...)
		for _, p := range append(patterns(sm.Tools, false), patterns(sm.Deny, true)...) {
			j, ok := patIdx[patKey{p.glob, p.deny}]
			if !ok {
				j = len(g.jsonPatterns)
				patIdx[patKey{p.glob, p.deny}] = j
				p.nodes = core.NewBitset(len(g.nodes))
				g.jsonPatterns = append(g.jsonPatterns, p)
			}
			g.jsonPatterns[j].nodes.Set(i)
		}
		for _, tool := range core.SortedKeys(sm.Events) {
			ev := sm.Events[tool]
			if prev, ok := g.jsonEvents[tool]; ok && prev != ev {
				errs = append(errs, &statechart.Error{
					Path: string(paths[i].Key("meta").Key("mcp").Key("events").Key(tool)),
					Msg:  fmt.Sprintf("tool %q already sends event %q (in state %q)", tool, prev, g.nodes[eventFrom[tool]].ID),
				})
				continue
			}
			g.jsonEvents[tool] = ev
			eventFrom[tool] = i
		}
		for _, tool := range sm.OutputGuards {
			g.jsonOutput[tool] = true
		}
		for _, tool := range core.SortedKeys(sm.Invalidates) {
			if _, ok := invalFrom[tool]; !ok {
				invalFrom[tool] = i
			}
			g.jsonInvalidates[tool] = dedupe(g.jsonInvalidates[tool], sm.Invalidates[tool])
		}
	}
	for _, tool := range core.SortedKeys(invalFrom) {
		if _, ok := g.jsonEvents[tool]; !ok {
			errs = append(errs, &statechart.Error{
				Path: string(paths[invalFrom[tool]].Key("meta").Key("mcp").Key("invalidates").Key(tool)),
				Msg:  fmt.Sprintf("tool %q sends no event (meta.mcp.events), so its calls cause no transition to invalidate anything: declare what every call of it invalidates with a statesync policy instead", tool),
			})
		}
	}
	g.defaultDeny = o.DefaultDeny
	g.external = slices.Clone(o.ExternalTools)
	g.gatedAs = o.GatedAs
	g.approvalTTL = o.ApprovalTTL
	if g.approvalTTL <= 0 {
		g.approvalTTL = 24 * time.Hour
	}
	g.approverKey = slices.Clone(o.ApproverKey)
	g.guardCallbacks(o)
	for i, u := range o.Ungated {
		if msg := core.CheckToolName(u, true); msg != "" {
			errs = append(errs, &statechart.Error{Path: fmt.Sprintf("Options.Ungated[%d]", i), Msg: msg})
			continue
		}
		g.ungated = append(g.ungated, u)
	}
	for _, name := range o.OwnTools {
		if msg := core.CheckToolName(name, false); msg != "" {
			errs = append(errs, &statechart.Error{Path: "Options.OwnTools", Msg: msg})
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	if g.start != "" {
		g.ownTools.add(g.start)
	}
	for _, name := range o.OwnTools {
		g.ownTools.add(name)
	}

	s, err := engine.Start(context.Background(), g.now())
	if err != nil {
		return nil, fmt.Errorf("mcpbind: starting machine %q: %w", engine.ID(), err)
	}
	if p, ok := s.(interface{ NextDue() (time.Time, bool) }); ok {
		_, g.initialTimers = p.NextDue()
	}
	if ee, ok := engine.(statechart.EffectEngine); ok && ee.UsesActors() {
		g.effects, g.jobs, g.waits = ee, newJobRunner(), core.ActorWaits(g.nodes)
		g.initialTimers = g.initialTimers || len(wantedJobs(s)) > 0 // each workflow runs its own jobs
	}
	g.initial, err = g.newView("", s, core.Record{}, 0)
	if err != nil {
		return nil, err
	}
	g.rules.Store(g.buildRules(map[string]*core.ToolInfo{}))
	if o.ResumeJobsEvery > 0 && g.jobs != nil {
		if _, ok := g.store.(Lister); ok {
			g.jobs.wg.Add(1)
			go g.resumeLoop(o.ResumeJobsEvery)
		}
	}
	return g, nil
}

// Engine is [Gate.Engine].
func (g *gateCore) Engine() statechart.Engine { return g.engine }

// States is [Gate.States].
func (g *gateCore) States() []StateMCP {
	var out []StateMCP
	for _, sm := range g.mcp {
		if sm != nil {
			out = append(out, *sm)
		}
	}
	return out
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
		ti.Invalidates = dedupe(ti.Invalidates, []string{p})
	}
	if len(ti.Invalidates) > 0 && b.Event == "" {
		return fmt.Errorf("mcpbind: Bind(%q): Invalidates needs an Event: without one the call causes no transition", tool)
	}
	if b.Event != "" {
		if core.ReservedEvent(b.Event) {
			return fmt.Errorf("mcpbind: Bind(%q): event %q is reserved: the chartgate.* events are sent by the gate, never by a tool", tool, b.Event)
		}
		if msg := g.core.events.Check(b.Event); msg != "" {
			return fmt.Errorf("mcpbind: Bind(%q): machine %q: %s", tool, g.core.engine.ID(), msg)
		}
	}
	if len(b.States) == 0 {
		if b.Event == "" {
			return fmt.Errorf("mcpbind: Bind(%q): a binding needs States, an Event, or both", tool)
		}
		ti.Mode = core.ModeCan
	} else {
		ti.Mode = core.ModeStates
		ti.Nodes = core.NewBitset(len(g.core.nodes))
		for _, st := range b.States {
			i, err := g.core.resolveState(st)
			if err != nil {
				return fmt.Errorf("mcpbind: Bind(%q): %w", tool, err)
			}
			ti.Nodes.Set(i)
		}
	}
	for {
		old := g.core.rules.Load()
		bound := make(map[string]*core.ToolInfo, len(old.bound)+1)
		for k, v := range old.bound {
			bound[k] = v
		}
		bound[tool] = ti
		if g.core.rules.CompareAndSwap(old, g.core.buildRules(bound)) {
			return nil
		}
	}
}

// resolveState finds a state node by "#id", key path or id.
func (g *gateCore) resolveState(s string) (int, error) {
	if id, ok := strings.CutPrefix(s, "#"); ok {
		if i, ok := g.byID[id]; ok {
			return i, nil
		}
	} else {
		if i, ok := g.byPath[s]; ok {
			return i, nil
		}
		if i, ok := g.byID[s]; ok {
			return i, nil
		}
	}
	cands := make([]string, 0, len(g.byPath)+len(g.byID))
	for p := range g.byPath {
		cands = append(cands, p)
	}
	for id := range g.byID {
		cands = append(cands, "#"+id)
	}
	sort.Strings(cands)
	if hint := core.DidYouMean(s, cands); hint != "" {
		return 0, fmt.Errorf("machine %q has no state %q (did you mean %q?)", g.engine.ID(), s, hint)
	}
	return 0, fmt.Errorf("machine %q has no state %q", g.engine.ID(), s)
}

func (g *gateCore) buildRules(bound map[string]*core.ToolInfo) *rules {
	r := &rules{bound: bound}
	evs := map[string]bool{}
	sig := map[string]bool{}
	for t, ti := range bound {
		if ti.Event != "" {
			evs[t] = true
		}
		sig[t] = true
	}
	for t := range g.jsonEvents {
		if _, ok := bound[t]; ok {
			continue
		}
		evs[t] = true
		if !g.matchedByPattern(t) {
			sig[t] = true // a "can" tool
		}
	}
	r.eventTools = core.SortedKeys(evs)
	r.sigTools = core.SortedKeys(sig)
	return r
}

func (g *gateCore) matchedByPattern(tool string) bool {
	for _, p := range g.jsonPatterns {
		if !p.deny && core.MatchGlob(p.glob, tool) {
			return true
		}
	}
	return false
}

// nameSet is a set of names read on every call and added to rarely (when
// a server is attached): reads take no lock and allocate nothing. The zero
// value is an empty set.
type nameSet struct {
	mu    sync.Mutex // serialises add
	names atomic.Pointer[map[string]struct{}]
}

// has reports whether name is in the set.
func (s *nameSet) has(name string) bool {
	if m := s.names.Load(); m != nil {
		_, ok := (*m)[name]
		return ok
	}
	return false
}

// add puts name in the set.
func (s *nameSet) add(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.has(name) {
		return
	}
	m := map[string]struct{}{name: {}}
	if old := s.names.Load(); old != nil {
		for n := range *old {
			m[n] = struct{}{}
		}
	}
	s.names.Store(&m)
}

// isUngated reports whether DefaultDeny leaves a tool visible: it is one of
// the gate's own tools, or declared ungated.
func (g *gateCore) isUngated(tool string) bool {
	if g.ownTools.has(tool) {
		return true
	}
	for _, u := range g.ungated {
		if core.MatchGlob(u, tool) {
			return true
		}
	}
	return false
}

// info returns how a tool is gated. When remember is set, the answer is
// cached (only for names the server lists, so that clients cannot grow the
// cache with made-up names).
func (g *gateCore) info(r *rules, tool string, remember bool) *core.ToolInfo {
	if g.ownTools.has(tool) {
		return unboundInfo // workflow_status and workflow_transition: never gated, whatever the patterns
	}
	if ti, ok := r.bound[tool]; ok {
		return ti
	}
	if v, ok := r.cache.Load(tool); ok {
		return v.(*core.ToolInfo)
	}
	alias := g.alias(tool)
	if ti, ok := r.bound[alias]; ok && alias != "" {
		return ti
	}
	ti := unboundInfo
	var nodes, deny core.Bitset
	for _, p := range g.jsonPatterns {
		if !core.MatchGlob(p.glob, tool) && (alias == "" || !core.MatchGlob(p.glob, alias)) {
			continue
		}
		set := &nodes
		if p.deny {
			set = &deny
		}
		if *set == nil {
			*set = core.NewBitset(len(g.nodes))
		}
		set.Or(p.nodes)
	}
	ev, inv, out := g.jsonEvents[tool], g.jsonInvalidates[tool], g.jsonOutput[tool]
	if ev == "" && alias != "" {
		ev, inv, out = g.jsonEvents[alias], g.jsonInvalidates[alias], g.jsonOutput[alias]
	}
	switch {
	case nodes != nil:
		ti = &core.ToolInfo{Mode: core.ModeStates, Nodes: nodes, Deny: deny, Event: ev, Invalidates: inv, OutputGuards: out}
	case ev != "":
		ti = &core.ToolInfo{Mode: core.ModeCan, Deny: deny, Event: ev, Invalidates: inv, OutputGuards: out}
	case deny != nil:
		// Only denied somewhere: visible elsewhere, like an unbound tool.
		ti = &core.ToolInfo{Mode: core.ModeStates, Nodes: g.allNodes, Deny: deny}
	case g.defaultDeny && !g.isUngated(tool) && (alias == "" || !g.isUngated(alias)):
		ti = deniedInfo
	}
	if remember && r.cached.Load() < maxCachedTools {
		if _, loaded := r.cache.LoadOrStore(tool, ti); !loaded {
			r.cached.Add(1)
		}
	}
	return ti
}

// alias is the second name of a tool (Options.GatedAs), "" if none.
func (g *gateCore) alias(tool string) string {
	if g.gatedAs == nil {
		return ""
	}
	if a := g.gatedAs(tool); a != tool {
		return a
	}
	return ""
}

// dedupe appends to dst the strings of src not already in it.
func dedupe(dst, src []string) []string {
	for _, x := range src {
		if !slices.Contains(dst, x) {
			dst = append(dst, x)
		}
	}
	return dst
}
