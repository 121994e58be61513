// This file defines the gateway's Streamable HTTP front end: go-sdk's
// handler, in front of which a POST carrying a plain tools/call of an
// initialized session is read with gjson and handed to the server's
// handlers, the middleware first, and answered as go-sdk answers it.

package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"
)

// HTTPHandler serves [Gateway.Server] over Streamable HTTP: it is go-sdk's
// handler (mcp.NewStreamableHTTPHandler with opts), except that it takes
// the tool calls of its sessions to the server's handlers, middleware
// included, without go-sdk's decoding and dispatch (see "Over HTTP" in the
// package documentation). Make it with [Gateway.HTTPHandler] once every
// middleware is added.
type HTTPHandler struct {
	g    *Gateway
	sdk  *mcp.StreamableHTTPHandler
	opts mcp.StreamableHTTPOptions
	next mcp.MethodHandler // the server's handlers when HTTPHandler was made
	take bool              // opts let calls be taken

	// Per session, the handler holds one entry of sessions, and nothing
	// else while no call of it is in flight.
	mu       sync.Mutex
	asked    uint64                        // the requests sent to clients on a call's stream
	pending  map[string]*ask               // id of such a request (unquoted) → where its answer goes
	sessions map[string]*mcp.ServerSession // id of a live session go-sdk's handler started here → it, nil until a call of it is taken
	calls    map[callKey]*frontCall        // the calls taken, in flight
}

// callKey is the key of a call taken: its session's id, and its request
// id as written.
type callKey struct{ session, id string }

// frontCall is a call taken, being answered on its POST's response. It
// is its handlers' context: a context cancelled when the call ends, whose
// value at frontCallKey is the call itself. Its request is made with it,
// in one allocation.
type frontCall struct {
	context.Context
	session string // its session's id
	cancel  context.CancelFunc
	sse     bool // the response is a stream of events
	req     mcp.CallToolRequest
	extra   mcp.RequestExtra
	header  [3]string // the values of its answer's headers

	mu   sync.Mutex
	w    http.ResponseWriter
	done bool // answered: nothing more is written
}

// ask is a request sent to a client on the stream of a call taken,
// waiting for the client's answer.
type ask struct {
	session string // the session whose client must answer
	answer  chan []byte
}

// frontCallKey is the context key of a call taken, in its handlers'
// context.
type frontCallKey struct{}

// Value is the call itself at frontCallKey, and its context's value
// otherwise.
func (c *frontCall) Value(key any) any {
	if key == (frontCallKey{}) {
		return c
	}
	return c.Context.Value(key)
}

// HTTPHandler returns the Streamable HTTP handler of the server, with opts
// as go-sdk's handler takes them. It takes the server's handlers as they
// are (adding to them a middleware that does nothing, and a sending
// middleware that routes the notifications of the calls it takes):
// middleware added to the server afterwards does not see the calls it
// takes.
func (g *Gateway) HTTPHandler(opts *mcp.StreamableHTTPOptions) *HTTPHandler {
	h := &HTTPHandler{g: g, pending: map[string]*ask{}, sessions: map[string]*mcp.ServerSession{}, calls: map[callKey]*frontCall{}}
	if opts != nil {
		h.opts = *opts
	}
	s := g.Server()
	h.sdk = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &h.opts)
	// With these, go-sdk keeps state per POST (resumable streams, idle
	// timers) or per request (no sessions): it answers every POST.
	h.take = !h.opts.Stateless && h.opts.EventStore == nil && h.opts.SessionTimeout == 0
	h.next = handlers(s)
	s.AddSendingMiddleware(h.sending)
	if h.take {
		g.onSessionEnd(h.ended)
	}
	return h
}

