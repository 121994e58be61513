// This file defines Transport: the line filter in front of go-sdk's
// IOTransport, and the writer both share.

package stdio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"
)

// Transport is an [mcp.Transport] over newline-delimited JSON that answers
// a line it cannot use with a JSON-RPC error and keeps serving. Its zero
// value serves on os.Stdin and os.Stdout. Like every go-sdk transport, use
// it for one connection only.
type Transport struct {
	// Reader is read line by line; nil means os.Stdin, read through the
	// runtime's poller when it is a pipe or a socket (see [Pollable]). It
	// is closed when the connection is.
	Reader io.ReadCloser
	// Writer receives go-sdk's messages and the error answers, one line
	// each, never two at once; nil means os.Stdout, written through the
	// poller when it is a pipe or a socket (see [PollableWriter]), which
	// is not closed.
	// It is closed when the connection is.
	Writer io.WriteCloser
	// MaxLineLength is the longest line, in bytes, accepted as a message;
	// a longer one is answered with an error and skipped. 0 means
	// mcp.DefaultMaxLineLength, a negative value no limit.
	MaxLineLength int
	// Logger, if set, gets a warning for every line answered with an
	// error.
	Logger *slog.Logger
	// Bypass, if set, is offered each line go-sdk could read, before
	// go-sdk reads it, with the protocol version the server chose ("" until
	// it has answered initialize). If Bypass returns true it has taken the
	// line: go-sdk never sees it, and Bypass answers it (if it is a
	// request) by passing reply whole lines, each ending in a newline;
	// reply may be called from any goroutine. Bypass must not keep line
	// after it returns.
	Bypass func(line []byte, version string, reply func(line []byte) error) bool
}

// Connect implements [mcp.Transport]: it starts reading Reader and returns
// go-sdk's connection over the lines that are JSON-RPC messages.
func (t *Transport) Connect(ctx context.Context) (mcp.Connection, error) {
	in, out := t.Reader, t.Writer
	if in == nil {
		in = Pollable(os.Stdin)
	}
	if out == nil {
		out = PollableWriter(os.Stdout)
	}
	limit := t.MaxLineLength
	if limit == 0 {
		limit = mcp.DefaultMaxLineLength
	}
	logger := t.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	pr, pw := io.Pipe()
	f := &filter{out: &lineWriter{w: out}, logger: logger, limit: limit, bypass: t.Bypass}
	go f.run(in, pw)
	return (&mcp.IOTransport{
		Reader:        closeBoth{pr, in},
		Writer:        f.out,
		MaxLineLength: -1, // run enforces limit
	}).Connect(ctx)
}

// filter reads the input lines, passes the usable ones to go-sdk and
// answers the others.
type filter struct {
	out    *lineWriter
	logger *slog.Logger
	limit  int // < 0: none
	bypass func([]byte, string, func([]byte) error) bool
	buf    []byte // the line being read, reused
}

