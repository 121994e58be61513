package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAnswerLine: a handler's answer is written as go-sdk's connection
// writes it: the result, a *jsonrpc.Error as it is, another error with the
// code of a *jsonrpc.Error it wraps, and neither result nor error as an
// internal error.
func TestAnswerLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		res  mcp.Result
		err  error
		want string
	}{
		{"result", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil,
			`{"jsonrpc":"2.0","id":"a-1","result":{"content":[{"type":"text","text":"hi"}]}}`},
		{"jsonrpc error", nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad", Data: []byte(`{"x":1}`)},
			`{"jsonrpc":"2.0","id":"a-1","error":{"code":-32602,"message":"bad","data":{"x":1}}}`},
		{"wrapped", nil, fmt.Errorf("calling: %w", &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "down"}),
			`{"jsonrpc":"2.0","id":"a-1","error":{"code":-32603,"message":"calling: down"}}`},
		{"plain error", nil, errors.New("no"),
			`{"jsonrpc":"2.0","id":"a-1","error":{"code":0,"message":"no"}}`},
		{"nothing", nil, nil,
			`{"jsonrpc":"2.0","id":"a-1","error":{"code":-32603,"message":"the handler returned no result and no error"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := answerLine(`"a-1"`, tc.res, tc.err)
			assert.Equal(t, byte('\n'), line[len(line)-1])
			assert.JSONEq(t, tc.want, string(line))
		})
	}
}

// FuzzReadCall: a line the stdio transport hands over (valid JSON) is
// read as a tools/call only if encoding/json reads the same call in it:
// method tools/call, the same name and arguments, an id that is a string
// or an integer, and no params but name, arguments and _meta.
func FuzzReadCall(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"e\u0063ho","_meta":{"progressToken":1}}}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"echo"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","name":"other"}}`,
		`{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"echo"}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"tools/call\",\"params\":{\"name\":\"\x95\"}}",
		`{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"\ud800\u0041"}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if len(line) == 0 || !json.Valid(line) {
			return // the transport answers such a line itself
		}
		id, params, _, ok := readCall(line)
		if !ok {
			return
		}
		var msg struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Method  string          `json:"method"`
			Params  map[string]json.RawMessage
		}
		if err := json.Unmarshal(line, &msg); err != nil {
			t.Fatalf("read as a call, but encoding/json fails: %v", err)
		}
		if msg.JSONRPC != "2.0" || msg.Method != "tools/call" || string(msg.ID) != id.Raw {
			t.Fatalf("read as a call: %+v", msg)
		}
		var name string
		if err := json.Unmarshal(msg.Params["name"], &name); err != nil || name != params[0].Str {
			t.Fatalf("name %q, encoding/json %q (%v)", params[0].Str, name, err)
		}
		if string(msg.Params["arguments"]) != params[1].Raw {
			t.Fatalf("arguments %s, encoding/json %s", params[1].Raw, msg.Params["arguments"])
		}
		for k := range msg.Params {
			if k != "name" && k != "arguments" && k != "_meta" {
				t.Fatalf("params has %q", k)
			}
		}
	})
}

// TestAppendToolResult: a result of the common shape is written as
// encoding/json writes it (go-sdk's MarshalJSON), and any other is left
// to encoding/json.
func TestAppendToolResult(t *testing.T) {
	text := func(s string) *mcp.TextContent { return &mcp.TextContent{Text: s} }
	for _, r := range []*mcp.CallToolResult{
		{Content: []mcp.Content{text("héllo <b> & \u2028 \"q\" \n")}},
		{Content: []mcp.Content{text("\xff\xfe invalid")}},
		{Content: []mcp.Content{text(""), &mcp.TextContent{Text: "m", Meta: mcp.Meta{"k": []any{1.5, "x"}}}}, IsError: true},
		{Content: []mcp.Content{}, StructuredContent: json.RawMessage(` {"a": [1, 2]} `), Meta: mcp.Meta{"chartgate": map[string]any{"moved": true}}},
		{},
	} {
		want, err := json.Marshal(r)
		require.NoError(t, err)
		got, ok := appendToolResult([]byte("x"), r)
		require.True(t, ok, "%s", want)
		assert.Equal(t, byte('x'), got[0])
		assert.JSONEq(t, string(want), string(got[1:]))
	}
	for _, r := range []*mcp.CallToolResult{
		{Content: []mcp.Content{&mcp.ImageContent{Data: []byte{1}, MIMEType: "image/png"}}},
		{Content: []mcp.Content{&mcp.TextContent{Text: "a", Annotations: &mcp.Annotations{Priority: 1}}}},
		{Content: []mcp.Content{text("a")}, StructuredContent: map[string]any{"a": 1}},
		{Content: []mcp.Content{text("a")}, StructuredContent: json.RawMessage(`{"a":`)},
		{Content: []mcp.Content{text("a")}, RequestState: "s"},
	} {
		got, ok := appendToolResult([]byte("x"), r)
		assert.False(t, ok)
		assert.Equal(t, "x", string(got))
	}
}

// BenchmarkAnswerLine writes the answer to an echo call with a structured
// result and a _meta note, as Dispatch does, and with encoding/json as
// go-sdk does.
func BenchmarkAnswerLine(b *testing.B) {
	r := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}},
		StructuredContent: json.RawMessage(`{"text":"hello"}`), Meta: mcp.Meta{"note": "moved"}}
	b.Run("dispatch", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = answerLine(`1`, r, nil)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(r)
		}
	})
}
