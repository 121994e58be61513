// This file defines the passthrough of tool calls over stdio: a
// tools/call line that needs nothing of go-sdk goes to the upstream's
// stdin with the gateway's request id, and the upstream's answer line
// comes back with the client's id, neither decoded nor encoded again.

package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"
)

// Passthrough returns a function for the Bypass field of the stdio
// transport (package internal/stdio) of one downstream session of
// [Gateway.Server]. It takes a tools/call line that only names a listed
// tool of a stdio upstream and passes arguments, on a session of the
// upstream's protocol version: the line goes to the upstream as it came
// but for the request id, and the upstream's answer comes back as it
// came but for the id, with the refusals, the argument bound, the call
// timeout and the loss of the upstream handled as for other calls. Any
// other line (a progress token or other _meta, a renamed or refused
// tool, initialize, another method) it leaves to go-sdk. A call
// cancelled by the client is cancelled upstream.
//
// Use it only when nothing else must see every call: middleware added
// to the server (a workflow gate) does not see the calls it takes.
func (g *Gateway) Passthrough() func(line []byte, version string, reply func([]byte) error) bool {
	p := &passthrough{g: g, calls: map[string]*rawCall{}}
	return p.take
}

// passthrough is the state of one downstream session's passthrough.
type passthrough struct {
	g     *Gateway
	mu    sync.Mutex
	calls map[string]*rawCall // downstream id as written → its call
}

// take is the stdio transport's Bypass.
func (p *passthrough) take(line []byte, version string, reply func([]byte) error) bool {
	if version == "" || len(line) > p.g.opts.MaxArgumentBytes {
		return false
	}
	id, params, cancelled, ok := readCall(line)
	if cancelled.Exists() {
		p.cancelled(cancelled)
	}
	if !ok || params[2].Exists() { // _meta: go-sdk's way routes a progress token
		return false
	}
	name := params[0].Str
	g := p.g
	g.mu.Lock()
	e, refused := g.tools[name], g.refused[name] != ""
	g.mu.Unlock()
	if e == nil || refused || e.orig != name {
		return false
	}
	conn := e.up.lineConn(version)
	if conn == nil {
		return false
	}
	down := id.Raw
	c := &rawCall{down: down, reply: reply, up: e.up, tool: name, conn: conn, done: func() { p.drop(down) }}
	p.mu.Lock()
	if p.calls[down] != nil { // the same id twice: go-sdk says what is wrong
		p.mu.Unlock()
		return false
	}
	p.calls[down] = c
	p.mu.Unlock()
	if !conn.send(line, id.Index, len(id.Raw), c, g.callTimeout(e.up)) {
		p.drop(down)
		return false
	}
	return true
}

func (p *passthrough) drop(down string) {
	p.mu.Lock()
	delete(p.calls, down)
	p.mu.Unlock()
}

// cancelled passes a client's notifications/cancelled of a call taken
// to the upstream.
func (p *passthrough) cancelled(params gjson.Result) {
	p.mu.Lock()
	c := p.calls[params.Get("requestId").Raw]
	p.mu.Unlock()
	if c != nil {
		c.cancel(params.Get("reason").String())
	}
}

// readCall reads a tools/call line that passes only a tool's name (a
// string of valid UTF-8 with no escapes, which gjson and encoding/json
// read alike), arguments and _meta: its id (a string or an integer) and
// its params' name, arguments and _meta; ok is false for any other line. For
// a notifications/cancelled line that names a request, it returns the
// notification's params in cancelled.
func readCall(line []byte) (id gjson.Result, params [3]gjson.Result, cancelled gjson.Result, ok bool) {
	if line[0] != '{' {
		return id, params, cancelled, false
	}
	var top [4]gjson.Result // jsonrpc, id, method, params
	if !fields(gjson.ParseBytes(line), []string{`"jsonrpc"`, `"id"`, `"method"`, `"params"`}, top[:]) || top[0].Raw != `"2.0"` {
		return id, params, cancelled, false
	}
	switch top[2].Raw {
	case `"notifications/cancelled"`:
		if top[3].Get("requestId").Exists() {
			cancelled = top[3]
		}
		return id, params, cancelled, false
	case `"tools/call"`:
	default:
		return id, params, cancelled, false
	}
	id = top[1]
	if id.Type != gjson.String && (id.Type != gjson.Number || !intID(id.Raw)) || !top[3].IsObject() {
		return id, params, cancelled, false
	}
	ok = fields(top[3], []string{`"name"`, `"arguments"`, `"_meta"`}, params[:]) && params[0].Type == gjson.String &&
		strings.IndexByte(params[0].Raw, '\\') < 0 && utf8.ValidString(params[0].Raw)
	return id, params, cancelled, ok
}

