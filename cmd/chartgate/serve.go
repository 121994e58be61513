// This file defines the serve command: the gateway (package gateway) in
// front of the MCP servers of a configuration file or a command line,
// served over stdio or Streamable HTTP.

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/gateway"
	"github.com/chartgate/chartgate/internal/rawio"
	"github.com/chartgate/chartgate/internal/stdio"
	"github.com/chartgate/chartgate/telemetry"
)

const serveUsage = `usage: chartgate serve [--config FILE] [--http ADDR [--stateless]] [--log-level LEVEL] [--workflow FILE ...] [-- COMMAND ARG...]
       chartgate serve --accept-tools [--workflow FILE | --tools-lock FILE]

Serve one MCP server that proxies the MCP servers of FILE and of COMMAND:
their tools, prompts, resources, completions, logging and progress. Over
stdio by default (what a host's .mcp.json launches); with --http, over
Streamable HTTP at http://ADDR/mcp. With --workflow it may have no
server: it then serves the workflow's tools alone.

  --config FILE     upstream servers, as in a host's .mcp.json:
                    {"mcpServers": {"fs": {"command": "npx", "args": [...], "env": {...}, "timeout": 120000},
                                    "remote": {"url": "https://...", "headers": {...}}}}
                    ${VAR}, ${VAR:-default} and ${env:VAR} are expanded; "timeout"
                    bounds the server's tool calls, in milliseconds
  --http ADDR       serve Streamable HTTP at http://ADDR/mcp instead of stdio
  --stateless       with --http: no sessions (each request stands alone)
  --log-level LEVEL debug, info (default), warn or error; the log goes to stderr
  --call-timeout D  how long a tool call may wait for its server (default 60s): then it is
                    cancelled, and the agent told so; the workflow does not move
  --max-argument-bytes N
                    the largest arguments of a tool call, as JSON (default 1048576)
  --tools-lock FILE the tool definitions served (default with --workflow: tools.lock.json
                    beside the workflow): a tool is recorded when first listed; one whose
                    name, description, schemas or annotations change is refused
  --accept-tools    accept the changed definitions the lock holds, print them, and exit
  -- COMMAND ARG... one more stdio server, named after its command
                    (chartgate serve -- npx -y @modelcontextprotocol/server-filesystem /repo)

A tool or prompt name that two servers have becomes SERVER__NAME on both.
A server that exits is restarted with backoff; the call in flight gets an
error that names it.
`

// serveOptions is the serve command line.
type serveOptions struct {
	config    string
	http      string
	stateless bool
	logLevel  string
	command   []string
	// callTimeout, maxArgs: --call-timeout, --max-argument-bytes.
	callTimeout time.Duration
	maxArgs     int
	// toolsLock is the lock file of the tool definitions ("" without
	// --workflow or --tools-lock: none); acceptTools, --accept-tools.
	toolsLock   string
	acceptTools bool
	// refuseTools, if set, refuses tools that appear while the gateway
	// runs (gateway.Options.RefuseTools).
	refuseTools func([]gateway.ToolInfo) map[string]string
	// hooks run on the gateway's server before it is served: where the
	// options that act on the server (a workflow gate) attach.
	hooks []serveHook
	// workflowServers are the upstreams a Statewright gateway
	// configuration given as the workflow names, served when neither
	// --config nor a command is given.
	workflowServers []*gateway.ServerConfig
	// otel is the OpenTelemetry export the OTEL_* variables ask for (nil:
	// off); tel, the telemetry of the gate, once the workflow hook made it.
	otel *telemetry.Providers
	tel  *telemetry.Telemetry
}

// serveHook attaches something to the gateway's server before it is
// served, such as a workflow gate wrapping the server's middleware
// (gate.Attach(server)). It runs once, after every upstream is connected.
type serveHook func(ctx context.Context, g *gateway.Gateway, server *mcp.Server) error

