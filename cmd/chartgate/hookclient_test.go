package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	clientOnce sync.Once
	clientPath string
	clientErr  error
)

// hookClientBinary builds the hook client once per test run, beside a
// link to the chartgate chartgateBinary built (in a folder of its own, so
// that `chartgate install` run from chartgateBinary's keeps writing
// `chartgate hook`); it returns the client.
func hookClientBinary(t testing.TB) string {
	t.Helper()
	bin := chartgateBinary(t)
	clientOnce.Do(func() {
		dir := filepath.Join(binDir, "client")
		if clientErr = os.MkdirAll(dir, 0o755); clientErr != nil {
			return
		}
		if clientErr = os.Link(bin, filepath.Join(dir, "chartgate")); clientErr != nil {
			return
		}
		clientPath = filepath.Join(dir, "chartgate-hook")
		out, err := exec.Command("go", "build", "-o", clientPath, "../chartgate-hook").CombinedOutput()
		if err != nil {
			clientErr = err
			clientPath = string(out)
		}
	})
	if clientErr != nil {
		t.Fatalf("building chartgate-hook: %v\n%s", clientErr, clientPath)
	}
	return clientPath
}
