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
// naming it. A configuration with no upstream is allowed: the server then
// has only the tools added to it, such as a workflow gate's
// (workflow_status, workflow_transition). A child:
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
// A workflow written for the upstreams names their tools as they list
// them: "search", not "github__search". [Gateway.GatedAs] gives the
// upstream name of a prefixed name (of any name "SERVER__NAME" whose
// SERVER is an upstream of the configuration); chartgate serve sets a
// gate's Options.GatedAs (package mcpbind) to it, so that a workflow that
// gates "search" gates "github__search" and "jira__search" too, in every
// state, whichever upstreams list it.
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
// own). With a [ToolLock], tools are not: only a listed tool has a pinned
// definition.
//
// # What passes through
//
// Tool calls pass the arguments and _meta as they came and return the
// upstream's result unchanged (content, structuredContent, isError,
// _meta); a JSON-RPC error of the upstream is returned as it is.
// Cancelling the downstream request cancels the upstream one.
//
// Two bounds apply to every tool call. Its arguments, as JSON, may be at
// most [Options.MaxArgumentBytes] (1 MiB by default): a larger call is
// answered with an error result and not forwarded. And it may wait for
// its upstream at most [Options.CallTimeout] (60s by default; an entry's
// "timeout", in milliseconds, for that upstream): then the upstream
// request is cancelled (notifications/cancelled) and the call's result is
// an error result that says so:
//
//	upstream "fs" (npx -y @modelcontextprotocol/server-filesystem /repo) did not answer the call of tool "write_file" within 1m0s:
//	the gateway cancelled it, and it may or may not have taken effect
//
// An error result sends a workflow gate no event, and the gate releases
// the workflow it held for the call: an upstream that never answers holds
// the workflow for CallTimeout at most. While a tool call waits for a
// stdio upstream that has written nothing for a second, the gateway
// pings it (once a second, and drops the answers): a Go server can stop
// answering until it reads another line (on Go 1.26, a garbage
// collection waits for its stdin reader's read(2); see internal/stdio's
// Pollable), and the ping is that line. A progress
// token is replaced by one of the gateway's, and the upstream's progress
// notifications go back to the calling client with its own token, in
// order, before the result (except over HTTP with protocol 2026-07-28,
// where go-sdk's client hands the result over before queued
// notifications, so the last ones may be dropped).
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
// # Pinned tools
//
// A tool's definition is what the model reads; an upstream that changes
// it after it was reviewed (a "rug pull": new instructions in a
// description, a new parameter) changes what the agent does. With
// [Options.ToolLock], the gateway pins each upstream tool the first time
// it lists it: the lock file ([OpenToolLock]; chartgate serve keeps it as
// tools.lock.json beside the workflow, .chartgate/tools.lock.json in a
// project set up by chartgate install) records, under the upstream's name
// and the tool's upstream name, a SHA-256 digest of each of its title,
// description, inputSchema, outputSchema and annotations. Each time an
// upstream lists its tools (when New connects, after its
// notifications/tools/list_changed, when it is restarted), a tool whose
// digests differ from its pin is not listed downstream, and a call of it
// gets an error result naming the upstream, the tool and the fields that
// changed, never the new text:
//
//	upstream "fs" changed the definition of tool "read_file" since it was accepted into .chartgate/tools.lock.json
//	(changed: description): the gateway refuses the tool until a person accepts the new definition (chartgate serve --accept-tools)
//
// The refused definition is kept in the file's "pending" section. A
// person accepts it with [ToolLock.Accept] (chartgate serve
// --accept-tools prints each accepted definition's changed fields); a
// running gateway reads the file again at the next tools/list, or call of
// a refused tool, after it changed, and serves the tool again. A tool
// that returns to its pinned definition is served again, and its pending
// definition dropped. Nothing the gateway serves writes the file or calls
// Accept; the file must be out of the agent's reach (chartgate's hooks
// refuse writes under .chartgate/).
//
// [Options.RefuseTools] refuses tools by any other rule, the same way:
// chartgate serve refuses a tool that appears while it runs, that its
// workflow does not name, when the workflow names a tool that no upstream
// lists any more (it may be that tool, renamed). [Gateway.RefusedTools]
// lists what is refused and why.
//
// # Serving
//
// [Gateway.Server] is a go-sdk *mcp.Server: serve it on stdio, or with
// [Gateway.HTTPHandler] or mcp.NewStreamableHTTPHandler (sessions, or
// stateless), for protocol versions 2025-06-18, 2025-11-25 and 2026-07-28. The gateway's own
// receiving middleware is installed by New; middleware added afterwards,
// such as mcpbind's gate, wraps it and sees every request first.
//
// A tool call the server handles goes to a stdio upstream without
// go-sdk's client: the gateway writes the tools/call line itself and reads
// the result of the answer with gjson (text content, structuredContent,
// isError and _meta; go-sdk decodes any other result), so that the
// upstream hop decodes nothing twice. The call is otherwise the same:
// the progress token, the bounds, cancellation and the loss of the
// upstream apply as above. A tool call to a Streamable HTTP upstream
// also goes without go-sdk's client: the gateway POSTs the request with
// the session's Mcp-Session-Id and Mcp-Protocol-Version headers (and the
// configured ones) and reads the answer, JSON or server-sent events, with
// gjson. What the event stream carries before the answer goes where
// go-sdk's client sends it: notifications to the downstream sessions, in
// order, requests (sampling, elicitation, roots, ping) answered by the
// gateway. A stream cut after an event with an id is resumed as go-sdk's
// client resumes it (a GET with Last-Event-ID, up to 5 attempts without
// progress, 1s apart growing by half); a call whose answer is lost fails
// with an error result naming the upstream, and is cancelled upstream. An HTTP 404
// ends the session (the upstream is reconnected), a 500, 502, 503, 504 or
// 429 fails the call only, as in go-sdk. An upstream that speaks protocol
// 2026-07-28 is called through go-sdk.
//
// Over stdio, [Gateway.Passthrough] lets a tools/call skip go-sdk on both
// hops: when the call names a listed tool of a stdio upstream by its own
// name, passes only arguments (no _meta, so no progress token), and the
// client's session and the upstream's speak one protocol version, the
// line goes to the upstream with the gateway's request id in place of the
// client's, and the upstream's answer line comes back with the client's
// id, neither decoded. Refusals, the bounds above, cancellation and the
// loss of the upstream apply as to other calls. Middleware on the server
// does not see such calls: chartgate serve uses it only without a
// workflow.
//
// With middleware that must see every call (chartgate serve --workflow:
// the gate), [Gateway.Dispatch] skips go-sdk on the downstream hop
// instead: a tools/call line that passes only a tool's name and
// arguments, on a session of a protocol version before 2026-07-28, is
// read with gjson into the request the server's handlers take and handed
// to them, the middleware first, on one of the session's workers (a
// goroutine that takes the session's next call when its call is over,
// keeping the stack it grew; one more is started when none waits); their
// answer is encoded and written as go-sdk writes it. The middleware sees the
// call as it sees any other (a gate decides, reserves, commits and tells
// the client as it does through go-sdk), and the call reaches a stdio
// upstream as above. A client's notifications/cancelled of such a call
// cancels the handlers' context, and the call gets no answer. Its _meta
// is read as go-sdk reads it (a progress token is routed as above); a
// call whose _meta has a key of SEP-2575, a session of protocol
// 2026-07-28, and every other message go through go-sdk's server.
//
// Over Streamable HTTP, [Gateway.HTTPHandler] does the same: it is
// go-sdk's handler (mcp.NewStreamableHTTPHandler, with the options given),
// in front of which a POST carrying a tools/call that passes only a tool's
// name, arguments and _meta (none of SEP-2575's keys), for a session this
// handler started and initialized with a protocol version before
// 2026-07-28, is read with gjson and handed to the server's handlers for
// that session, the middleware first, as Dispatch hands it. The answer is
// go-sdk's: an event stream (or, with JSONResponse, JSON) with go-sdk's
// headers; the notifications the call's handlers send on its context
// (progress, log messages) and their requests to the client (sampling,
// elicitation, roots; the client's answer is a POST of its own) as events
// before the answer; the answer encoded as over stdio (JSON-identical to
// go-sdk's; the gateway escapes <, > and & in strings, go-sdk does not).
// With JSONResponse they go on the session's stream, as go-sdk sends them.
// A client's notifications/cancelled of such a call cancels its handlers'
// context; a second call with the id of one in flight gets go-sdk's error. Everything else goes to go-sdk's
// handler untouched: other methods and messages, other sessions (unknown,
// ended, or another handler's), POSTs go-sdk would refuse (media types,
// Host, origin, Last-Event-ID, a protocol header other than the
// session's), requests with a user and every request of a session a
// user started (go-sdk checks each request's user against the
// session's: a request without the token is refused), bodies longer than [Options.MaxArgumentBytes] or the
// handler's MaxRequestBodyBytes, and, with Stateless, an EventStore or a
// SessionTimeout, every request.
package gateway
