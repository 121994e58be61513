// This file defines the Core, its options and its rules: the tables read
// from the machine's meta.mcp and the Go bindings, and how one tool is
// gated.

package core

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"hash/maphash"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/internal/histrec"
	"github.com/chartgate/chartgate/statechart"
)

// Core decides and records calls in no transport's terms: the machine
// and its meta.mcp rules, the store, the leases, the budgets, approvals,
// jobs and the store keys of sessions (held as a [Conn]). mcpbind.Gate
// adds the servers it is attached to and what only MCP has: the start
// tool's limits, tool lists and list_changed, elicitation, AfterCall, and
// the sweep that forgets ended sessions.
type Core struct {
	engine    statechart.Engine
	Nodes     []statechart.Node
	byID      map[string]int
	byPath    map[string]int
	Events    EventSet
	mcp       []*gate.StateMCP // per node, nil when it has no meta.mcp
	Model     *Model
	records   *gate.Core // the store's load and compare-and-swap
	store     gate.Store
	values    gate.ValueStore // store, if it can hold records as values
	splits    histrec.Store   // store, if it keeps histories apart
	prefix    string
	Now       func() time.Time
	Log       *slog.Logger
	retries   int
	Timeout   time.Duration
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
	renewals  renewals      // calls that hold a lease, until their first renewal
	Paths     []string      // key path of each node ("" for the root)
	limited   bool          // some state has maxCalls
	// Options.ResetCallsOnTransition.
	resetCalls bool
	// dataless: the engine ignores event data (the flat engine, or a
	// machine none of whose guards and actions reads it), so the call's
	// arguments and result need not be decoded into the event it runs.
	dataless bool
	onTrans  func(context.Context, gate.Transition)
	// realClock: Now is time.Now (Options.Now unset), so that a time read
	// from it serves for the process' own timers too.
	realClock bool
	// localLeases: a session's workflow that only this process may move
	// (localKey) holds its lease in the process: the machine has no jobs
	// and the store keeps encoded records that never expire.
	localLeases bool
	// transitionPC is the source of Transitioned's log records, read once.
	transitionPC atomic.Uintptr
	// prints are the fingerprints of the keys Transitioned logged last.
	prints keyPrints
	// effects and jobs are set when the machine has actors: the gate runs
	// its promise children as jobs (jobs.go); waits are the steps of a
	// refusal's path that wait for an actor's result.
	effects statechart.EffectEngine
	jobs    *jobRunner
	waits   []Move

	Rules atomic.Pointer[Rules]

	jsonEvents      map[string]string
	jsonInvalidates map[string][]string
	jsonOutput      map[string]bool // meta.mcp.outputGuards
	Patterns        []pattern
	allNodes        Bitset    // every node
	Refs            []NameRef // every tool name and pattern the machine gives
	// named are the tool names the machine's meta.mcp gives as they are
	// (not as patterns): Info caches how they are gated whether or not
	// the server lists them, since they are bounded by the machine.
	named map[string]struct{}

	approvalTTL    time.Duration
	approverKey    []byte
	DefaultDeny    bool
	CheckpointText func(gate.CallLimit) (string, bool) // false: use the default
	ungated        []string                            // tool names and patterns DefaultDeny leaves visible
	OwnTools       nameSet                             // the gate's own tools (start, workflow tools)
	External       []string                            // Options.ExternalTools: gated outside the server
	gatedAs        func(string) string

	Initial *View // the initial state, shared by sessions without a record
	// initialTimers: the initial state has pending delayed events, or
	// jobs: persist it per session.
	initialTimers bool

	instance string        // random: distinguishes the keys of sessions without an id, and lease ids, from other instances
	seq      atomic.Uint64 // counts those keys and lease ids

	// Without a ValueStore, the last decoded record (by version) of each
	// workflow:
	decoded sync.Map  // store key -> *view, of sessions
	handled ViewCache // of workflows named by handles, bounded

	Start string            // the start tool's name ("" with HandlesNever)
	Named func(Conn) string // Options.SessionKey

	watch atomic.Pointer[gateWatch] // the store's change feed, once attached (watch.go)

	mu       sync.Mutex
	sessions map[Conn]*session
	sweeping bool // a goroutine forgets the sessions that ended (sweep)
	// sweeper, run on a goroutine of its own when the first session is
	// registered, forgets the sessions that ended (mcpbind's Gate.sweep).
	sweeper func()
	// invalidated reports the invalidation patterns of a tool that moved
	// its workflow outside any front door (mcpbind's Gate.invalidate); moved tells
	// the sessions whose workflow a job's result moved (mcpbind's Gate.jobMoved).
	invalidated func(ctx context.Context, tool string, ti *ToolInfo)
	moved       func(ctx context.Context, c *Call, out Committed)
	// watchers: how to tell the sessions of a key that changed in the
	// store (mcpbind's Gate.watchers).
	watchers func(key string) Teller
}