// ServeHTTP serves a request as go-sdk's handler does.
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("Mcp-Session-Id")
	if h.take && r.Method == http.MethodPost && id == "" {
		if auth.TokenInfoFromContext(r.Context()) != nil {
			// A session with a user: go-sdk checks each request's user
			// against it, so all of its requests stay with go-sdk.
			h.sdk.ServeHTTP(w, r)
			return
		}
		// A new session: learn its id before its client does.
		h.sdk.ServeHTTP(&status{ResponseWriter: w, h: h}, r)
		return
	}
	if h.take && r.Method == http.MethodDelete && id != "" {
		sw := &status{ResponseWriter: w}
		h.sdk.ServeHTTP(sw, r)
		if sw.code == http.StatusNoContent { // go-sdk closed the session (its server's log has told ended, as a rule)
			h.ended(id)
		}
		return
	}
	if !h.take || r.Method != http.MethodPost || !h.plain(r) {
		h.sdk.ServeHTTP(w, r)
		return
	}
	body, whole := h.readBody(r)
	if whole {
		if h.serve(w, r, id, body) {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	h.sdk.ServeHTTP(w, r)
}

// status is a response writer that records the status written and,
// with h, the id of the session go-sdk's handler starts, if it does,
// before the response is sent.
type status struct {
	http.ResponseWriter
	h    *HTTPHandler
	code int
}

func (w *status) WriteHeader(code int) {
	w.header(code)
	w.ResponseWriter.WriteHeader(code)
}

func (w *status) Write(b []byte) (int, error) {
	w.header(http.StatusOK)
	return w.ResponseWriter.Write(b)
}

func (w *status) header(code int) {
	if w.code != 0 {
		return
	}
	w.code = code
	if id := w.Header().Get("Mcp-Session-Id"); w.h != nil && id != "" {
		w.h.started(id)
	}
}

func (w *status) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// started records the id of a session go-sdk's handler started, until
// the session ends (ended).
func (h *HTTPHandler) started(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.sessions[id]; !ok {
		h.sessions[id] = nil
	}
}

// plain reports whether go-sdk would serve the POST r as a message of its
// session, with no error of its own: its media types, its Host and origin
// accepted, no Last-Event-ID, no user (whom go-sdk checks against the
// session's).
func (h *HTTPHandler) plain(r *http.Request) bool {
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return false
		}
	}
	if !accepts(r.Header["Accept"]) || len(r.Header["Last-Event-Id"]) > 0 || auth.TokenInfoFromContext(r.Context()) != nil {
		return false
	}
	if !h.opts.DisableLocalhostProtection {
		if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && a != nil && localLoopback(a) && !loopback(r.Host) {
			return false
		}
	}
	//lint:ignore SA1019 go-sdk's handler still checks the option when set; the fast path must refuse what it refuses.
	return h.opts.CrossOriginProtection == nil || h.opts.CrossOriginProtection.Check(r) == nil
}

// accepts reports whether the Accept values take both JSON and a stream
// of events, as go-sdk requires of a POST.
func accepts(values []string) bool {
	var data, stream bool
	for _, v := range values {
		for more := true; more; {
			var t string
			t, v, more = strings.Cut(v, ",")
			t, _, _ = strings.Cut(t, ";")
			switch strings.ToLower(strings.TrimSpace(t)) {
			case "application/json", "application/*":
				data = true
			case "text/event-stream", "text/*":
				stream = true
			case "*/*":
				data, stream = true, true
			}
		}
	}
	return data && stream
}

// localLoopback reports whether a, the local address of a request, is a
// loopback address, as loopback(a.String()) does, without writing a TCP
// address out.
func localLoopback(a net.Addr) bool {
	if t, ok := a.(*net.TCPAddr); ok && t != nil {
		return t.IP.IsLoopback()
	}
	return loopback(a.String())
}

