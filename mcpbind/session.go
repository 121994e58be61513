// This file defines how a request names its workflow (its session's, or
// the one a handle names) and the gate's record of sessions: their store
// keys, and the removal of their state when they end.

package mcpbind

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/internal/core"
	"github.com/chartgate/chartgate/statechart"
)

// connOf is an MCP session as a conn; nil stays nil.
func connOf(ss *mcp.ServerSession) core.Conn {
	if ss == nil {
		return nil
	}
	return ss
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
		known := g.core.LiveSessions()
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
			g.core.Forget(ss, s) // its server no longer has it: it ended
		}
	}
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
	known := g.core.SessionOfKey(key)
	g.amu.Lock()
	servers := make(map[*mcp.Server]*attachment, len(g.attached))
	for srv, a := range g.attached {
		servers[srv] = a
	}
	g.amu.Unlock()
	var out []sessionTarget
	for srv, a := range servers {
		for s := range srv.Sessions() {
			if s == known || (g.core.Named != nil && g.core.Named(s) != "" && g.core.NameKey(g.core.Named(s)) == key) {
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
	v, err := g.core.Load(ctx, core.Target{Ss: connOf(ss)})
	if err != nil {
		return nil, err
	}
	return v.State, nil
}

// SessionWorkflow returns the workflow of a session (for sessions keyed by
// their session, not by handles).
func (g *Gate) SessionWorkflow(ctx context.Context, ss *mcp.ServerSession) (*Workflow, error) {
	return g.core.WorkflowAt(ctx, core.Target{Ss: connOf(ss)})
}
