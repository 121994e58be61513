// Package statesync adds cache-control signals and causal invalidation to
// MCP tools served with the official go-sdk
// (github.com/modelcontextprotocol/go-sdk/mcp).
//
// A model calling tools has no sense of time: after sprints_list and then
// sprints_create it still believes the list it read, and after tasks_update
// moves a task it still trusts the sprint's old task count. statesync gives
// it the two signals HTTP caches have taught it to read, following the State
// Sync layer of MCP Fusion:
//
//   - in tools/list, each description ends with its cache directive:
//     "List workspace sprints. [Cache-Control: no-store]" (re-read before
//     relying on it) or "List country codes. [Cache-Control: immutable]"
//     (never changes);
//   - after a successful call that changes data, the result starts with a
//     notice naming what is now stale and why:
//     "[System: Cache invalidated for tasks.*, sprints.* — caused by tasks.update]".
//
// # Policies
//
// A [Layer] is built from an ordered list of [Policy] values and [Options]:
//
//	layer, err := statesync.New([]statesync.Policy{
//		{Match: "sprints.update", Invalidates: []string{"sprints.*"}},
//		{Match: "sprints.create", Invalidates: []string{"sprints.*"}},
//		{Match: "sprints.delete", Invalidates: []string{"sprints.*"}},
//		{Match: "tasks.update", Invalidates: []string{"tasks.*", "sprints.*"}},
//		{Match: "countries.*", CacheControl: statesync.Immutable},
//	}, &statesync.Options{Default: statesync.NoStore})
//	if err != nil {
//		log.Fatal(err) // every bad policy, with its index
//	}
//	server.AddReceivingMiddleware(layer.Middleware)
//
// The first policy whose Match matches a tool wins, even one that sets
// nothing; a tool no policy matches gets [Options.Default] (none if empty).
// [New] validates everything at once and returns a *[ConfigError] listing
// every problem with its policy index: an empty match, a pattern with a
// character other than letters, digits, "_", "-", "." and "*", an unknown
// directive, a bad invalidates entry, a bad default.
//
// # Patterns
//
// Match and Invalidates are tool patterns ([Glob]) in the one language
// every chartgate tool pattern uses, defined in package internal/toolname
// (a workflow's meta.mcp tools, deny and invalidates, Statewright's
// allowed_tools, the gates): "*" matches any run of characters, none and
// dots included, and every other character matches itself. "sprints.*"
// matches sprints.get and sprints.tasks.get but not sprints; "*.get"
// matches a.b.c.get; "*" every name. So "cart.*" invalidates the same
// names, cart.items.list included, that it allows under a state's tools.
// This differs from MCP Fusion, whose "*" is one dot-separated segment and
// "**" any number of them: here "**" is the same as "*", so a pattern
// names at least the names it names there, except where Fusion's "**"
// stands for no segment at all (its "sprints.**" matches sprints, its
// "**.get" matches get; write "sprints*" or "*get" for those). For an
// invalidation, naming more is the safe direction. Matching never
// backtracks, with no iteration cap and so no false negatives.
//
// # Canonical keys
//
// Policies are written in the canonical dotted form group.action, whatever
// separator the tools' wire names use. By default ([GroupAction] with "_")
// sprints_update is read as sprints.update, tasks_move_to_sprint as
// tasks.move_to_sprint, and a name that already contains a dot as itself.
// [Options.Separator] changes the separator; [Options.Key] replaces the rule
// ([SplitAll] reads every separator as a dot). Notices and events name tools
// by their canonical name. [Layer.Unmatched] finds policies that match none
// of a server's tools, the symptom of a separator mismatch.
//
// # Per-tool options and precedence
//
// A tool can carry its own declaration where it is registered, with [Cached],
// [Stale] and [Invalidates]:
//
//	statesync.AddTool(server, layer, &mcp.Tool{Name: "countries_list"}, listCountries, statesync.Cached())
//	mcp.AddTool(server, layer.Tool(&mcp.Tool{Name: "sprints_create"}, statesync.Invalidates("sprints.*")), createSprint)
//
// Precedence, field by field (see [Layer.Resolve]):
//
//   - the cache directive is the tool's own [Cached] or [Stale] if it has one
//     (the last given wins), else that of the first matching policy, else
//     [Options.Default]: the declaration next to the tool is the most
//     specific statement about it;
//   - invalidation patterns add up, in order and without duplicates: the
//     first matching policy's, then the tool's own, then those a gate adds
//     during the call with [Invalidate]. Dropping an invalidation is the
//     unsafe direction, so nothing overrides one.
//
// Per-tool options do not take part in first-match-wins among policies.
//
// # Invalidation
//
// Only a completed, successful call invalidates: a result with IsError set,
// a protocol error, or a result still waiting for client input changes
// nothing, since the state did not change. The notice is prepended as
// content[0]; the rest of the result is kept, and the handler's result is
// never modified. [SystemNotice] is the default format and [XMLNotice] an
// XML-style alternative (<cache_invalidation cause="…" domains="…" />);
// [Options.Format] takes any function.
//
// [Options.OnInvalidation] observes each invalidation as an [Event] (cause,
// patterns, time, session); [Event.Stale] says whether it names a given
// tool's data stale. [Options.Sink] receives one
// notifications/resources/updated [Notification] per pattern, with the URI
// <scheme>://stale/<pattern> ([Options.URIScheme], default "statesync");
// [ServerSink] sends them to the sessions subscribed to that URI. A panic in
// an observer, a sink or a formatter is recovered and logged with log/slog,
// and the call is unaffected.
//
// # With a gate (mcpbind)
//
// A gate that hides tools by workflow state, such as package mcpbind, runs
// in the same middleware chain, inside the layer. The go-sdk runs
// middleware added later outside middleware added earlier, and the first of
// one call outermost, so install the gate first and the layer after it;
// with mcpbind, AttachWith does exactly that:
//
//	gate.AttachWith(server, layer) // = gate.Attach(server); server.AddReceivingMiddleware(layer.Middleware)
//
// tools/list results pass through the gate's filter before the layer
// decorates them, so hidden tools are never resolved or copied and each
// visible tool is decorated once. A call the gate refuses comes back as an
// IsError result and invalidates nothing.
//
// When an allowed call succeeds and the gate saves its statechart
// transition, the gate reports what that transition makes stale by calling
// [Invalidate](ctx, patterns...) with the request's context: with mcpbind,
// the patterns of the tool's binding (Binding.Invalidates, or
// "invalidates": {"cart_checkout": ["cart.*"]} in a state's meta.mcp).
// They join the tool's own patterns (policy first, then per-tool options,
// then the gate's) in a single notice, [Event] and set of notifications,
// without duplicates: a policy and a binding that both invalidate
// "cart.*" give
//
//	[System: Cache invalidated for cart.* — caused by cart.checkout]
//
// The gate checks its patterns with [ValidatePattern] when it is built.
// Invalidate returns [ErrNoLayer] when no layer wraps the call (none
// configured, or one installed inside the gate); mcpbind logs that once, so
// a misordered chain does not go unnoticed.
//
// # Overlaps
//
// [DetectOverlaps] decides, on the glob languages themselves, which policies
// can never match because earlier ones match every name they match
// ([Shadowed], including by several earlier policies together) and which
// pairs compete for some names ([Partial], with an example name). An
// exception written before its rule ("sprints.get" before "sprints.*") is
// not reported. [New] runs it, logs each finding at Warn level, and keeps
// them for [Layer.Overlaps].
//
// # Costs and bounds
//
// Resolutions are cached per wire name in a least-recently-used cache of
// [DefaultCacheSize] entries ([Options.CacheSize]); a full cache evicts one
// entry, never everything. A cached resolution costs a map lookup under a
// mutex; decorating a tools/list reuses the copies made for unchanged tools.
// A nil *Layer is valid and does nothing, so leaving the layer unconfigured
// costs nothing.
package statesync