// intID reports whether a JSON number is an integer that go-sdk reads as
// a request id.
func intID(raw string) bool {
	_, err := strconv.ParseInt(raw, 10, 64)
	return err == nil
}

// fields fills vals with the values of obj's keys, each of which must be
// one of keys (as written, with their quotes) and appear once.
func fields(obj gjson.Result, keys []string, vals []gjson.Result) bool {
	ok := obj.IsObject()
	obj.ForEach(func(key, value gjson.Result) bool {
		i := indexOf(keys, key.Raw)
		if i < 0 || vals[i].Exists() {
			ok = false
			return false
		}
		vals[i] = value
		return true
	})
	return ok
}

func indexOf(keys []string, k string) int {
	for i, key := range keys {
		if key == k {
			return i
		}
	}
	return -1
}

// rawCall is a tool call passed through, waiting for its answer.
type rawCall struct {
	down  string // the downstream request id, as written
	reply func([]byte) error
	up    *upstream
	tool  string
	done  func() // called once the call is over

	conn  *lineConn
	ours  string // the upstream request id, without quotes
	timer *time.Timer
	once  sync.Once
}

// finish ends the call once: with the upstream's answer line, or with an
// error result built by the gateway.
func (c *rawCall) finish(answer []byte, failure string) {
	c.once.Do(func() {
		c.conn.forget(c)
		c.done()
		if answer == nil {
			answer = errorLine(c.down, failure)
		}
		if err := c.reply(answer); err != nil {
			c.up.logger.Debug("answering a call passed through", "error", err)
		}
	})
}

// cancel tells the upstream the client cancelled the call; no answer
// goes downstream.
func (c *rawCall) cancel(reason string) {
	c.once.Do(func() {
		ours := c.conn.forget(c)
		c.done()
		if ours != "" {
			c.conn.cancelUpstream(ours, reason)
		}
	})
}

// errorLine is the answer line of a call with id (as written) whose
// result is an error result saying msg.
func errorLine(id string, msg string) []byte {
	res, _ := json.Marshal(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}, IsError: true})
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.WriteString(id)
	b.WriteString(`,"result":`)
	b.Write(res)
	b.WriteString("}\n")
	return b.Bytes()
}

// rawPrefix starts the request ids of the calls passed through; go-sdk's
// own ids are numbers.
const rawPrefix = "chartgate-pass-"

// lineConn is the connection to a stdio child: newline-delimited JSON-RPC
// like go-sdk's IOTransport, read into one reused buffer, carrying the
// calls passed through beside go-sdk's messages. An answer to one of
// those goes downstream from the reading goroutine, undecoded.
type lineConn struct {
	c     *child
	u     *upstream
	r     *bufio.Reader
	buf   []byte // the line being read
	out   []byte // the answer being rewritten
	queue []jsonrpc.Message

	wmu  sync.Mutex // one line at a time to the child's stdin
	wbuf []byte

	mu     sync.Mutex
	calls  map[string]*rawCall // upstream id (without quotes) → call
	next   uint64
	closed error       // why the connection ended; set once
	nudge  *time.Timer // pings the child while calls wait (see nudgeChild)

	lastRead atomic.Int64 // when the last line came from the child, in Unix nanoseconds

	closeOnce sync.Once
}

func newLineConn(u *upstream, c *child) *lineConn {
	return &lineConn{c: c, u: u, r: bufio.NewReaderSize(c.stdout, 64<<10), calls: map[string]*rawCall{}}
}

// Read implements mcp.Connection.
func (l *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if len(l.queue) > 0 {
		m := l.queue[0]
		l.queue = l.queue[1:]
		return m, nil
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		line, err := l.readLine()
		if err != nil {
			l.fail(fmt.Errorf("reading: %w", err))
			return nil, err
		}
		if len(line) == 0 || l.answered(line) {
			continue
		}
		if line[0] == '[' { // a batch, from an older server
			var batch []json.RawMessage
			if err := json.Unmarshal(line, &batch); err != nil || len(batch) == 0 {
				return nil, fmt.Errorf("reading a batch: %v", err)
			}
			for _, raw := range batch {
				m, err := jsonrpc.DecodeMessage(raw)
				if err != nil {
					return nil, err
				}
				l.queue = append(l.queue, m)
			}
			m := l.queue[0]
			l.queue = l.queue[1:]
			return m, nil
		}
		return jsonrpc.DecodeMessage(bytes.Clone(line))
	}
}

