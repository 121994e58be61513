// Command gatewaybench measures what the gateway adds to a tool call, the
// way MCP proxies publish it: clients call an echo tool of an upstream
// directly and through a gateway, alternating the paths in one run, with
// 1, 8 and 32 concurrent sessions, and it prints each path's p50 and p99
// latency and the ratio to the direct path.
//
//	go run ./internal/cmd/gatewaybench [-sessions 1,8,32] [-duration 3s] [-round 250ms] [-paths REGEXP] [-chartgate BIN|none]
//
// The paths over stdio: direct (a client per upstream process); through a
// relay process, which only copies lines to the upstream and back (what
// any stdio proxy costs at least: a process more on each call's way);
// through chartgate serve, as a host runs it (a process per session,
// built from this module with go build unless -chartgate names one):
// without a workflow, and with a workflow whose every call moves it, on
// the memory store and on a SQLite file (the sessions share it, as a
// machine's gateways do); and through the gateway run in this process
// (package gateway and internal/stdio on a pair of pipes, what serve runs
// without its process: its own cost), without a workflow, and with the
// workflow on the memory store, on SQLite (synchronous=NORMAL, serve's
// default) and on SQLite as with --durable (synchronous=FULL). The
// in-process gate keeps mcpbind's default history of 20 entries, serve
// keeps 500 and audits every call. Over Streamable HTTP: direct to an
// upstream HTTP server, through a reverse proxy process (net/http/httputil:
// the floor of an HTTP hop), through chartgate serve --http in front of it
// (one process for all sessions), and through a gateway's HTTP handler in
// this process. The upstream is this program, run again as a stdio server
// or as an HTTP server on loopback. Each round runs one path for -round, all
// sessions at once; rounds go through the paths in turn until each has
// had -duration.
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/gateway"
	"github.com/chartgate/chartgate/internal/stdio"
	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/mcpbind/sqlitestore"
	"github.com/chartgate/chartgate/statechart"
)

// envUpstream makes this program a stdio echo server, and envRelay a
// relay in front of one: a process that starts it and copies its standard
// input to the server and the server's output to its standard output,
// what any stdio proxy does at least.
// envUpstreamHTTP makes it an echo server over Streamable HTTP on the
// address it holds, and envRelayHTTP a reverse proxy (net/http/httputil)
// in front of the server at the URL it holds, on a loopback port; both
// print their URL.
const (
	envUpstream     = "CHARTGATE_GATEWAYBENCH_UPSTREAM"
	envRelay        = "CHARTGATE_GATEWAYBENCH_RELAY"
	envUpstreamHTTP = "CHARTGATE_GATEWAYBENCH_HTTP"
	envRelayHTTP    = "CHARTGATE_GATEWAYBENCH_HTTP_RELAY"
)

func main() {
	if addr := os.Getenv(envUpstreamHTTP); addr != "" {
		serveHTTP(addr, "", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return echoServer() },
			&mcp.StreamableHTTPOptions{Logger: slog.New(slog.DiscardHandler)}))
	}
	if target := os.Getenv(envRelayHTTP); target != "" {
		u, err := url.Parse(target)
		if err != nil {
			fmt.Fprintf(os.Stderr, "gatewaybench relay: %v\n", err)
			os.Exit(1)
		}
		rp := httputil.NewSingleHostReverseProxy(u)
		// A session's stream ends when the client closes it.
		rp.ErrorLog = log.New(io.Discard, "", 0)
		serveHTTP("127.0.0.1:0", u.Path, rp)
	}
	if os.Getenv(envRelay) != "" {
		if err := relay(); err != nil {
			fmt.Fprintf(os.Stderr, "gatewaybench relay: %v\n", err)
			os.Exit(1)
		}
		return
	}
	if os.Getenv(envUpstream) != "" {
		// Standard input through the poller: see stdio.Pollable.
		if err := echoServer().Run(context.Background(), &mcp.IOTransport{Reader: stdio.Pollable(os.Stdin), Writer: os.Stdout}); err != nil {
			os.Exit(1)
		}
		return
	}
	sessions := flag.String("sessions", "1,8,32", "numbers of concurrent sessions, comma-separated")
	duration := flag.Duration("duration", 3*time.Second, "time each path is measured, per number of sessions")
	round := flag.Duration("round", 250*time.Millisecond, "time of one round of one path")
	only := flag.String("paths", "", "measure only the paths whose names match this regular expression (^stdio, ^http, serve, ...)")
	serveBin := flag.String("chartgate", "", `the chartgate binary whose serve command is measured (default: built with "go build"; "none": skip those paths)`)
	flag.Parse()
	if err := run(os.Stdout, *sessions, *duration, *round, *only, *serveBin); err != nil {
		fmt.Fprintf(os.Stderr, "gatewaybench: %v\n", err)
		os.Exit(1)
	}
}

