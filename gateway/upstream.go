// This file defines an upstream: its client, its connection (a child
// process or HTTP), the supervisor that restarts it, and the features it
// last listed.

//lint:file-ignore SA1019 logging and sampling are deprecated from protocol 2026-07-28 on; the gateway passes them through for the versions that have them.

package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/internal/rawio"
)

// Feature kinds an upstream lists, as bits of upstream.pending.
const (
	kindTools = 1 << iota
	kindPrompts
	kindResources
)

// upstream is one configured server and the gateway's session with it.
type upstream struct {
	g      *Gateway
	cfg    *ServerConfig
	name   string
	client *mcp.Client
	logger *slog.Logger
	http   *http.Client  // of an HTTP upstream: its connections, reused
	rawIDs atomic.Uint64 // request ids of the raw HTTP hop

	mu       sync.Mutex
	cs       *mcp.ClientSession // nil while not connected
	ended    chan struct{}      // closed when cs has ended
	up       chan struct{}      // closed when cs is set; replaced when it goes down
	downErr  error              // why it went down, while it is down
	lastErr  error              // why it last went down or failed to restart
	child    *child             // the running child of a stdio upstream
	conn     *lineConn          // the child's connection, for calls passed through
	ending   *mcp.ClientSession // the session the raw HTTP hop ended, if any
	init     *mcp.InitializeResult
	closed   bool
	sessions int            // sessions started
	lists    features       // as last listed
	subs     map[string]int // resource URI → downstream subscriptions through this upstream
	pending  int            // kinds to list again
	relistCh chan struct{}  // wakes the relister
}

// features are the lists of one upstream.
type features struct {
	tools     []*mcp.Tool
	prompts   []*mcp.Prompt
	resources []*mcp.Resource
	templates []*mcp.ResourceTemplate
}

func newUpstream(g *Gateway, s *ServerConfig) *upstream {
	u := &upstream{
		g:        g,
		cfg:      s,
		name:     s.Name,
		logger:   g.logger.With("upstream", s.Name),
		up:       make(chan struct{}),
		subs:     map[string]int{},
		relistCh: make(chan struct{}, 1),
	}
	if s.Transport != TransportStdio {
		u.http = newHTTPClient()
	}
	u.client = mcp.NewClient(&mcp.Implementation{Name: "chartgate-gateway", Version: g.opts.Implementation.Version}, &mcp.ClientOptions{
		Logger: u.logger,
		// No roots: the session is shared by every downstream client and
		// starts before any of them, so there are no roots to give.
		// Sampling and elicitation go to the downstream client whose call
		// is in flight.
		Capabilities: &mcp.ClientCapabilities{
			Sampling:    &mcp.SamplingCapabilities{Tools: &mcp.SamplingToolsCapabilities{}},
			Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
		},
		CreateMessageWithToolsHandler: func(ctx context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			return g.createMessage(ctx, u, req.Params)
		},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return g.elicit(ctx, u, req.Params)
		},
		ElicitationCompleteHandler: func(ctx context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
			g.elicitationComplete(ctx, u, req.Params)
		},
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { u.relist(kindTools) },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { u.relist(kindPrompts) },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { u.relist(kindResources) },
		ResourceUpdatedHandler: func(ctx context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			g.resourceUpdated(ctx, u, req.Params)
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			g.forwardLog(u, req.Params)
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			g.forwardProgress(req.Params)
		},
	})
	return u
}

// capabilities returns the upstream's capabilities as of its last
// initialize.
func (u *upstream) capabilities() *mcp.ServerCapabilities {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.init == nil || u.init.Capabilities == nil {
		return &mcp.ServerCapabilities{}
	}
	return u.init.Capabilities
}

func (u *upstream) instructions() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.init == nil {
		return ""
	}
	return u.init.Instructions
}

// transport returns how to reach the upstream.
func (u *upstream) transport() mcp.Transport {
	switch u.cfg.Transport {
	case TransportHTTP:
		return &mcp.StreamableClientTransport{Endpoint: u.cfg.URL, HTTPClient: u.httpClient()}
	case TransportSSE:
		return &mcp.SSEClientTransport{Endpoint: u.cfg.URL, HTTPClient: u.httpClient()}
	}
	return childTransport{u}
}

// httpClient is go-sdk's client for the upstream: u.http, with the
// configured headers. (The raw HTTP hop sets them itself.)
func (u *upstream) httpClient() *http.Client {
	if len(u.cfg.Headers) == 0 {
		return u.http
	}
	return &http.Client{Transport: &headerTransport{base: u.http.Transport, headers: u.cfg.Headers}}
}

// newHTTPClient is the client of an HTTP upstream. Every downstream
// session's calls go through the gateway's one session with the
// upstream: it keeps as many idle connections to it as calls may be in
// flight at once (http.DefaultTransport keeps 2, and opens a new one for
// each call beyond that).
func newHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = rawio.Dialer(&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second})
	t.MaxIdleConnsPerHost = maxIdleConns
	t.MaxIdleConns = maxIdleConns
	return &http.Client{Transport: t}
}

