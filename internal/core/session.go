// This file keeps the store keys of the sessions of this process (held
// as a Conn), and of the workflows that handles name.

package core

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/maphash"
	"maps"
	"sync/atomic"

	"github.com/chartgate/chartgate/gate"
)

// session is the gate's record of a session whose workflow has a key.
type session struct {
	key    string
	named  bool        // SessionKey named its workflow: it outlives the session
	closed bool        // guarded by Core.mu
	saved  atomic.Bool // the gate saved a state under key
}

// Conn is a transport's connection whose workflow may be keyed by it (an
// MCP session): the steps hold it to find its store key and nothing else.
type Conn interface{ ID() string }

// Target names the workflow a request acts on: its session's, or the one
// a handle names.
type Target struct {
	Ss     Conn
	Handle string // the workflow id; "" for the session's workflow
	Name   string // a named workflow (Ref.Name), outside a session
	Key    string // the store key of handle or name, if known
	// existing: the workflow is never started by loading it (a job's):
	// without a record, it is ErrUnknownWorkflow.
	existing bool
}

// handleTarget is the target a workflow id names.
func (g *Core) handleTarget(id string) Target { return Target{Handle: id, Key: g.HandleKey(id)} }

// storeKey returns the store key of a target named by a handle or a name,
// or "" for a session's.
func (g *Core) storeKey(t Target) string {
	switch {
	case t.Key != "":
		return t.Key
	case t.Handle != "":
		return g.HandleKey(t.Handle)
	case t.Name != "":
		return g.NameKey(t.Name)
	}
	return ""
}

// keyFor returns the store key of a target's workflow, and the gate's
// record of its session (nil for a handle or a name). A session gets a
// key, and the gate a record of it, if it had none.
func (g *Core) keyFor(t Target) (string, *session) {
	if key := g.storeKey(t); key != "" {
		return key, nil
	}
	s := g.ensureSession(t.Ss)
	return s.key, s
}

// Fingerprint stands for a store key in logs: keys hold workflow ids and
// session ids, which are bearer tokens. It is the first 12 hex digits of
// the key's SHA-256, enough to tell workflows apart in a log and not to
// recover the key.
func Fingerprint(key string) string {
	if key == "" {
		return ""
	}
	// On the stack, for keys of up to 96 bytes (a handle's or a
	// session's): the string returned is the only allocation.
	var kb [96]byte
	sum := sha256.Sum256(append(kb[:0], key...))
	var b [12]byte
	hex.Encode(b[:], sum[:6])
	return string(b[:])
}

// keyPrints keeps the fingerprints of the keys whose transitions the gate
// logged last, so that the log record of a workflow that moves again
// costs no hash of its key and no allocation: one slot per hash of the
// key (mod the slots), holding the last key logged with that hash. A
// process holds its keys anyway; the slots keep at most as many.
type keyPrints struct {
	seed  maphash.Seed
	slots [64]atomic.Pointer[keyPrint]
}

type keyPrint struct{ key, print string }

// of returns Fingerprint(key).
func (k *keyPrints) of(key string) string {
	slot := &k.slots[maphash.String(k.seed, key)%uint64(len(k.slots))]
	if p := slot.Load(); p != nil && p.key == key {
		return p.print
	}
	p := &keyPrint{key: key, print: Fingerprint(key)}
	slot.Store(p)
	return p.print
}

// NameKey is the store key of the workflow of a name: the name a session
// gets from Options.SessionKey, or a Ref.Name.
func (g *Core) NameKey(name string) string { return g.prefix + "session:" + name }

// HandleKey is the store key of the workflow a handle names.
func (g *Core) HandleKey(id string) string { return g.prefix + "wf:" + id }

// keyOf returns the store key of a session's workflow, or "" if it has
// none yet (a session without an id that never saved a transition: its
// workflow is in the initial state), and the gate's record of the session
// if it has one.
func (g *Core) keyOf(ss Conn) (string, *session) {
	g.mu.Lock()
	s := g.sessions[ss]
	g.mu.Unlock()
	if s != nil {
		return s.key, s
	}
	if name := g.SessionName(ss); name != "" {
		return g.NameKey(name), nil
	}
	return "", nil
}

// SessionName is the name of a session's workflow: SessionKey's, else the
// session id, else "".
func (g *Core) SessionName(ss Conn) string {
	if g.Named != nil {
		if name := g.Named(ss); name != "" {
			return name
		}
	}
	return ss.ID()
}

// ensureSession returns the gate's record of a session, creating it if
// needed (and starting the sweep that removes the state of sessions that
// ended, if it is not running).
func (g *Core) ensureSession(ss Conn) *session {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s := g.sessions[ss]; s != nil {
		return s
	}
	s := &session{}
	name := ""
	if g.Named != nil {
		name = g.Named(ss)
	}
	if name != "" {
		s.key, s.named = g.NameKey(name), true
	} else if id := ss.ID(); id != "" {
		s.key = g.NameKey(id)
	} else {
		s.key = fmt.Sprintf("%slocal:%s:%d", g.prefix, g.instance, g.seq.Add(1))
	}
	g.sessions[ss] = s
	if k, ok := g.store.(gate.Keeper); ok && !s.named {
		k.Keep(s.key) // the record lives as long as the session
	}
	if !g.sweeping && g.sweeper != nil {
		g.sweeping = true
		go g.sweeper()
	}
	return s
}

// Forget removes the state of a session that ended (unless SessionKey
// named its workflow).
func (g *Core) Forget(ss Conn, s *session) {
	g.mu.Lock()
	s.closed = true
	if g.sessions[ss] == s {
		delete(g.sessions, ss)
	}
	g.mu.Unlock()
	g.decoded.Delete(s.key)
	if s.named {
		return // the workflow belongs to its name, not to the session
	}
	ctx, cancel := context.WithTimeout(context.Background(), g.Timeout)
	defer cancel()
	if err := g.store.Delete(ctx, s.key); err != nil {
		g.Log.Warn("mcpbind: removing the state of an ended session", "key", Fingerprint(s.key), "error", err)
	}
	g.pokeJobs(s.key) // its jobs find the workflow gone, and stop
}

func (g *Core) isClosed(s *session) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return s.closed
}

// Sessions implements mcpbind's Gate.Sessions.
func (g *Core) Sessions() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.sessions)
}

// LiveSessions returns the sessions registered now, or nil when there are
// none, and then the sweep that called it ends (see sweeper).
func (g *Core) LiveSessions() map[Conn]*session {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.sessions) == 0 {
		g.sweeping = false
		return nil
	}
	return maps.Clone(g.sessions)
}

// SessionOfKey returns a live session whose workflow is stored under key,
// nil if none.
func (g *Core) SessionOfKey(key string) Conn {
	g.mu.Lock()
	defer g.mu.Unlock()
	for s, rec := range g.sessions {
		if rec.key == key && !rec.closed {
			return s
		}
	}
	return nil
}

// ValidHandle reports whether id has the form newHandle gives.
func ValidHandle(id string) bool {
	if len(id) != 32 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