// loopback reports whether a host (with or without a port) is a loopback
// address or "localhost".
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// readBody reads r's body if it is at most as long as a call taken may
// be; whole is false if it is longer, or could not be read, and then r's
// body is left as it was for go-sdk. When whole, r's body is read to its
// end: the caller gives body back to go-sdk if it is not taken.
func (h *HTTPHandler) readBody(r *http.Request) (body []byte, whole bool) {
	limit := int64(h.g.opts.MaxArgumentBytes)
	if m := h.opts.MaxRequestBodyBytes; m == 0 {
		limit = min(limit, mcp.DefaultMaxRequestBodyBytes)
	} else if m > 0 {
		limit = min(limit, m)
	}
	if r.ContentLength > limit {
		return nil, false
	}
	size := int64(512)
	if r.ContentLength > 0 {
		size = r.ContentLength + 1 // +1: the read that finds the end
	}
	body = make([]byte, 0, min(size, limit+1))
	var err error
	for {
		if len(body) == cap(body) {
			body = slices.Grow(body, min(cap(body), int(limit+1)-len(body)))
		}
		var n int
		n, err = r.Body.Read(body[len(body):cap(body)])
		body = body[:len(body)+n]
		if err != nil || int64(len(body)) > limit {
			break
		}
	}
	if err == io.EOF {
		err = nil
	}
	if err != nil || int64(len(body)) > limit {
		// go-sdk reads the rest, and says what is wrong.
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
		return nil, false
	}
	// Read to its end: closed, the server has nothing to discard of it
	// after the answer.
	r.Body.Close()
	return body, true
}

// serve answers the POST r of session id if its body is a tools/call that
// passes only a tool's name, arguments and _meta (none of SEP-2575's keys),
// on a session of this handler's server initialized with a protocol
// version before 2026-07-28; it reports false, having written nothing,
// otherwise. A notifications/cancelled of a call it took cancels the
// call, and is left to go-sdk.
func (h *HTTPHandler) serve(w http.ResponseWriter, r *http.Request, id string, body []byte) bool {
	if len(body) == 0 || !json.Valid(body) { // gjson reads what it can of invalid JSON
		return false
	}
	if h.answered(id, body) {
		w.WriteHeader(http.StatusAccepted)
		return true
	}
	rid, params, cancelled, ok := readCall(body)
	if cancelled.Exists() {
		h.cancelled(id, cancelled.Get("requestId").Raw)
	}
	if !ok {
		return false
	}
	ss, version := h.session(id)
	if ss == nil || !slices.Contains(rawVersions, version) {
		return false
	}
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" && v != version {
		return false // go-sdk checks it, and serves the POST as of that version
	}
	p, ok := callParams(params)
	if !ok {
		return false
	}
	down := rid.Raw
	key := callKey{id, down}
	c := &frontCall{session: id, sse: !h.opts.JSONResponse, w: w}
	ctx, cancel := context.WithCancel(context.Background())
	c.Context, c.cancel = ctx, cancel
	h.mu.Lock()
	_, live := h.sessions[id]
	dup := h.calls[key] != nil
	if live && !dup {
		h.calls[key] = c
	}
	h.mu.Unlock()
	if !live { // it ended since: go-sdk says so
		cancel()
		return false
	}
	if dup {
		cancel()
		shown := rid.Raw
		if rid.Type == gjson.String {
			shown = rid.Str
		}
		line := answerLine(down, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "duplicate in-flight request ID " + shown})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write(line[:len(line)-1])
		return true
	}
	// The keys are in canonical form: no Set needed. The values are the
	// call's, each a full slice (Add appends to a copy).
	hd := w.Header()
	c.header = [3]string{"no-cache, no-transform", "application/json"}
	if c.sse {
		c.header[1], c.header[2] = "text/event-stream", "keep-alive"
		hd["Connection"] = c.header[2:3:3]
	}
	hd["Cache-Control"] = c.header[0:1:1]
	hd["Content-Type"] = c.header[1:2:2]
	c.extra.Header = r.Header
	c.req = mcp.CallToolRequest{Session: ss, Params: p, Extra: &c.extra}
	res, err := h.next(c, "tools/call", &c.req)
	h.mu.Lock()
	if h.calls[key] == c {
		delete(h.calls, key)
	}
	h.mu.Unlock()
	cancel()
	line := answerLine(down, res, err)
	if err := c.write(line[:len(line)-1], true); err != nil {
		h.g.logger.Debug("answering a call taken over HTTP", "error", err)
	}
	return true
}