// maxIdleConns is how many idle connections to an HTTP upstream are
// kept.
const maxIdleConns = 256

// headerTransport adds the configured headers to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	return t.base.RoundTrip(req)
}

// startChild starts the command of a stdio upstream and keeps it as the
// upstream's current child.
func (u *upstream) startChild() (*child, error) {
	env := os.Environ()
	for k, v := range u.cfg.Env {
		env = append(env, k+"="+v) // later entries win
	}
	c, err := startChild(u.cfg, env, u.g.opts.StopGrace, func(line string) {
		u.logger.Info(line)
	})
	if err != nil {
		return nil, err
	}
	u.mu.Lock()
	u.child = c
	u.mu.Unlock()
	u.logger.Info("upstream started", "pid", c.cmd.Process.Pid, "command", u.cfg.Command)
	return c, nil
}

// connect starts or connects to the upstream, lists its features and
// marks it up. On failure nothing is left running.
func (u *upstream) connect(ctx context.Context) (*mcp.ClientSession, error) {
	ctx, cancel := context.WithTimeout(ctx, u.g.opts.ConnectTimeout)
	defer cancel()
	cs, err := u.client.Connect(ctx, u.transport(), &mcp.ClientSessionOptions{ProtocolVersion: u.g.opts.UpstreamProtocolVersion})
	if err != nil {
		u.stopChild()
		return nil, fmt.Errorf("upstream %q: connecting: %w", u.name, err)
	}
	init := cs.InitializeResult()
	lists, err := listFeatures(ctx, cs, init.Capabilities, kindTools|kindPrompts|kindResources, features{})
	if err != nil {
		cs.Close()
		return nil, fmt.Errorf("upstream %q: %w", u.name, err)
	}
	u.mu.Lock()
	u.cs, u.ended, u.init, u.lists, u.downErr = cs, make(chan struct{}), init, lists, nil
	u.sessions++
	close(u.up)
	subs := make([]string, 0, len(u.subs))
	for uri := range u.subs {
		subs = append(subs, uri)
	}
	u.mu.Unlock()
	u.logger.Info("upstream connected", "server", serverName(init), "protocol", init.ProtocolVersion,
		"tools", len(lists.tools), "prompts", len(lists.prompts), "resources", len(lists.resources), "templates", len(lists.templates))
	// What downstream clients asked of the previous session, ask again.
	if level := u.g.logLevel(); level != "" && init.Capabilities != nil && init.Capabilities.Logging != nil {
		if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: level}); err != nil {
			u.logger.Warn("setting the logging level", "level", level, "error", err)
		}
	}
	for _, uri := range subs {
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			u.logger.Warn("subscribing again", "uri", uri, "error", err)
		}
	}
	return cs, nil
}

func serverName(init *mcp.InitializeResult) string {
	if init.ServerInfo == nil {
		return ""
	}
	return init.ServerInfo.Name + " " + init.ServerInfo.Version
}

// listFeatures lists the kinds of features the capabilities announce,
// every page; the others are kept from old.
func listFeatures(ctx context.Context, cs *mcp.ClientSession, caps *mcp.ServerCapabilities, kinds int, old features) (features, error) {
	if caps == nil {
		caps = &mcp.ServerCapabilities{}
	}
	f := old
	var err error
	if kinds&kindTools != 0 && caps.Tools != nil {
		if f.tools, err = collect(cs.Tools(ctx, nil)); err != nil {
			return f, fmt.Errorf("listing tools: %w", err)
		}
	}
	if kinds&kindPrompts != 0 && caps.Prompts != nil {
		if f.prompts, err = collect(cs.Prompts(ctx, nil)); err != nil {
			return f, fmt.Errorf("listing prompts: %w", err)
		}
	}
	if kinds&kindResources != 0 && caps.Resources != nil {
		if f.resources, err = collect(cs.Resources(ctx, nil)); err != nil {
			return f, fmt.Errorf("listing resources: %w", err)
		}
		if f.templates, err = collect(cs.ResourceTemplates(ctx, nil)); err != nil {
			return f, fmt.Errorf("listing resource templates: %w", err)
		}
	}
	return f, nil
}

func collect[T any](seq func(yield func(*T, error) bool)) ([]*T, error) {
	var out []*T
	for v, err := range seq {
		if err != nil {
			return nil, err
		}
		if v != nil {
			out = append(out, v)
		}
	}
	return out, nil
}

// session returns the upstream's session, and a channel closed when it
// ends, waiting up to Options.RestartWait while it is being restarted.
func (u *upstream) session(ctx context.Context) (*mcp.ClientSession, <-chan struct{}, error) {
	var timer *time.Timer
	for {
		u.mu.Lock()
		cs, ended, up, why, closed := u.cs, u.ended, u.up, u.downErr, u.closed
		u.mu.Unlock()
		if closed {
			return nil, nil, ErrClosed
		}
		if cs != nil {
			return cs, ended, nil
		}
		if timer == nil {
			timer = time.NewTimer(u.g.opts.RestartWait)
			defer timer.Stop()
		}
		select {
		case <-up:
		case <-timer.C:
			return nil, nil, &UnavailableError{Upstream: u.name, Err: why}
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-u.g.ctx.Done():
			return nil, nil, ErrClosed
		}
	}
}

