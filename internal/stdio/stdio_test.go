// This file tests Transport with a go-sdk server on pipes: what each bad
// line is answered with, and that the session goes on.

package stdio_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/internal/stdio"
)

// peer is the client's side of a server served over Transport.
type peer struct {
	t     *testing.T
	in    *io.PipeWriter // the server's input
	out   *bufio.Scanner // the server's output
	done  chan error     // the server session's end
	inner *io.PipeReader
}

// serve connects a server with one tool over a Transport on pipes.
func serve(t *testing.T, maxLine int) *peer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct{ S string }) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.S}}}, nil, nil
	})
	ss, err := server.Connect(context.Background(), &stdio.Transport{Reader: inR, Writer: outW, MaxLineLength: maxLine}, nil)
	require.NoError(t, err)
	p := &peer{t: t, in: inW, out: bufio.NewScanner(outR), done: make(chan error, 1), inner: inR}
	p.out.Buffer(nil, 1<<20)
	go func() { p.done <- ss.Wait() }()
	t.Cleanup(func() {
		inW.Close()
		outR.Close()
		ss.Close()
	})
	return p
}

// send writes raw to the server's input (a newline is added).
func (p *peer) send(raw string) {
	p.t.Helper()
	_, err := io.WriteString(p.in, raw+"\n")
	require.NoError(p.t, err)
}

// next returns the server's next output line.
func (p *peer) next() string {
	p.t.Helper()
	line := make(chan string, 1)
	go func() {
		if p.out.Scan() {
			line <- p.out.Text()
		}
		close(line)
	}()
	select {
	case l, ok := <-line:
		require.True(p.t, ok, "the server's output ended: %v", p.out.Err())
		return l
	case <-time.After(10 * time.Second):
		p.t.Fatal("no answer from the server")
	}
	return ""
}

