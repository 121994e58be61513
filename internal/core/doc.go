// Package core is chartgate's decision core: the gate in no transport's
// terms. [Core] takes a request to act (a [Call]: which workflow, which
// tool or event, its arguments, who asks) through the steps that
// gate.Do composes (resolve, load, authorize, reserve, run, commit,
// notify; [Steps]) and answers with a decision; it implements
// gate.Decider (Decide, Commit, Send) and Approve and Reserve. Package
// mcpbind builds mcpbind.Gate on it: the MCP sessions, tool lists and
// notifications, and a front door ([Door]) that translates a tools/call in
// and its answer out; the hooks and chartgate approve use the Core as it
// is, with no door.
//
// It holds:
//
//   - the Core ([New], [Options]) and its steps: loading and saving a
//     workflow's record with compare-and-swap ([View]), authorizing a
//     call (visibility, budgets, arguments, the event's guards),
//     reserving the workflow's lease, committing the event, refusals and
//     their guidance, approvals, the jobs that run promise children, the
//     store keys of sessions ([Conn]) and the store's change feed;
//   - the record a gate keeps in its [gate.Store] for each workflow
//     ([Record]): the engine's persisted state, the call counts of states
//     with maxCalls, the bounded run history, the lease of a call in
//     progress ([Lease]), the claims on running jobs ([JobLease]) and
//     the pending approval ([ApprovalRecord]), with their encoding
//     ([Record.Encode], [DecodeRecord]) and the history's entries
//     ([AppendTransition], [AppendHistory], [DecodeHistory]);
//   - the reading and checking of every state's meta.mcp ([ParseMCP],
//     [NodePaths], [MachineEvents]) and of tool names and globs
//     ([CheckToolName], [MatchGlob]);
//   - how one tool is gated ([ToolInfo]) over sets of state nodes
//     ([Bitset]);
//   - the structure of the machine ([Model]) that decides which tools a
//     configuration could show ([Model.StructurallyVisible]) and finds a
//     refusal's shortest path to a state that allows the tool
//     ([Model.ShortestPath]);
//   - the context of the work that records a call after its tool ran
//     ([AfterRun]).
//
// The package is internal: what it exports is for chartgate's own front
// doors (mcpbind, the gateway, the hooks), not part of chartgate's API,
// whose public types are in package gate. It imports no MCP SDK
// (gate.TestNoMCPDependency).
package core