var (
	UnboundInfo = &ToolInfo{}
	deniedInfo  = &ToolInfo{Mode: ModeDenied}
)

// Rules is an immutable set of Go bindings with the derived tables; Bind
// replaces it.
type Rules struct {
	Bound      map[string]*ToolInfo // Go bindings by tool name
	EventTools []string             // tools that send an event, sorted
	SigTools   []string             // Go-bound and "can" tools, for change detection
	cache      sync.Map             // tool name -> *core.ToolInfo
	cached     atomic.Int64
	Lists      sync.Map // cursor -> *listMemo
	Nlists     atomic.Int64
	// sigs are tool-list signatures by active nodes (ActiveSig).
	sigs atomic.Pointer[map[uint64]Bitset]
}

// maxActiveSigs bounds the signatures Rules keeps by active nodes.
const maxActiveSigs = 1024

// ActiveSig returns the signature kept for the active nodes active (the
// one word of a machine of at most 64 nodes), if one is.
func (r *Rules) ActiveSig(active uint64) (Bitset, bool) {
	if m := r.sigs.Load(); m != nil {
		b, ok := (*m)[active]
		return b, ok
	}
	return nil, false
}

// KeepActiveSig keeps sig as the signature of the active nodes active,
// for a machine whose signatures depend on its active nodes alone. Kept
// signatures are never changed; past maxActiveSigs no more are kept.
func (r *Rules) KeepActiveSig(active uint64, sig Bitset) {
	for {
		old := r.sigs.Load()
		var m map[uint64]Bitset
		if old != nil {
			if len(*old) >= maxActiveSigs {
				return
			}
			m = maps.Clone(*old)
		} else {
			m = map[uint64]Bitset{}
		}
		m[active] = sig
		if r.sigs.CompareAndSwap(old, &m) {
			return
		}
	}
}

// Limited reports whether some state of the machine has maxCalls.
func (g *Core) Limited() bool { return g.limited }

// pattern is one distinct tool pattern of the machine's meta.mcp.tools
// (or, deny set, of its meta.mcp.deny), with the nodes that list it.
type pattern struct {
	glob  string
	deny  bool
	Nodes Bitset
}

const maxCachedTools = 100_000

// DefaultStartTool is the name of the tool that starts a workflow named
// by a handle when the options name none: mcpbind's start tool, which a
// hook's gate must refuse and allow as serve's does.
const DefaultStartTool = "workflow_start"

// Options configure a Core: the fields of mcpbind.Options it reads, with
// the same meanings, and the hooks of the front door that holds sessions.
type Options struct {
	Store                  gate.Store
	KeyPrefix              string
	Now                    func() time.Time
	Logger                 *slog.Logger
	MaxRetries             int
	StoreTimeout           time.Duration
	OnTransition           func(context.Context, gate.Transition)
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
	CheckpointNotice       func(gate.CallLimit) string
	Ungated                []string
	OwnTools               []string
	ResumeJobsEvery        time.Duration

	// Named names the workflow of a connection (Options.SessionKey), ""
	// for none.
	Named func(Conn) string
	// Sweeper runs on a goroutine of its own when the first session is
	// registered, and forgets the sessions that ended.
	Sweeper func()
	// Invalidated reports the invalidation patterns of a tool that moved
	// its workflow outside any front door; Moved tells the sessions whose
	// workflow a job's result moved.
	Invalidated func(ctx context.Context, tool string, ti *ToolInfo)
	Moved       func(ctx context.Context, c *Call, out Committed)
	// Watchers returns how to tell the sessions of this process whose
	// workflow is stored under a key of a change made elsewhere, nil when
	// no session has it (see Core.changed).
	Watchers func(key string) Teller
}

