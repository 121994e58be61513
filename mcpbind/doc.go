// Package mcpbind will bind a statechart to an MCP server built with the
// official go-sdk, so that each session sees only the tools its workflow
// state allows. It is not implemented yet; see the project's issues.
package mcpbind
