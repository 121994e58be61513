package gateway

import (
	"errors"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
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
