//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/internal/hookwire"
)

// startHookDaemon starts `chartgate hook-daemon` of the client's folder
// with its user folder in config, waits for its socket, and stops it when
// the test ends.
func startHookDaemon(t *testing.T, config string, env ...string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(filepath.Dir(hookClientBinary(t)), "chartgate"), "hook-daemon")
	cmd.Env = append(append(hostlessEnv(), "XDG_CONFIG_HOME="+config), env...)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	waitSocket(t, config)
}

// waitSocket waits for the daemon's socket in the user folder config.
func waitSocket(t *testing.T, config string) {
	t.Helper()
	sock := filepath.Join(config, "chartgate", "hookd", hookwire.SocketName)
	require.Eventually(t, func() bool {
		c, err := net.Dial("unix", sock)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	}, 30*time.Second, 20*time.Millisecond, "no daemon listens on %s", sock)
}

// stopDaemonOf stops, when the test ends, the daemon that listens in the
// user folder config (one a client started), found by its socket's peer.
func stopDaemonOf(t *testing.T, config string) {
	t.Cleanup(func() {
		c, err := net.Dial("unix", filepath.Join(config, "chartgate", "hookd", hookwire.SocketName))
		if err != nil {
			return
		}
		defer c.Close()
		if pid, _, err := peerCred(c.(*net.UnixConn)); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

// hostFixtures lists the hosts' hook inputs of package hook's testdata.
func hostFixtures(t *testing.T) map[string][]string {
	t.Helper()
	hosts, err := os.ReadDir("../../hook/testdata/hosts")
	require.NoError(t, err)
	out := map[string][]string{}
	for _, h := range hosts {
		if !h.IsDir() {
			continue
		}
		files, err := filepath.Glob(filepath.Join("../../hook/testdata/hosts", h.Name(), "*.json"))
		require.NoError(t, err)
		for _, f := range files {
			out[h.Name()] = append(out[h.Name()], filepath.Base(f))
		}
		slices.Sort(out[h.Name()])
	}
	return out
}

// TestHookClientAnswersAsHook: every host's documented inputs, in turn
// in one session, get from the client, with a daemon running and with
// none able to run, what `chartgate hook` answers on a twin project.
func TestHookClientAnswersAsHook(t *testing.T) {
	client := hookClientBinary(t)
	bin := chartgateBinary(t)
	config := t.TempDir()
	startHookDaemon(t, config)
	modes := []struct {
		name string
		env  []string
	}{
		{"daemon", []string{"XDG_CONFIG_HOME=" + config}},
		// The daemon's folder cannot be made: the client runs the hook.
		{"no daemon", []string{"XDG_CONFIG_HOME=/dev/null/config"}},
	}
	for host, files := range hostFixtures(t) {
		for _, m := range modes {
			t.Run(host+"/"+m.name, func(t *testing.T) {
				t.Parallel()
				want, got := hookProject(t), hookProject(t)
				for _, f := range files {
					w := runHook(t, bin, t.TempDir(), fixture(t, host, f, want, "s1"), nil, host)
					g := runArgv(t, []string{client, host}, t.TempDir(), fixture(t, host, f, got, "s1"), m.env)
					w.out, w.errOut = strings.ReplaceAll(w.out, want, "PROJECT"), strings.ReplaceAll(w.errOut, want, "PROJECT")
					g.out, g.errOut = strings.ReplaceAll(g.out, got, "PROJECT"), strings.ReplaceAll(g.errOut, got, "PROJECT")
					assert.Equal(t, w, g, f)
				}
			})
		}
	}
}

// TestHookClientStartsDaemon: without a daemon, the client answers by the
// hook and starts one, which answers the next events.
func TestHookClientStartsDaemon(t *testing.T) {
	client := hookClientBinary(t)
	config := t.TempDir()
	stopDaemonOf(t, config)
	project := hookProject(t)
	env := []string{"XDG_CONFIG_HOME=" + config}
	r := runArgv(t, []string{client, "claude-code"}, t.TempDir(), fixture(t, "claude-code", "pre-tool-use-write.json", project, "s1"), env)
	assert.Contains(t, r.out, `"permissionDecision":"deny"`, r.errOut)
	waitSocket(t, config)
	fi, err := os.Stat(filepath.Join(config, "chartgate", "hookd"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	fi, err = os.Stat(filepath.Join(config, "chartgate", "hookd", hookwire.SocketName))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	r = runArgv(t, []string{client, "claude-code"}, t.TempDir(), fixture(t, "claude-code", "pre-tool-use-write.json", project, "s1"), env)
	assert.Contains(t, r.out, `"permissionDecision":"deny"`, r.errOut)
}

// TestHookClientDistrustsForgedDaemon: a socket whose listener is not the
// chartgate beside the client gets nothing of the event; the client
// answers by the hook.
func TestHookClientDistrustsForgedDaemon(t *testing.T) {
	client := hookClientBinary(t)
	config := t.TempDir()
	stopDaemonOf(t, config)
	dir := filepath.Join(config, "chartgate", "hookd")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	ln, err := net.Listen("unix", filepath.Join(dir, hookwire.SocketName))
	require.NoError(t, err)
	defer ln.Close()
	received := make(chan int, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			n, _ := io.Copy(io.Discard, c)
			_ = c.Close()
			received <- int(n)
		}
	}()
	project := hookProject(t)
	r := runArgv(t, []string{client, "claude-code"}, t.TempDir(), fixture(t, "claude-code", "pre-tool-use-write.json", project, "s1"),
		[]string{"XDG_CONFIG_HOME=" + config})
	assert.Equal(t, 0, r.code, r.errOut)
	assert.Contains(t, r.out, `Tool \"Write\" is not available in the current workflow state (\"plan\")`, r.errOut)
	select {
	case n := <-received:
		assert.Zero(t, n, "the forged daemon received bytes of the event")
	case <-time.After(10 * time.Second):
		t.Fatal("the client never connected to the forged daemon")
	}
}

// TestHookDaemonServesEditedWorkflow: a workflow edited between two events
// is the one the second event is decided by.
func TestHookDaemonServesEditedWorkflow(t *testing.T) {
	client := hookClientBinary(t)
	config := t.TempDir()
	startHookDaemon(t, config)
	project := hookProject(t)
	env := []string{"XDG_CONFIG_HOME=" + config}
	run := func(session string) string {
		r := runArgv(t, []string{client, "claude-code"}, t.TempDir(), fixture(t, "claude-code", "pre-tool-use-write.json", project, session), env)
		require.Equal(t, 0, r.code, r.errOut)
		return r.out
	}
	assert.Contains(t, run("s1"), "Read the code and write a plan.")
	file := filepath.Join(project, ".chartgate", "workflow.json")
	wf, err := os.ReadFile(file)
	require.NoError(t, err)
	// The same size and modification time: only the content tells.
	fi, err := os.Stat(file)
	require.NoError(t, err)
	edited := bytes.Replace(wf, []byte("Read the code and write a plan."), []byte("Read the code and draft a plan."), 1)
	require.Len(t, edited, len(wf))
	require.NoError(t, os.WriteFile(file, edited, 0o644))
	require.NoError(t, os.Chtimes(file, fi.ModTime(), fi.ModTime()))
	assert.Contains(t, run("s2"), "Read the code and draft a plan.")
}

// TestHookDaemonUsesClientEnvironment: the project comes from the
// client's CLAUDE_PROJECT_DIR, not the daemon's, and two projects served
// by one daemon, event after event, keep their own workflows.
func TestHookDaemonUsesClientEnvironment(t *testing.T) {
	client := hookClientBinary(t)
	config := t.TempDir()
	a, b := hookProject(t), hookProject(t)
	for p, text := range map[string]string{a: "Plan of project A.", b: "Plan of project B."} {
		file := filepath.Join(p, ".chartgate", "workflow.json")
		wf, err := os.ReadFile(file)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(file, bytes.Replace(wf, []byte("Read the code and write a plan. Do not edit."), []byte(text), 1), 0o644))
	}
	startHookDaemon(t, config, "CLAUDE_PROJECT_DIR="+a)
	outside := t.TempDir()
	for i := range 3 {
		for p, text := range map[string]string{a: "Plan of project A.", b: "Plan of project B."} {
			// The event's cwd is outside both: only the variable names the
			// project.
			r := runArgv(t, []string{client, "claude-code"}, outside, fixture(t, "claude-code", "pre-tool-use-write.json", outside, "s1"),
				[]string{"XDG_CONFIG_HOME=" + config, "CLAUDE_PROJECT_DIR=" + p})
			require.Equal(t, 0, r.code, r.errOut)
			assert.Contains(t, r.out, text, "round %d", i)
		}
	}
}

// TestHookUndecided: --undecided answers the event as one that could not
// be decided, without opening the project.
func TestHookUndecided(t *testing.T) {
	t.Setenv("CLAUDE_PROJECT_DIR", "")
	t.Setenv("GEMINI_PROJECT_DIR", "")
	project := hookProject(t)
	code, out, errOut := chartgateIn(fixture(t, "claude-code", "pre-tool-use-write.json", project, "s1"), "hook", "claude-code", "--undecided", "the answer was lost")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, `"permissionDecision":"deny"`)
	assert.Contains(t, out, "chartgate could not decide whether this tool may run, so it is refused: the answer was lost")
	assert.Contains(t, errOut, "the answer was lost")
	assert.NoFileExists(t, filepath.Join(project, ".chartgate", "state.db"))
}

// TestInstallWritesHookClient: a chartgate with the hook client beside it
// installs hooks that run the client, which answer as the hook.
func TestInstallWritesHookClient(t *testing.T) {
	client := hookClientBinary(t)
	bin := filepath.Join(filepath.Dir(client), "chartgate")
	project := hookProject(t)
	r := runArgv(t, []string{bin, "install", "claude-code", "--dir", project}, project, "", nil)
	require.Equal(t, 0, r.code, r.errOut)
	settings, err := os.ReadFile(filepath.Join(project, ".claude", "settings.json"))
	require.NoError(t, err)
	var s struct {
		Hooks map[string][]struct{ Hooks []struct{ Command string } }
	}
	require.NoError(t, json.Unmarshal(settings, &s))
	line := s.Hooks["PreToolUse"][0].Hooks[0].Command
	assert.Equal(t, client+" claude-code", line)

	// The hook as the host runs it.
	config := t.TempDir()
	stopDaemonOf(t, config)
	run := exec.Command("/bin/sh", "-c", line)
	run.Dir = project
	run.Env = append(hostlessEnv(), "XDG_CONFIG_HOME="+config)
	run.Stdin = strings.NewReader(fixture(t, "claude-code", "pre-tool-use-write.json", project, "s1"))
	out, err := run.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), `Tool \"Write\" is not available in the current workflow state (\"plan\")`)
}

