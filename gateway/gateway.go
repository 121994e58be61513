// This file defines the Gateway: its options, its construction from a
// Config, the downstream server it exposes, and its end.

//lint:file-ignore SA1019 logging and sampling are deprecated from protocol 2026-07-28 on; the gateway passes them through for the versions that have them.

package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configures a [Gateway]. The zero value is the default.
type Options struct {
	// Logger receives the gateway's log: upstreams starting, exiting and
	// restarting, each stderr line of a stdio upstream (Info, message the
	// line, attribute "upstream" its name), and features that could not be
	// proxied. nil discards it.
	Logger *slog.Logger
	// Implementation is the downstream server's name and version; nil
	// means {Name: "chartgate", Version: "gateway"}.
	Implementation *mcp.Implementation
	// ServerOptions, if set, is the base of the downstream server's
	// options (KeepAlive, PageSize, GetSessionID, SetCacheable, ...). The
	// gateway sets Capabilities, Instructions (unless set),
	// CompletionHandler, SubscribeHandler, UnsubscribeHandler and Logger
	// (unless set) from the upstreams. The server's logger gets what the
	// server logs at the levels it enables; the gateway also reads the
	// server's Info log, to learn of the sessions that end.
	ServerOptions *mcp.ServerOptions

	// ConnectTimeout bounds starting an upstream and listing its features
	// (npx may first download the package); 0 means 60s.
	ConnectTimeout time.Duration
	// RestartWait is how long a request waits for an upstream that is
	// being restarted before it fails; 0 means 10s.
	RestartWait time.Duration
	// MinBackoff and MaxBackoff bound the delay before restarting an
	// upstream that exited or lost its connection: MinBackoff at first,
	// doubling up to MaxBackoff while restarts keep failing, back to
	// MinBackoff once an upstream has stayed up for MaxBackoff. 0 means
	// 200ms and 30s.
	MinBackoff, MaxBackoff time.Duration
	// StopGrace is how long a child is given to exit after its stdin is
	// closed, and again after SIGTERM, before SIGKILL; 0 means 2s.
	StopGrace time.Duration
	// UpstreamProtocolVersion is the protocol version the gateway asks of
	// its upstreams; "" means 2025-11-25, the newest version with
	// sessions, which carry the upstreams' notifications and server-sent
	// requests back to the gateway.
	UpstreamProtocolVersion string

	// CallTimeout bounds a tools/call forwarded to an upstream (an
	// upstream's [ServerConfig].CallTimeout overrides it): when it passes,
	// the upstream request is cancelled and the call's result is an error
	// result that says so. 0 means 60s; a negative value, no bound.
	CallTimeout time.Duration
	// MaxArgumentBytes bounds the arguments of a tools/call, as JSON: a
	// call with more is answered with an error result that says so, and
	// not forwarded. 0 means 1 MiB.
	MaxArgumentBytes int
	// ToolLock, if set, pins the upstreams' tool definitions to those its
	// file records (see "Pinned tools" in the package documentation).
	ToolLock *ToolLock
	// RefuseTools, if set, is called with the tools each time the
	// downstream tools are made again (when New has connected, and when an
	// upstream's tools change), and returns the tools to refuse, by
	// downstream name, each with the reason: they are not listed, and a
	// call of one gets the reason as an error result. It must not call
	// the Gateway's methods.
	RefuseTools func([]ToolInfo) map[string]string
}