// session returns the server's session with the given id and the
// protocol version it was initialized with, if this handler started it
// and it is initialized.
func (h *HTTPHandler) session(id string) (*mcp.ServerSession, string) {
	h.mu.Lock()
	ss, mine := h.sessions[id]
	h.mu.Unlock()
	if !mine {
		return nil, "" // go-sdk's handler knows no live session with another id
	}
	if ss == nil {
		ss = h.serverSession(id)
		h.mu.Lock()
		if _, mine = h.sessions[id]; mine {
			if ss == nil {
				delete(h.sessions, id) // it ended before started recorded it
			} else {
				h.sessions[id] = ss
			}
		}
		h.mu.Unlock()
		if !mine || ss == nil {
			return nil, ""
		}
	}
	init := ss.InitializeParams()
	if init == nil {
		return nil, ""
	}
	return ss, init.ProtocolVersion
}

// serverSession is the server's live session with the given id, nil if
// none. (Apart from session, whose ss the loop would move to the heap on
// every call.)
func (h *HTTPHandler) serverSession(id string) *mcp.ServerSession {
	for ss := range h.g.Server().Sessions() {
		if ss.ID() == id {
			return ss
		}
	}
	return nil
}

// ended forgets session id, which ended, and cancels its calls taken:
// the server said so (onSessionEnd), or go-sdk's handler answered the
// DELETE that ended it. It runs while go-sdk's server holds its lock.
func (h *HTTPHandler) ended(id string) {
	h.mu.Lock()
	_, mine := h.sessions[id]
	delete(h.sessions, id)
	var calls []*frontCall
	if mine {
		for k, c := range h.calls {
			if k.session == id {
				calls = append(calls, c)
			}
		}
	}
	h.mu.Unlock()
	for _, c := range calls {
		c.cancel()
	}
}

// cancelled cancels the call of session id that a client's
// notifications/cancelled names (its id as written), if it was taken.
func (h *HTTPHandler) cancelled(id, call string) {
	h.mu.Lock()
	c := h.calls[callKey{id, call}]
	h.mu.Unlock()
	if c != nil {
		c.cancel()
	}
}

// errAnswered is the error of a notification sent in the context of a
// call taken after its answer, as go-sdk's for a stream that ended.
var errAnswered = errors.New("write to closed stream: the call was answered")

// write writes a message on the call's response: an event of its stream,
// or, with answer, its JSON answer.
func (c *frontCall) write(msg []byte, answer bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return errAnswered
	}
	c.done = answer
	if !c.sse {
		_, err := c.w.Write(msg)
		return err
	}
	// The event in three writes, which the response buffers, rather than
	// a copy of msg.
	for _, b := range [...][]byte{eventStart, msg, eventEnd} {
		if _, err := c.w.Write(b); err != nil {
			return err
		}
	}
	switch f := c.w.(type) { // as http.ResponseController flushes, without making one
	case interface{ FlushError() error }:
		return f.FlushError()
	case http.Flusher:
		f.Flush()
		return nil
	}
	return http.NewResponseController(c.w).Flush()
}

// The framing of a message in a stream of events.
var (
	eventStart = []byte("event: message\ndata: ")
	eventEnd   = []byte("\n\n")
)

