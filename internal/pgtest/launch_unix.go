//go:build unix

// This file starts a server of its own: initdb, then postgres, as the
// postgres user when this process runs as root.

package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// launch creates a data directory and starts a server on it.
func launch(bin string) (string, func(), error) {
	cred, err := serverUser()
	if err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp("", "chartgate-pgtest-")
	if err != nil {
		return "", nil, fmt.Errorf("pgtest: %w", err)
	}
	cleanup := func() { _ = os.RemoveAll(dir) }
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			cleanup()
			return "", nil, fmt.Errorf("pgtest: %w", err)
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	initdb.Dir = dir
	if out, err := initdb.CombinedOutput(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	port, err := freePort()
	if err != nil {
		cleanup()
		return "", nil, err
	}
	// The server's output goes to a file, read for failure messages.
	logPath := filepath.Join(dir, "server.log")
	out, err := os.Create(logPath)
	if err != nil {
		cleanup()
		return "", nil, fmt.Errorf("pgtest: %w", err)
	}
	defer out.Close() // the server has its own descriptor
	output := func() string { b, _ := os.ReadFile(logPath); return string(b) }
	// fsync off: a test server need not survive a crash of the machine.
	srv := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="+dir,
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=200")
	srv.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	srv.Dir = dir
	srv.Stdout, srv.Stderr = out, out
	if err := srv.Start(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("pgtest: starting postgres: %w", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = srv.Wait()
		close(exited)
	}()
	stop := func() {
		// SIGINT is PostgreSQL's fast shutdown: it ends the sessions and
		// stops cleanly.
		_ = srv.Process.Signal(syscall.SIGINT)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = srv.Process.Kill()
			<-exited
		}
		cleanup()
	}
	dsn := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgx.Connect(ctx, dsn)
		if err == nil {
			err = conn.Ping(ctx)
			_ = conn.Close(ctx)
		}
		cancel()
		if err == nil {
			return dsn, stop, nil
		}
		select {
		case <-exited:
			msg := output()
			cleanup()
			return "", nil, fmt.Errorf("pgtest: postgres on port %d exited: %v\n%s", port, srv.ProcessState, msg)
		default:
		}
		if time.Now().After(deadline) {
			msg := output()
			stop()
			return "", nil, fmt.Errorf("pgtest: postgres on port %d does not answer: %v\n%s", port, err, msg)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// serverUser returns the user to run the server as: nil (this process'
// user) unless this process runs as root, which initdb and postgres
// refuse; then the "postgres" user that Debian's package creates.
func serverUser() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	out, err := exec.Command("id", "-u", "postgres").Output()
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root, and there is no postgres user to run the server as (PostgreSQL refuses root): %w", err)
	}
	uid, err1 := strconv.ParseUint(strings.TrimSpace(string(out)), 10, 32)
	out, err = exec.Command("id", "-g", "postgres").Output()
	gid, err2 := strconv.ParseUint(strings.TrimSpace(string(out)), 10, 32)
	if err := errors.Join(err, err1, err2); err != nil {
		return nil, fmt.Errorf("pgtest: the postgres user's ids: %w", err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}