// addServeFlags defines serve's flags on fs, filling o.
func addServeFlags(fs *flag.FlagSet, o *serveOptions) {
	fs.StringVar(&o.config, "config", "", "upstream servers, in the mcpServers JSON of MCP hosts")
	fs.StringVar(&o.http, "http", "", "serve Streamable HTTP at http://ADDR/mcp instead of stdio")
	fs.BoolVar(&o.stateless, "stateless", false, "with --http: no sessions")
	fs.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.DurationVar(&o.callTimeout, "call-timeout", 60*time.Second, "how long a tool call may wait for its server")
	fs.IntVar(&o.maxArgs, "max-argument-bytes", 1<<20, "the largest arguments of a tool call, as JSON")
	fs.StringVar(&o.toolsLock, "tools-lock", "", "the lock file of the tool definitions served (default with --workflow: tools.lock.json beside it)")
	fs.BoolVar(&o.acceptTools, "accept-tools", false, "accept the changed tool definitions the lock holds, and exit")
}

// cmdServe runs the gateway until standard input ends (stdio), or until
// SIGINT or SIGTERM. Its log goes to stderr; over stdio, stdout carries
// MCP only. exiting: the process ends when it returns (runOptions).
func cmdServe(args []string, stdin io.Reader, stdout, stderr io.Writer, exiting bool) int {
	fs := newFlagSet("serve")
	var o serveOptions
	addServeFlags(fs, &o)
	wf := addServeWorkflowFlags(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return argsError(stdout, stderr, "serve", err)
	}
	o.command = pos
	if len(pos) > 0 && !dashDash(args) {
		return usageError(stderr, "serve", fmt.Errorf("put the upstream's command after --: chartgate serve -- %s", strings.Join(pos, " ")))
	}
	if o.toolsLock == "" && *wf.project.workflow != "" {
		o.toolsLock = filepath.Join(filepath.Dir(*wf.project.workflow), "tools.lock.json")
	}
	if o.acceptTools {
		return acceptTools(o.toolsLock, stdout, stderr)
	}
	if o.config == "" && len(o.command) == 0 && *wf.project.workflow == "" {
		return usageError(stderr, "serve", errors.New("no upstream server: give --config FILE, or -- COMMAND ARG"))
	}
	if o.stateless && o.http == "" {
		return usageError(stderr, "serve", errors.New("--stateless needs --http"))
	}
	if o.callTimeout <= 0 {
		return usageError(stderr, "serve", fmt.Errorf("--call-timeout %v: give a positive duration, such as 60s", o.callTimeout))
	}
	if o.maxArgs <= 0 {
		return usageError(stderr, "serve", fmt.Errorf("--max-argument-bytes %d: give a positive size", o.maxArgs))
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return usageError(stderr, "serve", fmt.Errorf("--log-level %q: use debug, info, warn or error", o.logLevel))
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	var closers []func() error
	defer func() {
		for _, c := range closers {
			_ = c()
		}
	}()
	hook, refuse, err := workflowHook(wf, &o, logger, &closers)
	if err != nil {
		return usageError(stderr, "serve", err)
	}
	if hook != nil {
		o.hooks = append(o.hooks, hook)
		o.refuseTools = refuse
	}
	if code := serveTelemetry(&o, stderr, &closers); code != exitOK {
		return code
	}
	if exiting && o.http == "" && os.Getenv("GOMAXPROCS") == "" {
		// Over stdio the gateway serves one client, and a call takes it
		// little processor time, in steps handed from goroutine to
		// goroutine (the client's line, the upstream's answer): with a
		// second processor, each handoff wakes a thread to look for work
		// that the first one does anyway, a context switch that costs
		// tens of microseconds on a virtual machine. On one, a call that
		// moves a workflow took 0.2-0.35× of a direct call's latency less
		// (gatewaybench, one session).
		runtime.GOMAXPROCS(1)
	}
	if os.Getenv("GOGC") == "" {
		// Every message is decoded by go-sdk, allocating tens of KB, twice
		// per hop: collecting less often takes ~35% off the gateway's
		// latency for a heap that stays small.
		debug.SetGCPercent(400)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	g, server, err := newServeServer(ctx, &o, logger)
	if err != nil {
		fmt.Fprintf(stderr, "chartgate serve: %v\n", err)
		return exitFail
	}
	defer g.Close()
	if o.http == "" {
		in := io.NopCloser(stdin)
		if f, ok := stdin.(*os.File); ok {
			in = stdio.Pollable(f)
		}
		out := io.WriteCloser(nopWriteCloser{stdout})
		if f, ok := stdout.(*os.File); ok {
			out = stdio.PollableWriter(f)
		}
		t := &stdio.Transport{Reader: in, Writer: out, Logger: logger}
		run := server.Run
		if len(o.hooks) == 0 {
			// Nothing on the server must see each call: plain tool calls
			// pass through undecoded.
			t.Bypass = g.Passthrough()
		} else {
			// The hooks' middleware (the workflow gate) sees each call,
			// which skips go-sdk's decoding and dispatch.
			d := g.Dispatch()
			t.Bypass, run = d.Bypass, d.Run
		}
		err = serveStdio(ctx, run, t)
	} else {
		err = serveHTTP(ctx, g, &o, stderr, logger)
	}
	if err != nil {
		fmt.Fprintf(stderr, "chartgate serve: %v\n", err)
		return exitFail
	}
	return exitOK
}

// acceptTools accepts the changed tool definitions the lock at path holds
// (those a gateway refused), and prints each: a person reads what the
// upstream now says before the agent does.
func acceptTools(path string, stdout, stderr io.Writer) int {
	if path == "" {
		return usageError(stderr, "serve", errors.New("--accept-tools needs the lock: give --workflow FILE (its lock is tools.lock.json beside it) or --tools-lock FILE"))
	}
	lock, err := gateway.OpenToolLock(path)
	if err != nil {
		fmt.Fprintf(stderr, "chartgate serve: %v\n", err)
		return exitFail
	}
	changes, err := lock.Accept()
	if err != nil {
		fmt.Fprintf(stderr, "chartgate serve: %v\n", err)
		return exitFail
	}
	if len(changes) == 0 {
		fmt.Fprintf(stdout, "no changed tool definition waits in %s\n", path)
		return exitOK
	}
	for _, c := range changes {
		fmt.Fprintf(stdout, "accepted tool %q of upstream %q (changed: %s)\n", c.Name, c.Upstream, strings.Join(c.Fields, ", "))
		for _, f := range c.Fields {
			var v any
			switch f {
			case "title":
				v = c.Tool.Title
			case "description":
				v = c.Tool.Description
			case "inputSchema":
				v = c.Tool.InputSchema
			case "outputSchema":
				v = c.Tool.OutputSchema
			case "annotations":
				v = c.Tool.Annotations
			}
			text, ok := v.(string)
			if !ok {
				data, _ := json.Marshal(v)
				text = string(data)
			}
			if len(text) > 4000 {
				text = text[:4000] + "…"
			}
			// Quoted: no control or formatting character of the upstream's
			// text reaches the terminal.
			fmt.Fprintf(stdout, "  %s: %s\n", f, strconv.QuoteToGraphic(text))
		}
	}
	fmt.Fprintf(stdout, "recorded in %s; a running gateway serves these tools from its next tools/list\n", path)
	return exitOK
}

// dashDash reports whether args has "--" (the upstream's command follows).
func dashDash(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return true
		}
	}
	return false
}

