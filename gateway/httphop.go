// This file defines the raw upstream hop of a tool call to a Streamable
// HTTP upstream: the request is POSTed to the upstream session's endpoint
// without go-sdk's client, and the answer, JSON or a stream of
// server-sent events, is read with gjson. What else the stream carries
// (progress, log messages and other notifications, requests of the
// upstream such as sampling) goes where go-sdk's client would send it.

//lint:file-ignore SA1019 logging and sampling are deprecated from protocol 2026-07-28 on; the gateway passes them through for the versions that have them.

package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"
)

// Limits of the raw HTTP hop.
const (
	// maxAnswerBytes bounds an upstream's JSON answer and each of its
	// server-sent events, as go-sdk's client bounds events.
	maxAnswerBytes = mcp.DefaultMaxEventSize
	// maxResumes is how many times a stream that ended without the answer
	// is resumed (GET with Last-Event-ID) without an event in between,
	// as go-sdk's client does by default.
	maxResumes = 5
)

// httpSession returns the session id and protocol version a call on cs
// may be POSTed with without go-sdk: those of a Streamable HTTP
// upstream's session, if cs is still its session and it speaks one of
// rawVersions. The session id is "" for a server that gives none.
func (u *upstream) httpSession(cs *mcp.ClientSession) (id, version string, ok bool) {
	if u.cfg.Transport != TransportHTTP {
		return "", "", false
	}
	u.mu.Lock()
	current, init := u.cs == cs, u.init
	u.mu.Unlock()
	if !current || init == nil || !slices.Contains(rawVersions, init.ProtocolVersion) {
		return "", "", false
	}
	return cs.ID(), init.ProtocolVersion, true
}

// hop is one raw exchange with an HTTP upstream's session.
type hop struct {
	u       *upstream
	cs      *mcp.ClientSession
	session string // Mcp-Session-Id, "" if none
	version string // Mcp-Protocol-Version
}

// request makes a request to the upstream's endpoint with the session's
// headers and the configured ones.
func (h *hop) request(ctx context.Context, method string, body []byte) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, h.u.cfg.URL, r)
	if err != nil {
		return nil, err
	}
	// The Host header is then the URL's host, which NewRequest copied:
	// with req.Host set, http.Client copies the URL for its cookies.
	req.Host = ""
	// The keys are in canonical form: no Set needed. The values share one
	// array, each a full slice (Add appends to a copy).
	vals := &[4]string{h.version, h.session, "application/json", "application/json, text/event-stream"}
	req.Header["Mcp-Protocol-Version"] = vals[0:1:1]
	if h.session != "" {
		req.Header["Mcp-Session-Id"] = vals[1:2:2]
	}
	if method == http.MethodPost {
		req.Header["Content-Type"] = vals[2:3:3]
	} else {
		vals[3] = "text/event-stream"
	}
	req.Header["Accept"] = vals[3:4:4]
	for k, v := range h.u.cfg.Headers {
		req.Header.Set(k, v)
	}
	return req, nil
}

// send POSTs a JSON-RPC message that is not a call (a response, a
// notification) and drops the upstream's answer to it.
func (h *hop) send(ctx context.Context, msg []byte) error {
	req, err := h.request(ctx, http.MethodPost, msg)
	if err != nil {
		return err
	}
	resp, err := h.u.http.Do(req)
	if err != nil {
		return err
	}
	drain(resp.Body)
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return fmt.Errorf("the upstream answered %s", resp.Status)
	}
	return nil
}

// drain reads what is left of a body, up to a bound, so that its
// connection can be used again, and closes it.
func drain(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, 64<<10))
	body.Close()
}

// httpCallTool is callTool's hop to an HTTP upstream: params (the
// tools/call's params, as JSON) are POSTed in a request of the gateway's,
// and the answer comes back as the result or JSON-RPC error it holds.
// When ctx is done first, the upstream is sent notifications/cancelled,
// as go-sdk's client does, and the error is ctx's.
func (g *Gateway) httpCallTool(ctx context.Context, h *hop, params []byte) (*mcp.CallToolResult, error) {
	answer, err := g.exchange(ctx, h, "tools/call", params)
	if err != nil {
		return nil, err
	}
	res, err := decodeAnswer(answer)
	var werr *jsonrpc.Error
	if err != nil && !errors.As(err, &werr) {
		err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("upstream %q: %v", h.u.name, err)}
	}
	return res, err
}

