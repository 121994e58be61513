package main

// This file defines the ui command: the web page of package ui on the
// project's workflow and store.

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/chartgate/chartgate/internal/diagram"
	"github.com/chartgate/chartgate/ui"
)

const uiUsage = `usage: chartgate ui [--addr ADDR] [--poll DURATION] [project flags]

  --addr ADDR      the address to serve on (default 127.0.0.1:0, a free port on the loopback)
  --poll DURATION  how often an open page reads the store (default 250ms)
` + projectFlagsUsage + `
Prints the page's URL with a one-time token (kept in memory only): opening it
logs the browser in; any other request without that login is refused. Ctrl-C
stops the server.
`

// cmdUI serves the page until interrupted.
func cmdUI(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("ui")
	pf := addProjectFlags(fs)
	addr := fs.String("addr", "127.0.0.1:0", "the address to serve on")
	poll := fs.Duration("poll", 250*time.Millisecond, "how often an open page reads the store")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return argsError(stdout, stderr, "ui", err)
	}
	if len(pos) > 0 {
		return usageError(stderr, "ui", fmt.Errorf("unexpected argument %q", pos[0]))
	}
	if *poll <= 0 {
		return usageError(stderr, "ui", fmt.Errorf("--poll %s: must be positive", *poll))
	}
	p, g, code := openGate(pf, stderr)
	if g == nil {
		return code
	}
	defer p.close()
	defer g.Close()
	srv, err := ui.New(&ui.Options{Gate: g, Chart: diagram.New(p.workflow.Machine, p.workflow.JSON), Poll: *poll})
	if err != nil {
		fmt.Fprintf(stderr, "chartgate ui: %v\n", err)
		return exitFail
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "chartgate ui: %v\n", err)
		return exitFail
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
		fmt.Fprintf(stderr, "chartgate ui: warning: serving on %s, not the loopback: plain HTTP, anyone on the network who sees the traffic can use the session\n", ln.Addr())
	}
	fmt.Fprintf(stdout, "chartgate ui: open %s\n(the link works once; Ctrl-C stops the server)\n", srv.LoginURL(ln.Addr()))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := srv.Serve(ctx, ln); err != nil {
		fmt.Fprintf(stderr, "chartgate ui: %v\n", err)
		return exitFail
	}
	return exitOK
}
