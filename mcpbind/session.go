// This file defines how a request names its workflow (its session's, or
// the one a handle names) and the gate's record of sessions: their store
// keys, and the removal of their state when they end.

package mcpbind

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/statechart"
)

// session is the gate's record of a session whose workflow has a key.
type session struct {
	key    string
	named  bool        // SessionKey named its workflow: it outlives the session
	closed bool        // guarded by Gate.mu
	saved  atomic.Bool // the gate saved a state under key
}

// conn is a transport's connection whose workflow may be keyed by it (an
// MCP session): the steps hold it to find its store key and nothing else.
type conn interface{ ID() string }

// connOf is an MCP session as a conn; nil stays nil.
func connOf(ss *mcp.ServerSession) conn {
	if ss == nil {
		return nil
	}
	return ss
}

// target names the workflow a request acts on: its session's, or the one
// a handle names.
type target struct {
	ss     conn
	handle string // the workflow id; "" for the session's workflow
	name   string // a named workflow (Ref.Name), outside a session
	key    string // the store key of handle or name, if known
	// existing: the workflow is never started by loading it (a job's):
	// without a record, it is ErrUnknownWorkflow.
	existing bool
}

// handleTarget is the target a workflow id names.
func (g *gateCore) handleTarget(id string) target { return target{handle: id, key: g.handleKey(id)} }

// storeKey returns the store key of a target named by a handle or a name,
// or "" for a session's.
func (g *gateCore) storeKey(t target) string {
	switch {
	case t.key != "":
		return t.key
	case t.handle != "":
		return g.handleKey(t.handle)
	case t.name != "":
		return g.nameKey(t.name)
	}
	return ""
}

// keyFor returns the store key of a target's workflow, and the gate's
// record of its session (nil for a handle or a name). A session gets a
// key, and the gate a record of it, if it had none.
func (g *gateCore) keyFor(t target) (string, *session) {
	if key := g.storeKey(t); key != "" {
		return key, nil
	}
	s := g.ensureSession(t.ss)
	return s.key, s
}

// fingerprint stands for a store key in logs: keys hold workflow ids and
// session ids, which are bearer tokens. It is the first 12 hex digits of
// the key's SHA-256, enough to tell workflows apart in a log and not to
// recover the key.
func fingerprint(key string) string {
	if key == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:6])
}

// nameKey is the store key of the workflow of a name: the name a session
// gets from Options.SessionKey, or a Ref.Name.
func (g *gateCore) nameKey(name string) string { return g.prefix + "session:" + name }

// handleKey is the store key of the workflow a handle names.
func (g *gateCore) handleKey(id string) string { return g.prefix + "wf:" + id }

// keyOf returns the store key of a session's workflow, or "" if it has
// none yet (a session without an id that never saved a transition: its
// workflow is in the initial state), and the gate's record of the session
// if it has one.
func (g *gateCore) keyOf(ss conn) (string, *session) {
	g.mu.Lock()
	s := g.sessions[ss]
	g.mu.Unlock()
	if s != nil {
		return s.key, s
	}
	if name := g.sessionName(ss); name != "" {
		return g.nameKey(name), nil
	}
	return "", nil
}

// sessionName is the name of a session's workflow: SessionKey's, else the
// session id, else "".
func (g *gateCore) sessionName(ss conn) string {
	if g.named != nil {
		if name := g.named(ss); name != "" {
			return name
		}
	}
	return ss.ID()
}

// ensureSession returns the gate's record of a session, creating it if
// needed (and starting the sweep that removes the state of sessions that
// ended, if it is not running).
func (g *gateCore) ensureSession(ss conn) *session {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s := g.sessions[ss]; s != nil {
		return s
	}
	s := &session{}
	name := ""
	if g.named != nil {
		name = g.named(ss)
	}
	if name != "" {
		s.key, s.named = g.nameKey(name), true
	} else if id := ss.ID(); id != "" {
		s.key = g.nameKey(id)
	} else {
		s.key = fmt.Sprintf("%slocal:%s:%d", g.prefix, g.instance, g.seq.Add(1))
	}
	g.sessions[ss] = s
	if k, ok := g.store.(Keeper); ok && !s.named {
		k.Keep(s.key) // the record lives as long as the session
	}
	if !g.sweeping && g.sweeper != nil {
		g.sweeping = true
		go g.sweeper()
	}
	return s
}

