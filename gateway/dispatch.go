// This file defines the dispatch of tool calls over stdio on a server
// with middleware (a workflow gate): a tools/call line is read with gjson
// into the request the server's handlers take and handed to them, the
// middleware first, without go-sdk's decoding and dispatch; the answer
// is encoded and written as go-sdk writes it.

package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/chartgate/chartgate/internal/jsonx"
)

// Dispatch takes the tool calls of one downstream stdio session of
// [Gateway.Server] to the server's handlers, middleware included, without
// go-sdk's decoding and dispatch (see "Over stdio" in the package
// documentation). Make it with [Gateway.Dispatch] once every middleware
// is added, set [Dispatch.Bypass] as the Bypass of the session's stdio
// transport (package internal/stdio), and serve the session with
// [Dispatch.Run].
type Dispatch struct {
	g    *Gateway
	next mcp.MethodHandler // the server's handlers when Dispatch was made
	on   atomic.Pointer[served]

	mu     sync.Mutex
	calls  map[string]*context.CancelFunc // downstream id as written → cancels its call
	wg     sync.WaitGroup                 // the calls being handled
	closed bool                           // the session ended: take no more calls

	// The calls run on workers: goroutines that wait for the next call
	// when theirs is over, keeping the stack it grew. A call through a
	// workflow gate on SQLite grows a fresh goroutine's stack to tens of
	// KiB (the driver is transpiled C, with large frames), copying it at
	// each doubling; a worker grows it again only after a GC shrank it
	// while it waited.
	work chan func()   // hands a call to an idle worker
	idle atomic.Int32  // workers waiting on work, about
	stop chan struct{} // closed when the session's calls are over
}

// maxIdleWorkers is how many workers of a session wait for calls; a
// worker that finishes with as many waiting ends. A stdio session's
// calls come from one agent: a few at a time.
const maxIdleWorkers = 4

// served is the session a Dispatch serves, and the context its calls
// run under: cancelled when the session ends.
type served struct {
	ss  *mcp.ServerSession
	ctx context.Context
}

// Dispatch returns a Dispatch for one stdio session of the server. It
// takes the server's handlers as they are (adding to them a middleware
// that does nothing): middleware added to the server afterwards does not
// see the calls it takes.
func (g *Gateway) Dispatch() *Dispatch {
	return &Dispatch{g: g, next: handlers(g.Server()), calls: map[string]*context.CancelFunc{},
		work: make(chan func()), stop: make(chan struct{})}
}

// handlers returns s's handlers as they are, middleware included (adding
// to them a middleware that does nothing).
func handlers(s *mcp.Server) mcp.MethodHandler {
	var h mcp.MethodHandler
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		h = next
		return next
	})
	return h
}

// Run connects the server on t (whose Bypass is [Dispatch.Bypass]) and
// serves the session until it ends or ctx is done, as [mcp.Server.Run]
// does; it returns once the calls it took are over.
func (d *Dispatch) Run(ctx context.Context, t mcp.Transport) error {
	ss, err := d.g.Server().Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	sctx, cancel := context.WithCancel(ctx)
	d.on.Store(&served{ss: ss, ctx: sctx})
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case <-ctx.Done():
		ss.Close()
		<-ended
		err = ctx.Err()
	case err = <-ended:
	}
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	cancel()
	d.wg.Wait()
	close(d.stop)
	return err
}

// run runs call on an idle worker, or on a new one if none is waiting.
func (d *Dispatch) run(call func()) {
	select {
	case d.work <- call:
	default:
		go d.worker(call)
	}
}

// worker runs call, and then the calls run hands it, until the session's
// calls are over or enough other workers wait.
func (d *Dispatch) worker(call func()) {
	for {
		call()
		call = nil // what the call held is not kept while waiting
		if d.idle.Add(1) > maxIdleWorkers {
			d.idle.Add(-1)
			return
		}
		select {
		case call = <-d.work:
			d.idle.Add(-1)
		case <-d.stop:
			return
		}
	}
}

// Bypass is the stdio transport's Bypass. It takes a tools/call line
// that passes only a tool's name, arguments and _meta (a progress token,
// a host's keys; none of SEP-2575's), on a session of a protocol version
// before 2026-07-28, and hands the call to the server's handlers; it
// leaves any other line to go-sdk.
// A call cancelled by the client gets no answer, and its handlers' context
// is cancelled.
func (d *Dispatch) Bypass(line []byte, version string, reply func([]byte) error) bool {
	on := d.on.Load()
	if on == nil || !slices.Contains(rawVersions, version) || len(line) > d.g.opts.MaxArgumentBytes {
		return false
	}
	id, params, cancelled, ok := readCall(line)
	if cancelled.Exists() {
		d.cancelled(cancelled.Get("requestId").Raw) // go-sdk ignores it
	}
	if !ok {
		return false
	}
	down := id.Raw
	p, ok := callParams(params)
	if !ok {
		return false
	}
	ctx, cancel := context.WithCancel(on.ctx)
	d.mu.Lock()
	if d.closed || d.calls[down] != nil { // the same id twice: go-sdk says what is wrong
		d.mu.Unlock()
		cancel()
		return false
	}
	mine := &cancel
	d.calls[down] = mine
	d.wg.Add(1)
	d.mu.Unlock()
	req := &mcp.CallToolRequest{Session: on.ss, Params: p}
	d.run(func() {
		defer d.wg.Done()
		defer cancel()
		res, err := d.next(ctx, "tools/call", req)
		d.mu.Lock()
		live := d.calls[down] == mine // not cancelled (a later call may have reused the id)
		if live {
			delete(d.calls, down)
		}
		d.mu.Unlock()
		if !live {
			return // cancelled by the client: no answer
		}
		if err := reply(answerLine(down, res, err)); err != nil {
			d.g.logger.Debug("answering a call dispatched", "error", err)
		}
	})
	return true
}

