// Package gateway is an MCP server in front of other MCP servers: a
// transparent proxy, built on the official go-sdk, that chartgate serve
// runs and a workflow gate (package mcpbind) attaches to.
//
//	cfg, err := gateway.LoadConfig("servers.json", nil)
//	g, err := gateway.New(ctx, cfg, &gateway.Options{Logger: logger})
//	defer g.Close()
//	server := g.Server() // add middleware here: gate.Attach(server)
//	err = server.Run(ctx, &mcp.StdioTransport{})
//
// # Upstreams
//
// The upstreams are configured as MCP hosts configure servers (see
// [ParseConfig]): an entry with "command" is a stdio server, started as a
// child process; one with "url" a Streamable HTTP server (or, with
// "type": "sse", an HTTP+SSE one), reached with the entry's "headers" on
// every request. The gateway is a client of each, over protocol
// 2025-11-25 ([Options.UpstreamProtocolVersion]). It advertises sampling
// and elicitation (form and URL), which it passes on, and no roots: its
// session with an upstream is shared by every downstream client and
// starts before any of them connects.
//
// [New] starts every upstream and lists its tools, prompts, resources and
// resource templates (every page), and fails if one cannot be started,
// naming it. A child:
//
//   - runs in a process group of its own (on Unix), so that stopping it
//     reaches what it started (npx starts node);
//   - has its stderr logged line by line, with the attribute
//     upstream=NAME;
//   - on Linux, is killed by the kernel (SIGKILL) if the gateway dies
//     without stopping it;
//   - is stopped by [Gateway.Close] as the MCP specification says: its
//     stdin closed, then SIGTERM, then SIGKILL to its group, waiting
//     [Options.StopGrace] each time;
//   - is restarted when it exits, with backoff ([Options.MinBackoff],
//     doubling up to [Options.MaxBackoff]). An HTTP upstream whose
//     session ends is reconnected the same way.
//
// A request in flight when its upstream exits or loses its connection
// fails at once, naming the upstream and saying how it ended (a tool call
// with an error result, so that the model reads it and a workflow gate
// sends no event; other requests with a JSON-RPC error):
//
//	upstream "fs" (npx -y @modelcontextprotocol/server-filesystem /repo) stopped during the request:
//	the process exited (signal: killed). The gateway is restarting it; the request may or may not have taken effect.
//
// Requests that come while an upstream is restarting wait for it, up to
// [Options.RestartWait], then fail with an [UnavailableError]. The
// features an upstream listed stay listed while it restarts; they are
// listed again once it is back. [Gateway.Status] reports each upstream.
//
// # Names
//
// A tool name that one upstream lists stays as it is. A name that two or
// more upstreams list becomes SERVER__NAME on each of them (the
// upstream's name in the configuration, two underscores, the tool's
// name), so "search" of "github" and of "jira" is listed as
// "github__search" and "jira__search", and called under its own name
// upstream. Server names are restricted to the tool-name characters
// (letters, digits, "_", "-", ".") and 64 characters, so a prefixed name
// is a valid MCP tool name when the original is at most 62 characters. If
// a prefixed name is still taken (an upstream lists "a__x" itself), the
// first upstream in configuration order keeps it and the other tool is
// left out and logged. Prompts follow the same rule. Names change when
// the upstreams' lists change: a tool that was unique becomes prefixed
// when a second upstream starts listing its name. [Gateway.Tools] gives,
// for each downstream tool, its upstream and its upstream name.
//
// Resource URIs and resource templates are one space: a URI listed by two
// upstreams belongs to the first in configuration order, and the other is
// logged. Reading a URI that no upstream lists and no listed template
// matches asks each upstream that serves resources, in order, until one
// has it; subscribing to one subscribes on the first upstream that
// accepts it. Completions go to the upstream of the prompt or template
// they refer to.
//
// With a single upstream, a call of a tool or prompt the gateway does not
// list is passed to it under the same name: the upstream answers (it may
// serve tools it does not list, and its error for an unknown name is its
// own).
//
// # What passes through
//
// Tool calls pass the arguments and _meta as they came and return the
// upstream's result unchanged (content, structuredContent, isError,
// _meta); a JSON-RPC error of the upstream is returned as it is.
// Cancelling the downstream request cancels the upstream one. A progress
// token is replaced by one of the gateway's, and the upstream's progress
// notifications go back to the calling client with its own token (over a
// stdio upstream in order, before the result; over HTTP the go-sdk client
// hands the result over before queued notifications, so the last ones
// may be dropped).
//
// Prompts, resources, resource templates, completions, resource
// subscriptions (notifications/resources/updated goes to the subscribed
// sessions) and logging pass through. The gateway sets each upstream's
// logging level to the lowest any downstream session asked for, and each
// session gets the upstreams' messages at or above its own level. An
// upstream's notifications/tools/list_changed (and the prompts' and
// resources') makes the gateway list again and update its own lists,
// which notifies the downstream sessions.
//
// An upstream's sampling and elicitation requests go to the downstream
// client with requests in flight to that upstream; if no client or
// several clients have, and more than one is connected, the request fails
// with an error that says so.
//
// The SEP-2575 keys of a request's _meta (protocol version, client info
// and capabilities, log level) describe the downstream connection and are
// not passed on. Fields the go-sdk does not know (the experimental tasks,
// a tool's "execution") are dropped, and so is anything an upstream
// announces only after New: the downstream capabilities are those of the
// upstreams when New connected. Under protocol 2026-07-28, where a server
// may not send requests to its client, upstream sampling and elicitation
// fail with go-sdk's error; and log messages reach only requests that ask
// for a level in their _meta.
//
// # Serving
//
// [Gateway.Server] is a go-sdk *mcp.Server: serve it on stdio, or with
// mcp.NewStreamableHTTPHandler (sessions, or stateless), for protocol
// versions 2025-06-18, 2025-11-25 and 2026-07-28. The gateway's own
// receiving middleware is installed by New; middleware added afterwards,
// such as mcpbind's gate, wraps it and sees every request first.
package gateway
