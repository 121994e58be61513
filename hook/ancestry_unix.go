// This file reads a process' ancestry with ps, on Unix systems other than
// Linux (macOS, the BSDs).

//go:build unix && !linux

package hook

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Ancestry returns the ancestry of the current process: its parent, the
// parent's parent and so on up to init (at most 64), each with its start
// time (Unix seconds) and command name, from one run of ps. It is empty
// when ps cannot be run.
func Ancestry() []Proc {
	return AncestryOf(os.Getpid())
}

// AncestryOf returns the ancestry process pid sees as its own (what
// [Ancestry] returns in it): its parent, the parent's parent and so on.
func AncestryOf(pid int) []Proc {
	out, err := exec.Command("ps", "-A", "-o", "pid=,ppid=,lstart=,comm=").Output()
	if err != nil {
		return nil
	}
	procs := map[int]Proc{}
	parents := map[int]int{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		// pid ppid Day Mon DD HH:MM:SS YYYY comm...
		if len(f) < 8 {
			continue
		}
		pid, err1 := strconv.Atoi(f[0])
		ppid, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil {
			continue
		}
		p := Proc{PID: pid, Name: strings.Join(f[7:], " ")}
		if t, err := time.ParseInLocation("Mon Jan 2 15:04:05 2006", strings.Join(f[2:7], " "), time.Local); err == nil {
			p.Start = uint64(t.Unix())
		}
		procs[pid], parents[pid] = p, ppid
	}
	var anc []Proc
	for pid := parents[pid]; len(anc) < 64 && pid > 0; pid = parents[pid] {
		p, ok := procs[pid]
		if !ok {
			break
		}
		anc = append(anc, p)
		if pid == 1 {
			break
		}
	}
	return anc
}
