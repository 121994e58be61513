// Package core holds the parts of chartgate's gate that need no MCP type;
// package mcpbind builds the gate (mcpbind.Gate) on them, with the MCP
// sessions and the translation of MCP requests and results. The step
// bodies (load, authorize, reserve, commit, approvals, jobs) are still in
// mcpbind, as methods of the part of mcpbind.Gate that holds no MCP type
// (gateCore); the composition of the steps is in package gate (gate.Do).
//
// It holds:
//
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