type echoIn struct {
	Text string `json:"text"`
}

// echoServer is the upstream: one tool that returns its text.
func echoServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, &mcp.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes text."}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	return s
}

// A path opens one client session on it; end releases what it started.
type path struct {
	name string
	open func(ctx context.Context) (cs *mcp.ClientSession, end func(), err error)
}

func run(out io.Writer, sessionList string, duration, round time.Duration, only, serveBin string) error {
	ctx := context.Background()
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	upstream := &gateway.ServerConfig{Name: "up", Transport: gateway.TransportStdio, Command: exe, Env: map[string]string{envUpstream: "1"}}
	dir, err := os.MkdirTemp("", "gatewaybench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// As chartgate serve opens its store: synchronous=NORMAL by default,
	// FULL with --durable.
	store, err := sqlitestore.Open(filepath.Join(dir, "state.db"), &sqlitestore.Options{RelaxedSync: true})
	if err != nil {
		return err
	}
	defer store.Close()
	durable, err := sqlitestore.Open(filepath.Join(dir, "durable.db"), nil)
	if err != nil {
		return err
	}
	defer durable.Close()
	// The HTTP upstream is a process of its own, as the stdio one is.
	httpUp, stopUp, err := startSelf(envUpstreamHTTP, "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("the HTTP upstream: %w", err)
	}
	defer stopUp()
	httpGateway, err := gateway.New(ctx, &gateway.Config{Servers: []*gateway.ServerConfig{{Name: "up", Transport: gateway.TransportHTTP, URL: httpUp}}},
		&gateway.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	defer httpGateway.Close()
	httpGw := httptest.NewServer(httpGateway.HTTPHandler(&mcp.StreamableHTTPOptions{Logger: slog.New(slog.DiscardHandler)}))
	defer httpGw.Close()

	paths := []path{
		{"stdio direct", processPath(envUpstream, exe)},
		{"stdio in-process gateway", stdioGateway(upstream, nil)},
		{"stdio in-process gateway, workflow, memory", stdioGateway(upstream, func() (mcpbind.Store, error) { return mcpbind.NewMemoryStore(nil), nil })},
		{"stdio in-process gateway, workflow, SQLite", stdioGateway(upstream, func() (mcpbind.Store, error) { return store, nil })},
		{"stdio in-process, workflow, SQLite durable", stdioGateway(upstream, func() (mcpbind.Store, error) { return durable, nil })},
		{"http direct", httpPath(httpUp)},
		{"http in-process gateway", httpPath(httpGw.URL)},
	}
	if serveBin != "none" {
		if serveBin == "" {
			serveBin = filepath.Join(dir, "chartgate")
			build := exec.Command("go", "build", "-o", serveBin, "github.com/chartgate/chartgate/cmd/chartgate")
			build.Stdout, build.Stderr = os.Stderr, os.Stderr
			if err := build.Run(); err != nil {
				return fmt.Errorf("building chartgate (give one with -chartgate, or -chartgate none): %w", err)
			}
		}
		wf := filepath.Join(dir, "moving.json")
		if err := os.WriteFile(wf, []byte(movingWorkflow), 0o644); err != nil {
			return err
		}
		cfg := filepath.Join(dir, "http.json")
		if err := os.WriteFile(cfg, []byte(`{"mcpServers": {"up": {"url": "`+httpUp+`"}}}`), 0o644); err != nil {
			return err
		}
		serveURL, stop, err := startServeHTTP(serveBin, cfg)
		if err != nil {
			return err
		}
		defer stop()
		paths = slices.Insert(paths, 1,
			path{"stdio relay process", processPath(envRelay, exe)},
			path{"stdio chartgate serve", servePath(serveBin, exe)},
			path{"stdio chartgate serve, workflow, memory", servePath(serveBin, exe, "--workflow", wf, "--store", "memory")},
			path{"stdio chartgate serve, workflow, SQLite", servePath(serveBin, exe, "--workflow", wf, "--store", filepath.Join(dir, "serve.db"))})
		relayHTTP, stopRelay, err := startSelf(envRelayHTTP, httpUp)
		if err != nil {
			return fmt.Errorf("the HTTP relay: %w", err)
		}
		defer stopRelay()
		paths = append(paths, path{"http relay process", httpPath(relayHTTP)},
			path{"http chartgate serve --http", httpPath(serveURL)})
	}
	match, err := regexp.Compile(only)
	if err != nil {
		return fmt.Errorf("-paths: %w", err)
	}
	paths = slices.DeleteFunc(paths, func(p path) bool { return !match.MatchString(p.name) })
	fmt.Fprintf(out, "%-8s  %-44s  %9s  %9s  %7s  %7s  %s\n", "sessions", "path", "p50", "p99", "p50 ×", "p99 ×", "calls")
	for _, field := range strings.Split(sessionList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil || n < 1 {
			return fmt.Errorf("-sessions: %q is not a positive number", field)
		}
		if err := measure(ctx, out, paths, n, duration, round); err != nil {
			return err
		}
	}
	return nil
}

func connect(ctx context.Context, t mcp.Transport) (*mcp.ClientSession, error) {
	return mcp.NewClient(&mcp.Implementation{Name: "gatewaybench", Version: "1"}, nil).Connect(ctx, t,
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
}

// stdioGateway is the path through a gateway served over a pair of pipes,
// as chartgate serve runs it: with a workflow gate on the store newStore
// makes, whose every echo call moves the workflow, if it is not nil, and
// with the passthrough otherwise.
func stdioGateway(upstream *gateway.ServerConfig, newStore func() (mcpbind.Store, error)) func(context.Context) (*mcp.ClientSession, func(), error) {
	return func(ctx context.Context) (*mcp.ClientSession, func(), error) {
		g, err := gateway.New(ctx, &gateway.Config{Servers: []*gateway.ServerConfig{upstream}}, &gateway.Options{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			return nil, nil, err
		}
		t := &stdio.Transport{}
		serve := g.Server().Run
		if newStore != nil {
			store, err := newStore()
			if err != nil {
				g.Close()
				return nil, nil, err
			}
			gate, err := movingGate(store)
			if err != nil {
				g.Close()
				return nil, nil, err
			}
			gate.Attach(g.Server())
			d := g.Dispatch()
			t.Bypass, serve = d.Bypass, d.Run
		} else {
			t.Bypass = g.Passthrough()
		}
		toServer, fromClient, err1 := os.Pipe()
		toClient, fromServer, err2 := os.Pipe()
		if err := cmp.Or(err1, err2); err != nil {
			g.Close()
			return nil, nil, err
		}
		t.Reader, t.Writer = toServer, fromServer
		sctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = serve(sctx, t)
		}()
		cs, err := connect(ctx, &mcp.IOTransport{Reader: toClient, Writer: fromClient})
		end := func() { cancel(); <-done; g.Close() }
		if err != nil {
			end()
			return nil, nil, err
		}
		return cs, end, nil
	}
}

// serveHTTP serves h on addr, after printing its URL (with path), until
// the process is killed.
func serveHTTP(addr, path string, h http.Handler) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gatewaybench: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("http://%s%s\n", l.Addr(), path)
	err = http.Serve(l, h)
	fmt.Fprintf(os.Stderr, "gatewaybench: %v\n", err)
	os.Exit(1)
}

// relay starts this program as the stdio echo server and copies lines
// between it and this process' standard input and output.
func relay() error {
	cmd := exec.Command(os.Args[0])
	// The server, not another relay.
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, envRelay+"=") }), envUpstream+"=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	copied := make(chan error, 1)
	go func() {
		_, err := io.Copy(os.Stdout, out)
		copied <- err
	}()
	// Standard input through the poller: see stdio.Pollable.
	_, err = io.Copy(in, stdio.Pollable(os.Stdin))
	in.Close()
	return cmp.Or(err, <-copied, cmd.Wait())
}

