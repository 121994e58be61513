package gateway

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDecodeAnswer reads tools/call answers as go-sdk's client does:
// the result the downstream client gets is the same JSON.
func TestDecodeAnswer(t *testing.T) {
	for _, result := range []string{
		`{"content":[{"type":"text","text":"hi \u00e9\n"}]}`,
		`{"content":[],"isError":true}`,
		`{"content":[{"type":"text","text":"a","_meta":{"k":1}},{"type":"text","text":""}],"structuredContent":{"n":[1,2]},"_meta":{"m":"x"}}`,
		`{"content":[{"type":"text","text":"a","annotations":{"priority":1}}]}`,
		`{"content":[{"type":"image","data":"AAAA","mimeType":"image/png"}],"isError":false}`,
		`{"content":[{"type":"text","text":"a"}],"structuredContent":null,"_meta":null}`,
	} {
		line := []byte(`{"jsonrpc":"2.0","id":0,"result":` + result + `}`)
		got, err := decodeAnswer(line)
		require.NoError(t, err, result)
		var want mcp.CallToolResult
		require.NoError(t, json.Unmarshal([]byte(result), &want))
		assert.JSONEq(t, marshal(t, &want), marshal(t, got), result)
	}
}

func TestDecodeAnswerError(t *testing.T) {
	_, err := decodeAnswer([]byte(`{"jsonrpc":"2.0","id":0,"error":{"code":-32602,"message":"unknown tool \"x\"","data":{"a":1}}}`))
	var werr *jsonrpc.Error
	require.ErrorAs(t, err, &werr)
	assert.Equal(t, int64(-32602), werr.Code)
	assert.Equal(t, `unknown tool "x"`, werr.Message)
	assert.JSONEq(t, `{"a":1}`, string(werr.Data))

	_, err = decodeAnswer([]byte(`{"jsonrpc":"2.0","id":0,"result":[1]}`))
	assert.EqualError(t, err, "the answer to a tools/call has no result object")

	_, err = decodeAnswer([]byte(`{"jsonrpc":"2.0","id":0,"result":{"content":[{"type":"text","text":"a"}]`))
	assert.EqualError(t, err, "the answer to a tools/call is not valid JSON")
}

// FuzzDecodeAnswer checks that the gjson decoder and go-sdk's agree on
// every result both accept, and that it never panics.
func FuzzDecodeAnswer(f *testing.F) {
	f.Add(`{"content":[{"type":"text","text":"hi"}],"isError":true,"_meta":{"a":[1]}}`)
	f.Add(`{"content":[{"type":"text","text":"\ud800"}],"structuredContent":{"x":"y"}}`)
	f.Add(`{"content":null}`)
	f.Fuzz(func(t *testing.T, result string) {
		got, err := decodeAnswer([]byte(`{"jsonrpc":"2.0","id":0,"result":` + result + `}`))
		var want mcp.CallToolResult
		wantErr := json.Unmarshal([]byte(result), &want)
		if err != nil || wantErr != nil {
			return
		}
		assert.JSONEq(t, marshal(t, &want), marshal(t, got), result)
	})
}

func marshal(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}
