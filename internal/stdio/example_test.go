// This file holds the package's runnable example.

package stdio_test

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/internal/stdio"
)

// A server on a Transport answers a line that is not JSON with a parse
// error and goes on serving. A real server runs on stdin and stdout:
//
//	server.Run(ctx, &stdio.Transport{})
func Example() {
	clientOut, serverIn := io.Pipe()
	serverOut, clientIn := io.Pipe()
	server := mcp.NewServer(&mcp.Implementation{Name: "example", Version: "1"}, nil)
	ss, err := server.Connect(context.Background(), &stdio.Transport{Reader: clientOut, Writer: clientIn}, nil)
	if err != nil {
		panic(err)
	}
	defer ss.Close()

	answers := bufio.NewScanner(serverOut)
	for _, line := range []string{
		"hello?",
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping"`,
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
	} {
		fmt.Fprintln(serverIn, line)
		answers.Scan()
		fmt.Println(answers.Text())
	}
	// Output:
	// {"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid character 'h' looking for beginning of value (offset 1)"}}
	// {"jsonrpc":"2.0","id":1,"result":{"capabilities":{"logging":{}},"protocolVersion":"2025-11-25","serverInfo":{"name":"example","version":"1"}}}
	// {"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: unexpected end of JSON input (offset 39)"}}
	// {"jsonrpc":"2.0","id":3,"result":{}}
}