// TestHookDaemonExits: a daemon without events for its idle time, and
// one whose executable is replaced (an upgrade), exits by itself, having
// removed its socket and released its folder's lock, so that the next
// client starts a new one.
func TestHookDaemonExits(t *testing.T) {
	bin := chartgateBinary(t)
	for _, c := range []struct {
		name, idle string
		upgrade    bool
	}{{"idle", "300ms", false}, {"upgraded", "10m", true}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			// The daemon runs from a link of its own, which the upgrade
			// replaces as a package manager would: a new file renamed over it.
			dir, err := os.MkdirTemp(filepath.Dir(bin), "daemon-")
			require.NoError(t, err)
			t.Cleanup(func() { _ = os.RemoveAll(dir) })
			exe := filepath.Join(dir, "chartgate")
			require.NoError(t, os.Link(bin, exe))
			config := t.TempDir()
			cmd := exec.Command(exe, "hook-daemon", "-idle", c.idle)
			cmd.Env = append(hostlessEnv(), "XDG_CONFIG_HOME="+config)
			require.NoError(t, cmd.Start())
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			t.Cleanup(func() { _ = cmd.Process.Kill() })
			waitSocket(t, config)
			if c.upgrade {
				next := filepath.Join(dir, "chartgate.new")
				require.NoError(t, os.WriteFile(next, []byte("#!/bin/sh\n"), 0o755))
				require.NoError(t, os.Rename(next, exe))
			}
			select {
			case err := <-exited:
				require.NoError(t, err)
			case <-time.After(30 * time.Second):
				t.Fatal("the daemon is still running")
			}
			hookd := filepath.Join(config, "chartgate", "hookd")
			assert.NoFileExists(t, filepath.Join(hookd, hookwire.SocketName))
			lock, err := os.OpenFile(filepath.Join(hookd, "lock"), os.O_RDWR, 0)
			require.NoError(t, err)
			defer lock.Close()
			assert.NoError(t, syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB), "the lock is still held")
		})
	}
}

