package main

// This file defines the ui command: the web page of package ui on the
// project's workflow and store.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/chartgate/chartgate/internal/diagram"
	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/ui"
)

const uiUsage = `usage: chartgate ui [--addr ADDR] [--poll DURATION] [project flags]

  --addr ADDR      the address to serve on (default 127.0.0.1:0, a free port on the loopback)
  --poll DURATION  how often an open page reads the store (default 250ms)
  --key FILE       the approver key that signs the page's answers to approvals
                   (default $XDG_CONFIG_HOME/chartgate/approver.key, else
                   ~/.config/chartgate/approver.key; without it the page only
                   shows them)
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
	keyFlag := fs.String("key", "", "the approver key")
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
	// The page answers approvals with the approver key, as chartgate
	// approve does; without one it only shows them.
	keyPath := *keyFlag
	if keyPath == "" {
		if keyPath, err = defaultKeyPath(); err != nil {
			fmt.Fprintf(stderr, "chartgate ui: %v\n", err)
			return exitFail
		}
	}
	key, err := readKey(keyPath)
	if errors.Is(err, errNoKey) {
		fmt.Fprintf(stderr, "chartgate ui: %s: the page shows approvals but cannot answer them (chartgate approve --init creates the key)\n", keyMissing(keyPath))
	} else if err != nil {
		fmt.Fprintf(stderr, "chartgate ui: %v\n", err)
		return exitFail
	}
	p, err := openProject(pf)
	if err != nil {
		fmt.Fprintf(stderr, "chartgate ui: %v\n", err)
		return exitFail
	}
	defer p.close()
	opts := agreedGateOptions(p, nil, false, defaultLeaseTTL)
	opts.ApproverKey = key
	g, err := mcpbind.New(p.workflow.Machine.Engine(), opts)
	if err != nil {
		fmt.Fprintf(stderr, "chartgate ui: %v\n", err)
		return exitFail
	}
	defer g.Close()
	by, authd := approver("")
	srv, err := ui.New(&ui.Options{Gate: g, Chart: diagram.New(p.workflow.Machine, p.workflow.JSON), Poll: *poll,
		By: by, Authenticated: authd, ApproverKey: key})
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