// sweepEvery is how often the gate looks for sessions that ended.
const sweepEvery = 500 * time.Millisecond

// sweep forgets the sessions that ended: those that the servers the gate
// is attached to no longer have. It runs while the gate has sessions (one
// goroutine for all of them, not one per session).
func (g *Gate) sweep() {
	t := time.NewTicker(sweepEvery)
	defer t.Stop()
	for range t.C {
		known := g.core.liveSessions()
		if known == nil {
			return
		}
		g.amu.Lock()
		servers := make([]*mcp.Server, 0, len(g.attached))
		for s := range g.attached {
			servers = append(servers, s)
		}
		g.amu.Unlock()
		for _, srv := range servers {
			for ss := range srv.Sessions() {
				delete(known, ss)
			}
		}
		for ss, s := range known {
			g.core.forget(ss, s) // its server no longer has it: it ended
		}
	}
}

// forget removes the state of a session that ended (unless SessionKey
// named its workflow).
func (g *gateCore) forget(ss conn, s *session) {
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
	ctx, cancel := context.WithTimeout(context.Background(), g.timeout)
	defer cancel()
	if err := g.store.Delete(ctx, s.key); err != nil {
		g.log.Warn("mcpbind: removing the state of an ended session", "key", fingerprint(s.key), "error", err)
	}
	g.pokeJobs(s.key) // its jobs find the workflow gone, and stop
}

func (g *gateCore) isClosed(s *session) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return s.closed
}

// Sessions is [Gate.Sessions].
func (g *gateCore) Sessions() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.sessions)
}

// liveSessions returns the sessions registered now, or nil when there are
// none, and then the sweep that called it ends (see sweeper).
func (g *gateCore) liveSessions() map[conn]*session {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.sessions) == 0 {
		g.sweeping = false
		return nil
	}
	return maps.Clone(g.sessions)
}

// sessionOfKey returns a live session whose workflow is stored under key,
// nil if none.
func (g *gateCore) sessionOfKey(key string) conn {
	g.mu.Lock()
	defer g.mu.Unlock()
	for s, rec := range g.sessions {
		if rec.key == key && !rec.closed {
			return s
		}
	}
	return nil
}

// sessionTarget is a live session of this process and its server's
// attachment.
type sessionTarget struct {
	ss *mcp.ServerSession
	a  *attachment
}

// sessionsOfKey returns the live sessions of this process whose workflow
// is stored under key: the one that saved it, or those that
// Options.SessionKey names so.
func (g *Gate) sessionsOfKey(key string) []sessionTarget {
	known := g.core.sessionOfKey(key)
	g.amu.Lock()
	servers := make(map[*mcp.Server]*attachment, len(g.attached))
	for srv, a := range g.attached {
		servers[srv] = a
	}
	g.amu.Unlock()
	var out []sessionTarget
	for srv, a := range servers {
		for s := range srv.Sessions() {
			if s == known || (g.core.named != nil && g.core.named(s) != "" && g.core.nameKey(g.core.named(s)) == key) {
				out = append(out, sessionTarget{s, a})
			}
		}
	}
	return out
}

// listsVary reports whether a session's tool list follows its workflow:
// it speaks a protocol before 2026-07-28, and Options.ListAllTools is off.
func (g *Gate) listsVary(ss *mcp.ServerSession) bool {
	return !g.listAll && sessionful(ss)
}

// sessionful reports whether a session speaks a protocol before
// 2026-07-28, which has sessions (and logging).
func sessionful(ss *mcp.ServerSession) bool {
	p := ss.InitializeParams()
	return p != nil && p.ProtocolVersion < sessionlessVersion
}

// State returns the current workflow state of a session.
func (g *Gate) State(ctx context.Context, ss *mcp.ServerSession) (statechart.State, error) {
	v, err := g.core.load(ctx, target{ss: connOf(ss)})
	if err != nil {
		return nil, err
	}
	return v.state, nil
}

// SessionWorkflow returns the workflow of a session (for sessions keyed by
// their session, not by handles).
func (g *Gate) SessionWorkflow(ctx context.Context, ss *mcp.ServerSession) (*Workflow, error) {
	return g.core.workflow(ctx, target{ss: connOf(ss)})
}