// exchange sends a request of method with params (JSON) to the upstream
// and returns its answer: the JSON-RPC response message, as the upstream
// wrote it. Notifications and requests the upstream sends before it are
// handled on the way. The error is one go-sdk's client would give:
// ctx's, a JSON-RPC error the upstream answered with an HTTP error, or
// one naming what failed (the session is then ended if go-sdk's client
// would end it, and the gateway connects again).
func (g *Gateway) exchange(ctx context.Context, h *hop, method string, params []byte) ([]byte, error) {
	id := h.u.nextID()
	body := make([]byte, 0, len(params)+len(method)+64)
	body = append(body, `{"jsonrpc":"2.0","id":"`...)
	body = append(body, id...)
	body = append(body, `","method":"`...)
	body = append(body, method...)
	body = append(body, `","params":`...)
	body = append(body, params...)
	body = append(body, '}')
	req, err := h.request(ctx, http.MethodPost, body)
	if err != nil {
		return nil, err
	}
	resp, err := h.u.http.Do(req)
	if err != nil {
		return nil, h.ended(ctx, id, fmt.Errorf("sending %q: %w", method, err))
	}
	if err := h.check(resp); err != nil {
		return nil, err
	}
	switch mediaType(resp.Header.Get("Content-Type")) {
	case "application/json":
		defer drain(resp.Body)
		answer, err := readBounded(resp.Body, resp.ContentLength)
		if err != nil {
			return nil, h.ended(ctx, id, fmt.Errorf("reading the answer to %q: %w", method, err))
		}
		if !answers(answer, id) {
			return nil, fmt.Errorf("the upstream's answer to %q is not a JSON-RPC response to it", method)
		}
		return answer, nil
	case "text/event-stream":
		return g.stream(ctx, h, id, method, resp)
	}
	drain(resp.Body)
	return nil, fmt.Errorf("sending %q: unsupported content type %q", method, resp.Header.Get("Content-Type"))
}

// ended is the error of an exchange whose request or answer failed with
// err: ctx's if ctx is done, else err. Either way the upstream is told
// the request is cancelled: no one waits for its answer any more.
func (h *hop) ended(ctx context.Context, id string, err error) error {
	if ctx.Err() != nil {
		err = ctx.Err()
		h.cancel(id, context.Cause(ctx).Error())
	} else {
		h.cancel(id, "the gateway lost the request's answer: "+err.Error())
	}
	return err
}

// cancel sends the upstream notifications/cancelled for request id, in
// the background and under a deadline. A failed send is tried again, up
// to three times: when the call's connection broke, the client's pool
// may still hold a connection the upstream closed, and net/http sends a
// POST that failed on one no second time (it is not idempotent to it);
// a cancellation sent twice is harmless.
func (h *hop) cancel(id, reason string) {
	go func() {
		params, err := json.Marshal(mcp.CancelledParams{RequestID: id, Reason: reason})
		var msg []byte
		if err == nil {
			msg, err = jsonrpc.EncodeMessage(&jsonrpc.Request{Method: "notifications/cancelled", Params: params})
		}
		if err == nil {
			sctx, cancel := context.WithTimeout(h.u.g.ctx, 10*time.Second)
			defer cancel()
			for attempt := 0; ; attempt++ {
				if err = h.send(sctx, msg); err == nil || attempt == 2 {
					break
				}
				select {
				case <-time.After(50 * time.Millisecond << attempt):
				case <-sctx.Done():
				}
			}
		}
		if err != nil {
			h.u.logger.Debug("cancelling a call", "error", err)
		}
	}()
}

