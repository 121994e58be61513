// Command chartgate-hook is a quick client of `chartgate hook`:
//
//	chartgate-hook HOST [the flags of chartgate hook] < EVENT.json
//
// answers a hook event of an agent host exactly as `chartgate hook HOST`
// does, by sending it to the user's hook daemon (`chartgate hook-daemon`),
// which keeps the projects' workflows and stores open, instead of starting
// chartgate and its SQLite driver for each event. It is linked with the
// standard library only, so that it starts about as fast as a trivial
// program.
//
// It runs the chartgate program in its own folder. When no daemon
// answers, it starts one for the next events and runs `chartgate hook`
// itself for this one; it does the same when the socket's peer is not
// that chartgate program run by the same user (on Linux, from
// SO_PEERCRED and /proc/PID/exe), and everywhere else than on Linux. An
// event sent to the daemon whose answer is lost is never decided again
// (a tool's result must not count twice): it gets the answer of an event
// that could not be decided (a pre tool event is refused).
package main

import (
	"os"
	"path/filepath"
	"runtime"
)

func main() {
	chartgate, err := sibling()
	if err != nil {
		os.Stderr.WriteString("chartgate-hook: " + err.Error() + "\n")
		os.Exit(1)
	}
	os.Exit(run(chartgate, os.Args[1:]))
}

// sibling returns the chartgate program in this program's folder.
func sibling() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return "", err
	}
	name := "chartgate"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	return filepath.Join(filepath.Dir(exe), name), nil
}

// hookArgv is the command line of `chartgate hook` with the client's
// arguments.
func hookArgv(chartgate string, args []string) []string {
	return append([]string{chartgate, "hook"}, args...)
}
