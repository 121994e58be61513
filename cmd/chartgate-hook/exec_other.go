//go:build !unix

package main

import "os"

// execFull runs `chartgate hook` with the client's arguments, standard
// streams and environment, and returns its exit code.
func execFull(chartgate string, args []string) int {
	p, err := os.StartProcess(chartgate, hookArgv(chartgate, args), &os.ProcAttr{Files: []*os.File{os.Stdin, os.Stdout, os.Stderr}})
	if err != nil {
		os.Stderr.WriteString("chartgate-hook: " + err.Error() + "\n")
		return 1
	}
	st, err := p.Wait()
	if err != nil {
		os.Stderr.WriteString("chartgate-hook: " + err.Error() + "\n")
		return 1
	}
	return st.ExitCode()
}