// sending is the server's sending middleware: a notification or a
// request (sampling, elicitation, roots) sent in the context of a call
// taken whose response is a stream of events goes on that stream, as
// go-sdk sends it on the stream of the POST of a call it handles.
// Anything else goes to go-sdk (with a JSON response, go-sdk sends them
// on the session's stream).
func (h *HTTPHandler) sending(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		c, _ := ctx.Value(frontCallKey{}).(*frontCall)
		if c == nil || !c.sse {
			return next(ctx, method, req)
		}
		if strings.HasPrefix(method, "notifications/") {
			b, err := message("", method, req.GetParams())
			if err != nil {
				return nil, err
			}
			return nil, c.write(b, false)
		}
		var res mcp.Result
		switch method {
		case "sampling/createMessage":
			//lint:ignore SA1019 sampling is deprecated from 2026-07-28 on; the fast path serves only the versions before.
			res = &mcp.CreateMessageWithToolsResult{}
		case "elicitation/create":
			res = &mcp.ElicitResult{}
		case "roots/list":
			//lint:ignore SA1019 roots are deprecated from 2026-07-28 on; the fast path serves only the versions before.
			res = &mcp.ListRootsResult{}
		default:
			return next(ctx, method, req)
		}
		return res, h.ask(ctx, c, method, req.GetParams(), res)
	}
}

// message is a JSON-RPC request (a notification if id is "") as go-sdk
// writes it.
func message(id, method string, params any) ([]byte, error) {
	b := make([]byte, 0, 256)
	b = append(b, `{"jsonrpc":"2.0",`...)
	if id != "" {
		b = append(b, `"id":`...)
		b = append(b, id...)
		b = append(b, ',')
	}
	b = append(b, `"method":`...)
	m, _ := json.Marshal(method)
	b = append(b, m...)
	if params != nil {
		data, err := json.Marshal(params)
		if err != nil {
			return nil, err
		}
		b = append(b, `,"params":`...)
		b = append(b, data...)
	}
	return append(b, '}'), nil
}

// ask sends the request method with params to the client on the stream
// of call c, and decodes the client's answer into res. If ctx is done
// first, it tells the client the request is cancelled.
func (h *HTTPHandler) ask(ctx context.Context, c *frontCall, method string, params any, res mcp.Result) error {
	a := &ask{session: c.session, answer: make(chan []byte, 1)}
	h.mu.Lock()
	h.asked++
	id := "chartgate-" + strconv.FormatUint(h.asked, 10)
	h.pending[id] = a
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.pending, id)
		h.mu.Unlock()
	}()
	quoted := `"` + id + `"`
	b, err := message(quoted, method, params)
	if err != nil {
		return err
	}
	if err := c.write(b, false); err != nil {
		return err
	}
	select {
	case line := <-a.answer:
		if e := gjson.GetBytes(line, "error"); e.Exists() {
			return fmt.Errorf("calling %q: %w", method, readError(e)) // as go-sdk's call
		}
		if err := json.Unmarshal([]byte(gjson.GetBytes(line, "result").Raw), res); err != nil {
			return fmt.Errorf("calling %q: %w", method, err)
		}
		return nil
	case <-ctx.Done():
		if b, err := message("", "notifications/cancelled", map[string]any{"requestId": id, "reason": ctx.Err().Error()}); err == nil {
			_ = c.write(b, false)
		}
		return ctx.Err()
	}
}

// answered takes a POST of session id that answers a request ask sent to
// its client: the answer goes to the request, and the POST is accepted.
func (h *HTTPHandler) answered(id string, body []byte) bool {
	if !bytes.Contains(body, []byte(`"result"`)) && !bytes.Contains(body, []byte(`"error"`)) {
		return false // fields below reads keys as written: a call need not be parsed twice
	}
	var top [4]gjson.Result // jsonrpc, id, result, error
	if !fields(gjson.ParseBytes(body), []string{`"jsonrpc"`, `"id"`, `"result"`, `"error"`}, top[:]) ||
		top[0].Raw != `"2.0"` || top[1].Type != gjson.String || top[2].Exists() == top[3].Exists() ||
		!strings.HasPrefix(top[1].Str, "chartgate-") {
		return false
	}
	h.mu.Lock()
	a := h.pending[top[1].Str]
	if a != nil && a.session == id {
		delete(h.pending, top[1].Str)
	}
	h.mu.Unlock()
	if a == nil || a.session != id {
		return false
	}
	a.answer <- slices.Clone(body)
	return true
}
