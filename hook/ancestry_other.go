// This file stands for a process' ancestry where it cannot be read.

//go:build !unix

package hook

// Ancestry returns nothing on systems whose process tree the package does
// not read (Windows): the gateway then takes the session seen last.
func Ancestry() []Proc { return nil }

// AncestryOf returns nothing, as [Ancestry].
func AncestryOf(pid int) []Proc { return nil }
