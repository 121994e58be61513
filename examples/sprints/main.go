// Command sprints is the State Sync example: the sprints, tasks and
// countries of MCP Fusion's documentation as an MCP server built with the
// go-sdk and chartgate's statesync layer.
//
//	go run ./examples/sprints          # a scripted client session, in memory
//	go run ./examples/sprints -stdio   # serve over stdin/stdout
//
// Tool descriptions end with [Cache-Control: no-store] or
// [Cache-Control: immutable], and the result of every successful mutation
// starts with a notice such as
// "[System: Cache invalidated for tasks.*, sprints.* — caused by tasks.update]".
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/internal/stdio"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "sprints:", err)
		os.Exit(1)
	}
}

// run parses args and either serves over stdio or runs the demo, writing
// its transcript to stdout.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sprints", flag.ContinueOnError)
	fs.SetOutput(stderr)
	overStdio := fs.Bool("stdio", false, "serve the tools over stdin/stdout instead of running the demo")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *overStdio {
		// chartgate's stdio transport: see internal/stdio (standard input
		// read through the poller; bad lines answered, not fatal).
		return serve(ctx, &stdio.Transport{})
	}
	return demo(ctx, stdout)
}

// serve runs the server on t until the client disconnects.
func serve(ctx context.Context, t mcp.Transport) error {
	server, _, err := newServer(newStore(), nil)
	if err != nil {
		return err
	}
	return server.Run(ctx, t)
}