// startSelf starts this program with env set to value, and returns the
// URL it prints and the function that stops it.
func startSelf(env, value string) (string, func(), error) {
	exe, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), env+"="+value)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	var u string
	if _, err := fmt.Fscanln(out, &u); err != nil {
		stop()
		return "", nil, fmt.Errorf("it did not say where it listens: %w", err)
	}
	return u, stop, nil
}

// startServeHTTP starts chartgate serve --http in front of the servers of
// the configuration file cfg, on a free loopback port, and returns its
// endpoint once it accepts connections, and the function that stops it.
func startServeHTTP(bin, cfg string) (endpoint string, stop func(), err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, "serve", "--http", addr, "--config", cfg, "--log-level", "error")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop = func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return "http://" + addr + "/mcp", stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, fmt.Errorf("chartgate serve --http %s: not listening after 10 s", addr)
		}
	}
}

// servePath is the path through a chartgate serve process with args, in
// front of this program as a stdio upstream, as a host runs it.
func servePath(bin, exe string, args ...string) func(context.Context) (*mcp.ClientSession, func(), error) {
	return processPath(envUpstream, bin, append(append([]string{"serve", "--log-level", "error"}, args...), "--", exe)...)
}

// processPath is the path to the MCP server a new process of bin with
// args serves over stdio, with the environment variable env set to 1
// (which tells this program, and the upstream a serve process starts,
// what part to play).
func processPath(env, bin string, args ...string) func(context.Context) (*mcp.ClientSession, func(), error) {
	return func(ctx context.Context) (*mcp.ClientSession, func(), error) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), env+"=1")
		cs, err := connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second})
		return cs, func() {}, err
	}
}