// run reads lines from in until it fails or ends, writing the usable ones
// to pw, and then closes pw with the reason.
func (f *filter) run(in io.Reader, pw *io.PipeWriter) {
	// A small buffer: readLine joins the pieces of a longer line, and a
	// server may hold many sessions.
	r := bufio.NewReaderSize(in, 4096)
	for {
		line, over, readErr := f.readLine(r)
		if line = bytes.TrimSpace(line); len(line) > 0 || over {
			var err error
			if over {
				err = f.answer(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: line longer than %d bytes", f.limit))
			} else if reply := f.check(line); reply != nil {
				err = f.answer(reply.id, reply.code, reply.msg)
			} else if f.bypass == nil || !f.bypass(line, f.out.protocolVersion(), f.out.writeRaw) {
				_, err = pw.Write(append(line, '\n'))
			}
			if err != nil { // the connection is closed
				pw.CloseWithError(err)
				return
			}
		}
		if readErr != nil {
			if readErr == io.EOF {
				readErr = nil
			}
			pw.CloseWithError(readErr)
			return
		}
	}
}

// readLine returns the next line without its end; over reports a line
// longer than the limit, whose bytes are dropped.
func (f *filter) readLine(r *bufio.Reader) (line []byte, over bool, err error) {
	// io.Pipe's Write returns once go-sdk has read all of the line, and
	// Bypass keeps none of it: the buffer is free again at the next line.
	line = f.buf[:0]
	defer func() {
		if cap(line) <= 64*1024 {
			f.buf = line[:0]
		}
	}()
	for {
		chunk, err := r.ReadSlice('\n')
		if !over {
			line = append(line, chunk...)
			if f.limit >= 0 && len(line) > f.limit+len("\r\n") {
				over, line = true, nil
			}
		}
		if err != bufio.ErrBufferFull {
			if !over && f.limit >= 0 && len(bytes.TrimRight(line, "\r\n")) > f.limit {
				over, line = true, nil
			}
			return line, over, err
		}
	}
}

// reply is an error answer to a line.
type reply struct {
	id   json.RawMessage // a JSON string or number, or nil (null)
	code int64
	msg  string
}

// check returns nil when go-sdk can read line (a single JSON value), or
// the answer to it.
func (f *filter) check(line []byte) *reply {
	if !json.Valid(line) {
		var v any
		err := json.Unmarshal(line, &v)
		if err == nil { // valid JSON values with something after them
			err = errors.New("more than one JSON value on the line")
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			err = fmt.Errorf("%w (offset %d)", err, se.Offset)
		}
		return &reply{code: jsonrpc.CodeParseError, msg: "parse error: " + err.Error()}
	}
	invalid := func(id json.RawMessage, format string, args ...any) *reply {
		return &reply{id: id, code: jsonrpc.CodeInvalidRequest, msg: "invalid request: " + fmt.Sprintf(format, args...)}
	}
	if line[0] != '[' {
		if line[0] != '{' {
			return invalid(nil, "a JSON-RPC message is an object or a batch (array) of them, not %s", kind(line[0]))
		}
		if plainRequest(line) {
			return nil
		}
		msg, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			return invalid(lineID(line), "%v", err)
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "initialize" && req.ID.IsValid() {
			f.out.watchInitialize(req.ID)
		}
		return nil
	}
	var batch []json.RawMessage
	if err := json.Unmarshal(line, &batch); err != nil {
		return invalid(nil, "%v", err)
	}
	if len(batch) == 0 {
		return invalid(nil, "empty batch")
	}
	if v := f.out.protocolVersion(); v >= "2025-06-18" {
		return invalid(nil, "JSON-RPC batches are not supported in protocol %s", v)
	}
	ids := map[jsonrpc.ID]bool{}
	for i, raw := range batch {
		if raw[0] != '{' {
			return invalid(nil, "batch element %d is %s, not an object", i, kind(raw[0]))
		}
		msg, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return invalid(nil, "batch element %d: %v", i, err)
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.ID.IsValid() {
			if ids[req.ID] {
				return invalid(nil, "batch element %d: request id %v used twice", i, req.ID.Raw())
			}
			ids[req.ID] = true
		}
	}
	return nil
}

// plainRequest reports whether line, valid JSON, is a JSON-RPC request
// or notification that jsonrpc.DecodeMessage certainly accepts, found
// without decoding it (DecodeMessage allocates two 32 KiB buffers): an
// object whose keys are each one of "jsonrpc", "id", "method" and
// "params", once and written plainly, with "jsonrpc" "2.0", a string
// "method" other than initialize, and an "id" that is a string or an
// integer of at most 15 digits, if any. For any other line it returns false, and check decodes
// it.
func plainRequest(line []byte) bool {
	var seen [4]bool
	ok := true
	gjson.ParseBytes(line).ForEach(func(key, value gjson.Result) bool {
		i := slices.Index(plainKeys[:], key.Raw)
		if i < 0 || seen[i] {
			ok = false
			return false
		}
		seen[i] = true
		switch i {
		case 0:
			ok = value.Raw == `"2.0"`
		case 1:
			ok = value.Type == gjson.String || value.Type == gjson.Number && plainInt(value.Raw)
		case 2:
			ok = value.Type == gjson.String && value.Raw != `"initialize"` && !strings.ContainsRune(value.Raw, '\\')
		}
		return ok
	})
	return ok && seen[0] && seen[2]
}

// plainInt reports whether s is an integer of at most 15 digits.
func plainInt(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" || len(s) > 15 {
		return false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// plainKeys are the keys of a plain request, as written.
var plainKeys = [...]string{`"jsonrpc"`, `"id"`, `"method"`, `"params"`}

// kind names the kind of JSON value that starts with c.
func kind(c byte) string {
	switch c {
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '[':
		return "an array"
	case '{':
		return "an object"
	}
	return "a number"
}

// lineID returns the "id" of a JSON object when it is a string or a
// number, as written, else nil.
func lineID(line []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 {
		return nil
	}
	if c := m.ID[0]; c == '"' || c == '-' || c >= '0' && c <= '9' {
		return m.ID
	}
	return nil
}

// answer writes a JSON-RPC error response.
func (f *filter) answer(id json.RawMessage, code int64, msg string) error {
	f.logger.Warn("stdio: answered an unusable line with an error", "code", code, "error", msg)
	if id == nil {
		id = json.RawMessage("null")
	}
	data, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc.Error  `json:"error"`
	}{"2.0", id, &jsonrpc.Error{Code: code, Message: msg}})
	if err != nil {
		return err
	}
	return f.out.writeLine(data)
}

// lineWriter writes whole lines one at a time (go-sdk writes each message
// with one Write call), and learns the session's protocol version from
// the server's answer to initialize.
type lineWriter struct {
	mu      sync.Mutex
	w       io.WriteCloser
	initID  jsonrpc.ID // the initialize request awaiting its answer
	version string     // the protocol version the server chose
}

// Write implements io.Writer for go-sdk's connection.
func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.initID.IsValid() && len(p) > 0 && p[0] == '{' {
		if msg, err := jsonrpc.DecodeMessage(bytes.TrimSpace(p)); err == nil {
			if resp, ok := msg.(*jsonrpc.Response); ok && resp.ID == w.initID {
				var res struct{ ProtocolVersion string }
				if resp.Error == nil && json.Unmarshal(resp.Result, &res) == nil {
					w.version = res.ProtocolVersion
				}
				w.initID = jsonrpc.ID{}
			}
		}
	}
	return w.w.Write(p)
}

func (w *lineWriter) writeLine(data []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err := w.w.Write(append(data, '\n'))
	return err
}

// writeRaw writes p, a whole line ending in a newline.
func (w *lineWriter) writeRaw(p []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err := w.w.Write(p)
	return err
}

func (w *lineWriter) Close() error { return w.w.Close() }

func (w *lineWriter) watchInitialize(id jsonrpc.ID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.version == "" {
		w.initID = id
	}
}

func (w *lineWriter) protocolVersion() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.version
}

// closeBoth is the pipe go-sdk reads; closing it also closes the input,
// so that a read blocked on it returns where the input allows that.
type closeBoth struct {
	*io.PipeReader
	in io.Closer
}

func (c closeBoth) Close() error {
	return errors.Join(c.PipeReader.Close(), c.in.Close())
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