// check turns an HTTP error into the error go-sdk's client gives, and
// ends the session where it would: the session is gone (404), or the
// upstream failed in a way that is not transient and gave no JSON-RPC
// error. The body is closed if the error is not nil.
func (h *hop) check(resp *http.Response) error {
	code := resp.StatusCode
	if code >= 200 && code < 300 {
		return nil
	}
	defer drain(resp.Body)
	switch code {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout, http.StatusTooManyRequests:
		// Transient, as go-sdk's client has it: the session stays.
		return fmt.Errorf("the upstream answered %s", resp.Status)
	}
	if body, err := readBounded(resp.Body, resp.ContentLength); err == nil {
		if e := gjson.GetBytes(body, "error"); e.IsObject() && json.Valid(body) {
			return wireError(e)
		}
	}
	var err error
	if code == http.StatusNotFound && h.session != "" {
		err = fmt.Errorf("the upstream does not know session %s any more: %w", h.session, mcp.ErrSessionMissing)
	} else {
		err = fmt.Errorf("the upstream answered %s", resp.Status)
	}
	h.u.endSession(h.cs, err)
	return err
}

// endSession ends the upstream's session cs after a failure of its
// connection that go-sdk's client would treat as fatal; the supervisor
// connects again.
func (u *upstream) endSession(cs *mcp.ClientSession, why error) {
	u.mu.Lock()
	again := u.ending == cs
	u.ending = cs
	u.mu.Unlock()
	if again {
		return
	}
	u.logger.Warn("ending the upstream's session", "reason", why)
	go cs.Close()
}

// wireError is the *jsonrpc.Error of an error object.
func wireError(e gjson.Result) *jsonrpc.Error {
	werr := &jsonrpc.Error{Code: e.Get("code").Int(), Message: e.Get("message").String()}
	if d := e.Get("data"); d.Exists() {
		werr.Data = json.RawMessage(d.Raw)
	}
	return werr
}

// mediaType is the media type of a Content-Type value, lower case.
func mediaType(ct string) string {
	switch ct { // the usual values, without parsing
	case "application/json", "text/event-stream":
		return ct
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return ""
	}
	return mt
}

// readBounded reads a body of length n (-1 if unknown) up to
// maxAnswerBytes.
func readBounded(r io.Reader, n int64) ([]byte, error) {
	if n < 0 || n > maxAnswerBytes {
		n = 512
	}
	b := make([]byte, 0, n+1)
	lr := io.LimitReader(r, maxAnswerBytes+1)
	for {
		m, err := lr.Read(b[len(b):cap(b)])
		b = b[:len(b)+m]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(b) == cap(b) {
			b = slices.Grow(b, cap(b))
		}
	}
	if len(b) > maxAnswerBytes {
		return nil, fmt.Errorf("the answer is longer than %d bytes", maxAnswerBytes)
	}
	return b, nil
}

// answers reports whether msg is a JSON-RPC response to request id.
func answers(msg []byte, id string) bool {
	if len(msg) == 0 || msg[0] != '{' {
		return false
	}
	var got gjson.Result
	method := false
	gjson.ParseBytes(msg).ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "id":
			got = v
		case "method":
			method = true
		}
		return true
	})
	return !method && got.Type == gjson.String && got.Str == id
}

// nextID returns a new request id for the raw hop; go-sdk's own ids are
// numbers.
func (u *upstream) nextID() string {
	var b [len(rawHTTPPrefix) + 20]byte
	return string(strconv.AppendUint(append(b[:0], rawHTTPPrefix...), u.rawIDs.Add(1), 10))
}

// rawHTTPPrefix starts the ids of the raw hop's requests.
const rawHTTPPrefix = "chartgate-http-"

// stream reads the server-sent events of the answer to request id until
// the answer, handling what comes before it. A stream that ends early
// after an event with an id is resumed, as go-sdk's client resumes it;
// one that cannot be resumed is given up, and the request cancelled.
func (g *Gateway) stream(ctx context.Context, h *hop, id, method string, resp *http.Response) ([]byte, error) {
	s := eventStream{g: g, h: h, ctx: ctx}
	defer s.stop()
	var prev string
	stalls := 0
	for {
		answer, last, retry, err := s.read(resp.Body, id)
		finish(resp.Body)
		switch {
		case answer != nil:
			return answer, nil
		case ctx.Err() != nil:
			return nil, h.ended(ctx, id, ctx.Err())
		case errors.Is(err, errMalformed):
			h.u.endSession(h.cs, err)
			return nil, h.ended(ctx, id, fmt.Errorf("reading the answer to %q: %w", method, err))
		case last == "":
			why := fmt.Errorf("the upstream ended the request %q without answering it", method)
			if err != nil {
				why = fmt.Errorf("the upstream's answer to %q broke off: %w", method, err)
			}
			return nil, h.ended(ctx, id, why)
		case last == prev:
			stalls++
		default:
			prev, stalls = last, 0
		}
		if stalls >= maxResumes {
			return nil, h.ended(ctx, id, fmt.Errorf("the upstream's stream of the answer to %q ended %d times without progress", method, maxResumes))
		}
		if resp, err = h.resume(ctx, last, retry, stalls+1); err != nil {
			if ctx.Err() == nil {
				h.u.endSession(h.cs, err)
			}
			return nil, h.ended(ctx, id, err)
		}
	}
}

