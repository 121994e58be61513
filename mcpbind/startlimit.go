// This file limits how often one client may start workflows, so that no
// client can fill the store and keep others from starting theirs.

package mcpbind

import (
	"container/list"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/chartgate/chartgate/internal/core"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"
)

// StartLimit limits the calls of the start tool (workflow_start) per
// client, with a token bucket: a client may start Burst workflows at once,
// and one more every Every. A call over the limit is refused with
// CodeRateLimited, saying when to try again. Stores are bounded
// ([MemoryStoreOptions.MaxEntries]) and never drop a live workflow to
// make room, so without a limit one client could fill the store.
type StartLimit struct {
	Every time.Duration // default one minute
	Burst int           // default 10
	// Client names the client a call comes from; calls with the same name
	// share one limit. Default: the authenticated user (the request's
	// TokenInfo.UserID), else the session id, else "" (then all clients
	// without a name share one limit).
	Client func(*mcp.CallToolRequest) string
}

// maxLimitedClients bounds the clients whose limits are kept; the least
// recently seen is forgotten first (it starts again with a full bucket).
const maxLimitedClients = 10_000

// startLimiter holds the buckets of the clients seen last.
type startLimiter struct {
	every  rate.Limit
	burst  int
	client func(*mcp.CallToolRequest) string

	mu      sync.Mutex
	buckets map[string]*list.Element // of *clientBucket
	order   list.List                // most recently seen at the front
}

type clientBucket struct {
	name string
	lim  *rate.Limiter
}

func newStartLimiter(l *StartLimit) *startLimiter {
	if l == nil {
		return nil
	}
	every, burst := l.Every, l.Burst
	if every <= 0 {
		every = time.Minute
	}
	if burst <= 0 {
		burst = 10
	}
	client := l.Client
	if client == nil {
		client = defaultClient
	}
	return &startLimiter{every: rate.Every(every), burst: burst, client: client, buckets: map[string]*list.Element{}}
}

// defaultClient names the client of a call: its authenticated user, else
// its session id, else "".
func defaultClient(req *mcp.CallToolRequest) string {
	if req.Extra != nil && req.Extra.TokenInfo != nil && req.Extra.TokenInfo.UserID != "" {
		return "user:" + req.Extra.TokenInfo.UserID
	}
	if req.Session != nil && req.Session.ID() != "" {
		return "session:" + req.Session.ID()
	}
	return ""
}

// allow takes one start from the client's bucket at now. When it is
// empty, it returns false and how long until the next start.
func (s *startLimiter) allow(req *mcp.CallToolRequest, now time.Time) (bool, time.Duration) {
	name := s.client(req)
	s.mu.Lock()
	defer s.mu.Unlock()
	var b *clientBucket
	if el, ok := s.buckets[name]; ok {
		s.order.MoveToFront(el)
		b = el.Value.(*clientBucket)
	} else {
		b = &clientBucket{name: name, lim: rate.NewLimiter(s.every, s.burst)}
		s.buckets[name] = s.order.PushFront(b)
		if s.order.Len() > maxLimitedClients {
			old := s.order.Back()
			s.order.Remove(old)
			delete(s.buckets, old.Value.(*clientBucket).name)
		}
	}
	if b.lim.AllowN(now, 1) {
		return true, 0
	}
	missing := 1 - b.lim.TokensAt(now)
	return false, time.Duration(math.Ceil(missing / float64(s.every) * float64(time.Second)))
}

// refuseStart answers a call of the start tool over the client's limit.
func (g *Gate) refuseStart(wait time.Duration) *mcp.CallToolResult {
	ref := &Refusal{Code: CodeRateLimited, Tool: g.core.Start, Available: []string{}, Path: []Step{}}
	text := fmt.Sprintf("Tool %q was not run: this client has started as many workflows as it may for now. Try again in %s, or go on with a workflow it has started.",
		g.core.Start, wait.Round(time.Second).String())
	return mcpResult(core.Refused(ref, text)).(*mcp.CallToolResult)
}