// readLine reads the next line into the reused buffer, without its end
// and surrounding space.
func (l *lineConn) readLine() ([]byte, error) {
	defer func() { l.lastRead.Store(time.Now().UnixNano()) }()
	line := l.buf[:0]
	for {
		chunk, err := l.r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > mcp.DefaultMaxLineLength+2 {
			return nil, fmt.Errorf("a line longer than %d bytes", mcp.DefaultMaxLineLength)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if cap(line) <= 1<<20 {
			l.buf = line[:0]
		}
		if err != nil && (err != io.EOF || len(bytes.TrimSpace(line)) == 0) {
			return nil, err
		}
		return bytes.TrimSpace(line), nil
	}
}

// answered passes line downstream if it answers a call passed through,
// and reports whether it does (or answers one that is over: then it is
// dropped).
func (l *lineConn) answered(line []byte) bool {
	if line[0] != '{' {
		return false
	}
	id := gjson.GetBytes(line, "id")
	if id.Type != gjson.String || len(id.Str) <= len(rawPrefix) || id.Str[:len(rawPrefix)] != rawPrefix || id.Index <= 0 ||
		gjson.GetBytes(line, "method").Exists() {
		return false
	}
	l.mu.Lock()
	c := l.calls[id.Str]
	l.mu.Unlock()
	if c == nil {
		return true // cancelled or timed out: its answer goes nowhere
	}
	out := append(l.out[:0], line[:id.Index]...)
	out = append(out, c.down...)
	out = append(out, line[id.Index+len(id.Raw):]...)
	out = append(out, '\n')
	if cap(out) <= 1<<20 {
		l.out = out[:0]
	}
	c.finish(out, "")
	return true
}

// send writes line to the upstream with the id at [at, at+n) replaced by
// one of the gateway's, and waits for the answer in c; false if the
// connection has ended (nothing was sent).
func (l *lineConn) send(line []byte, at, n int, c *rawCall, timeout time.Duration) bool {
	l.mu.Lock()
	if l.closed != nil {
		l.mu.Unlock()
		return false
	}
	l.next++
	c.ours = rawPrefix + strconv.FormatUint(l.next, 10)
	l.calls[c.ours] = c
	if timeout > 0 {
		c.timer = time.AfterFunc(timeout, func() { l.timedOut(c, timeout) })
	}
	if l.nudge == nil {
		l.nudge = time.AfterFunc(nudgeAfter, l.nudgeChild)
	}
	l.mu.Unlock()
	l.wmu.Lock()
	w := append(l.wbuf[:0], line[:at]...)
	w = append(w, '"')
	w = append(w, c.ours...)
	w = append(w, '"')
	w = append(w, line[at+n:]...)
	w = append(w, '\n')
	_, err := l.c.stdin.Write(w)
	if cap(w) <= 1<<20 {
		l.wbuf = w[:0]
	}
	l.wmu.Unlock()
	if err != nil {
		c.finish(nil, l.u.lostMessage(err))
	}
	return true
}

// timedOut ends a call whose timeout passed: cancelled upstream, and an
// error result downstream, as callTool does.
func (l *lineConn) timedOut(c *rawCall, timeout time.Duration) {
	c.once.Do(func() {
		// Forgotten first: the upstream's answer to the cancellation
		// goes nowhere.
		ours := l.forget(c)
		c.done()
		l.cancelUpstream(ours, "timeout")
		msg := fmt.Sprintf("%s did not answer the call of tool %q within %v: the gateway cancelled it, and it may or may not have taken effect",
			c.up.describe(), c.tool, timeout)
		if err := c.reply(errorLine(c.down, msg)); err != nil {
			c.up.logger.Debug("answering a call passed through", "error", err)
		}
	})
}

// nudgeAfter is how long the child may be silent while calls wait for
// their answers before nudgeChild pings it.
const nudgeAfter = time.Second

// nudgeChild sends the child a ping when calls wait for answers and it has
// written nothing for nudgeAfter, and comes back every nudgeAfter while
// calls wait. A Go child can stop answering until it reads another line:
// on Go 1.26 a garbage collection that starts as its stdin reader enters
// read(2) waits for the read to return before it stops the world (see
// internal/stdio's Pollable), and the child's client, this gateway,
// writes nothing more while it waits for the answer. The ping is that
// line; its answer, with an id of the calls passed through that no call
// has, is dropped.
func (l *lineConn) nudgeChild() {
	l.mu.Lock()
	if l.closed != nil || len(l.calls) == 0 {
		l.nudge = nil // send starts it again
		l.mu.Unlock()
		return
	}
	silent := time.Since(time.Unix(0, l.lastRead.Load()))
	if silent < nudgeAfter {
		l.nudge.Reset(nudgeAfter - silent)
		l.mu.Unlock()
		return
	}
	l.next++
	id, _ := jsonrpc.MakeID(rawPrefix + strconv.FormatUint(l.next, 10))
	l.nudge.Reset(nudgeAfter)
	l.mu.Unlock()
	if err := l.Write(context.Background(), &jsonrpc.Request{ID: id, Method: "ping"}); err != nil {
		l.u.logger.Debug("pinging a silent upstream", "error", err)
	}
}

// cancelUpstream sends notifications/cancelled for the upstream request
// id ours.
func (l *lineConn) cancelUpstream(ours, reason string) {
	params, _ := json.Marshal(mcp.CancelledParams{RequestID: ours, Reason: reason})
	msg := &jsonrpc.Request{Method: "notifications/cancelled", Params: params}
	if err := l.Write(context.Background(), msg); err != nil {
		l.u.logger.Debug("cancelling a call passed through", "error", err)
	}
}

// forget drops c from the calls waiting for an answer and stops its
// timer; it returns c's upstream id, "" if c was not sent.
func (l *lineConn) forget(c *rawCall) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.timer != nil {
		c.timer.Stop()
	}
	delete(l.calls, c.ours)
	return c.ours
}

