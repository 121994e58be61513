// This file defines the registry of agent sessions that hooks keep in the
// store, and how a gateway finds the agent session it serves in it: the
// rendezvous that gives the hook and the gateway of one agent session the
// same workflow.

package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chartgate/chartgate/gate"
)

// AgentKeyPrefix starts the store keys of the agent sessions the hooks
// record: "chartgate:agents:<session id>". It is not under a gate's
// KeyPrefix, so the records are not listed as workflows.
const AgentKeyPrefix = "chartgate:agents:"

// Proc is one process of an ancestry.
type Proc struct {
	PID int `json:"pid"`
	// Start is when the process started, in the operating system's units
	// (Linux: clock ticks after boot; elsewhere: Unix seconds), so that a
	// PID used again by a later process does not count as the same; 0 if
	// unknown.
	Start uint64 `json:"start,omitempty"`
	// Name is the process' command name (Linux's comm), if known.
	Name string `json:"name,omitempty"`
}

// same reports whether p and q are the same process.
func (p Proc) same(q Proc) bool { return p.PID == q.PID && p.Start == q.Start }

// AgentSession is the record a hook keeps of its agent session.
type AgentSession struct {
	// ID is the host's session id, the name of the session's workflow.
	ID   string `json:"id"`
	Host Host   `json:"host"`
	// Project is the project folder (absolute), Cwd the directory the
	// host last gave.
	Project string `json:"project"`
	Cwd     string `json:"cwd,omitempty"`
	// Seen is when a hook of the session last refreshed the record.
	Seen time.Time `json:"seen"`
	// Ancestry is the hook process' ancestry when it was recorded: its
	// parent first, up to init. Empty where it cannot be read.
	Ancestry []Proc `json:"ancestry,omitempty"`
	// StopBlocks counts the stops refused in a row, without a tool call
	// between them.
	StopBlocks int `json:"stopBlocks,omitempty"`
	// Edits are the files edited since the state was entered, for
	// max_files_per_state.
	Edits *StateEdits `json:"edits,omitempty"`
	// Reads are the bytes of tool output and the files read since the
	// state was entered, for context_budget_bytes and the read-dedup
	// warning.
	Reads *StateReads `json:"reads,omitempty"`
	// Pending are the events hooks of the session had to send and could
	// not apply yet, oldest first: the next hook event applies them
	// before anything else.
	Pending []PendingEvent `json:"pending,omitempty"`
}

// StateEdits are the files edited while a state was active.
type StateEdits struct {
	// Since identifies the state's entry: the state value and the time of
	// the transition that entered it.
	Since string   `json:"since"`
	Files []string `json:"files"`
}

// StateReads are what the agent read while a state was active.
type StateReads struct {
	// Since identifies the state's entry, as StateEdits.Since does.
	Since string `json:"since"`
	// Bytes is the size of the tools' outputs, counted while a
	// context_budget_bytes applied.
	Bytes int64 `json:"bytes,omitempty"`
	// Files counts the reads of each file (as the project names it) by the
	// hosts' read tools.
	Files map[string]int `json:"files,omitempty"`
}

// agentKey is the store key of a session's record.
func agentKey(id string) string { return AgentKeyPrefix + id }

// LoadSession returns the record of an agent session, and the version it
// has in the store; nil and 0 if there is none.
func LoadSession(ctx context.Context, store gate.Store, id string) (*AgentSession, uint64, error) {
	data, ver, err := store.Load(ctx, agentKey(id))
	if err != nil || ver == 0 {
		return nil, ver, err
	}
	var s AgentSession
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, ver, fmt.Errorf("hook: the record of agent session %q is not readable: %w", id, err)
	}
	return &s, ver, nil
}

// maxUpdates bounds the compare-and-swap attempts of UpdateSession.
const maxUpdates = 50

