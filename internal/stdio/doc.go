// Package stdio serves MCP over newline-delimited JSON, on standard input
// and output or any reader and writer, like go-sdk's mcp.StdioTransport
// and mcp.IOTransport, except that bad input does not end the connection.
//
// go-sdk v1.8.0 closes a stdio connection on the first line it cannot use:
// a line that is not JSON, a JSON value that is not a JSON-RPC message, an
// empty batch, a batch under protocol 2025-06-18 or later, a batch with a
// request id twice, or a line over the length limit all make the
// connection's Read fail, and the server session ends. [Transport] reads
// the lines itself, answers each such line with a JSON-RPC error and goes
// on with the next, and hands the others to go-sdk's own connection, so
// everything else (batches under older protocols, the session's protocol
// version, closing) is go-sdk's.
//
// # Answers
//
// A line that is not JSON (or holds more than one JSON value) gets
// -32700 (parse error) with id null; valid JSON that go-sdk would refuse
// gets -32600 (invalid request) with the line's id when it has a string or
// number "id", else null. The message says what is wrong, for example
//
//	{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid character 'o' in literal null (expecting 'u') (offset 2)"}}
//
// A batch with a bad element is refused whole, with one error. Blank lines
// are skipped.
//
// # Bypass
//
// Transport.Bypass is offered each usable line before go-sdk reads it;
// a line it takes never reaches go-sdk, and it answers it itself (the
// gateway passes tool calls through this way). A plain request (the keys
// jsonrpc, id, method and params, each once) is checked without decoding
// it; other lines are decoded as go-sdk would.
package stdio
