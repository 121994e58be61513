// Package pgtest gives tests a PostgreSQL server: the one the
// CHARTGATE_TEST_POSTGRES environment variable names (a connection string),
// or else a server of its own, started from Debian's PostgreSQL binaries
// (/usr/lib/postgresql/*/bin) in a temporary data directory, on a free
// loopback port, and stopped at the end. The Postgres store's tests and
// the CLI's test on a Postgres store use it.
package pgtest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
)

// EnvDSN names the environment variable that, when set, gives the
// connection string of a server to use instead of starting one.
const EnvDSN = "CHARTGATE_TEST_POSTGRES"

// SkipMessage is how the tests say that no server is available.
const SkipMessage = "PostgreSQL not found: install it (apt-get install -y postgresql) or set " + EnvDSN + " to a connection string to run the Postgres store tests"

// ErrUnavailable is matched by the error of [Launch] when there is neither
// a server named by [EnvDSN] nor PostgreSQL binaries to start one.
var ErrUnavailable = errors.New(SkipMessage)

// Start returns the connection string of a server for the test: the one
// [EnvDSN] names, or one started for the test and stopped when it ends.
// Without either the test is skipped.
func Start(tb testing.TB) string {
	tb.Helper()
	dsn, stop, err := Launch()
	if errors.Is(err, ErrUnavailable) {
		tb.Skip(SkipMessage)
	}
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(stop)
	return dsn
}

// Launch is [Start] for a TestMain: the caller stops the server. The error
// matches [ErrUnavailable] when no server can be had.
func Launch() (dsn string, stop func(), err error) {
	if dsn := os.Getenv(EnvDSN); dsn != "" {
		return dsn, func() {}, nil
	}
	bin := binDir()
	if bin == "" {
		return "", nil, ErrUnavailable
	}
	var lastErr error
	for range 3 { // the free port may be taken before the server binds it
		dsn, stop, err := launch(bin)
		if err == nil {
			return dsn, stop, nil
		}
		lastErr = err
	}
	return "", nil, lastErr
}

// binDir returns the directory of the newest PostgreSQL's initdb and
// postgres: Debian's /usr/lib/postgresql/VERSION/bin, or the PATH's.
func binDir() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			return d
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil && isExec(filepath.Join(filepath.Dir(p), "postgres")) {
		return filepath.Dir(p)
	}
	return ""
}

// version is the major version in a Debian binary directory's path.
func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
