// This file defines the raw upstream hop of a tool call the gateway's
// server handles (one that middleware such as a workflow gate sees): the
// request line is written to a stdio child without go-sdk's client, and
// the answer's result is read with gjson, not go-sdk's decoder.

package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"
)

// rawVersions are the protocol versions whose tools/call the raw hop
// writes: those without per-request _meta keys (SEP-2575).
var rawVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// rawConn returns the connection a call on session cs may be written to
// without go-sdk: that of a stdio child, if cs is still its session and
// it speaks one of rawVersions.
func (u *upstream) rawConn(cs *mcp.ClientSession) *lineConn {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.cs != cs || u.conn == nil || u.init == nil || !slices.Contains(rawVersions, u.init.ProtocolVersion) {
		return nil
	}
	return u.conn
}

// rawCallPrefix is the start of a tools/call line the raw hop writes;
// the request id (0, replaced by lineConn.send) follows it.
const rawCallPrefix = `{"jsonrpc":"2.0","id":`

// rawCallTool is callTool's hop over conn: params (the tools/call's
// params, as JSON) are sent in a line of their own, and the answer comes
// back as the result or JSON-RPC error it holds. The call timeout, the
// client's cancellation and the loss of the upstream end it as they end a
// call through go-sdk, with the same results. sent is false if conn ended
// before anything was sent: the caller goes through go-sdk instead.
func (g *Gateway) rawCallTool(ctx context.Context, u *upstream, conn *lineConn, name string, params []byte) (res *mcp.CallToolResult, sent bool, err error) {
	answer := make(chan []byte, 1)
	c := &rawCall{down: "0", up: u, tool: name, conn: conn, done: func() {},
		// The line is the connection's buffer: it is copied for the caller.
		reply: func(line []byte) error { answer <- slices.Clone(line); return nil }}
	line := make([]byte, 0, len(rawCallPrefix)+len(params)+40)
	line = append(line, rawCallPrefix...)
	line = append(line, `0,"method":"tools/call","params":`...)
	line = append(line, params...)
	line = append(line, '}')
	if !conn.send(line, len(rawCallPrefix), 1, c, g.callTimeout(u)) {
		return nil, false, nil
	}
	select {
	case b := <-answer:
		res, err = decodeAnswer(b)
		var werr *jsonrpc.Error
		if err != nil && !errors.As(err, &werr) {
			err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("upstream %q: %v", u.name, err)}
		}
		return res, true, err
	case <-ctx.Done():
		c.cancel(context.Cause(ctx).Error())
		return nil, true, ctx.Err()
	}
}

// rawParams is the JSON of a tools/call's params as the raw hop sends
// them: the upstream name, the arguments as they came, and meta (the
// client's _meta as forwardMeta left it, with the gateway's progress
// token).
func rawParams(name string, args json.RawMessage, meta mcp.Meta) ([]byte, error) {
	n, err := json.Marshal(name)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(n)+len(args)+32)
	b = append(b, `{"name":`...)
	b = append(b, n...)
	if len(args) > 0 {
		b = append(b, `,"arguments":`...)
		b = append(b, args...)
	}
	if len(meta) > 0 {
		m, err := json.Marshal(meta)
		if err != nil {
			return nil, err
		}
		b = append(b, `,"_meta":`...)
		b = append(b, m...)
	}
	return append(b, '}'), nil
}

// decodeAnswer reads the answer line of a tools/call: its result, or its
// JSON-RPC error as a *jsonrpc.Error.
func decodeAnswer(line []byte) (*mcp.CallToolResult, error) {
	if !json.Valid(line) { // gjson reads what it can of invalid JSON
		return nil, fmt.Errorf("the answer to a tools/call is not valid JSON")
	}
	if e := gjson.GetBytes(line, "error"); e.Exists() {
		return nil, readError(e)
	}
	r := gjson.GetBytes(line, "result")
	if !r.IsObject() {
		return nil, fmt.Errorf("the answer to a tools/call has no result object")
	}
	if res, ok := decodeToolResult(r); ok {
		return res, nil
	}
	res := &mcp.CallToolResult{}
	if err := json.Unmarshal([]byte(r.Raw), res); err != nil {
		return nil, fmt.Errorf("decoding the result of a tools/call: %w", err)
	}
	return res, nil
}

// readError reads a JSON-RPC error object.
func readError(e gjson.Result) *jsonrpc.Error {
	werr := &jsonrpc.Error{Code: e.Get("code").Int(), Message: e.Get("message").String()}
	if d := e.Get("data"); d.Exists() {
		werr.Data = json.RawMessage(d.Raw)
	}
	return werr
}

// decodeToolResult decodes the result of a tool call of the shape most
// tools answer with, text content (with _meta), structuredContent,
// isError and _meta, without go-sdk's decoder, which takes a 32 KiB
// buffer for each value. It reports false for anything else: go-sdk
// decodes that.
func decodeToolResult(r gjson.Result) (*mcp.CallToolResult, bool) {
	res := &mcp.CallToolResult{Content: []mcp.Content{}} // as go-sdk: [] when absent
	ok := true
	r.ForEach(func(key, v gjson.Result) bool {
		switch key.Str {
		case "content":
			if !v.IsArray() {
				ok = false
				break
			}
			res.Content = make([]mcp.Content, 0, 1)
			v.ForEach(func(_, item gjson.Result) bool {
				t, ok1 := textContent(item)
				if !ok1 {
					ok = false
					return false
				}
				res.Content = append(res.Content, t)
				return true
			})
		case "structuredContent":
			if v.Type != gjson.Null {
				res.StructuredContent = json.RawMessage(v.Raw)
			}
		case "isError":
			switch v.Type {
			case gjson.True:
				res.IsError = true
			case gjson.False:
			default:
				ok = false
			}
		case "_meta":
			if !metaOf(v, &res.Meta) {
				ok = false
			}
		default:
			ok = false
		}
		return ok
	})
	return res, ok
}

// textContent decodes a content item of type text, without annotations.
func textContent(item gjson.Result) (*mcp.TextContent, bool) {
	if !item.IsObject() {
		return nil, false
	}
	t := &mcp.TextContent{}
	ok, typed, texted := true, false, false
	item.ForEach(func(key, v gjson.Result) bool {
		switch key.Str {
		case "type":
			typed = v.Type == gjson.String && v.Str == "text"
			ok = typed
		case "text":
			texted = v.Type == gjson.String
			t.Text = v.Str
			ok = texted
		case "_meta":
			ok = metaOf(v, &t.Meta)
		default:
			ok = false
		}
		return ok
	})
	return t, ok && typed && texted
}

// metaOf decodes a _meta object into m (null leaves it nil).
func metaOf(v gjson.Result, m *mcp.Meta) bool {
	if v.Type == gjson.Null {
		return true
	}
	return v.IsObject() && json.Unmarshal([]byte(v.Raw), m) == nil
}
