// This file runs `chartgate hook` itself, outside Linux, where the client
// cannot check who listens on the daemon's socket.

//go:build !linux

package main

// run runs `chartgate hook` with the client's arguments.
func run(chartgate string, args []string) int {
	return execFull(chartgate, args)
}
