//go:build linux

package main

// This file defines `chartgate hook-daemon`: one process per user that
// answers the hook events the hook client (cmd/chartgate-hook) sends it
// over a Unix socket in chartgate's user folder, by the code path of
// `chartgate hook`, in each client's environment, working directory and
// ancestry, keeping the projects' stores and compiled workflows open
// between events. A hook process then costs the client's start, not the
// start of chartgate and of its SQLite driver.

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/chartgate/chartgate/hook"
	"github.com/chartgate/chartgate/internal/hookwire"
	"github.com/chartgate/chartgate/mcpbind/sqlitestore"
	"github.com/chartgate/chartgate/workflow"
)

// defaultDaemonIdle is how long the hook daemon waits for an event before
// it exits.
const defaultDaemonIdle = 10 * time.Minute

// daemonRequestTimeout bounds reading a request and writing its answer.
const daemonRequestTimeout = 10 * time.Second

// cmdHookDaemon runs `chartgate hook-daemon`, which the hook client
// starts; it is not meant for people.
func cmdHookDaemon(args []string, stderr io.Writer) int {
	flags := newFlagSet("hook-daemon")
	idle := flags.Duration("idle", defaultDaemonIdle, "exit after this long without an event")
	if _, err := parseArgs(flags, args); err != nil {
		return usageError(stderr, "hook-daemon", err)
	}
	d, err := listenHookDaemon(hookwire.SocketDir(os.Getenv))
	if errors.Is(err, errDaemonRunning) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "chartgate hook-daemon: %v\n", err)
		return exitFail
	}
	d.serve(*idle)
	return exitOK
}

// errDaemonRunning: another hook daemon holds the folder's lock.
var errDaemonRunning = errors.New("a hook daemon is already running")

// hookDaemon is a listening hook daemon.
type hookDaemon struct {
	dir      string
	ln       *net.UnixListener
	lock     *os.File
	exe      string
	exeStat  os.FileInfo
	projects *projectCache
	wg       sync.WaitGroup
}

// listenHookDaemon takes the daemon's folder dir (made 0700, which must
// be the user's own), its lock, and listens on its socket (0600).
func listenHookDaemon(dir string) (*hookDaemon, error) {
	if dir == "" {
		return nil, errors.New("no folder for the socket: neither XDG_CONFIG_HOME nor HOME is set")
	}
	if err := privateDir(dir); err != nil {
		return nil, err
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("the daemon's lock: %w", err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = lock.Close()
		return nil, errDaemonRunning
	}
	exe, err := os.Executable()
	var st os.FileInfo
	if err == nil {
		st, err = os.Stat(exe)
	}
	if err != nil {
		_ = lock.Close()
		return nil, fmt.Errorf("the daemon's executable: %w", err)
	}
	sock := filepath.Join(dir, hookwire.SocketName)
	// A socket left by a daemon that died, or a file that is not one:
	// the folder is the user's own, and the lock says no daemon serves it.
	_ = os.Remove(sock)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		_ = lock.Close()
		return nil, fmt.Errorf("listening: %w", err)
	}
	ln.SetUnlinkOnClose(false)
	if err := os.Chmod(sock, 0o600); err != nil {
		_ = ln.Close()
		_ = lock.Close()
		return nil, fmt.Errorf("the socket: %w", err)
	}
	return &hookDaemon{dir: dir, ln: ln, lock: lock, exe: exe, exeStat: st, projects: newProjectCache()}, nil
}

// privateDir makes dir, if missing, and checks that it is a folder (not a
// link) of this user that only this user can enter, making it so if it is
// the user's.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("the daemon's folder: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("the daemon's folder: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s: not a folder of this user", dir)
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("the daemon's folder: %w", err)
		}
	}
	return nil
}

// serve answers connections until idle passes without one, or the
// daemon's executable changes (an upgrade: the clients then trust it no
// more, and the next one starts the new daemon). It then stops taking
// connections, waits for the events under way, and closes the stores.
func (d *hookDaemon) serve(idle time.Duration) {
	conns := make(chan *net.UnixConn)
	go func() {
		defer close(conns)
		for {
			c, err := d.ln.AcceptUnix()
			if err != nil {
				return
			}
			conns <- c
		}
	}()
	check := time.NewTicker(min(idle, 2*time.Second))
	defer check.Stop()
	last := time.Now()
loop:
	for {
		select {
		case c, ok := <-conns:
			if !ok {
				break loop
			}
			last = time.Now()
			d.wg.Add(1)
			go func() {
				defer d.wg.Done()
				d.answer(c)
			}()
		case <-check.C:
			if time.Since(last) >= idle || d.exeChanged() {
				break loop
			}
		}
	}
	d.stop(conns)
}