// UpdateSession applies change to the record of an agent session (a new
// one, with only its ID, if there is none) and saves it if change
// reports a change, with compare-and-swap: on a conflict with another
// process it loads the record again and applies change again. It returns
// the record as saved (or as found, when nothing changed).
func UpdateSession(ctx context.Context, store gate.Store, id string, change func(*AgentSession) bool) (*AgentSession, error) {
	for range maxUpdates {
		s, ver, err := LoadSession(ctx, store, id)
		if err != nil {
			return nil, err
		}
		if s == nil {
			s = &AgentSession{ID: id}
		}
		if !change(s) {
			return s, nil
		}
		data, err := json.Marshal(s)
		if err != nil {
			return nil, err
		}
		_, err = store.CompareAndSwap(ctx, agentKey(id), ver, data)
		if errors.Is(err, gate.ErrConflict) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	return nil, fmt.Errorf("hook: the record of agent session %q changed %d times while it was updated", id, maxUpdates)
}

// Sessions returns the agent sessions the store holds. The store must
// implement [gate.Lister] (the SQLite, Redis and memory stores do).
func Sessions(ctx context.Context, store gate.Store) ([]AgentSession, error) {
	l, ok := store.(gate.Lister)
	if !ok {
		return nil, gate.ErrNoListing
	}
	keys, err := l.Keys(ctx, AgentKeyPrefix)
	if err != nil {
		return nil, err
	}
	var out []AgentSession
	for _, k := range keys {
		s, _, err := LoadSession(ctx, store, strings.TrimPrefix(k, AgentKeyPrefix))
		if err != nil {
			return nil, err
		}
		if s != nil {
			out = append(out, *s)
		}
	}
	return out, nil
}

// PruneSessions deletes the records of the agent sessions not seen since
// before; it returns how many it deleted.
func PruneSessions(ctx context.Context, store gate.Store, before time.Time) (int, error) {
	ss, err := Sessions(ctx, store)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, s := range ss {
		if s.Seen.Before(before) {
			if err := store.Delete(ctx, agentKey(s.ID)); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

// ResolveOptions configures [ResolveSession]. The zero value (or nil)
// means the defaults.
type ResolveOptions struct {
	// MaxAge: sessions not seen for longer are not candidates. Default 12 h.
	MaxAge time.Duration
	// Now returns the current time; default time.Now.
	Now func() time.Time
}

// Match is the answer of [ResolveSession].
type Match struct {
	// ID is the agent session's id, "" when none was found.
	ID string
	// Exact reports that the session's hooks and the gateway descend from
	// the same host process: the nearest ancestor of the gateway that is
	// not a shell or a wrapper (see [HostIndex]). A match that is not
	// exact shares a farther ancestor (a terminal's shell), or was chosen
	// without ancestries.
	Exact bool
	// Depth is the place of the common ancestor in the gateway's ancestry
	// (0: its parent); -1 when the match was made without ancestries.
	Depth int
}

// ResolveSession finds the agent session a gateway serves: among the
// sessions of its project (the folder [ProjectDir] gives for the
// gateway's working directory) seen recently, the one whose recorded
// ancestry shares the nearest common ancestor with the gateway's own
// (ancestry, nearest first: [Ancestry]); the agent host launches both
// its hooks and its MCP servers, so that ancestor is the host. Ties go to
// the session seen last. When the gateway has no ancestry, or no session
// with an ancestry shares one, the session seen last among those recorded
// without an ancestry is taken, if any, and else the session seen last
// when the gateway has none. init (PID 1) never counts as a common
// ancestor.
func ResolveSession(ctx context.Context, store gate.Store, project string, ancestry []Proc, opts *ResolveOptions) (Match, error) {
	var o ResolveOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxAge <= 0 {
		o.MaxAge = 12 * time.Hour
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	ss, err := Sessions(ctx, store)
	if err != nil {
		return Match{}, err
	}
	project = filepath.Clean(project)
	oldest := o.Now().Add(-o.MaxAge)
	best := Match{Depth: -1}
	var bestSeen time.Time
	var newest, newestBare *AgentSession
	for i := range ss {
		s := &ss[i]
		if filepath.Clean(s.Project) != project || s.Seen.Before(oldest) {
			continue
		}
		if newest == nil || s.Seen.After(newest.Seen) {
			newest = s
		}
		if len(s.Ancestry) == 0 {
			if newestBare == nil || s.Seen.After(newestBare.Seen) {
				newestBare = s
			}
			continue
		}
		d := commonDepth(ancestry, s.Ancestry)
		if d < 0 {
			continue
		}
		if best.ID == "" || d < best.Depth || d == best.Depth && s.Seen.After(bestSeen) {
			best, bestSeen = Match{ID: s.ID, Depth: d}, s.Seen
		}
	}
	switch {
	case best.ID != "":
		best.Exact = best.Depth <= HostIndex(ancestry)
		return best, nil
	case newestBare != nil:
		return Match{ID: newestBare.ID, Depth: -1}, nil
	case len(ancestry) == 0 && newest != nil:
		return Match{ID: newest.ID, Depth: -1}, nil
	}
	return Match{Depth: -1}, nil
}

// commonDepth returns the index in a of the first process of a (nearest
// first) that b holds too, init aside; -1 if none.
func commonDepth(a, b []Proc) int {
	for i, p := range a {
		if p.PID <= 1 {
			continue
		}
		if slices.ContainsFunc(b, p.same) {
			return i
		}
	}
	return -1
}

// wrappers are the command names that start other programs on behalf of
// the agent host rather than being it: shells and process wrappers.
var wrappers = []string{
	"sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "busybox", "env", "timeout", "nice",
	"nohup", "setsid", "stdbuf", "time", "caffeinate", "script",
}

// HostIndex returns the place in an ancestry (nearest first) of the agent
// host: the first process whose name is not that of a shell or a wrapper
// (sh, bash, zsh, env, timeout …); 0 when the names are not known.
func HostIndex(ancestry []Proc) int {
	for i, p := range ancestry {
		if p.Name == "" {
			return i
		}
		if !slices.Contains(wrappers, filepath.Base(p.Name)) {
			return i
		}
	}
	return 0
}

// Resolver finds, once, the agent session a gateway launched over stdio
// serves, for its mcpbind Options.SessionKey: the gateway's one MCP
// session then keys its workflow by the agent session's id, as the hooks
// do. It never waits: the host may connect to the gateway before its
// first hook runs (Gemini CLI lists MCP tools before SessionStart) or
// after, and until the agent session is found each request looks again,
// the gateway serving a workflow of its own meanwhile. It is safe for
// concurrent use.
type Resolver struct {
	// Store is the store the hooks record their sessions in.
	Store gate.Store
	// Project is the gateway's project folder; default the one
	// [FindProject] finds from $CLAUDE_PROJECT_DIR, $GEMINI_PROJECT_DIR
	// and the working directory (else [ProjectDir] of the working
	// directory), as `chartgate hook` does.
	Project string
	// Ancestry is the gateway's ancestry; default [Ancestry]().
	Ancestry []Proc
	// Wait is how long after the first request only an exact match (a
	// session of the gateway's own host process) is taken; after it, the
	// best match is. Default 5 s.
	Wait time.Duration
	// Logger receives what was resolved; default slog.Default().
	Logger *slog.Logger

	mu     sync.Mutex
	first  time.Time // the first request
	warned bool      // "no session yet" was logged
	id     string    // the session found
}

// Session returns the id of the agent session the gateway serves, or ""
// if none is found yet (the request is then served by a workflow of the
// gateway's own). It reads the store once: an exact match is taken at
// once, the best match once Wait has passed since the first request;
// once found, the id never changes.
func (r *Resolver) Session(ctx context.Context) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.id != "" {
		return r.id
	}
	log := r.Logger
	if log == nil {
		log = slog.Default()
	}
	if r.Project == "" {
		wd, err := os.Getwd()
		if err != nil {
			wd = "."
		}
		var ok bool
		if r.Project, ok = FindProject(os.Getenv("CLAUDE_PROJECT_DIR"), os.Getenv("GEMINI_PROJECT_DIR"), wd); !ok {
			r.Project = ProjectDir(wd)
		}
	}
	if r.Ancestry == nil {
		r.Ancestry = Ancestry()
	}
	now := time.Now()
	if r.first.IsZero() {
		r.first = now
	}
	m, err := ResolveSession(ctx, r.Store, r.Project, r.Ancestry, nil)
	if err != nil {
		log.Warn("chartgate: finding the agent session of this gateway", "error", err)
	}
	if m.ID == "" || !m.Exact && now.Sub(r.first) < orDefault(r.Wait, 5*time.Second) {
		if !r.warned {
			r.warned = true
			log.Info("chartgate: no hook of this gateway's agent session has run yet: a workflow of its own serves until one does", "project", r.Project)
		}
		return ""
	}
	r.id = m.ID
	log.Info("chartgate: serving the workflow of agent session", "session", m.ID, "exact", m.Exact, "depth", m.Depth)
	return m.ID
}

// Name returns the id of the agent session the gateway serves, as
// Session does, within 5 s: the name a gateway over stdio, which serves
// one MCP session, gives its session's workflow (mcpbind's
// Options.SessionKey: func(*mcp.ServerSession) string { return r.Name() }).
func (r *Resolver) Name() string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return r.Session(ctx)
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