// supervise waits for the session to end and connects again, with
// backoff, until ctx is cancelled. It also lists features again when the
// upstream says they changed.
func (u *upstream) supervise(ctx context.Context, cs *mcp.ClientSession) {
	go u.relister(ctx)
	backoff := u.g.opts.MinBackoff
	for {
		since := time.Now()
		waitErr := cs.Wait()
		why := u.markDown(cs, waitErr)
		if ctx.Err() != nil {
			return
		}
		if time.Since(since) >= u.g.opts.MaxBackoff {
			backoff = u.g.opts.MinBackoff
		}
		u.logger.Warn("upstream went down; restarting", "reason", why, "in", backoff)
		for {
			if !sleep(ctx, backoff) {
				return
			}
			backoff = min(2*backoff, u.g.opts.MaxBackoff)
			var err error
			if cs, err = u.connect(ctx); err == nil {
				break
			}
			if ctx.Err() != nil {
				return
			}
			u.mu.Lock()
			u.downErr, u.lastErr = err, err
			u.mu.Unlock()
			u.logger.Warn("restart failed", "error", err, "next attempt in", backoff)
		}
		u.g.sync()
	}
}

// markDown records that cs has ended (requests from now on wait for the
// restart), stops what is left of the child, and returns why it ended.
func (u *upstream) markDown(cs *mcp.ClientSession, waitErr error) error {
	u.mu.Lock()
	c := u.child
	if u.cs == cs {
		u.cs = nil
		u.up = make(chan struct{})
		close(u.ended)
	}
	u.mu.Unlock()
	cs.Close() // stops the child if it is still running
	why := waitErr
	if c != nil {
		if status, ok := c.exited(0); ok {
			why = fmt.Errorf("the process exited: %s", status)
		}
	}
	if why == nil {
		why = errors.New("the connection closed")
	}
	u.mu.Lock()
	u.downErr, u.lastErr = why, why
	u.mu.Unlock()
	return why
}

// downReason says why the upstream's session ended while a request was
// in flight: the child's exit status when it has exited, else the
// connection's error.
func (u *upstream) downReason(err error) string {
	u.mu.Lock()
	c := u.child
	u.mu.Unlock()
	if c != nil {
		if status, ok := c.exited(time.Second); ok {
			return "the process exited (" + status + ")"
		}
	}
	return "the connection closed (" + err.Error() + ")"
}

// stopChild stops the current child, if any.
func (u *upstream) stopChild() {
	u.mu.Lock()
	c := u.child
	u.mu.Unlock()
	if c != nil {
		c.stop()
	}
}

// close ends the session and stops the child.
func (u *upstream) close() {
	u.mu.Lock()
	u.closed = true
	cs := u.cs
	u.mu.Unlock()
	if cs != nil {
		cs.Close()
	}
	u.stopChild()
	if u.http != nil {
		u.http.CloseIdleConnections()
	}
}

// relist asks the relister to list kinds again. It is called from the
// client's notification handlers, which must not wait for the upstream.
func (u *upstream) relist(kinds int) {
	u.mu.Lock()
	u.pending |= kinds
	u.mu.Unlock()
	select {
	case u.relistCh <- struct{}{}:
	default:
	}
}

// relister lists features again when asked, and updates the downstream
// server.
func (u *upstream) relister(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-u.relistCh:
		}
		u.mu.Lock()
		kinds, cs, old := u.pending, u.cs, u.lists
		u.pending = 0
		u.mu.Unlock()
		if cs == nil || kinds == 0 {
			continue // a reconnect lists everything
		}
		lctx, cancel := context.WithTimeout(ctx, u.g.opts.ConnectTimeout)
		lists, err := listFeatures(lctx, cs, cs.InitializeResult().Capabilities, kinds, old)
		cancel()
		if err != nil {
			u.logger.Warn("listing features again after list_changed", "error", err)
			continue
		}
		u.mu.Lock()
		if u.cs == cs {
			u.lists = lists
		}
		u.mu.Unlock()
		u.g.sync()
	}
}

func (u *upstream) features() features {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.lists
}

// sleep waits d or until ctx is done; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// describe names the upstream for messages: `upstream "fs" (npx -y ...)`.
func (u *upstream) describe() string {
	if u.cfg.Transport == TransportStdio {
		return fmt.Sprintf("upstream %q (%s)", u.name, strings.Join(append([]string{u.cfg.Command}, u.cfg.Args...), " "))
	}
	return fmt.Sprintf("upstream %q (%s)", u.name, u.cfg.URL)
}