// newServeServer reads the upstreams of o, starts the gateway and runs
// o's hooks on its server. This is the seam for options that act on the
// served server.
func newServeServer(ctx context.Context, o *serveOptions, logger *slog.Logger) (*gateway.Gateway, *mcp.Server, error) {
	cfg := &gateway.Config{}
	if o.config != "" {
		var err error
		if cfg, err = gateway.LoadConfig(o.config, nil); err != nil {
			return nil, nil, err
		}
		for _, w := range cfg.Warnings {
			logger.Warn(o.config + ": " + w)
		}
	}
	if len(o.command) > 0 {
		name := commandName(o.command)
		for _, s := range cfg.Servers {
			if s.Name == name {
				return nil, nil, fmt.Errorf("the command after -- would be named %q, like a server of %s", name, o.config)
			}
		}
		cfg.Servers = append(cfg.Servers, &gateway.ServerConfig{
			Name: name, Transport: gateway.TransportStdio, Command: o.command[0], Args: o.command[1:],
		})
	}
	if o.config == "" && len(o.command) == 0 {
		cfg.Servers = o.workflowServers
	}
	if len(cfg.Servers) == 0 {
		if len(o.hooks) == 0 {
			return nil, nil, fmt.Errorf("%s: no server is enabled", o.config)
		}
		logger.Info("chartgate serve: no upstream server: serving the workflow's tools alone")
	}
	info, ok := debug.ReadBuildInfo()
	gopts := &gateway.Options{
		Logger:           logger,
		Implementation:   &mcp.Implementation{Name: "chartgate", Version: version(info, ok)},
		CallTimeout:      o.callTimeout,
		MaxArgumentBytes: o.maxArgs,
		RefuseTools:      o.refuseTools,
	}
	if o.toolsLock != "" {
		lock, err := gateway.OpenToolLock(o.toolsLock)
		if err != nil {
			return nil, nil, fmt.Errorf("--tools-lock: %w", err)
		}
		gopts.ToolLock = lock
	}
	g, err := gateway.New(ctx, cfg, gopts)
	if err != nil {
		return nil, nil, err
	}
	server := g.Server()
	for _, h := range o.hooks {
		if err := h(ctx, g, server); err != nil {
			g.Close()
			return nil, nil, err
		}
	}
	return g, server, nil
}