// Teller tells sessions of a change of their workflow from before to
// after, but the session except, whose own call wrote it.
type Teller func(ctx context.Context, before, after *View, except Conn)

// Engine implements mcpbind's Gate.Engine.
func (g *Core) Engine() statechart.Engine { return g.engine }

// States implements mcpbind's Gate.States.
func (g *Core) States() []gate.StateMCP {
	var out []gate.StateMCP
	for _, sm := range g.mcp {
		if sm != nil {
			out = append(out, *sm)
		}
	}
	return out
}

// ResolveState finds a state node by "#id", key path or id.
func (g *Core) ResolveState(s string) (int, error) {
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
	if hint := DidYouMean(s, cands); hint != "" {
		return 0, fmt.Errorf("machine %q has no state %q (did you mean %q?)", g.engine.ID(), s, hint)
	}
	return 0, fmt.Errorf("machine %q has no state %q", g.engine.ID(), s)
}

// BuildRules derives the tables of a set of Go bindings (Bind replaces
// the rules with the result).
func (g *Core) BuildRules(bound map[string]*ToolInfo) *Rules {
	r := &Rules{Bound: bound}
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
	r.EventTools = SortedKeys(evs)
	r.SigTools = SortedKeys(sig)
	return r
}

func (g *Core) matchedByPattern(tool string) bool {
	for _, p := range g.Patterns {
		if !p.deny && MatchGlob(p.glob, tool) {
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

// Has reports whether name is in the set.
func (s *nameSet) Has(name string) bool {
	if m := s.names.Load(); m != nil {
		_, ok := (*m)[name]
		return ok
	}
	return false
}

// Add puts name in the set.
func (s *nameSet) Add(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Has(name) {
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
func (g *Core) isUngated(tool string) bool {
	if g.OwnTools.Has(tool) {
		return true
	}
	for _, u := range g.ungated {
		if MatchGlob(u, tool) {
			return true
		}
	}
	return false
}

// Info returns how a tool is gated. When remember is set, the answer is
// cached (only for names the server lists, so that clients cannot grow the
// cache with made-up names); it is for the names the machine gives too.
func (g *Core) Info(r *Rules, tool string, remember bool) *ToolInfo {
	if g.OwnTools.Has(tool) {
		return UnboundInfo // workflow_status and workflow_transition: never gated, whatever the patterns
	}
	if ti, ok := r.Bound[tool]; ok {
		return ti
	}
	if v, ok := r.cache.Load(tool); ok {
		return v.(*ToolInfo)
	}
	alias := g.Alias(tool)
	if ti, ok := r.Bound[alias]; ok && alias != "" {
		return ti
	}
	ti := UnboundInfo
	var nodes, deny Bitset
	for _, p := range g.Patterns {
		if !MatchGlob(p.glob, tool) && (alias == "" || !MatchGlob(p.glob, alias)) {
			continue
		}
		set := &nodes
		if p.deny {
			set = &deny
		}
		if *set == nil {
			*set = NewBitset(len(g.Nodes))
		}
		set.Or(p.Nodes)
	}
	ev, inv, out := g.jsonEvents[tool], g.jsonInvalidates[tool], g.jsonOutput[tool]
	if ev == "" && alias != "" {
		ev, inv, out = g.jsonEvents[alias], g.jsonInvalidates[alias], g.jsonOutput[alias]
	}
	switch {
	case nodes != nil:
		ti = &ToolInfo{Mode: ModeStates, Nodes: nodes, Deny: deny, Event: ev, Invalidates: inv, OutputGuards: out}
	case ev != "":
		ti = &ToolInfo{Mode: ModeCan, Deny: deny, Event: ev, Invalidates: inv, OutputGuards: out}
	case deny != nil:
		// Only denied somewhere: visible elsewhere, like an unbound tool.
		ti = &ToolInfo{Mode: ModeStates, Nodes: g.allNodes, Deny: deny}
	case g.DefaultDeny && !g.isUngated(tool) && (alias == "" || !g.isUngated(alias)):
		ti = deniedInfo
	}
	if _, ok := g.named[tool]; ok {
		remember = true
	}
	if remember && r.cached.Load() < maxCachedTools {
		if _, loaded := r.cache.LoadOrStore(tool, ti); !loaded {
			r.cached.Add(1)
		}
	}
	return ti
}

// Alias is the second name of a tool (Options.GatedAs), "" if none.
func (g *Core) Alias(tool string) string {
	if g.gatedAs == nil {
		return ""
	}
	if a := g.gatedAs(tool); a != tool {
		return a
	}
	return ""
}

// Dedupe appends to dst the strings of src not already in it.
func Dedupe(dst, src []string) []string {
	for _, x := range src {
		if !slices.Contains(dst, x) {
			dst = append(dst, x)
		}
	}
	return dst
}

// patterns returns globs as patterns (without nodes, to be compared).
func patterns(globs []string, deny bool) []pattern {
	out := make([]pattern, len(globs))
	for i, g := range globs {
		out[i] = pattern{glob: g, deny: deny}
	}
	return out
}

// New returns a Core for the engine's machine: it reads the machine's
// meta.mcp and checks the options. o must not be nil.
func New(engine statechart.Engine, o *Options) (*Core, error) {
	g := &Core{
		engine:      engine,
		Nodes:       engine.Nodes(),
		store:       o.Store,
		prefix:      o.KeyPrefix,
		Now:         o.Now,
		Log:         o.Logger,
		retries:     o.MaxRetries,
		Timeout:     o.StoreTimeout,
		hlimit:      o.HistoryLimit,
		hbytes:      o.HistoryBytes,
		audit:       o.AuditCalls,
		wversion:    o.WorkflowVersion,
		leaseTTL:    o.LeaseTTL,
		busyWait:    o.BusyWait,
		maxArgs:     o.MaxArgumentBytes,
		maxRecord:   o.MaxRecordBytes,
		resetCalls:  o.ResetCallsOnTransition,
		Start:       o.StartTool,
		Named:       o.Named,
		sweeper:     o.Sweeper,
		invalidated: o.Invalidated,
		moved:       o.Moved,
		watchers:    o.Watchers,
		sessions:    map[Conn]*session{},
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
	if g.Start != "" {
		if msg := CheckToolName(g.Start, false); msg != "" {
			return nil, fmt.Errorf("mcpbind: Options.StartTool: %s", msg)
		}
	}
	g.records = gate.NewCore(&gate.CoreOptions{Store: g.store, MaxRetries: g.retries})
	g.store, g.values, g.retries = g.records.Store(), g.records.Values(), g.records.MaxRetries()
	g.splits, _ = g.store.(histrec.Store)
	if g.prefix == "" {
		g.prefix = "mcpbind:" + engine.ID() + ":"
	}
	if g.Now == nil {
		g.Now, g.realClock = time.Now, true
	}
	if g.Log == nil {
		g.Log = slog.Default()
	}
	if g.Timeout <= 0 {
		g.Timeout = 10 * time.Second
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
	g.prints.seed = maphash.MakeSeed()

	g.byID = make(map[string]int, len(g.Nodes))
	g.allNodes = NewBitset(len(g.Nodes))
	for i, n := range g.Nodes {
		g.byID[n.ID] = i
		g.allNodes.Set(i)
	}
	paths := NodePaths(g.Nodes, g.byID)
	g.byPath = make(map[string]int, len(g.Nodes))
	keyPaths := make([]string, len(g.Nodes))
	for i, n := range g.Nodes {
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
	g.Paths = keyPaths
	g.dataless = ignoresData(engine)
	g.Events = MachineEvents(g.Nodes)
	g.Model = NewModel(g.Nodes, g.byID)

	var errs statechart.ErrorList
	g.mcp = make([]*gate.StateMCP, len(g.Nodes))
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
	for i, n := range g.Nodes {
		sm := ParseMCP(n, paths[i], g.Events, &errs, &g.Refs)
		if sm == nil {
			continue
		}
		g.mcp[i] = sm
		g.limited = g.limited || sm.MaxCalls > 0
		g.ungated = append(g.ungated, sm.Ungated...)
		for _, p := range append(patterns(sm.Tools, false), patterns(sm.Deny, true)...) {
			j, ok := patIdx[patKey{p.glob, p.deny}]
			if !ok {
				j = len(g.Patterns)
				patIdx[patKey{p.glob, p.deny}] = j
				p.Nodes = NewBitset(len(g.Nodes))
				g.Patterns = append(g.Patterns, p)
			}
			g.Patterns[j].Nodes.Set(i)
		}
		for _, tool := range SortedKeys(sm.Events) {
			ev := sm.Events[tool]
			if prev, ok := g.jsonEvents[tool]; ok && prev != ev {
				errs = append(errs, &statechart.Error{
					Path: string(paths[i].Key("meta").Key("mcp").Key("events").Key(tool)),
					Msg:  fmt.Sprintf("tool %q already sends event %q (in state %q)", tool, prev, g.Nodes[eventFrom[tool]].ID),
				})
				continue
			}
			g.jsonEvents[tool] = ev
			eventFrom[tool] = i
		}
		for _, tool := range sm.OutputGuards {
			g.jsonOutput[tool] = true
		}
		for _, tool := range SortedKeys(sm.Invalidates) {
			if _, ok := invalFrom[tool]; !ok {
				invalFrom[tool] = i
			}
			g.jsonInvalidates[tool] = Dedupe(g.jsonInvalidates[tool], sm.Invalidates[tool])
		}
	}
	g.named = map[string]struct{}{}
	for _, p := range g.Patterns {
		if !strings.Contains(p.glob, "*") {
			g.named[p.glob] = struct{}{}
		}
	}
	for tool := range g.jsonEvents {
		g.named[tool] = struct{}{}
	}
	for _, tool := range SortedKeys(invalFrom) {
		if _, ok := g.jsonEvents[tool]; !ok {
			errs = append(errs, &statechart.Error{
				Path: string(paths[invalFrom[tool]].Key("meta").Key("mcp").Key("invalidates").Key(tool)),
				Msg:  fmt.Sprintf("tool %q sends no event (meta.mcp.events), so its calls cause no transition to invalidate anything: declare what every call of it invalidates with a statesync policy instead", tool),
			})
		}
	}
	g.DefaultDeny = o.DefaultDeny
	g.External = slices.Clone(o.ExternalTools)
	g.gatedAs = o.GatedAs
	g.approvalTTL = o.ApprovalTTL
	if g.approvalTTL <= 0 {
		g.approvalTTL = 24 * time.Hour
	}
	g.approverKey = slices.Clone(o.ApproverKey)
	g.guardCallbacks(o)
	for i, u := range o.Ungated {
		if msg := CheckToolName(u, true); msg != "" {
			errs = append(errs, &statechart.Error{Path: fmt.Sprintf("Options.Ungated[%d]", i), Msg: msg})
			continue
		}
		g.ungated = append(g.ungated, u)
	}
	for _, name := range o.OwnTools {
		if msg := CheckToolName(name, false); msg != "" {
			errs = append(errs, &statechart.Error{Path: "Options.OwnTools", Msg: msg})
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	if g.Start != "" {
		g.OwnTools.Add(g.Start)
	}
	for _, name := range o.OwnTools {
		g.OwnTools.Add(name)
	}

	s, err := engine.Start(context.Background(), g.Now())
	if err != nil {
		return nil, fmt.Errorf("mcpbind: starting machine %q: %w", engine.ID(), err)
	}
	if p, ok := s.(interface{ NextDue() (time.Time, bool) }); ok {
		_, g.initialTimers = p.NextDue()
	}
	if ee, ok := engine.(statechart.EffectEngine); ok && ee.UsesActors() {
		g.effects, g.jobs, g.waits = ee, newJobRunner(), ActorWaits(g.Nodes)
		g.initialTimers = g.initialTimers || len(wantedJobs(s)) > 0 // each workflow runs its own jobs
	}
	if ttl, ok := g.store.(interface{ TTL() time.Duration }); ok {
		g.localLeases = g.values == nil && g.jobs == nil && ttl.TTL() == 0
	}
	g.Initial, err = g.NewView("", s, Record{}, 0)
	if err != nil {
		return nil, err
	}
	g.Rules.Store(g.BuildRules(map[string]*ToolInfo{}))
	if o.ResumeJobsEvery > 0 && g.jobs != nil {
		if _, ok := g.store.(gate.Lister); ok {
			g.jobs.wg.Add(1)
			go g.resumeLoop(o.ResumeJobsEvery)
		}
	}
	return g, nil
}

func newJobRunner() *jobRunner {
	ctx, cancel := context.WithCancel(context.Background())
	return &jobRunner{ctx: ctx, cancel: cancel, running: map[string]map[*job]struct{}{}}
}