// finish reads the rest of an event stream whose answer has come (a
// server ends it then), so that its connection can be used again, and
// closes it; a stream that does not end soon is cut.
func finish(body io.ReadCloser) {
	t := time.AfterFunc(time.Second, func() { body.Close() })
	drain(body)
	t.Stop()
}

// resume asks the upstream for the events after lastID of a stream, after
// the server's delay, or else one growing with attempt. A request that
// does not reach the upstream is tried again, up to maxResumes times in
// all, as go-sdk's client tries.
func (h *hop) resume(ctx context.Context, lastID string, delay time.Duration, attempt int) (*http.Response, error) {
	var err error
	for range maxResumes {
		if delay <= 0 {
			delay = resumeDelay(attempt)
		}
		if !sleep(ctx, delay) {
			return nil, ctx.Err()
		}
		var req *http.Request
		if req, err = h.request(ctx, http.MethodGet, nil); err != nil {
			return nil, err
		}
		req.Header["Last-Event-Id"] = []string{lastID}
		var resp *http.Response
		if resp, err = h.u.http.Do(req); err != nil {
			attempt, delay = attempt+1, 0
			continue
		}
		if err := h.check(resp); err != nil {
			return nil, err
		}
		if mediaType(resp.Header.Get("Content-Type")) != "text/event-stream" {
			drain(resp.Body)
			return nil, fmt.Errorf("resuming a stream: the upstream answered with %q", resp.Header.Get("Content-Type"))
		}
		return resp, nil
	}
	return nil, fmt.Errorf("resuming a stream: %d attempts failed: %w", maxResumes, err)
}

// resumeDelay is the wait before the attempt-th attempt (from 1) to resume
// a stream the server gave no delay for: 1s, growing by half each time,
// at most 30s.
func resumeDelay(attempt int) time.Duration {
	return min(time.Duration(float64(time.Second)*math.Pow(1.5, float64(attempt-1))), 30*time.Second)
}

// errMalformed is the error of a stream that is not server-sent events of
// JSON-RPC messages.
var errMalformed = errors.New("malformed event stream")

// eventStream is the state of the stream of one exchange: the requests of
// the upstream it carried that are still being answered. It is the
// exchange's alone (its goroutines share calls only): it stays on the
// stack.
type eventStream struct {
	g     *Gateway
	h     *hop
	ctx   context.Context
	calls *upstreamCalls // nil until the stream carries a request
}

// upstreamCalls are the requests of the upstream a stream carried that
// are still being answered.
type upstreamCalls struct {
	mu      sync.Mutex
	pending map[jsonrpc.ID]context.CancelFunc
}

// stop cancels the upstream's requests still being answered; their
// answers would go to a request that is over.
func (s *eventStream) stop() {
	if s.calls == nil {
		return
	}
	s.calls.mu.Lock()
	for _, cancel := range s.calls.pending {
		cancel()
	}
	s.calls.mu.Unlock()
}