// launchers are commands whose first argument that is not a flag names
// the server they run.
var launchers = map[string]bool{
	"npx": true, "bunx": true, "pnpx": true, "uvx": true, "pipx": true,
	"node": true, "deno": true, "bun": true, "python": true, "python3": true, "uv": true,
}

// commandName names the server of a command line: npx -y
// @modelcontextprotocol/server-filesystem /repo is "server-filesystem",
// ./bin/my-server is "my-server".
func commandName(command []string) string {
	name := filepath.Base(command[0])
	if launchers[strings.TrimSuffix(name, ".exe")] {
		for _, a := range command[1:] {
			if !strings.HasPrefix(a, "-") && a != "run" {
				name = a
				break
			}
		}
	}
	if i := strings.LastIndex(name, "/"); i >= 0 && strings.HasPrefix(name, "@") { // @scope/pkg
		name = name[i+1:]
	}
	if i := strings.LastIndex(name, "@"); i > 0 { // pkg@1.2.3
		name = name[:i]
	}
	name = filepath.Base(name)
	name = strings.TrimSuffix(name, filepath.Ext(name))
	name = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.' {
			return r
		}
		return '_'
	}, name)
	if len(name) > 64 {
		name = name[:64]
	}
	if name == "" || name == "." {
		name = "server"
	}
	return name
}

// serveStdio serves one session on t until its input ends or ctx is
// done.
func serveStdio(ctx context.Context, run func(context.Context, mcp.Transport) error, t *stdio.Transport) error {
	err := run(ctx, t)
	if err == nil || errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil
	}
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// serveHTTP serves Streamable HTTP at /mcp until ctx is done. It says
// where on stderr, whatever the log level.
func serveHTTP(ctx context.Context, g *gateway.Gateway, o *serveOptions, stderr io.Writer, logger *slog.Logger) error {
	ln, err := net.Listen("tcp", o.http)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	// The gateway's handler takes plain tool calls past go-sdk's decoding,
	// to the same handlers (the gate's middleware first).
	mux.Handle("/mcp", g.HTTPHandler(&mcp.StreamableHTTPOptions{Stateless: o.stateless, Logger: logger}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stderr, "chartgate serve: MCP over Streamable HTTP at http://%s/mcp (stateless: %v)\n", ln.Addr(), o.stateless)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(rawio.Listener(ln)) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	// Streams that stay open (a session's GET) would hold Shutdown: give
	// requests a moment, then close.
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	return nil
}
