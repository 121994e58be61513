// Package gate is chartgate's transport-free core: what a gate decides and
// keeps, with no MCP type in it, so that a front door that is not an MCP
// server (an agent host's hooks, package hook) reaches the gate without
// linking an MCP SDK.
//
// It holds:
//
//   - the request to act and its answer: a [Request] (which workflow, which
//     tool, its arguments, the caller's tools for guidance), the
//     [Decision] (allowed, or a [Refusal] with a code callers branch on,
//     the text for the model, the tools available now, the path to the
//     tool and the instructions of the active states), the [Outcome] a
//     caller commits once the tool ran, and [Decider], the interface that
//     decides, commits, sends events and reads workflows;
//   - the store contract: [Store] (versioned Load and CompareAndSwap),
//     [ValueStore], [Keeper], [Lister], the change feed ([Watcher],
//     [FuncWatcher], [Change], [Feed]) and [MemoryStore]; packages
//     mcpbind/sqlitestore, mcpbind/redisstore and mcpbind/pgstore
//     implement it, and mcpbind/storetest checks an implementation;
//     [Core], a gate's access to its store (a record's load and
//     compare-and-swap, with or without waiting for the disk, and the
//     retries, with backoff, of a write that lost a conflict);
//   - what a gate keeps of a workflow and reports: [Ref], [Workflow],
//     [Transition], [WorkflowInfo], [WorkflowStatus], [TransitionResult],
//     [CallLimit], [Step];
//   - approvals: [Approval], [PendingApproval], [Grant], [ApprovalGrant],
//     [ApprovalToken];
//   - the rules of a state's meta.mcp as callers read them ([StateMCP])
//     and the Go binding of a tool ([Binding]).
//
// Package mcpbind implements [Decider] (mcpbind.Gate) and is the go-sdk
// adapter: middleware, tools/list filtering, MCP result shapes for
// refusals, workflow handles, the MCP approval channels and the workflow
// tools. It names every type of this package under the same name (type
// aliases), so code written against mcpbind keeps compiling. The
// decisions are made by chartgate's internal/core package, which imports
// no MCP SDK: its Core implements [Decider] and runs every step, and
// mcpbind.Gate is its MCP front door.
//
// A request goes through the steps the README lists (resolve, load,
// authorize, reserve, run, commit, notify), composed once, by [Do], over
// the [Steps] a gate implements; every front door (the MCP middleware,
// the hooks, Send, an approval's grant, a job's result) calls it.
// [Decider.Decide] is [Decide]: resolve, load and authorize; the caller
// runs the tool; [Decider.Commit] is Do for a tool that already ran
// (authorize and run pass). A hook makes
// both calls in two processes, so Decide holds no lease across them: the
// tool runs whatever happened in between, and Commit records it. A caller
// that runs the tool in its own process splits Do at the run instead
// (mcpbind.Gate.Reserve: resolve to reserve; the Reservation's Commit:
// commit and notify), and holds the lease across it as a tools/call does.
package gate