// fail ends the calls in flight with an error result saying how the
// upstream was lost; calls sent later fall back to go-sdk.
func (l *lineConn) fail(why error) {
	l.mu.Lock()
	if l.closed == nil {
		l.closed = why
	}
	if l.nudge != nil {
		l.nudge.Stop()
	}
	calls := make([]*rawCall, 0, len(l.calls))
	for _, c := range l.calls {
		calls = append(calls, c)
	}
	l.mu.Unlock()
	if len(calls) == 0 {
		return
	}
	go func() {
		// As upstreamError does: answer once the upstream is marked down,
		// so that the client's next call waits for the restart.
		l.u.mu.Lock()
		ended, current := l.u.ended, l.u.conn == l
		l.u.mu.Unlock()
		if current && ended != nil {
			t := time.NewTimer(2 * time.Second)
			select {
			case <-ended:
			case <-t.C:
			}
			t.Stop()
		}
		msg := l.u.lostMessage(why)
		for _, c := range calls {
			c.finish(nil, msg)
		}
	}()
}

// Write implements mcp.Connection.
func (l *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	l.wmu.Lock()
	defer l.wmu.Unlock()
	w := append(append(l.wbuf[:0], data...), '\n')
	_, err = l.c.stdin.Write(w)
	if cap(w) <= 1<<20 {
		l.wbuf = w[:0]
	}
	return err
}

// Close implements mcp.Connection: it stops the child.
func (l *lineConn) Close() error {
	l.closeOnce.Do(func() {
		l.fail(errors.New("the connection closed"))
		l.c.stdout.Close()
		l.c.stop()
	})
	return nil
}

// SessionID implements mcp.Connection.
func (l *lineConn) SessionID() string { return "" }

// lostMessage is the error result of a call in flight when the
// upstream's connection ended, as callTool reports it.
func (u *upstream) lostMessage(err error) string {
	return fmt.Sprintf("%s stopped during the request: %s. The gateway is restarting it; the request may or may not have taken effect.",
		u.describe(), u.downReason(err))
}

// lineConn returns the connection calls may be passed through on: that
// of the upstream's current session, if it is a stdio child's and speaks
// version.
func (u *upstream) lineConn(version string) *lineConn {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.cs == nil || u.conn == nil || u.init == nil || u.init.ProtocolVersion != version {
		return nil
	}
	return u.conn
}