// TestHookClientLostAnswer: a daemon that dies while it decides an event
// (here, waiting for the project's store, which another connection
// holds) leaves the client without an answer: the client refuses the
// tool as undecided rather than deciding the event a second time.
func TestHookClientLostAnswer(t *testing.T) {
	client := hookClientBinary(t)
	config := t.TempDir()
	daemon := exec.Command(filepath.Join(filepath.Dir(client), "chartgate"), "hook-daemon")
	daemon.Env = append(hostlessEnv(), "XDG_CONFIG_HOME="+config)
	require.NoError(t, daemon.Start())
	t.Cleanup(func() {
		_ = daemon.Process.Kill()
		_ = daemon.Wait()
	})
	waitSocket(t, config)

	project := hookProject(t)
	store := filepath.Join(project, ".chartgate", "state.db")
	holdStore(t, store)

	var r hookRun
	done := make(chan struct{})
	go func() {
		defer close(done)
		r = runArgv(t, []string{client, "claude-code"}, t.TempDir(), fixture(t, "claude-code", "pre-tool-use-write.json", project, "s1"), []string{"XDG_CONFIG_HOME=" + config})
	}()
	// The daemon opens the project's store once it has the event.
	require.Eventually(t, func() bool { return opened(daemon.Process.Pid, store) }, 30*time.Second, 5*time.Millisecond,
		"the daemon never opened the project's store")
	require.NoError(t, daemon.Process.Kill())
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the client is still waiting")
	}
	assert.Contains(t, r.out, `"permissionDecision":"deny"`, r.errOut)
	assert.Contains(t, r.out, "chartgate could not decide whether this tool may run, so it is refused", r.errOut)
}

// opened reports whether process pid has file open.
func opened(pid int, file string) bool {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return false
	}
	for _, fd := range fds {
		if target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && target == file {
			return true
		}
	}
	return false
}