// httpPath is the path to the MCP server at endpoint, over Streamable
// HTTP.
func httpPath(endpoint string) func(context.Context) (*mcp.ClientSession, func(), error) {
	return func(ctx context.Context) (*mcp.ClientSession, func(), error) {
		cs, err := connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint})
		return cs, func() {}, err
	}
}

// movingWorkflow is a workflow whose every echo call moves it (its
// context counts the calls).
const movingWorkflow = `{"id": "w", "initial": "a", "context": {"n": 0}, "states": {"a": {
	"on": {"E": {"actions": {"type": "xstate.assign", "params": {"n": {"$inc": 1}}}}},
	"meta": {"mcp": {"tools": ["*"], "events": {"echo": "E"}}}}}}`

// movingGate is a gate whose workflow every echo call moves (its context
// counts the calls): a lease, the event and their writes per call.
func movingGate(store mcpbind.Store) (*mcpbind.Gate, error) {
	m, err := statechart.Compile([]byte(movingWorkflow), nil)
	if err != nil {
		return nil, err
	}
	return mcpbind.New(m.Engine(), &mcpbind.Options{Logger: slog.New(slog.DiscardHandler), Store: store})
}

// measure runs the paths with n sessions each, alternating them in
// rounds, and prints their latencies.
func measure(ctx context.Context, out io.Writer, paths []path, n int, duration, round time.Duration) error {
	type opened struct {
		sessions []*mcp.ClientSession
		ends     []func()
		lat      []time.Duration
	}
	all := make([]*opened, len(paths))
	defer func() {
		for _, o := range all {
			if o == nil {
				continue
			}
			for i, cs := range o.sessions {
				cs.Close()
				o.ends[i]()
			}
		}
	}()
	for i, p := range paths {
		o := &opened{}
		all[i] = o
		for range n {
			cs, end, err := p.open(ctx)
			if err != nil {
				return fmt.Errorf("%s: %w", p.name, err)
			}
			o.sessions, o.ends = append(o.sessions, cs), append(o.ends, end)
			if err := call(ctx, cs); err != nil { // warm up
				return fmt.Errorf("%s: %w", p.name, err)
			}
		}
	}
	for spent := time.Duration(0); spent < duration; spent += round {
		for i, p := range paths {
			lat, err := runRound(ctx, all[i].sessions, round)
			if err != nil {
				return fmt.Errorf("%s: %w", p.name, err)
			}
			all[i].lat = append(all[i].lat, lat...)
		}
	}
	var direct map[string][2]time.Duration = map[string][2]time.Duration{}
	for i, p := range paths {
		lat := all[i].lat
		slices.Sort(lat)
		p50, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
		transport, _, _ := strings.Cut(p.name, " ")
		if strings.HasSuffix(p.name, " direct") {
			direct[transport] = [2]time.Duration{p50, p99}
		}
		d := direct[transport]
		fmt.Fprintf(out, "%-8d  %-44s  %9v  %9v  %6.2f×  %6.2f×  %d\n", n, p.name, p50.Round(time.Microsecond), p99.Round(time.Microsecond),
			float64(p50)/float64(d[0]), float64(p99)/float64(d[1]), len(lat))
	}
	return nil
}

// runRound has every session call echo in a loop for d and returns the
// latencies of the calls.
func runRound(ctx context.Context, sessions []*mcp.ClientSession, d time.Duration) ([]time.Duration, error) {
	var (
		mu    sync.Mutex
		lat   []time.Duration
		first error
		wg    sync.WaitGroup
	)
	deadline := time.Now().Add(d)
	for _, cs := range sessions {
		wg.Go(func() {
			var mine []time.Duration
			for time.Now().Before(deadline) {
				start := time.Now()
				if err := call(ctx, cs); err != nil {
					mu.Lock()
					first = cmp.Or(first, err)
					mu.Unlock()
					return
				}
				mine = append(mine, time.Since(start))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	return lat, first
}

func call(ctx context.Context, cs *mcp.ClientSession) error {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}})
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("echo failed: %v", res.Content)
	}
	return nil
}