func (o *Options) withDefaults() Options {
	var d Options
	if o != nil {
		d = *o
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Implementation == nil {
		d.Implementation = &mcp.Implementation{Name: "chartgate", Version: "gateway"}
	}
	if d.ConnectTimeout <= 0 {
		d.ConnectTimeout = 60 * time.Second
	}
	if d.RestartWait <= 0 {
		d.RestartWait = 10 * time.Second
	}
	if d.MinBackoff <= 0 {
		d.MinBackoff = 200 * time.Millisecond
	}
	if d.MaxBackoff <= 0 {
		d.MaxBackoff = 30 * time.Second
	}
	d.MaxBackoff = max(d.MaxBackoff, d.MinBackoff)
	if d.StopGrace <= 0 {
		d.StopGrace = 2 * time.Second
	}
	if d.UpstreamProtocolVersion == "" {
		d.UpstreamProtocolVersion = "2025-11-25"
	}
	if d.CallTimeout == 0 {
		d.CallTimeout = 60 * time.Second
	}
	if d.MaxArgumentBytes <= 0 {
		d.MaxArgumentBytes = 1 << 20
	}
	return d
}

// Gateway is an MCP server that proxies one or more upstream MCP servers.
// Create it with [New], serve [Gateway.Server] on any go-sdk transport,
// and [Gateway.Close] it to stop the upstreams. Its methods are safe for
// concurrent use.
type Gateway struct {
	opts      Options
	logger    *slog.Logger
	server    atomic.Pointer[mcp.Server] // set once every upstream is connected
	upstreams []*upstream                // in configuration order

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // the upstreams' supervisors

	// syncMu serializes rebuilding the downstream features.
	syncMu sync.Mutex

	mu        sync.Mutex
	tools     map[string]*toolEntry   // downstream name → entry
	toolOrder []string                // downstream names in merge order
	prompts   map[string]*promptEntry // downstream name → entry
	resources map[string]*resourceEntry
	templates map[string]*templateEntry
	refused   map[string]string         // downstream tool name → why its calls are refused
	progress  map[string]*progressRoute // upstream progress token → downstream
	calls     map[*upstream]map[*inflight]struct{}
	levels    map[*mcp.ServerSession]mcp.LoggingLevel // set by logging/setLevel
	level     mcp.LoggingLevel                        // the lowest of levels, as sent upstream
	elicits   map[string]*mcp.ServerSession           // URL elicitation id → session it went to
	nextToken uint64
	closed    bool

	endsMu   sync.RWMutex
	ends     []func(id string) // told of each session the server disconnects (see endHook)
	watching atomic.Bool       // len(ends) > 0

	levelEnds  sync.Map  // id of a session in levels → the func that forgets it
	levelWatch sync.Once // onSessionEnd for levelEnds
}

// ToolInfo says where a downstream tool comes from.
type ToolInfo struct {
	// Name is the tool's name downstream: Upstream's name for it, or
	// "<Upstream>__<name>" when several upstreams have a tool of that
	// name.
	Name string
	// Upstream is the name of the server in the configuration.
	Upstream string
	// UpstreamName is the tool's name on the upstream.
	UpstreamName string
	// Tool is the tool as listed downstream (Name is Name).
	Tool *mcp.Tool
}

// ErrClosed is returned by requests that reach a closed Gateway.
var ErrClosed = errors.New("gateway: closed")

// UnavailableError is the error of a request to an upstream that is not
// connected: it exited or lost its connection and has not been restarted
// within [Options.RestartWait].
type UnavailableError struct {
	Upstream string
	Err      error // why it went down, if known
}

func (e *UnavailableError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("upstream %q is not available: it is being restarted", e.Upstream)
	}
	return fmt.Sprintf("upstream %q is not available: it is being restarted (%v)", e.Upstream, e.Err)
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// New starts or connects to every upstream of cfg, lists their features,
// and returns a Gateway whose server proxies them. It fails if an
// upstream cannot be started, connected or listed (within
// [Options.ConnectTimeout] and ctx); the error names it. Once New has
// returned, an upstream that exits or loses its connection is restarted
// with backoff until Close. With no upstream (cfg nil or without
// servers), the server has no tools but those added to it, such as a
// workflow gate's.
func New(ctx context.Context, cfg *Config, opts *Options) (*Gateway, error) {
	if cfg == nil {
		cfg = &Config{}
	}
	seen := map[string]bool{}
	for _, s := range cfg.Servers {
		if err := checkServerName(s.Name); err != nil {
			return nil, fmt.Errorf("gateway: upstream %q: %w", s.Name, err)
		}
		if seen[s.Name] {
			return nil, fmt.Errorf("gateway: two upstreams are named %q", s.Name)
		}
		seen[s.Name] = true
	}
	o := opts.withDefaults()
	g := &Gateway{
		opts:      o,
		logger:    o.Logger,
		tools:     map[string]*toolEntry{},
		prompts:   map[string]*promptEntry{},
		resources: map[string]*resourceEntry{},
		templates: map[string]*templateEntry{},
		refused:   map[string]string{},
		progress:  map[string]*progressRoute{},
		calls:     map[*upstream]map[*inflight]struct{}{},
		levels:    map[*mcp.ServerSession]mcp.LoggingLevel{},
		elicits:   map[string]*mcp.ServerSession{},
	}
	g.ctx, g.cancel = context.WithCancel(context.Background())
	for _, s := range cfg.Servers {
		g.upstreams = append(g.upstreams, newUpstream(g, s))
	}

	// Connect to every upstream at once; fail if one fails.
	errs := make([]error, len(g.upstreams))
	sessions := make([]*mcp.ClientSession, len(g.upstreams))
	var wg sync.WaitGroup
	for i, u := range g.upstreams {
		wg.Go(func() { sessions[i], errs[i] = u.connect(ctx) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, cs := range sessions {
			if cs != nil {
				cs.Close()
			}
		}
		g.cancel()
		return nil, err
	}
	srv := mcp.NewServer(o.Implementation, g.serverOptions())
	srv.AddReceivingMiddleware(g.middleware)
	g.server.Store(srv)
	g.sync()
	for i, u := range g.upstreams {
		g.wg.Go(func() { u.supervise(g.ctx, sessions[i]) })
	}
	return g, nil
}

// serverOptions derives the downstream server's options from the
// upstreams' capabilities.
func (g *Gateway) serverOptions() *mcp.ServerOptions {
	var so mcp.ServerOptions
	if g.opts.ServerOptions != nil {
		so = *g.opts.ServerOptions
	}
	if so.Logger == nil {
		so.Logger = g.logger
	}
	so.Logger = slog.New(endHook{Handler: so.Logger.Handler(), g: g})
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}
	var instructions []string
	for _, u := range g.upstreams {
		uc := u.capabilities()
		if uc.Prompts != nil {
			caps.Prompts = &mcp.PromptCapabilities{ListChanged: true}
		}
		if uc.Resources != nil {
			if caps.Resources == nil {
				caps.Resources = &mcp.ResourceCapabilities{ListChanged: true}
			}
			if uc.Resources.Subscribe {
				caps.Resources.Subscribe = true
			}
		}
		if uc.Logging != nil {
			caps.Logging = &mcp.LoggingCapabilities{}
		}
		if uc.Completions != nil {
			caps.Completions = &mcp.CompletionCapabilities{}
			so.CompletionHandler = g.complete
		}
		if text := strings.TrimSpace(u.instructions()); text != "" {
			instructions = append(instructions, u.name, text)
		}
	}
	if caps.Resources != nil && caps.Resources.Subscribe {
		so.SubscribeHandler, so.UnsubscribeHandler = g.subscribe, g.unsubscribe
	}
	so.Capabilities = caps
	if so.Instructions == "" {
		switch len(instructions) {
		case 0:
		case 2:
			so.Instructions = instructions[1]
		default:
			var b strings.Builder
			for i := 0; i < len(instructions); i += 2 {
				fmt.Fprintf(&b, "## %s\n\n%s\n\n", instructions[i], instructions[i+1])
			}
			so.Instructions = strings.TrimSpace(b.String())
		}
	}
	return &so
}

// Server returns the downstream server. Serve it on any transport
// (server.Run on a stdio transport, mcp.NewStreamableHTTPHandler), and add
// middleware to it, such as a workflow gate, before serving it.
func (g *Gateway) Server() *mcp.Server { return g.server.Load() }

// srv returns the downstream server, or nil while New is connecting to
// the upstreams (their notifications are then dropped).
func (g *Gateway) srv() *mcp.Server { return g.server.Load() }

// Tools returns the downstream tools and where each comes from, in the
// order the upstreams are configured and list them.
func (g *Gateway) Tools() []ToolInfo {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]ToolInfo, 0, len(g.toolOrder))
	for _, name := range g.toolOrder {
		e := g.tools[name]
		out = append(out, ToolInfo{Name: name, Upstream: e.up.name, UpstreamName: e.orig, Tool: e.def})
	}
	return out
}