// read reads events from body until the answer to id, which it returns.
// Otherwise it returns the last event id and retry delay the stream gave,
// and the error that ended it (nil at its end).
func (s *eventStream) read(body io.Reader, id string) (answer []byte, lastID string, retry time.Duration, err error) {
	r := newEventReader(body)
	defer r.free()
	for {
		ev, err := r.next()
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return nil, lastID, retry, err
		}
		if ev.id != "" {
			lastID = ev.id
		}
		if ev.retry > 0 {
			retry = ev.retry
		}
		if len(ev.data) == 0 || (ev.name != "" && ev.name != "message") {
			continue
		}
		if !json.Valid(ev.data) {
			return nil, lastID, retry, fmt.Errorf("%w: an event's data is not JSON", errMalformed)
		}
		if answers(ev.data, id) {
			return ev.data, lastID, retry, nil
		}
		s.handle(ev.data)
	}
}

// handle handles a message of the upstream's that is not the answer: a
// notification is passed on as go-sdk's client passes it (before the
// answer: progress reaches the client before the result), a request is
// answered by the gateway as go-sdk's client would answer it.
func (s *eventStream) handle(data []byte) {
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		s.h.u.logger.Warn("dropping a message of the upstream", "error", err)
		return
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return // a response to nothing of ours
	}
	if !req.IsCall() {
		if req.Method == "notifications/cancelled" {
			s.cancelled(req.Params)
			return
		}
		s.g.notified(s.ctx, s.h.u, req.Method, req.Params)
		return
	}
	if s.calls == nil {
		s.calls = &upstreamCalls{pending: map[jsonrpc.ID]context.CancelFunc{}}
	}
	g, h, calls := s.g, s.h, s.calls
	ctx, cancel := context.WithCancel(s.ctx)
	calls.mu.Lock()
	calls.pending[req.ID] = cancel
	calls.mu.Unlock()
	go func() {
		defer func() {
			calls.mu.Lock()
			delete(calls.pending, req.ID)
			calls.mu.Unlock()
			cancel()
		}()
		resp := &jsonrpc.Response{ID: req.ID}
		res, err := g.answer(ctx, h.u, req.Method, req.Params)
		if err == nil {
			resp.Result, err = json.Marshal(res)
		}
		resp.Error = err
		msg, err := jsonrpc.EncodeMessage(resp)
		if err == nil {
			sctx, scancel := context.WithTimeout(h.u.g.ctx, 30*time.Second)
			defer scancel()
			err = h.send(sctx, msg)
		}
		if err != nil {
			h.u.logger.Warn("answering a request of the upstream", "method", req.Method, "error", err)
		}
	}()
}

// cancelled cancels the upstream's request that notifications/cancelled
// with params names, if it is still being answered.
func (s *eventStream) cancelled(params json.RawMessage) {
	var p mcp.CancelledParams
	if json.Unmarshal(params, &p) != nil {
		return
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil {
		return
	}
	if s.calls == nil {
		return
	}
	s.calls.mu.Lock()
	cancel := s.calls.pending[id]
	s.calls.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// notified passes on a notification of upstream u read outside go-sdk's
// client, as the client's handlers do.
func (g *Gateway) notified(ctx context.Context, u *upstream, method string, params json.RawMessage) {
	decode := func(v any) bool {
		if err := json.Unmarshal(params, v); err != nil {
			u.logger.Warn("dropping a notification of the upstream", "method", method, "error", err)
			return false
		}
		return true
	}
	switch method {
	case "notifications/progress":
		var p mcp.ProgressNotificationParams
		if decode(&p) {
			g.forwardProgress(&p)
		}
	case "notifications/message":
		var p mcp.LoggingMessageParams
		if decode(&p) {
			g.forwardLog(u, &p)
		}
	case "notifications/tools/list_changed":
		u.relist(kindTools)
	case "notifications/prompts/list_changed":
		u.relist(kindPrompts)
	case "notifications/resources/list_changed":
		u.relist(kindResources)
	case "notifications/resources/updated":
		var p mcp.ResourceUpdatedNotificationParams
		if decode(&p) {
			g.resourceUpdated(ctx, u, &p)
		}
	case "notifications/elicitation/complete":
		var p mcp.ElicitationCompleteParams
		if decode(&p) {
			g.elicitationComplete(ctx, u, &p)
		}
	}
}

// answer answers a request of upstream u read outside go-sdk's client,
// as the client's handlers do.
func (g *Gateway) answer(ctx context.Context, u *upstream, method string, params json.RawMessage) (any, error) {
	decode := func(v any) error {
		if len(params) == 0 {
			params = json.RawMessage("{}")
		}
		if err := json.Unmarshal(params, v); err != nil {
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid params of %s: %v", method, err)}
		}
		return nil
	}
	switch method {
	case "ping":
		return struct{}{}, nil
	case "roots/list":
		return &mcp.ListRootsResult{Roots: []*mcp.Root{}}, nil
	case "sampling/createMessage":
		var p mcp.CreateMessageWithToolsParams
		if err := decode(&p); err != nil {
			return nil, err
		}
		return g.createMessage(ctx, u, &p)
	case "elicitation/create":
		var p mcp.ElicitParams
		if err := decode(&p); err != nil {
			return nil, err
		}
		if err := checkElicit(&p); err != nil {
			return nil, err
		}
		return g.elicit(ctx, u, &p)
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method %q not found", method)}
}

// checkElicit refuses an elicitation whose mode and fields disagree, as
// go-sdk's client does; the downstream session checks the rest.
func checkElicit(p *mcp.ElicitParams) error {
	switch p.Mode {
	case "", "form":
		if p.URL != "" {
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "URL must not be set for form elicitation"}
		}
	case "url":
		if p.RequestedSchema != nil {
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "requestedSchema must not be set for URL elicitation"}
		}
		if p.URL == "" {
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "URL must be set for URL elicitation"}
		}
	default:
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unsupported elicitation mode %q", p.Mode)}
	}
	return nil
}

