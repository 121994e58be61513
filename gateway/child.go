// This file defines the child process of a stdio upstream: how it is
// started, how its stderr reaches the log, and how it is stopped.

package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/internal/rawio"
)

// maxStderrLine is the longest stderr line logged whole; the rest of a
// longer line is dropped.
const maxStderrLine = 16 << 10

// child is a running stdio upstream. It is not go-sdk's CommandTransport,
// which signals only the process it started (with npx, not the node
// server npx starts), and whose exit status is out of reach.
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser // write end (see package internal/rawio)
	stdout io.ReadCloser  // read end
	grace  time.Duration
	done   chan struct{} // closed once the child has exited and been reaped
	err    error         // cmd.Wait's result; read after done is closed

	stopOnce sync.Once
}

// startChild starts s's command with env, in a process group of its own.
// Each line it writes on stderr is passed to logLine.
func startChild(s *ServerConfig, env []string, grace time.Duration, logLine func(string)) (*child, error) {
	cmd := exec.Command(s.Command, s.Args...)
	cmd.Env = env
	cmd.Dir = s.Cwd
	setProcAttr(cmd)
	// The pipes are our own, not cmd's StdoutPipe: Wait would close those
	// as soon as the process exits, maybe before the last message is read.
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err1 := pipe()
	outR, outW, err2 := pipe()
	errR, errW, err3 := pipe()
	if err := errors.Join(err1, err2, err3); err != nil {
		closeAll()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, err
	}
	inR.Close()
	outW.Close()
	errW.Close()
	c := &child{cmd: cmd, stdin: rawio.File(inW), stdout: rawio.File(outR), grace: grace, done: make(chan struct{})}
	go logLines(errR, logLine)
	go func() {
		c.err = cmd.Wait()
		// Whatever the child started and left behind goes with it.
		kill(cmd.Process)
		close(c.done)
	}()
	return c, nil
}

// logLines passes each line of r to logLine until r ends, then closes r.
func logLines(r io.ReadCloser, logLine func(string)) {
	defer r.Close()
	br := bufio.NewReaderSize(r, maxStderrLine)
	for {
		line, isPrefix, err := br.ReadLine()
		if len(line) > 0 || (err == nil && !isPrefix) {
			logLine(string(line))
		}
		for isPrefix && err == nil { // drop the rest of a long line
			_, isPrefix, err = br.ReadLine()
		}
		if err != nil {
			return
		}
	}
}

// exited reports whether the child has exited, waiting at most d, and how:
// "exit status 1", "signal: killed".
func (c *child) exited(d time.Duration) (string, bool) {
	select {
	case <-c.done:
	default:
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-c.done:
		case <-t.C:
			return "", false
		}
	}
	if c.err == nil {
		return "exit status 0", true
	}
	return c.err.Error(), true
}

// stop ends the child the way the MCP specification describes for stdio:
// close its stdin, wait for it to exit, then SIGTERM, then SIGKILL (its
// whole process group), waiting grace each time.
func (c *child) stop() {
	c.stopOnce.Do(func() {
		c.stdin.Close()
		if _, ok := c.exited(c.grace); ok {
			return
		}
		terminate(c.cmd.Process)
		if _, ok := c.exited(c.grace); ok {
			return
		}
		kill(c.cmd.Process)
		<-c.done
	})
}

// childTransport starts a child each time it is connected.
type childTransport struct {
	u *upstream
}

// Connect starts the upstream's command and connects to it.
func (t childTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.u.startChild()
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", t.u.cfg.Command, err)
	}
	conn := newLineConn(t.u, c)
	t.u.mu.Lock()
	t.u.conn = conn
	t.u.mu.Unlock()
	return orderedConn{conn, t.u}, nil
}

// orderedConn forwards an upstream's progress and log notifications
// downstream as it reads them, so that they reach the downstream client
// before the response that follows them. (go-sdk hands a response to its
// caller as soon as it is read, but queues notifications for another
// goroutine: forwarded from the client's handlers, the last progress or
// log notifications of a call would come after its result, or be
// dropped.)
// It is used for stdio upstreams only: wrapping go-sdk's Streamable HTTP
// connection would hide the methods it needs from its client.
type orderedConn struct {
	mcp.Connection
	u *upstream
}

func (c orderedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return msg, err
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok || req.IsCall() {
			return msg, nil
		}
		switch req.Method {
		case "notifications/progress":
			var p mcp.ProgressNotificationParams
			if json.Unmarshal(req.Params, &p) == nil {
				c.u.g.forwardProgress(&p)
				continue
			}
		case "notifications/message":
			//lint:ignore SA1019 logging is deprecated from 2026-07-28 on; the gateway passes it through for the versions that have it.
			var p mcp.LoggingMessageParams
			if json.Unmarshal(req.Params, &p) == nil {
				c.u.g.forwardLog(c.u, &p)
				continue
			}
		}
		return msg, nil
	}
}
