// Package mcpbind gates the tools of an MCP server built with the official
// go-sdk (github.com/modelcontextprotocol/go-sdk) by the state of a
// statechart. Each MCP session runs its own instance of the workflow; it
// sees only the tools its current state allows, cannot call the others, and
// a successful call of a tool sends the tool's event, which may change the
// state and so the tools. It is the FSM State Gate of MCP Fusion and the
// allowed_tools of Statewright, on a [statechart.Engine]: the full XState
// interpreter ([statechart.Machine.Engine]) or the flat engine (package
// statechart/flat).
//
//	m, _ := statechart.Compile(machineJSON, nil)
//	gate, err := mcpbind.New(m.Engine(), nil) // validates the bindings in the JSON
//	server := mcp.NewServer(&mcp.Implementation{Name: "shop"}, nil)
//	mcp.AddTool(server, &mcp.Tool{Name: "cart_pay"}, pay)
//	gate.Bind("cart_pay", mcpbind.Binding{States: []string{"payment"}, Event: "PAY"}) // or in the JSON
//	gate.Attach(server)
//
// examples/checkout is a complete program.
//
// The gate's public types and the composition of its steps ([gate.Do])
// are package gate's; the decisions themselves are made by chartgate's
// internal/core package (core.Core: the machine's tables, the store,
// leases, budgets, approvals, jobs, refusals, and the steps with their
// compositions Decide, Commit, Send, Approve and Reserve, to which Gate
// forwards). This package is the MCP front door over it: the middleware
// and its door (the tools/call translated into a call, the server's tool
// names, running the tool, the MCP answers to an unknown tool, a
// workflow it cannot load or workflow_status, and the client told after
// the call), tools/list filtering, list_changed and the new state's
// guidance to the sessions of a workflow, workflow handles and the start
// tool, elicitation of approvals, AfterCall, and the sweep that forgets
// ended sessions.
//
// # Binding tools to states
//
// A tool is bound in Go, tool-centric, with [Gate.Bind] (or [AddTool]):
// the states in which it is visible and the event a successful call sends.
// Or it is bound in the machine JSON, state-centric, in each state's
// meta.mcp (see [StateMCP]):
//
//	"payment": {
//	  "on": {"PAY": "confirmed"},
//	  "meta": {"mcp": {
//	    "tools":        ["cart_pay", "cart_*"],  // visible while this state is active; "*" matches any run of characters
//	    "events":       {"cart_pay": "PAY"},     // tool -> event sent after a successful call (machine-wide)
//	    "invalidates":  {"cart_pay": ["cart.*"]}, // tool -> what its transition makes stale (machine-wide; see "With statesync")
//	    "instructions": "Ask for the payment method, then call cart_pay.",
//	    "maxCalls":     10,                      // a budget of calls in this state ("onMaxCalls": "warn" only warns)
//	    "deny":         ["cart_clear"]           // hidden while this state is active, whatever "tools" says
//	  }}
//	}
//
// [New] validates every meta.mcp and reports all problems with their JSON
// paths, like [statechart.Compile]:
//
//	states.payment.meta.mcp.tools[0]: "cart pay" is not a tool name or pattern: use letters, digits, "_", "-", "." and "*"
//	states.payment.meta.mcp.events.cart_pay: no state handles event "PAI" (did you mean "PAY"?)
//
// Tool patterns (tools, deny, ungated, [Options.Ungated] and the lists
// under invalidates) are chartgate's one tool-pattern language, the one
// package statesync documents at [statesync.Glob] and Statewright
// workflows use in allowed_tools: "*" matches any run of characters, none
// and dots included, every other character itself. "cart.*" takes
// cart.items.list under tools and under invalidates alike.
//
// The rules, for a tool named t:
//
//   - A Go binding of t decides alone (it replaces what the JSON says).
//     Its States are "#id", a path of keys from the root ("payment",
//     "payment.card") or an id. With no States, t is visible exactly when
//     the machine would handle its Event now (XState's snapshot.can; guards
//     are evaluated on the event without input).
//   - Otherwise, if some state's meta.mcp.tools matches t, t is visible
//     while one of those states is active; it sends the event that
//     meta.mcp.events gives it, if any.
//   - Otherwise, if meta.mcp.events gives t an event, t is visible when the
//     machine would handle that event, as above.
//   - Otherwise t is unbound: always visible, and it sends no event.
//
// A compound or parallel state counts as active while any of its
// descendants is ([statechart.State.StateIDs]).
//
// # The event
//
// When a call of a bound tool returns a result that is not an error (the
// handler returned no error, IsError is false, and no input is required),
// the gate sends the tool's event to the session's workflow:
//
//	{"type": "PAY", "tool": "cart_pay", "input": {"payment_method": "card"}, "output": {...}}
//
// "input" is the call's arguments ({} if none), "output" the result's
// structured content (absent if none), both as JSON values. Guards and
// actions of the full interpreter read them as event.input.payment_method
// and so on. The flat engine ignores event data, so with it the gate sends
// only type and tool (unless [Options.OnTransition] is set). Delayed
// (after) transitions happen at the session's next request.
//
// A call whose event the workflow would not accept is refused before the
// tool runs: when the active states handle the tool's event but every
// transition for it has a guard, and none is enabled with the call's
// arguments as event.input, the call is refused with CodeEventRefused,
// its [Refusal] naming the event and the guards. The exception is a tool
// whose guards must read its result (event.output): list it in
// meta.mcp.outputGuards (machine-wide, exact names) or bind it with
// [Binding].OutputGuards; its call runs, and its result decides whether
// the workflow moves. An event no active state handles is not a refusal:
// the tool is available there and its event changes nothing.
//
// # Sessions and the middleware
//
// [Gate.Attach] installs a receiving middleware on the server. For each
// session (keyed by its *mcp.ServerSession: the Mcp-Session-Id over
// Streamable HTTP, else a key private to the process, or
// [Options.SessionKey]) it
//
//   - filters tools/list to the visible tools;
//   - refuses a tools/call of a hidden tool without running it (see
//     below);
//   - after a successful call, sends the tool's event, saves the new state,
//     and, if the session's visible tools changed, sends
//     notifications/tools/list_changed to that session, before the
//     call's result (and, with a store that reports its writes, to the
//     other sessions of that workflow, on every instance: see "Several
//     instances: the change feed");
//   - advertises tools.listChanged in the initialize result.
//
// A call that moved the workflow also carries a [TransitionNote] under
// [MetaKey] in its _meta (event, from, to, whether the tools changed), for
// clients that ignore list_changed: many do. A client that reads a
// server's tools once and never again (Codex) cannot call a tool that
// only a later state allows; for it, [Options.ListAllTools] lists every
// tool whatever the protocol (see "Protocol versions and workflow
// handles").
//
// A session holds no state in the gate until its first transition: idle
// sessions cost nothing (except with a machine whose initial state
// schedules delayed events: their clock starts at the session's first
// request, so its state is saved then). From then on the gate keeps its key, and a
// goroutine waiting on [mcp.ServerSession.Wait] deletes the session's state
// from the store when the session ends.
//
// # Notifying one session
//
// The go-sdk has no API to notify one session (go-sdk#666); Server.AddTool
// and RemoveTools notify every session, after 10 ms. Attach therefore also
// installs a sending middleware that keeps the server's inner sending
// handler, and the gate calls it with notifications/tools/list_changed and
// a request naming the calling session. It is called on the tools/call
// request's context before the result is returned, so over Streamable HTTP
// the notification travels on that POST's response stream. Sending
// middleware added after Attach does not see these notifications.
//
// Whether the visible tools changed is decided from the machine, not from
// the server's tool list: the set of active meta.mcp.tools patterns and the
// visibility of the Go-bound and event-bound tools. Two states listing
// different patterns that happen to match the same tools count as
// different, so a notification may occasionally be sent although the list
// is the same; a change is never missed.
//
// # Refusals
//
// A call of a hidden tool is not run. Its result has IsError true, a text
// for the model, and a [Refusal] under [MetaKey] in its _meta (read it with
// [RefusalOf]):
//
//	Tool "cart_pay" is not available in the current workflow state ("empty"). To make it available, call cart_add_item, then cart_checkout.
//	Tools available now: cart_add_item, cart_view.
//	Instructions: The cart is empty. Add a product with cart_add_item.
//
//	"_meta": {"chartgate/mcpbind": {"code": "FORBIDDEN", "tool": "cart_pay", "state": "empty",
//	  "available": ["cart_add_item", "cart_view"],
//	  "path": [{"tool": "cart_add_item", "event": "ADD_ITEM"}, {"tool": "cart_checkout", "event": "CHECKOUT"}],
//	  "reachable": true, "instructions": ["The cart is empty. Add a product with cart_add_item."]}}
//
// The refusal is not the result's structuredContent: clients check that
// against the tool's output schema, error results included (the MCP
// TypeScript SDK throws on a mismatch, and the agent would never see the
// guidance).
//
// The path is the shortest sequence of calls of the server's tools (and of
// workflow_transition with the events it may send, and waits for the
// result of an actor an active state invokes: "wait for "suite" (running
// in the background) to finish", a [Step] with Actor set; see "Jobs")
// that makes the tool visible, found by a breadth-first search over the
// machine's transitions (its [statechart.Node] list) from the current
// configuration, with XState's rules for hierarchy, parallel regions,
// eventless transitions and done events. Guards cannot be evaluated ahead
// of time (they may depend on arguments not yet chosen), so the search
// assumes every guard may pass or fail: each outcome is explored, the path
// found is the shortest that can work, and each step lists the guards it
// relies on ("call cart_checkout (if guard "hasStock" allows)"). History
// states are entered by default; context is not modelled; the search stops
// after 4,096 configurations or 64 steps. When no sequence makes the tool
// available (say, in a final state), reachable is false.
//
// The codes: CodeForbidden (hidden), CodeCallLimit (a used-up budget),
// CodeEventRefused (guards refuse the tool's event, see "The event"),
// CodeWorkflowBusy (another call held the workflow too long, see
// "Concurrent calls"), CodeTooLarge and CodeWorkflowError (see "Bounds"),
// CodeWorkflowRequired and CodeUnknownWorkflow (handles),
// CodeWorkflowExpired (see "Expiry") and CodeRateLimited (the start tool).
//
// A name the server does not have is not refused: the server answers with
// its own "unknown tool" error.
//
// # Names the server does not have, and DefaultDeny
//
// A tool that the machine does not name is always visible, so a misspelt
// name in meta.mcp.tools would leave the tool it meant ungated. The gate
// checks the names the machine and the Go bindings give against the
// server's tools when it first lists or calls them, and logs each name
// that matches no tool once, at Error level, with its JSON path and a
// did-you-mean; [Gate.CheckTools] returns them, and `chartgate validate
// --tools a,b,c` prints them. [Options.DefaultDeny] (recommended) goes
// further: a tool the workflow does not name is refused like a tool of
// another state, unless the root state's meta.mcp.ungated (or
// [Options.Ungated]) lists it.
//
// # Workflow tools
//
// [Gate.AddWorkflowTools] adds two always-visible tools for the agent
// (Statewright's get_state and transition): workflow_status (state, visible
// tools, events it can send now, the calls used of each active maxCalls
// budget, instructions of the active states) and workflow_transition
// {"event", "data"}, which sends an event explicitly; the machine's guards
// decide, reading data as event.input. By default workflow_transition may
// send only the events no tool sends, so that it cannot be used to skip a
// tool (say, PAY without calling cart_pay). Neither counts against a
// budget. With workflow handles both take the workflow_id too.
//
// # Concurrent calls
//
// A call of a tool that sends an event runs exactly when the workflow
// allows it, even when calls come at once, from one session or through
// several server instances sharing a store: a tool the workflow allows once
// runs once. Every gated call, and every event from outside MCP (Send, an
// approval's grant, a job's result, a hook's Commit), goes through the
// same steps, composed once by gate.Do (internal/core's steps.go
// implements them):
//
//	resolve    which workflow: the session's, or the one its workflow_id names
//	load       its state, delayed transitions applied
//	authorize  visible, within its budget, arguments and event acceptable
//	reserve    counted against budgets; a call that may send an event takes the workflow's lease
//	run        the tool's handler (the next handler of the chain)
//	commit     the event sent, the new state saved, the lease released, in one write
//	notify     list_changed, invalidations, the log, OnTransition
//
// authorize runs the tool's event through the engine with the call's
// arguments; commit saves the state it computed when the workflow is
// still in the state authorize saw (under the lease it is) and the event
// is the same: the tool gave no structured result (or the engine ignores
// event data, as the flat engine does). Otherwise commit runs the event
// again, with the result as event.output. Delayed transitions the event
// schedules then count from the authorization.
//
// The lease is kept in the workflow's record in the store, so it holds
// across instances: an id (the holder's fencing token) and an expiry,
// [Options.LeaseTTL] (30 s), renewed while the tool runs. While it is
// live, another call of the workflow that may send an event waits (the
// gate wakes it when a call of the same process releases the lease, and
// polls a lease held by another instance), then is authorized again
// against the new state: the second of two concurrent calls of a
// once-only tool is refused with CodeForbidden, as it would have been
// after the first. A call that waited [Options.BusyWait] (30 s) is
// refused with CodeWorkflowBusy, not run. Calls of tools that send no event
// take no lease and never wait. workflow_transition takes the lease too.
// A session without an id (stdio's, with no [Options.SessionKey]) is kept
// under a key only this gate can name, so when its machine has no jobs
// and its store says its records never expire (a TTL method that returns
// 0, as a sqlitestore.Store's without a TTL), the gate holds its lease
// in the process instead (it dies with the process, and the session with
// it) and the call writes the store once, at its commit, if the state it
// was authorized on is the newest this process saved or loaded.
// If an instance dies during a call, its lease expires after LeaseTTL and
// the workflow goes on; its tool's event is lost with it. A holder whose
// lease expired and was taken meanwhile (its store was unreachable for a
// whole LeaseTTL) still records its event, on the newer state, and logs a
// warning.
//
// The commit is a compare-and-swap: on a conflict (a call counted against
// a budget, a renewal) the gate reloads and applies the event again to the
// newer state; [Options.MaxRetries] bounds the attempts.
//
// If the store fails when a call starts or is reserved, the call is
// refused with a JSON-RPC internal error before the handler runs ("the
// tool was not run"), and tools/list fails likewise. If saving fails after
// the handler ran (a store error, or more than MaxRetries conflicts), the
// tool's result is returned as it is (the tool did its work), with a note
// appended to its content and, under [MetaKey] in _meta, {"code":
// "STATE_NOT_SAVED", "event", "state"}; the error is logged; the workflow
// stays where it was, its lease expires after LeaseTTL, and no
// list_changed is sent. Saving is not cut short by the cancellation of the
// request (it has [Options.StoreTimeout]).
//
// The tests prove it: a property test runs random machines with several
// goroutines calling random tools at once, through one instance, two
// instances on one memory store and two on a real Redis, and checks that
// the handlers' log is a run of the machine made one call at a time.
//
// # Bounds
//
// What could fail once a tool has run is checked before it runs. A gated
// call whose arguments are larger than [Options.MaxArgumentBytes] (1 MiB)
// or nested deeper than 64 levels is refused with CodeTooLarge; so is a
// call after which the workflow's record would be larger than
// [Options.MaxRecordBytes] (4 MiB; the check uses the state the call's
// event gives without the result, not known yet). A call whose event the
// machine fails on (a Go guard or action returns an error) is refused
// with CodeWorkflowError. History entries keep a value longer than 1 KiB
// as its digest ({"$digest": {"sha256", "bytes"}}), so an entry is at most
// 8 KiB and writing one cannot fail.
//
// # Store and expiry
//
// The state of each workflow lives in a [Store]: versioned Load and
// CompareAndSwap. The default is a [MemoryStore]; a store shared by several
// instances (Redis, package mcpbind/redisstore; PostgreSQL, package
// mcpbind/pgstore) or processes (SQLite, package mcpbind/sqlitestore)
// implements the same interface, and package mcpbind/storetest checks an
// implementation against its contract. A store
// in process memory may implement [ValueStore] too, as [MemoryStore] does:
// it then holds the gate's records as Go values, and a call neither
// encodes nor decodes its workflow's record.
//
// A workflow that existed is never started again silently: whatever it had
// allowed once would be allowed again. A store never evicts a live record
// to make room (a [MemoryStore] holds at most MaxEntries records and
// MaxBytes bytes, and refuses new ones with [ErrStoreFull]: the gate then
// refuses to start a workflow, and the workflows it holds go on). A
// record may expire after a time without use (the memory store's sliding
// TTL, 24 h; Redis's TTL, refreshed by loads and writes; SQLite's and
// PostgreSQL's, from the last write, off by default); a session whose
// workflow expired is refused with CodeWorkflowExpired, and a handle with
// CodeUnknownWorkflow. A store that implements [Keeper] (the memory store)
// keeps the record of a live session until the session ends, however long
// it is idle. [Options.StartLimit] limits how often each client may call
// the start tool, so that no client can fill the store.
//
// With [Options.WorkflowVersion] set, each record is stamped with the
// version of the workflow that saved it. A gate of another version takes
// over a record whose active states (by state id) it has, and stamps it
// with its own at the next save; it refuses one whose active states it
// has not with a [*VersionError] naming them (and the chartgate reset
// command), never restarting the workflow silently.
//
// Logs never carry a workflow id or a session id (bearer tokens): they
// name a workflow by the first 12 hex digits of its store key's SHA-256.