// event is one server-sent event.
type event struct {
	id, name string
	retry    time.Duration
	data     []byte
}

// eventReader reads server-sent events (lines ending in LF or CRLF),
// each at most maxAnswerBytes.
type eventReader struct {
	r *bufio.Reader
}

// newEventReader returns a reader of r's events, whose buffer is one of
// bufReaders until it is given back (free).
func newEventReader(r io.Reader) eventReader {
	br, _ := bufReaders.Get().(*bufio.Reader)
	if br == nil {
		br = bufio.NewReaderSize(r, 4096)
	} else {
		br.Reset(r)
	}
	return eventReader{r: br}
}

// free gives the reader's buffer back to bufReaders, emptied: the events
// it returned do not share it.
func (e *eventReader) free() {
	e.r.Reset(nil)
	bufReaders.Put(e.r)
	e.r = nil
}

// bufReaders are the buffers of eventReaders not in use.
var bufReaders sync.Pool

// next returns the next event; io.EOF at the end of the stream (an
// event not ended by a blank line is dropped, as the SSE standard says).
func (e *eventReader) next() (event, error) {
	var ev event
	size := 0
	hasData := false
	for {
		line, err := e.line(maxAnswerBytes - size)
		if err != nil {
			return event{}, err
		}
		size += len(line) + 1
		if len(line) == 0 {
			if hasData || ev.id != "" || ev.retry > 0 {
				return ev, nil
			}
			continue
		}
		if line[0] == ':' {
			continue // a comment
		}
		field, value, _ := bytes.Cut(line, []byte{':'})
		value = bytes.TrimPrefix(value, []byte{' '})
		switch string(field) {
		case "data":
			if hasData {
				ev.data = append(ev.data, '\n')
			}
			ev.data = append(ev.data, value...)
			hasData = true
		case "event":
			ev.name = string(value)
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				ev.id = string(value)
			}
		case "retry":
			if ms, err := strconv.ParseUint(string(value), 10, 31); err == nil {
				ev.retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
}

// line reads a line of at most limit bytes, without its end.
func (e *eventReader) line(limit int) ([]byte, error) {
	var long []byte
	for {
		chunk, err := e.r.ReadSlice('\n')
		if len(long)+len(chunk) > limit+2 {
			return nil, fmt.Errorf("%w: an event longer than %d bytes", errMalformed, maxAnswerBytes)
		}
		switch err {
		case nil:
			if long != nil {
				chunk = append(long, chunk...)
			}
			chunk = chunk[:len(chunk)-1]
			if n := len(chunk); n > 0 && chunk[n-1] == '\r' {
				chunk = chunk[:n-1]
			}
			return chunk, nil
		case bufio.ErrBufferFull:
			long = append(long, chunk...)
		default:
			return nil, err
		}
	}
}