// GatedAs returns the name a renamed tool has on its upstream: "x" for
// "up1__x" when "up1" is an upstream of the configuration (the longest
// such name, if several prefix it), else "". It depends on the name only,
// so that a workflow gate's Options.GatedAs (package mcpbind) can be set to it: a
// workflow that gates "x" then gates "up1__x" and "up2__x" too.
func (g *Gateway) GatedAs(tool string) string {
	best := -1
	for _, u := range g.upstreams {
		if len(u.name) > best && len(tool) > len(u.name)+len(prefixSep) && strings.HasPrefix(tool, u.name+prefixSep) {
			best = len(u.name)
		}
	}
	if best < 0 {
		return ""
	}
	return tool[best+len(prefixSep):]
}

// RefusedTools returns the tools the gateway refuses, by downstream
// name, each with the reason its calls get: a definition that changed
// since it was pinned ([Options.ToolLock]), or [Options.RefuseTools].
func (g *Gateway) RefusedTools() map[string]string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return maps.Clone(g.refused)
}

// UpstreamStatus is the state of one upstream, for logs and health
// checks.
type UpstreamStatus struct {
	Name      string
	Transport string // TransportStdio, TransportHTTP or TransportSSE
	// Connected reports whether the upstream's session is up; false
	// while it is being restarted.
	Connected bool
	// PID is the process id of a stdio upstream's current child, 0 if none.
	PID int
	// Restarts counts the sessions started after the first.
	Restarts int
	// LastError is why the upstream last went down or failed to restart,
	// "" if it never did.
	LastError string
}

// Status returns the state of each upstream, in configuration order.
func (g *Gateway) Status() []UpstreamStatus {
	out := make([]UpstreamStatus, 0, len(g.upstreams))
	for _, u := range g.upstreams {
		u.mu.Lock()
		st := UpstreamStatus{Name: u.name, Transport: u.cfg.Transport, Connected: u.cs != nil, Restarts: max(u.sessions-1, 0)}
		if u.child != nil {
			select {
			case <-u.child.done:
			default:
				st.PID = u.child.cmd.Process.Pid
			}
		}
		if u.lastErr != nil {
			st.LastError = u.lastErr.Error()
		}
		u.mu.Unlock()
		out = append(out, st)
	}
	return out
}

// Close stops every upstream (closing a child's stdin, then SIGTERM, then
// SIGKILL of its process group) and waits for them. Requests still
// waiting for an upstream fail with [ErrClosed]. The downstream sessions
// are the caller's to close. Close is idempotent.
func (g *Gateway) Close() error {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return nil
	}
	g.closed = true
	g.mu.Unlock()
	g.cancel()
	var wg sync.WaitGroup
	for _, u := range g.upstreams {
		wg.Go(u.close)
	}
	wg.Wait()
	g.wg.Wait()
	return nil
}