// stop removes the socket, so that clients start a new daemon rather than
// connect to this one, answers the connections already made, and releases
// the folder.
func (d *hookDaemon) stop(conns chan *net.UnixConn) {
	_ = os.Remove(filepath.Join(d.dir, hookwire.SocketName))
	// Connections a client made before the socket went wait in the
	// listener's queue: answer them rather than drop an event.
	_ = d.ln.SetDeadline(time.Now().Add(100 * time.Millisecond))
	for c := range conns {
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			d.answer(c)
		}()
	}
	_ = d.ln.Close()
	d.wg.Wait()
	d.projects.close()
	_ = d.lock.Close()
}

// exeChanged reports whether the daemon's executable file is another one
// than the daemon started from.
func (d *hookDaemon) exeChanged() bool {
	st, err := os.Stat(d.exe)
	return err != nil || !os.SameFile(st, d.exeStat) || !st.ModTime().Equal(d.exeStat.ModTime()) || st.Size() != d.exeStat.Size()
}

// answer answers one connection: a client of this user (checked by the
// socket's peer credentials, which also give its pid) sends one event.
func (d *hookDaemon) answer(c *net.UnixConn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(daemonRequestTimeout))
	pid, uid, err := peerCred(c)
	if err != nil || uid != os.Getuid() {
		return
	}
	req, err := hookwire.ReadRequest(c)
	if err != nil {
		return
	}
	res := d.run(req, pid)
	// The event may take up to its deadline; the answer is then written
	// at once.
	_ = c.SetDeadline(time.Now().Add(daemonRequestTimeout))
	_ = hookwire.WriteResponse(c, res)
}

// run answers a request as `chartgate hook` would in the client's place.
func (d *hookDaemon) run(req *hookwire.Request, pid int) *hookwire.Response {
	env := clientHookEnv(req, pid, d.projects)
	var stdout, stderr bytes.Buffer
	code := hookWith(req.Args, bytes.NewReader(req.Stdin), &stdout, &stderr, env, false)
	return &hookwire.Response{Code: code, Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
}

// clientHookEnv is the hook environment of a client: its environment
// variables, working directory and ancestry (pid's, read once, when
// needed), and the daemon's open projects.
func clientHookEnv(req *hookwire.Request, pid int, projects *projectCache) hookEnv {
	vars := make(map[string]string, len(req.Env))
	for _, kv := range req.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			// The first wins, as in os.Getenv.
			if _, seen := vars[k]; !seen {
				vars[k] = v
			}
		}
	}
	return hookEnv{
		getenv:   func(k string) string { return vars[k] },
		wd:       req.Dir,
		ancestry: sync.OnceValue(func() []hook.Proc { return hook.AncestryOf(pid) }),
		open:     projects.open,
	}
}

// projectCache keeps the compiled workflows and the SQLite stores of the
// projects the daemon serves. A workflow is reused only while its file
// and the subflows it loaded read the same bytes (compared by SHA-256 at
// each event), a store only while its path names the same file.
type projectCache struct {
	mu        sync.Mutex
	workflows map[workflowKey]*cachedWorkflow
	stores    map[storeKey]*cachedStore
}

type workflowKey struct {
	file, format, subflows string
	checkpoint             workflow.Checkpoint
	compat                 workflow.Compat
	pausable               bool
}

type cachedWorkflow struct {
	workflow *workflow.Workflow
	version  string
	// digest is the SHA-256 of the file; subflows that of each subflow
	// the resolver gave, by name, with its error.
	digest   [32]byte
	subflows map[string][32]byte
}

type storeKey struct {
	path    string
	durable bool
}

type cachedStore struct {
	store *sqlitestore.Store
	file  os.FileInfo
	refs  int
	stale bool
}

func newProjectCache() *projectCache {
	return &projectCache{workflows: map[workflowKey]*cachedWorkflow{}, stores: map[storeKey]*cachedStore{}}
}

// open is openProjectOpts with the cache: the workflow compiled again
// only when its files changed, a SQLite store opened once; other stores
// are opened and closed for each event, as `chartgate hook` does.
func (pc *projectCache) open(pf projectFlags, opts *workflow.Options, _ bool) (*project, func(), error) {
	data, err := os.ReadFile(*pf.workflow)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the workflow: %w", err)
	}
	w, version, err := pc.workflow(pf, opts, data)
	if err != nil {
		return nil, nil, err
	}
	if err := hook.CheckFormat(*pf.workflow, w.Format); err != nil {
		return nil, nil, err
	}
	spec := *pf.store
	if spec == "memory" || spec == "" || isURLStore(spec) {
		store, closeStore, err := openStore(spec, pf.durable != nil && *pf.durable)
		if err != nil {
			return nil, nil, err
		}
		return &project{workflow: w, version: version, store: store, close: closeStore}, func() { _ = closeStore() }, nil
	}
	cs, release, err := pc.store(storeKey{path: spec, durable: pf.durable != nil && *pf.durable})
	if err != nil {
		return nil, nil, err
	}
	return &project{workflow: w, version: version, store: cs.store, close: func() error { return nil }}, release, nil
}