// cancelled cancels the call a client's notifications/cancelled names
// (its id as written), if Bypass took it.
func (d *Dispatch) cancelled(id string) {
	d.mu.Lock()
	cancel := d.calls[id]
	delete(d.calls, id)
	d.mu.Unlock()
	if cancel != nil {
		(*cancel)()
	}
}

// callParams are the params of a tools/call readCall read (a copy of
// them: the line may be a transport's buffer); ok is false if its _meta
// is not one readMeta takes.
func callParams(params [3]gjson.Result) (p *mcp.CallToolParamsRaw, ok bool) {
	p = &mcp.CallToolParamsRaw{Name: params[0].Str}
	if params[1].Exists() {
		p.Arguments = json.RawMessage(params[1].Raw)
	}
	if meta := params[2]; meta.Exists() && !readMeta(meta, &p.Meta) {
		return nil, false
	}
	return p, true
}

// readMeta decodes a tools/call's _meta into m, as go-sdk decodes it,
// and reports whether it holds none of the keys by which a request
// describes its connection (SEP-2575, "io.modelcontextprotocol/..."),
// which go-sdk's server reads.
func readMeta(meta gjson.Result, m *mcp.Meta) bool {
	if meta.Type == gjson.Null {
		return true
	}
	if !meta.IsObject() || json.Unmarshal([]byte(meta.Raw), m) != nil {
		return false
	}
	for k := range *m {
		if strings.HasPrefix(k, "io.modelcontextprotocol/") {
			return false
		}
	}
	return true
}

// answerLine is the answer line to the request with id (as written),
// as go-sdk's connection writes a handler's result or error: a result
// that cannot be encoded, or none with no error, is an internal error; an
// error that is not a *jsonrpc.Error keeps the code of one it wraps.
func answerLine(id string, res mcp.Result, err error) []byte {
	b := make([]byte, 0, 256)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	if err == nil && res == nil {
		err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the handler returned no result and no error"}
	}
	if cr, ok := res.(*mcp.CallToolResult); ok && err == nil {
		if out, ok := appendToolResult(append(b, `,"result":`...), cr); ok {
			return append(out, "}\n"...)
		}
	}
	if err == nil {
		data, merr := json.Marshal(res)
		if merr == nil {
			b = append(b, `,"result":`...)
			b = append(b, data...)
			return append(b, "}\n"...)
		}
		err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "encoding the result: " + merr.Error()}
	}
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we != err {
		w := &jsonrpc.Error{Message: err.Error()}
		if we != nil {
			w.Code = we.Code
		}
		we = w
	}
	data, _ := json.Marshal(we)
	b = append(b, `,"error":`...)
	b = append(b, data...)
	return append(b, "}\n"...)
}

// appendToolResult appends the JSON of a tool call's result of the shape
// most tools answer with (text content without annotations,
// structuredContent as the upstream wrote it, isError, _meta), as go-sdk
// encodes it, without encoding/json's reflection; it reports false, having
// appended nothing, for any other result, which encoding/json encodes.
// (Dispatch takes the calls of protocol versions before 2026-07-28 only,
// whose results carry no resultType.)
func appendToolResult(b []byte, r *mcp.CallToolResult) ([]byte, bool) {
	sc, raw := r.StructuredContent.(json.RawMessage)
	if r.InputRequests != nil || r.RequestState != "" || r.StructuredContent != nil && (!raw || !json.Valid(sc)) {
		return b, false
	}
	start := len(b)
	b = append(b, '{')
	if len(r.Meta) > 0 {
		m, err := json.Marshal(r.Meta)
		if err != nil {
			return b[:start], false
		}
		b = append(b, `"_meta":`...)
		b = append(b, m...)
		b = append(b, ',')
	}
	b = append(b, `"content":`...)
	if r.Content == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, c := range r.Content {
			t, ok := c.(*mcp.TextContent)
			if !ok || t == nil || t.Annotations != nil {
				return b[:start], false
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"type":"text","text":`...)
			b = jsonx.AppendString(b, t.Text)
			if len(t.Meta) > 0 {
				m, err := json.Marshal(t.Meta)
				if err != nil {
					return b[:start], false
				}
				b = append(b, `,"_meta":`...)
				b = append(b, m...)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if raw {
		b = append(b, `,"structuredContent":`...)
		b = append(b, sc...)
	}
	if r.IsError {
		b = append(b, `,"isError":true`...)
	}
	return append(b, '}'), true
}