func (p *peer) initialize(version string) {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	var res struct {
		ID     int
		Result struct{ ProtocolVersion string }
	}
	require.NoError(p.t, json.Unmarshal([]byte(p.next()), &res))
	require.Equal(p.t, version, res.Result.ProtocolVersion)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// ping checks that the session still serves requests.
func (p *peer) ping(id int) {
	p.t.Helper()
	raw, _ := json.Marshal(id)
	p.send(`{"jsonrpc":"2.0","id":` + string(raw) + `,"method":"ping"}`)
	assert.Equal(p.t, `{"jsonrpc":"2.0","id":`+string(raw)+`,"result":{}}`, p.next())
}

func TestBadLinesAreAnsweredAndServingGoesOn(t *testing.T) {
	p := serve(t, 0)
	// Before initialize, too.
	p.send("not json")
	assert.Equal(t, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid character 'o' in literal null (expecting 'u') (offset 2)"}}`, p.next())
	p.initialize("2025-11-25")

	for i, c := range []struct{ line, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: unexpected end of JSON input (offset 33)"}}`},
		{`{bad}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid character 'b' looking for beginning of object key string (offset 2)"}}`},
		{`{"jsonrpc":"2.0","id":5,"method":"ping"} x`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid character 'x' after top-level value (offset 42)"}}`},
		{`{"jsonrpc":"2.0","id":5,"method":"ping"}{"jsonrpc":"2.0","id":6,"method":"ping"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid character '{' after top-level value (offset 41)"}}`},
		{"\x00\x01", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid character '\\x00' looking for beginning of value (offset 1)"}}`},
		{`42`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: a JSON-RPC message is an object or a batch (array) of them, not a number"}}`},
		{`"ping"`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: a JSON-RPC message is an object or a batch (array) of them, not a string"}}`},
		{`null`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: a JSON-RPC message is an object or a batch (array) of them, not null"}}`},
		{`{"id":7,"method":"ping"}`, `{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"invalid request: invalid message version tag \"\"; expected \"2.0\""}}`},
		{`{"jsonrpc":"1.0","id":"a\"b","method":"ping"}`, `{"jsonrpc":"2.0","id":"a\"b","error":{"code":-32600,"message":"invalid request: invalid message version tag \"1.0\"; expected \"2.0\""}}`},
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: parse error: invalid ID type map[string]interface {}"}}`},
		{`{"jsonrpc":"2.0"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: invalid request"}}`},
		{`[]`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: empty batch"}}`},
		{`[{"jsonrpc":"2.0","id":8,"method":"ping"}]`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: JSON-RPC batches are not supported in protocol 2025-11-25"}}`},
	} {
		p.send(c.line)
		assert.Equal(t, c.want, p.next(), c.line)
		p.ping(100 + i)
	}

	// A request id with many digits comes back as written.
	p.send(`{"id":12345678901234567890123}`)
	assert.Equal(t, `{"jsonrpc":"2.0","id":12345678901234567890123,"error":{"code":-32600,"message":"invalid request: invalid message version tag \"\"; expected \"2.0\""}}`, p.next())

	// Blank lines get no answer; CRLF ends a line too; a tool call works.
	p.send("")
	p.send("  \t ")
	p.send(`{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"echo","arguments":{"S":"hi"}}}` + "\r")
	assert.Equal(t, `{"jsonrpc":"2.0","id":"c","result":{"content":[{"type":"text","text":"hi"}]}}`, p.next())

	// The end of the input ends the session.
	p.in.Close()
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the session did not end at the end of its input")
	}
}

func TestBatchesUnderProtocol20250326(t *testing.T) {
	p := serve(t, 0)
	p.initialize("2025-03-26")
	// go-sdk answers a batch in this protocol with a batch.
	p.send(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`)
	var resp []struct{ ID int }
	require.NoError(t, json.Unmarshal([]byte(p.next()), &resp))
	assert.ElementsMatch(t, []struct{ ID int }{{1}, {2}}, resp)
	// Batches go-sdk would end the session for.
	for _, c := range []struct{ line, msg string }{
		{`[{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"ping"}]`, "batch element 1: request id 3 used twice"},
		{`[{"jsonrpc":"2.0","id":4,"method":"ping"},7]`, "batch element 1 is a number, not an object"},
		{`[{"jsonrpc":"2.0","id":4,"method":"ping"},{"id":5}]`, `batch element 1: invalid message version tag \"\"; expected \"2.0\"`},
	} {
		p.send(c.line)
		assert.Equal(t, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: `+c.msg+`"}}`, p.next())
		p.ping(9)
	}
}

func TestLongLines(t *testing.T) {
	p := serve(t, 300)
	p.initialize("2025-11-25")
	long := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"x":"` + strings.Repeat("x", 400) + `"}}}`
	p.send(long)
	assert.Equal(t, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: line longer than 300 bytes"}}`, p.next())
	p.ping(2)
	// Exactly the limit is accepted, even with CRLF.
	exact := `{"jsonrpc":"2.0","id":3,"method":"ping"`
	exact += strings.Repeat(" ", 299-len(exact)) + "}"
	require.Len(t, exact, 300)
	p.send(exact + "\r")
	assert.Equal(t, `{"jsonrpc":"2.0","id":3,"result":{}}`, p.next())
	p.send(exact + " ")
	assert.Equal(t, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: line longer than 300 bytes"}}`, p.next())
	p.ping(4)
	// A line over the limit and longer than the read buffer.
	r := serve(t, 70_000)
	r.initialize("2025-11-25")
	r.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"S":"` + strings.Repeat("z", 100_000) + `"}}}`)
	assert.Equal(t, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: line longer than 70000 bytes"}}`, r.next())
	r.ping(5)
	// A line longer than the read buffer, without a limit.
	q := serve(t, -1)
	q.initialize("2025-11-25")
	q.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"S":"` + strings.Repeat("y", 200_000) + `"}}}`)
	assert.Len(t, q.next(), len(`{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":""}]}}`)+200_000)
}

func TestCloseClosesTheInput(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go io.Copy(io.Discard, outR)
	conn, err := (&stdio.Transport{Reader: inR, Writer: outW}).Connect(context.Background())
	require.NoError(t, err)
	require.NoError(t, conn.Close())
	_, err = inW.Write([]byte("{}\n"))
	assert.ErrorIs(t, err, io.ErrClosedPipe, "the input is closed")
	_, err = outW.Write([]byte("x"))
	assert.ErrorIs(t, err, io.ErrClosedPipe, "the output is closed")
}