// # Several instances: the change feed
//
// A store that implements [Watcher] reports the writes of its records: the
// Postgres store those of every instance on its database (LISTEN/NOTIFY),
// the Redis store those of every instance on its Redis (pub/sub), the
// SQLite store those of every process on its file (it polls the file's
// version counter five times a second while watched), the memory store
// those made through it, in its process. A
// gate attached to a server ([Gate.Attach]) watches its store until
// [Gate.Close]. When a workflow's record is written by anything but the
// call of one of this instance's sessions (another instance's call, an
// approval with `chartgate approve`, [Gate.Send], a job's result), the
// gate loads the new state and sends notifications/tools/list_changed to
// each session of this instance whose workflow it is and whose visible
// tools differ from those of the state the gate last knew it in; the
// session whose call wrote it gets one, in the call, not two. Sessions of
// protocol 2026-07-28, handles and every session with
// [Options.ListAllTools] get none (their lists do not vary).
// When the new state's instructions differ, each such session is also
// sent them as a notifications/message from the logger [GuidanceLogger],
// data {"state", "instructions"}: MCP lets a server send a log message
// unasked, and the SDK sends it only to a client that set a log level
// (logging/setLevel). 2026-07-28 deprecates logging (SEP-2577): its
// sessions get none, and read the new state in their next answer. The feed is best effort: a change missed (a watcher's connection lost, more
// than 1,024 changes queued) reaches a session at its next request, as it
// would without a feed. A workflow the gate knows no earlier state of is
// compared with the state it last decoded for its sessions, else with
// the initial state.
//
// # With statesync
//
// Package statesync tells the model which tool results it may keep
// ([Cache-Control: …] in tools/list) and which are stale after a call (a
// "[System: Cache invalidated for … — caused by …]" notice). Both run in
// one go-sdk middleware chain, the statesync layer wrapping the gate:
//
//	layer, _ := statesync.New(policies, &statesync.Options{Default: statesync.NoStore})
//	gate.AttachWith(server, layer) // = gate.Attach(server); server.AddReceivingMiddleware(layer.Middleware)
//
// In that order there is no double work: tools/list is filtered by the
// gate first, so the layer resolves and decorates only the visible tools;
// a refused call is an IsError result, which the layer leaves alone.
//
// A binding can also declare what the transition its tool causes makes
// stale: [Binding.Invalidates] in Go, or meta.mcp.invalidates in the JSON
// (tool -> list of tool patterns, machine-wide like events; the lists
// several states give one tool add up, and the tool must send an event).
// The patterns are validated when the gate is built or the tool bound
// (by the rule of tool patterns), with their JSON paths:
//
//	states.payment.meta.mcp.invalidates.cart_pay[0]: "cart pay" is not a tool name or pattern: use letters, digits, "_", "-", "." and "*"
//
// After a call whose event the machine accepted and whose new state the
// gate saved, the gate calls [statesync.Invalidate] with them on the
// request's context; the layer merges them, after the tool's own policy
// patterns and without duplicates, into the call's one notice, [statesync.Event]
// and set of notifications:
//
//	[System: Cache invalidated for cart.* — caused by cart.checkout]
//
// A refused call, a failed call (no event is sent) and a transition that
// was not saved (STATE_NOT_SAVED) invalidate nothing. "Saved" is the test,
// not "the state value changed": a transition without a target whose
// actions changed the context is saved, and invalidates, because the
// workflow (and what the tools read from it) did change; an event the
// machine ignores, or that leaves the persisted state byte for byte as it
// was, saves nothing and invalidates nothing. What every successful call
// of a tool changes, whatever the workflow does, belongs in a statesync
// policy or tool option, not in the binding.
//
// A layer installed inside the gate (added before [Gate.Attach]) cannot
// receive these patterns: Invalidate returns [statesync.ErrNoLayer], and
// the gate logs at Warn level, once, that a binding declares patterns but
// no layer wraps it. The same happens when no layer is configured; the
// gate otherwise works as usual.
//
// # Call limits
//
// A state's meta.mcp.maxCalls bounds the calls of the workflow's tools (the
// bound ones: unbound tools and the workflow tools are not counted) that
// may run while the state is active. Each call that runs counts, whatever
// its result; it is counted in the store, with compare-and-swap, before
// the handler runs, so concurrent calls never exceed the budget. Once the
// budget is used up, only tools that take the workflow out of the state
// may run: tools whose event, sent with the call's arguments, leaves it.
// The others are hidden (the session gets notifications/tools/list_changed
// when the last call is used) and refused with code CALL_LIMIT and the
// tools that remain. The count starts again when the state is entered
// again after it was left; a transition that leaves and re-enters the
// state in one step does not reset it. workflow_status shows the calls
// used of each active budget.
//
// # Approvals
//
// A transition may wait for a person: the machine moves to a state whose
// meta.mcp.approval describes it ({"event", "from", "to", "message"}) and
// which leaves on the reserved events [EventApprove] and [EventReject]
// (the Statewright compiler of package workflow writes requires_approval
// so). When a save enters such a state, the gate makes a pending approval
// ([PendingApproval]) and keeps it in the workflow's record, so that it
// survives restarts and every instance sharing the store sees it: a
// random id (40 hex digits, 160 bits), the transition, when it was asked,
// and when it expires ([Options.ApprovalTTL], default 24 h). The id is in
// every message about it: workflow_transition's answer and refusals
// ("A transition is pending approval <id>: …"), workflow_status, the
// hooks' phase text, chartgate status and approve.
//
// While it waits, workflow_transition refuses every event, and the agent
// cannot answer it: no tool may send a chartgate.* event, workflow_transition
// refuses them, and [Gate.Send] cannot send them either (checked in the
// compare-and-swap that would save the event). It is answered once,
// through one of these channels, each recorded in the run history as an
// [ApprovalGrant] ({id, approved, by, channel, authenticated}):
//
//   - "elicitation": with [Options.ElicitApprovals], under protocol
//     versions before 2026-07-28, the gate asks the client's user by MCP
//     elicitation (a form with one boolean) when the client supports it.
//   - "input-required": under 2026-07-28, where a server may not send
//     requests of its own, the answer to the parking workflow_transition
//     call is an input-required result (SEP-2322) carrying the same form;
//     the client asks its user and retries the call with the answer and
//     the result's request state. The gate keeps the SHA-256 of a random
//     part of that request state in the approval, so only the retry of
//     the question it asked is applied.
//   - "command": [Gate.Approve] (behind chartgate approve) applies a
//     [Grant] only if its token, [ApprovalToken] = HMAC-SHA256(key,
//     id|decision|by|time), verifies with [Options.ApproverKey] and is
//     dated within 5 minutes of the gate's clock. chartgate approve reads
//     the key from the user's configuration directory and asks for
//     confirmation on the terminal.
//
// By is authenticated when it is proven rather than claimed: the OS user
// running chartgate approve, or the user an MCP request's authorization
// (TokenInfo.UserID) names; the MCP channels otherwise record "user".
// A declined or dismissed question leaves the approval pending. A grant of
// an id the workflow no longer waits for fails with [ErrApprovalUsed]
// (the run history says when and how it was answered) or
// [ErrUnknownApproval]; rejecting or approving makes the id useless, and
// asking again (the agent sends the event again after a rejection) makes a
// new one. An expired approval cannot be approved: an attempt rejects it
// (channel "expiry", the workflow goes back to From) and fails with
// [ErrApprovalExpired]; it can still be rejected.
//
// A host's own confirmation prompt (Claude Code's PreToolUse "ask") is not
// a channel, because the gate could not tell that a person answered it.
// The hook's payload gives the session's permission_mode, not who will
// resolve the "ask": Claude Code resolves it without a person in its auto
// mode (a classifier), through PermissionRequest hooks, through the Agent
// SDK's canUseTool callback and in headless runs with
// --permission-prompt-tool (a program), and approves it outright under
// bypassPermissions. And the tools/call that then reaches the gateway
// carries nothing that ties it to the tool use that was asked about
// (the hook sees tool_use_id, the MCP request does not), so a call made
// another way after a refused prompt would be taken for an approved one.
// A host could be a channel if it passed the person's answer to the MCP
// server bound to the call, as MCP elicitation and input-required do;
// none of the hosts package hook supports is known to.
//
// # Threat model
//
// The agent is assumed to use every tool its state allows, creatively,
// against the gate. Through those tools it cannot approve a transition
// (above), send a reserved event, or move the workflow other than by the
// events its state accepts; the store, the workflow file, chartgate's
// configuration and the hosts' hook and MCP configuration are out of its
// reach only as far as the hooks' shell and file policy keeps them so
// (package hook and shellpolicy: commands that run chartgate, and any
// access to the store, to the approver key's directory and to the hosts'
// configuration, are refused in every state).
//
// What needs OS isolation: an agent whose state lets it run arbitrary
// programs (a script it wrote, python x.py, a test runner) runs them as
// the same OS user as the person. Such a program can read the approver
// key and sign its own grants, write the store, or speak MCP to the
// gateway as a client of its own and answer the gate's questions itself:
// no check inside chartgate tells that program from the person. The line
// is there: give such states only to agents whose host runs their shell
// in an OS sandbox that denies the user's configuration directory
// ($XDG_CONFIG_HOME/chartgate, ~/.config/chartgate), the project's
// .chartgate directory and the gateway's endpoint (or run the agent as
// another OS user), or do not allow arbitrary programs in states where an
// approval matters. chartgate approve asks on the controlling terminal,
// which a program the agent starts may share: its question names the
// workflow and the transition, and a person answers only a question they
// asked for. The MCP channels trust the client to show the
// question to its user, as the protocol intends; a gateway served over
// HTTP should require authorization, so that its approvals name an
// authenticated user.
//
// # Events from outside a call
//
// Gate implements [gate.Decider], the transport-free face of the gate that
// package hook uses: [Gate.Decide] decides a [gate.Request] (a tool, its
// arguments, the workflow its [Ref] names) as a tools/call would be
// decided, and returns the refusal as a structure with its text, not as
// an MCP result; [Gate.Commit] records a tool that ran outside MCP with
// its [gate.Outcome]. [Gate.Check] and [Gate.Record] are the same with a
// [Host] and an MCP result. The store contract, the workflow, transition
// and approval types, [Refusal] and [StateMCP] are package gate's, named
// here by type aliases.
//
// Decide holds nothing: a hook's tool runs in another process, whatever
// happened in between. A caller that runs the tool itself, in the same
// process, gets what a tools/call gets with [Gate.Reserve]: the decision
// and, if allowed, a [Reservation] that counts the call against the
// budgets and, for a tool that may send an event, holds the workflow's
// lease (renewed while it is held); [Reservation.Commit] records the
// tool's [gate.Outcome] and releases it, and must be called once, also
// for a tool that did not run (Failed).
//
// [Gate.Send] sends an event to a workflow named by a [Ref] (its workflow
// id, or the name [Options.SessionKey] gives a session) from outside an MCP
// request: an interrupt a gateway detects, a host's hook reporting a tool
// it ran. It takes the workflow's lease like a call, and the transition is
// recorded with its sender. While a call of the workflow holds the lease,
// Send waits for it, up to [Options.BusyWait], and then fails with
// [ErrWorkflowBusy]: an event is never dropped as if it had changed
// nothing.
//
// # Callbacks
//
// The functions of [Options] (OnTransition, AfterCall, CheckpointNotice,
// SessionKey, Now) and [StartLimit].Client are the caller's code, run
// inside the gate's calls. One that panics is recovered: the panic is
// logged at Error level ("mcpbind: a callback panicked", with callback
// "Options.<name>", the panic and the stack), and the gate goes on
// without it for that call: OnTransition is called after the transition
// is saved, so the transition stands and the call is answered with it;
// AfterCall's follow-up events are not sent (the call's own event is
// recorded); CheckpointNotice's default notice is written; a SessionKey
// that panics gives "" (the session's own workflow); Now gives
// time.Now(); StartLimit.Client gives "" (the clients without a name
// share one limit). The server keeps serving every session.
//
// # Jobs: actors a state invokes
//
// A state of a machine compiled by the full interpreter may invoke an
// actor whose logic is a Go [statechart.Promise] (a long test run, a
// deployment): the gate runs it as a job, off the request. For example,
// run_tests's success enters "testing", whose job runs the suite; deploy
// is hidden until the job's result moves the workflow:
//
//	"testing": {
//	  "invoke": {"id": "suite", "src": "runSuite", "input": {"$ref": "event.input"},
//	             "onDone": "green", "onError": "red"},
//	  "meta": {"mcp": {"tools": ["cancel_tests"]}}
//	},
//	"green": {"meta": {"mcp": {"tools": ["deploy"]}}}
//
// with the logic in the machine's implementations
// (statechart.Implementations{Actors: {"runSuite": statechart.Promise(f)}}).
// examples/deploy is a complete program.
//
// The snapshot the gate saves is the truth about jobs: its active promise
// children with Go logic (child machines' included) are the jobs the
// workflow runs. Whenever the gate saves a workflow (a tool's transition,
// workflow_transition, Send, an approval, a start), it claims in the same
// compare-and-swap each such child that no instance holds: a lease in the
// workflow's record ({"session", "id", "until"} under "jobs"), like the
// lease of a call, with [Options.LeaseTTL]. Once the save succeeded, the
// gate that claimed the job runs the function in a goroutine of its own
// with the child's input, and renews the lease every third of LeaseTTL.
// When the function returns, its result goes to the workflow through the
// steps of a call: load, reserve (it waits for a call that holds the
// workflow, like [Gate.Send]), commit, where the engine's Deliver
// processes xstate.done.actor.<id> (event.output) or
// xstate.error.actor.<id> (event.error), with compare-and-swap and
// retries, then notify: the run history (By "actor:<id>"), the log,
// OnTransition, and notifications/tools/list_changed to the session that
// owns the workflow if its tools changed (the sessions of this process
// whose workflow it is: the session that saved it, or those
// [Options.SessionKey] names so; a workflow named by a handle has none).
// A result that is not JSON is delivered as an error.
//
// A job ends with its child: when the workflow leaves the invoking state
// (or the session's workflow ends), the job's ctx is cancelled and its
// result, if it still comes, is dropped. A job of this process learns it
// at once when this process saved the change, otherwise at its next
// renewal.
//
// Exactly once: a result moves the workflow only while the child it names
// (by its session in the actor system, new for each start) still runs;
// once one result is saved, the child is over, and any other result for
// it (a run of the job an instance started again after the first one's
// lease expired) finds no child and changes nothing, which the gate logs.
// Each run of a job is a fresh call of its function: make the work
// idempotent or tolerant of a repeated run.
//
// Resuming: if the instance running a job dies, or [Gate.Close] stops it,
// the job's lease expires after LeaseTTL. [Gate.ResumeJobs] (with a store
// that implements [Lister]; periodically with [Options.ResumeJobsEvery])
// then claims and starts it again in the calling instance, from the start
// with its persisted input, as XState restarts a promise child of a
// restored snapshot; so does the next save of the workflow by any
// instance. With a store shared by several instances (mcpbind/redisstore,
// mcpbind/sqlitestore) the job survives the instance; with a MemoryStore
// it survives a Close, not the process.
//
// Only Go promises run as jobs. Callback actors, the declarative
// "promise" and "callback" of [statechart.ParseImplementations] and
// logic left nil (statechart.Promise(nil): run elsewhere, its result
// given with the engine's Deliver) are kept as children in the snapshot
// and not run by the gate; child machines run inside each transition, as
// the engine does. [Gate.Close] stops the jobs of a gate and waits for
// their functions to return (they must honour their ctx); the gate claims
// no job after it.
//
// # Run history
//
// Every saved transition is kept in the workflow's record in the store (the
// newest [Options.HistoryLimit], 20 by default), passed to
// [Options.OnTransition] and logged at Info level ("mcpbind: transition",
// with key, tool, event, from and to). [Gate.SessionWorkflow] and
// [Gate.Workflow] return it as [Transition] values: tool, event (with the
// call's arguments and result as data), from, to and time.
//
// The record is JSON: {"state": <the engine's persisted state>, "calls":
// {"<state id>": n}, "history": [{"tool", "event", "from", "to", "time"},
// ...]}, with "lease" while a call holds the workflow and "jobs" while
// jobs run (see "Jobs"); "calls", "history" and "jobs" are omitted when
// empty.
//
// # Protocol versions and workflow handles
//
// Protocol versions up to 2025-11-25 have sessions, and the gate works as
// described above: one workflow per session, filtered lists,
// list_changed. Protocol 2026-07-28 removed sessions and forbids tool lists
// that vary per connection or as a side effect of calls.
//
// Over stdio or an in-memory transport one connection serves one client,
// and by default ([HandlesAuto]) the connection carries one workflow under
// every protocol, as a session does (the one [Options.SessionKey] names,
// or the connection's own). Under 2026-07-28 tools/list lists every tool
// but workflow_start, the same at every call (no list_changed), each gated
// tool with a sentence in its description saying in which states it
// works; a call is refused by the connection's state, as in a session,
// and never sent to workflow_start.
//
// [Options.ListAllTools] serves sessions of every protocol so: the full
// list above, the same at every call, no list_changed for the tools, and
// a call refused by the session's state with the refusal a session gets.
// It is for clients that read a server's tools once and ignore
// list_changed (Codex 0.171): with a list that follows the state, a tool
// that only a later state allows is never known to them, hence never
// callable. The agent learns what it may call now from each refusal (the
// tools available now, and the path to the tool) and from
// workflow_status. Guidance log messages to the sessions of older
// protocols are sent as without the option.
//
// Over Streamable HTTP a request of 2026-07-28 has no session that lasts.
// For such requests (by default, [HandlesAuto]) the gate keys workflows by
// explicit handles:
//
//   - [Gate.Attach] adds a start tool, workflow_start, which starts a
//     workflow, saves it in the store and returns its workflow_id (128
//     random bits), its state and the tools available in it
//     ([WorkflowStart]). Sessions of older protocols do not see it.
//   - tools/list lists every tool, the same for every client. Each gated
//     tool (and workflow_status and workflow_transition) gets a required
//     workflow_id argument in its input schema and a sentence in its
//     description saying in which states it works.
//   - A call of a gated tool is gated by the workflow its workflow_id names.
//     The gate removes the argument before the handler runs (the handler
//     validates its own arguments) and passes the id in the context:
//     [WorkflowID]. A call without a workflow_id is refused with code
//     WORKFLOW_REQUIRED, one with an id that names no workflow (never
//     started, or expired from the store) with UNKNOWN_WORKFLOW; both say
//     to call workflow_start. A hidden tool is refused as above (FORBIDDEN,
//     with the path).
//   - No list_changed is sent: the list never changes.
//
// Nothing of a workflow lives in the server process, so the handle mode
// also serves a stateless Streamable HTTP server
// (mcp.StreamableHTTPOptions{Stateless: true}) behind several instances
// that share a store (mcpbind/redisstore): any instance serves any call.
//
// A gate never fails open on a stateless server. It learns that a request
// has no session that outlives it from the request itself: it came over
// HTTP (it has headers) in a session without an id, which is what a
// stateless Streamable HTTP server makes for every request. Such requests
// use handles whatever their protocol (unless [Options.SessionKey] names
// their workflow), and their initialize result advertises no listChanged.
// [HandlesAlways] uses handles for every request, [HandlesNever] for none:
// then requests of protocol 2026-07-28 over a persistent connection see
// every tool listed and are gated by their connection, and gated calls of
// a stateless server are refused (a JSON-RPC error, logged once).
//
// A request's protocol is the version in its own _meta: a client that asks
// for 2026-07-28 in an initialize handshake is answered with an older
// version, and is served as a session of that version. A tool list that
// depends on the session's workflow carries cacheScope "private" (and
// ttlMs 0); the list of handle mode, the same for every client, stays
// public.
package mcpbind
