// Package statesync will add cache-control signals and causal invalidation
// notices to MCP tools built with the official go-sdk. It is not
// implemented yet; see the project's issues.
package statesync
