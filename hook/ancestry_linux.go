// This file reads a process' ancestry from /proc, on Linux.

//go:build linux

package hook

import (
	"bytes"
	"os"
	"strconv"
)

// Ancestry returns the ancestry of the current process: its parent, the
// parent's parent and so on up to init (at most 64), each with its start
// time and command name, read from /proc. It is empty where /proc cannot
// be read.
func Ancestry() []Proc {
	return ancestryOf(os.Getppid())
}

// AncestryOf returns the ancestry process pid sees as its own (what
// [Ancestry] returns in it): its parent, the parent's parent and so on.
// The hook daemon answers a client's event with its client's.
func AncestryOf(pid int) []Proc {
	if _, ppid, ok := readProc(pid); ok {
		return ancestryOf(ppid)
	}
	return nil
}

func ancestryOf(pid int) []Proc {
	var out []Proc
	for len(out) < 64 && pid > 0 {
		p, ppid, ok := readProc(pid)
		if !ok {
			break
		}
		out = append(out, p)
		if pid == 1 {
			break
		}
		pid = ppid
	}
	return out
}

// readProc reads /proc/<pid>/stat: "pid (comm) state ppid ... starttime"
// (the comm may hold spaces and parentheses; it ends at the last ")").
func readProc(pid int) (Proc, int, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Proc{}, 0, false
	}
	open, end := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
	if open < 0 || end < open {
		return Proc{}, 0, false
	}
	fields := bytes.Fields(data[end+1:])
	// fields[0] is the state (field 3 of stat), so field n is fields[n-3].
	if len(fields) < 20 {
		return Proc{}, 0, false
	}
	ppid, err1 := strconv.Atoi(string(fields[1]))
	start, err2 := strconv.ParseUint(string(fields[19]), 10, 64)
	if err1 != nil || err2 != nil {
		return Proc{}, 0, false
	}
	return Proc{PID: pid, Start: start, Name: string(data[open+1 : end])}, ppid, true
}