// workflow returns the compiled workflow of data, the workflow file's
// content: the cached one when the file and its subflows are unchanged.
func (pc *projectCache) workflow(pf projectFlags, opts *workflow.Options, data []byte) (*workflow.Workflow, string, error) {
	key := workflowKey{file: *pf.workflow, format: *pf.format, subflows: subflowDir(pf), checkpoint: opts.Checkpoint, compat: opts.Compat, pausable: opts.Pausable}
	digest := sha256.Sum256(data)
	resolve := workflow.DirResolver(key.subflows)
	pc.mu.Lock()
	c := pc.workflows[key]
	pc.mu.Unlock()
	if c != nil && c.digest == digest && subflowsSame(c.subflows, resolve) {
		return c.workflow, c.version, nil
	}
	// Compile, recording what each subflow read.
	subflows := map[string][32]byte{}
	var mu sync.Mutex
	opts.Format = workflow.Format(*pf.format)
	opts.Resolve = func(name string) ([]byte, error) {
		b, err := resolve(name)
		mu.Lock()
		subflows[name] = subflowDigest(b, err)
		mu.Unlock()
		return b, err
	}
	w, err := workflow.Load(data, opts)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", *pf.workflow, err)
	}
	c = &cachedWorkflow{workflow: w, version: workflowVersion(data), digest: digest, subflows: subflows}
	pc.mu.Lock()
	pc.workflows[key] = c
	pc.mu.Unlock()
	return c.workflow, c.version, nil
}

// subflowsSame reports whether each subflow resolves to what it did.
func subflowsSame(was map[string][32]byte, resolve func(string) ([]byte, error)) bool {
	for name, d := range was {
		if subflowDigest(resolve(name)) != d {
			return false
		}
	}
	return true
}

func subflowDigest(b []byte, err error) [32]byte {
	h := sha256.New()
	h.Write(b)
	if err != nil {
		h.Write([]byte{0})
		h.Write([]byte(err.Error()))
	}
	return [32]byte(h.Sum(nil))
}

// store returns the open SQLite store of key, opening it when the cache
// has none or its path now names another file (a store removed or
// replaced); release ends the event's use.
func (pc *projectCache) store(key storeKey) (*cachedStore, func(), error) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	c := pc.stores[key]
	if c != nil {
		if fi, err := os.Stat(key.path); err != nil || !os.SameFile(fi, c.file) {
			pc.retire(key, c)
			c = nil
		}
	}
	if c == nil {
		s, err := sqlitestore.Open(key.path, &sqlitestore.Options{RelaxedSync: !key.durable})
		if err != nil {
			return nil, nil, err
		}
		fi, err := os.Stat(key.path)
		if err != nil {
			_ = s.Close()
			return nil, nil, fmt.Errorf("the store: %w", err)
		}
		c = &cachedStore{store: s, file: fi}
		pc.stores[key] = c
	}
	c.refs++
	return c, func() {
		pc.mu.Lock()
		defer pc.mu.Unlock()
		c.refs--
		if c.stale && c.refs == 0 {
			_ = c.store.Close()
		}
	}, nil
}

// retire drops a store from the cache, closing it once no event uses it.
// pc.mu is held.
func (pc *projectCache) retire(key storeKey, c *cachedStore) {
	delete(pc.stores, key)
	c.stale = true
	if c.refs == 0 {
		_ = c.store.Close()
	}
}

// close closes every store; no event runs.
func (pc *projectCache) close() {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	for key, c := range pc.stores {
		pc.retire(key, c)
	}
}

// peerCred returns the pid and uid of the process at the other end of c
// (SO_PEERCRED): what the kernel says, not what the client sends.
func peerCred(c *net.UnixConn) (pid, uid int, err error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, 0, err
	}
	var cred *syscall.Ucred
	var credErr error
	if err := rc.Control(func(fd uintptr) {
		cred, credErr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return 0, 0, err
	}
	if credErr != nil {
		return 0, 0, credErr
	}
	return int(cred.Pid), int(cred.Uid), nil
}
