// This file defines the Handler, which answers a hook event from the
// workflow of its agent session: the phase for context events, the gate's
// and the shell policy's decision before a tool runs, the call's record
// and the interrupts after, and whether the agent may stop.

package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/internal/jsonx"
	"github.com/chartgate/chartgate/shellpolicy"
	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/workflow"
)

// Options configures a [Handler]. The zero value (or nil) means the
// defaults.
type Options struct {
	// Gateway is the name of the chartgate gateway's entry in the host's
	// MCP configuration (default "chartgate"): the calls of its tools
	// (mcp__chartgate__*) are left to the gateway, which gates and records
	// them itself.
	Gateway string
	// TransitionTool is the gateway's tool that sends events, named in
	// the guidance (default "workflow_transition").
	TransitionTool string
	// MaxStopBlocks bounds the stops refused in a row, with no tool call
	// between them (default 3): an agent that cannot move the workflow on
	// is let go rather than kept in a loop.
	MaxStopBlocks int
	// Refresh is how long a session's record in the store is trusted
	// before a hook writes it again (default 30 s). Session starts always
	// write it.
	Refresh time.Duration
	// Ancestry returns the hook process' ancestry; default [Ancestry].
	Ancestry func() []Proc
	// Getenv reads the hook process' environment (HOME, XDG_CONFIG_HOME,
	// CODEX_HOME, COPILOT_HOME: where the files no tool may touch are);
	// default os.Getenv. The hook daemon gives its client's.
	Getenv func(string) string
	// Now returns the current time; default time.Now.
	Now func() time.Time
}

// Handler answers the hook events of one project's workflow. Build one per
// process with [NewHandler]; it is safe for concurrent use.
type Handler struct {
	wf      *workflow.Workflow
	gate    gate.Decider
	store   gate.Store
	project string
	o       Options
	stop    bool // the workflow asks that the agent does not stop before a final state

	mcp      map[string]gate.StateMCP   // by state id
	nodes    map[string]statechart.Node // by state id
	patterns []string                   // the tool names and patterns the states give, "*" aside
	vocab    []string                   // the tools named in guidance: the canonical ones and those the states name
	events   map[string]string          // event -> a tool that sends it
}

// NewHandler returns a handler of workflow w, whose gate (built with
// gate.New on w.Machine's engine, store and the KeyPrefix the gateway
// uses) keeps the workflows of the agent sessions in store. project is
// the project folder ([ProjectDir]): files are matched against the
// interrupts relative to it. It fails when the workflow's "stop" setting
// is neither "block" nor "allow" (see the package documentation).
func NewHandler(w *workflow.Workflow, g gate.Decider, store gate.Store, project string, opts *Options) (*Handler, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Gateway == "" {
		o.Gateway = "chartgate"
	}
	if o.TransitionTool == "" {
		o.TransitionTool = "workflow_transition"
	}
	if o.MaxStopBlocks <= 0 {
		o.MaxStopBlocks = 3
	}
	if o.Refresh <= 0 {
		o.Refresh = 30 * time.Second
	}
	if o.Ancestry == nil {
		o.Ancestry = Ancestry
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	stop, err := stopSetting(w)
	if err != nil {
		return nil, err
	}
	h := &Handler{wf: w, gate: g, store: store, project: project, o: o, stop: stop,
		mcp: map[string]gate.StateMCP{}, nodes: map[string]statechart.Node{}, events: map[string]string{}}
	h.vocab = slices.Clone(vocabulary)
	for _, sm := range g.States() {
		h.mcp[sm.StateID] = sm
		for _, t := range append(slices.Clone(sm.Tools), sm.Deny...) {
			if t == "*" {
				continue
			}
			if !slices.Contains(h.patterns, t) {
				h.patterns = append(h.patterns, t)
			}
			if !strings.Contains(t, "*") && !slices.Contains(h.vocab, t) {
				h.vocab = append(h.vocab, t)
			}
		}
		for tool, ev := range sm.Events {
			h.events[ev] = tool
			if !slices.Contains(h.patterns, tool) {
				h.patterns = append(h.patterns, tool)
			}
		}
	}
	for _, n := range w.Machine.Nodes() {
		h.nodes[n.ID] = n
	}
	return h, nil
}

// stopSetting reads the workflow's "stop" setting: meta.stop of a
// Statewright file, meta.chartgate.workflow.stop of an XState machine
// (both land in Workflow.Meta.Extra). "block" keeps the agent from
// stopping before a final state; "allow" does not. The default is "block"
// for Statewright workflows (what Statewright's gateway does) and "allow"
// for XState ones.
func stopSetting(w *workflow.Workflow) (bool, error) {
	raw, ok := w.Meta.Extra["stop"]
	if !ok {
		return w.Format == workflow.FormatStatewright, nil
	}
	switch v := gjson.ParseBytes(raw); {
	case v.Type == gjson.String && v.String() == "block":
		return true, nil
	case v.Type == gjson.String && v.String() == "allow":
		return false, nil
	}
	where := "meta.stop"
	if w.Format == workflow.FormatXState {
		where = "meta.chartgate.workflow.stop"
	}
	return false, fmt.Errorf("hook: %s: must be \"block\" or \"allow\", not %s", where, raw)
}

// request is a request to the gate for a tool of the agent, with the
// agent's tools for the refusals' guidance. wf, if not nil, is the
// workflow as the event read it: the gate decides on it without loading
// it again.
func (h *Handler) request(ref gate.Ref, wf *gate.Workflow, tool string, args json.RawMessage) gate.Request {
	return gate.Request{Ref: ref, Workflow: wf, Tool: tool, Args: args, Tools: h.vocab, TransitionTool: h.o.TransitionTool}
}

// Handle answers one hook event. Events of kind KindOther get the zero
// Result. Errors are the store's and the workflow's; a caller should
// refuse a pre tool event it could not decide.
func (h *Handler) Handle(ctx context.Context, ev Event) (Result, error) {
	if ev.Kind == KindOther {
		return Result{}, nil
	}
	ctx = withSendBy(ctx, time.Now())
	sess, err := h.touch(ctx, ev)
	if err != nil {
		return h.unrecorded(ev, fmt.Errorf("hook: recording the agent session: %w", err))
	}
	ref := gate.Ref{Name: ev.SessionID}
	// What earlier events could not apply goes first.
	notes, left, err := h.catchUp(ctx, ev, ref, sess)
	if err != nil {
		return h.unrecorded(ev, err)
	}
	wf, err := h.gate.WorkflowOf(ctx, ref)
	if err != nil {
		return h.unrecorded(ev, fmt.Errorf("hook: loading the workflow: %w", err))
	}
	done := wf.State.Status() == statechart.StatusDone
	var res Result
	switch ev.Kind {
	case KindSessionStart, KindPrompt:
		res = Result{Context: h.describe(ctx, ev.Host, ref, wf)}
	case KindPreTool:
		if done {
			res, _ = h.guard(ctx, ev, wf)
			break
		}
		if len(left) > 0 {
			return Result{Deny: pendingDeny(left)}, nil
		}
		if res, err = h.preTool(ctx, ev, ref, wf, sess); err != nil || res.Deny != "" {
			return res, err
		}
		if g, refused := h.guard(ctx, ev, wf); refused {
			return g, nil
		}
	case KindPostTool:
		if done {
			break
		}
		if res, err = h.postTool(ctx, ev, ref, wf, sess, len(left) > 0); err != nil {
			return h.unrecorded(ev, err)
		}
	case KindStop:
		if res, err = h.stopEvent(ctx, ev, ref, wf, done); err != nil {
			return res, err
		}
	}
	if len(notes) > 0 {
		res.Context = strings.TrimSpace(strings.Join(notes, "\n") + "\n" + res.Context)
	}
	return res, nil
}

// errNothingApplied marks the error of a post tool event of which nothing
// reached the workflow: the whole event can be kept and replayed.
var errNothingApplied = errors.New("nothing of the call was applied")

// unrecorded answers an event that failed with err. A post tool event of
// which nothing reached the workflow (its store failed) is kept in the
// session's pending file, to be replayed by the next event; the agent is
// told, and the next pre tool event is refused until it is applied.
func (h *Handler) unrecorded(ev Event, err error) (Result, error) {
	if ev.Kind != KindPostTool || h.isGateway(ev) {
		return Result{}, err
	}
	var applied *appliedError
	if errors.As(err, &applied) {
		return Result{}, err
	}
	if kerr := h.keepInFile(ev); kerr != nil {
		return Result{}, errors.Join(err, fmt.Errorf("hook: keeping the call for later: %w", kerr))
	}
	return Result{Context: fmt.Sprintf("chartgate: this call could not be recorded in the workflow (%v): it is kept, and applied before the next tool call is decided.", err)}, nil
}

// appliedError is the error of a post tool event that failed after some
// of it reached the workflow: replaying it whole would apply that twice.
type appliedError struct{ err error }

func (e *appliedError) Error() string { return e.err.Error() }
func (e *appliedError) Unwrap() error { return e.err }

// touch records the agent session in the store: created, or refreshed
// when the host, the folder or the time asks for it (a session start
// always: a resumed session may run in a new host process), and its
// count of refused stops reset by a tool event.
func (h *Handler) touch(ctx context.Context, ev Event) (*AgentSession, error) {
	now := h.o.Now()
	var anc []Proc
	ancestry := func() []Proc {
		if anc == nil {
			anc = h.o.Ancestry()
		}
		return anc
	}
	s, err := UpdateSession(ctx, h.store, ev.SessionID, func(s *AgentSession) bool {
		changed := false
		if s.Seen.IsZero() || ev.Kind == KindSessionStart || s.Host != ev.Host || s.Project != h.project ||
			s.Cwd != ev.Cwd || now.Sub(s.Seen) >= h.o.Refresh || now.Before(s.Seen) {
			s.Host, s.Project, s.Cwd, s.Seen, s.Ancestry = ev.Host, h.project, ev.Cwd, now, ancestry()
			changed = true
		}
		if (ev.Kind == KindPreTool || ev.Kind == KindPostTool) && s.StopBlocks != 0 {
			s.StopBlocks = 0
			changed = true
		}
		return changed
	})
	if err == nil && ev.Kind == KindSessionStart {
		// Best effort: the records of sessions gone for a week.
		_, _ = PruneSessions(ctx, h.store, now.Add(-7*24*time.Hour))
	}
	return s, err
}

// isGateway reports whether ev's tool is one of the chartgate gateway's:
// an MCP tool of the server entry named Options.Gateway, or (Cursor, which
// gives the server's command) of a server run as "chartgate serve".
func (h *Handler) isGateway(ev Event) bool {
	if ev.Server == "" {
		return false
	}
	if ev.Server == h.o.Gateway {
		return true
	}
	f := strings.Fields(ev.Server)
	return len(f) >= 2 && strings.HasPrefix(filepath.Base(f[0]), "chartgate") && slices.Contains(f[1:], "serve")
}

// gateName returns the name the gate knows ev's tool by: the host's own
// name when some state names it (by name, or by a pattern other than
// "*"), else its canonical name (see the package documentation, "Tool
// names").
func (h *Handler) gateName(ev Event) string {
	c := canonical(ev)
	if ev.Tool != c && h.names(ev.Tool) {
		return ev.Tool
	}
	return c
}

// names reports whether a state of the workflow names tool, by name or by
// a pattern other than "*". Tool patterns have mcpbind's one rule, "*"
// matching any run of characters, which shellpolicy.MatchCommand applies
// to a one-word text.
func (h *Handler) names(tool string) bool {
	for _, p := range h.patterns {
		if shellpolicy.MatchCommand(p, []string{tool}) {
			return true
		}
	}
	return false
}

// nameFor returns the name the gate knows a canonical tool by, for this
// host: a host name of it that the workflow names, else the canonical one.
func (h *Handler) nameFor(host Host, tool string) string {
	for native, c := range hostTools[host] {
		if c == tool && h.names(native) {
			return native
		}
	}
	return tool
}

// activePolicies returns the policies of the active states that set any;
// a workflow whose active states set none has the zero policy (its shell
// is Bash, with no allowed_commands).
func (h *Handler) activePolicies(st statechart.State) []workflow.StatePolicy {
	var out []workflow.StatePolicy
	for _, id := range st.StateIDs() {
		if p, ok := h.wf.Policies[id]; ok {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		out = []workflow.StatePolicy{{AllowedCommandsTool: toolShell}}
	}
	return out
}

// classTools are the tools shell commands' classes need (Statewright's
// table, shellpolicy.DefaultRequirements).
var classTools = []string{"Read", "Grep", "Glob", "Edit", "Write", "WebFetch"}

// allowedNow returns which of tools the gate allows now.
func (h *Handler) allowedNow(ctx context.Context, host Host, ref gate.Ref, wf *gate.Workflow, tools []string) ([]string, error) {
	out := []string{}
	for _, t := range tools {
		d, err := h.gate.Decide(ctx, h.request(ref, wf, h.nameFor(host, t), nil))
		if err != nil {
			return nil, err
		}
		if d.Allowed {
			out = append(out, t)
		}
	}
	return out, nil
}

// preTool decides whether a tool may run: the gate's decision (visible in
// the active states, within the budgets), then for the shell tool the
// shell policy of every active state, for edits max_edit_lines and
// max_files_per_state, and for reads the repeated-read warning.
func (h *Handler) preTool(ctx context.Context, ev Event, ref gate.Ref, wf *gate.Workflow, sess *AgentSession) (Result, error) {
	if h.isGateway(ev) || discovery(ev) {
		return Result{}, nil
	}
	name, canon := h.gateName(ev), canonical(ev)
	d, err := h.gate.Decide(ctx, h.request(ref, wf, name, rawObject(ev.Input)))
	if err != nil {
		return Result{}, fmt.Errorf("hook: checking %s: %w", name, err)
	}
	if !d.Allowed {
		reason := d.Text
		if reason == "" {
			reason = fmt.Sprintf("Tool %q is not available in the current workflow state (%s).", name, jsonx.Text(wf.State.Value()))
		}
		return Result{Deny: reason}, nil
	}
	policies := h.activePolicies(wf.State)
	if isShell(policies, name, canon) {
		return h.shell(ctx, ev, ref, wf, policies)
	}
	if isEdit(canon) {
		return h.edit(ev, wf, policies, sess), nil
	}
	if isRead(canon) {
		return h.preRead(ctx, ev, wf, policies, sess)
	}
	return Result{}, nil
}

// guard refuses, in every state (a final one included), what would move
// the gate itself: a shell command the protection refuses (running
// chartgate, writing chartgate's files or the hosts' hook and MCP
// configuration, naming the store or the approval secret), a file tool
// writing a protected path, and any tool naming a secret. The gateway's
// own tools are left to the gateway.
func (h *Handler) guard(ctx context.Context, ev Event, wf *gate.Workflow) (Result, bool) {
	if h.isGateway(ev) {
		return Result{}, false
	}
	prot := h.protection(ev)
	name, canon := h.gateName(ev), canonical(ev)
	if canon == toolShell || isShell(h.activePolicies(wf.State), name, canon) {
		// Only the protection: no class needs a tool, unknown commands
		// pass; the state's own policy is applied after the gate's check.
		sp := shellpolicy.Policy{AllowUnknown: true, Requires: shellpolicy.Requirements{}, Protect: prot}
		if d := checkLine(ctx, &sp, command(ev)); !d.Allowed {
			return Result{Deny: d.Reason}, true
		}
		return Result{}, false
	}
	write := isEdit(canon)
	for _, f := range editedFiles(ev) {
		if _, refused := protected(prot, ev, f, write); refused {
			return Result{Deny: protectedReason(projectPath(h.project, ev.Cwd, f), write)}, true
		}
	}
	return Result{}, false
}

// checkLine decides a shell line under a deadline that leaves the host's
// own hook timeout room: a line not decided in time is refused.
func checkLine(ctx context.Context, sp *shellpolicy.Policy, line string) shellpolicy.Decision {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return sp.CheckContext(ctx, line)
}

// hostFiles are the hosts' project files that run chartgate's hooks and
// gateway, relative to the project folder.
var hostFiles = []string{
	".claude/settings.json", ".claude/settings.local.json", ".mcp.json",
	".codex/hooks.json", ".codex/config.toml",
	".cursor/hooks.json", ".cursor/mcp.json",
	".gemini/settings.json",
	".github/hooks/**",
}

// userFiles are the hosts' user-level files that hold hooks, MCP servers
// or the settings that switch hooks off (Claude Code's disableAllHooks),
// relative to the home folder: Claude Code's settings and ~/.claude.json
// (user MCP servers), Codex's config.toml and hooks.json, Gemini CLI's
// settings.json, Cursor's hooks.json and mcp.json, Copilot CLI's
// settings.json, config.json, mcp-config.json and hooks/.
var userFiles = []string{
	".claude/settings.json", ".claude/settings.local.json", ".claude.json",
	".codex/config.toml", ".codex/hooks.json",
	".gemini/settings.json",
	".cursor/hooks.json", ".cursor/mcp.json",
	".copilot/settings.json", ".copilot/config.json", ".copilot/mcp-config.json", ".copilot/hooks/**",
}

// protection returns what no tool of the agent may touch, for an event:
// the project's .chartgate folder (the workflow, the store), the hosts'
// project and user-level files, and chartgate's user configuration folder
// ($XDG_CONFIG_HOME/chartgate, else ~/.config/chartgate, where approvals'
// secret lives), the store and that folder being secrets no command may
// name; and the chartgate program. CODEX_HOME and COPILOT_HOME move those
// hosts' user folders, as they do for the hosts.
func (h *Handler) protection(ev Event) *shellpolicy.Protection {
	home := h.homeDir()
	pr := &shellpolicy.Protection{
		Paths:    append([]string{ConfigDir + "/**"}, hostFiles...),
		Secrets:  []string{ConfigDir + "/state.db*"},
		Programs: []string{"chartgate"},
		Dir:      shellDir(ev),
		Project:  h.project,
		Home:     home,
		Resolve:  resolveLinks,
	}
	if pr.Dir == "" {
		pr.Dir = h.project
	}
	if home != "" {
		for _, f := range userFiles {
			pr.Paths = append(pr.Paths, "~/"+f)
		}
	}
	for env, dir := range map[string]string{"CODEX_HOME": ".codex", "COPILOT_HOME": ".copilot"} {
		if d := h.o.Getenv(env); filepath.IsAbs(d) {
			for _, f := range userFiles {
				if rest, ok := strings.CutPrefix(f, dir+"/"); ok {
					pr.Paths = append(pr.Paths, filepath.ToSlash(filepath.Join(d, rest)))
				}
			}
		}
	}
	config := h.o.Getenv("XDG_CONFIG_HOME")
	switch {
	case filepath.IsAbs(config):
		config = filepath.ToSlash(filepath.Join(config, "chartgate")) + "/**"
	case home != "":
		config = "~/.config/chartgate/**"
	default:
		config = ""
	}
	if config != "" {
		pr.Paths = append(pr.Paths, config)
		pr.Secrets = append(pr.Secrets, config)
	}
	return pr
}

// homeDir returns the user's home folder as os.UserHomeDir finds it, from
// the environment Options.Getenv reads ("" when it is not set).
func (h *Handler) homeDir() string {
	switch runtime.GOOS {
	case "windows":
		return h.o.Getenv("USERPROFILE")
	case "plan9":
		return h.o.Getenv("home")
	}
	return h.o.Getenv("HOME")
}

// resolveLinks returns an absolute path with the symbolic links of its
// longest existing prefix resolved ("" when nothing resolves).
func resolveLinks(p string) string {
	rest := ""
	for dir := filepath.Clean(p); ; {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.ToSlash(filepath.Join(r, rest))
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// protected reports whether a file tool's file is protected: written
// (write), a protected path, a folder holding one, or an ancestor of one;
// read or searched, a secret. It returns the pattern that protects it.
// The file is resolved as the shell's paths are: relative to the tool's
// folder, "~" to the home folder, ".." lexically, symbolic links that
// exist on disk, without regard to case.
func protected(pr *shellpolicy.Protection, ev Event, file string, write bool) (string, bool) {
	if !filepath.IsAbs(file) && file != "~" && !strings.HasPrefix(file, "~/") {
		dir := ev.Cwd
		if dir == "" {
			dir = pr.Project
		}
		file = filepath.Join(dir, file)
	}
	file = filepath.ToSlash(file)
	if write {
		return pr.Covers(file)
	}
	return pr.Names(file)
}

func protectedReason(p string, write bool) string {
	if !write {
		return fmt.Sprintf("Reading %s is refused in every state: it holds the workflow's state or the approvals' secret. A person reads it, not the agent.", p)
	}
	return fmt.Sprintf("Writing %s is refused in every state: it holds the workflow, its state, or the configuration that enforces it. A person changes it, not the agent.", p)
}

// isShell reports whether a tool is the shell tool of one of the active
// states (allowed_commands_tool, default Bash).
func isShell(policies []workflow.StatePolicy, name, canon string) bool {
	for _, p := range policies {
		t := p.AllowedCommandsTool
		if t == "" {
			t = toolShell
		}
		if t == name || t == canon {
			return true
		}
	}
	return false
}

// shell applies each active state's shell policy to a command: its
// allowed_commands, its blocked_env, and the tools allowed now for the
// classes of commands (a write needs Write or Edit). An allowed command
// is rewritten to run with the states' env_overrides set, where the host
// lets a hook rewrite it.
func (h *Handler) shell(ctx context.Context, ev Event, ref gate.Ref, wf *gate.Workflow, policies []workflow.StatePolicy) (Result, error) {
	line := command(ev)
	tools, err := h.allowedNow(ctx, ev.Host, ref, wf, classTools)
	if err != nil {
		return Result{}, err
	}
	prot := h.protection(ev)
	for _, p := range policies {
		sp := shellpolicy.Policy{AllowedCommands: p.AllowedCommands, AllowedTools: tools, BlockedEnv: p.BlockedEnv, Protect: prot}
		if d := checkLine(ctx, &sp, line); !d.Allowed {
			reason := d.Reason
			if h.statewright() {
				if sw := swShellRefusal(d, &sp, line, jsonx.Text(wf.State.Value())); sw != "" {
					reason = sw + "\n" + reason
				}
			}
			return Result{Deny: reason + "\n" + h.moveOn(wf)}, nil
		}
	}
	// The line the agent wrote was decided; now it gets the states'
	// variables (env.go).
	in, err := withEnv(ev, envOverrides(policies))
	if err != nil {
		return Result{}, err
	}
	return Result{UpdatedInput: in}, nil
}

// edit applies max_edit_lines and max_files_per_state to an edit.
func (h *Handler) edit(ev Event, wf *gate.Workflow, policies []workflow.StatePolicy, sess *AgentSession) Result {
	state := jsonx.Text(wf.State.Value())
	maxLines, maxFiles := -1, -1
	for _, p := range policies {
		if p.MaxEditLines != nil && (maxLines < 0 || *p.MaxEditLines < maxLines) {
			maxLines = *p.MaxEditLines
		}
		if p.MaxFilesPerState != nil && (maxFiles < 0 || *p.MaxFilesPerState < maxFiles) {
			maxFiles = *p.MaxFilesPerState
		}
	}
	if n := editLines(ev); maxLines >= 0 && n > maxLines {
		if h.statewright() {
			return Result{Deny: fmt.Sprintf("Edit rejected: %d lines changed exceeds limit of %d for state '%s'. Break the edit into smaller changes.", n, maxLines, state)}
		}
		return Result{Deny: fmt.Sprintf("Edit rejected: it changes %d lines, more than the limit of %d in state %s. Break it into smaller edits.", n, maxLines, state)}
	}
	if maxFiles >= 0 {
		done := editsSince(sess, entered(wf))
		var fresh []string
		for _, f := range editedFiles(ev) {
			p := projectPath(h.project, ev.Cwd, f)
			if !slices.Contains(done, p) && !slices.Contains(fresh, p) {
				fresh = append(fresh, p)
			}
		}
		if len(fresh) > 0 && len(done)+len(fresh) > maxFiles {
			if h.statewright() {
				return Result{Deny: fmt.Sprintf("Edit rejected: already edited %d files in state '%s' (limit: %d). Transition to next state or reduce scope. Files edited: %s\n%s",
					len(done), state, maxFiles, strings.Join(done, ", "), h.moveOn(wf))}
			}
			return Result{Deny: fmt.Sprintf("Edit rejected: %d files were already edited in state %s, and the limit is %d (%s). Edit those files, or move the workflow on.\n%s",
				len(done), state, maxFiles, strings.Join(done, ", "), h.moveOn(wf))}
		}
	}
	return Result{}
}

// entered identifies the entry of the current state: its value and the
// time of the newest transition of the run history.
func entered(wf *gate.Workflow) string {
	since := jsonx.Text(wf.State.Value())
	for i := len(wf.History) - 1; i >= 0; i-- {
		if wf.History[i].Outcome == "" {
			return since + "@" + wf.History[i].Time.UTC().Format(time.RFC3339Nano)
		}
	}
	return since
}

// editsSince returns the files a session edited since the state's entry.
func editsSince(s *AgentSession, since string) []string {
	if s == nil || s.Edits == nil || s.Edits.Since != since {
		return nil
	}
	return s.Edits.Files
}

// maxFiles reports whether an active state bounds the files edited.
func maxFiles(policies []workflow.StatePolicy) bool {
	return slices.ContainsFunc(policies, func(p workflow.StatePolicy) bool { return p.MaxFilesPerState != nil })
}

// postTool records a call that ran (budgets, and the tool's bound event if
// it succeeded), counts its output and the file it read (the context
// budget, repeated reads: budget.go), then sends the interrupts whose file
// pattern matches a file it wrote.
//
// An event it must send that the workflow cannot take now (held by a
// call for longer than the gate waits, a store that fails), and every
// later one of the call, is kept in the session's pending events, in
// order (queued: earlier ones are pending already), for the next hook
// event to apply.
func (h *Handler) postTool(ctx context.Context, ev Event, ref gate.Ref, wf *gate.Workflow, sess *AgentSession, queued bool) (Result, error) {
	if h.isGateway(ev) {
		// The gateway moved the workflow: the answer carries the new
		// state's phase (instructions, tools, events).
		if canonical(ev) == h.o.TransitionTool && !ev.Failed {
			return Result{Context: h.describe(ctx, ev.Host, ref, wf)}, nil
		}
		return Result{}, nil
	}
	if discovery(ev) {
		return Result{}, nil
	}
	name, canon := h.gateName(ev), canonical(ev)
	var notes []string
	var tr *gate.Transition
	var sideErr error
	kept := 0
	keep := func(p PendingEvent, why error) error {
		p.ID, p.Time, p.Reason = newID(), h.o.Now(), why.Error()
		if err := h.keep(ctx, ev.SessionID, []PendingEvent{p}); err != nil {
			return fmt.Errorf("hook: keeping %s for later: %w", p.what(), err)
		}
		kept++
		queued = true
		return nil
	}
	record := PendingEvent{Tool: name, Input: rawObject(ev.Input), Failed: ev.Failed}
	if queued {
		if err := keep(record, errors.New("earlier events of this session are not applied yet")); err != nil {
			return Result{}, fmt.Errorf("%w: %w", errNothingApplied, err)
		}
	} else if t, err := h.apply(ctx, ref, record); err != nil {
		if kerr := keep(record, err); kerr != nil {
			return Result{}, fmt.Errorf("hook: recording %s: %w (%w)", name, err, kerr)
		}
	} else {
		tr = t
	}
	if tr != nil {
		notes = append(notes, fmt.Sprintf("chartgate: %s sent %s: the workflow moved from %s to %s.", name, tr.Event.Type, jsonx.Text(tr.From), jsonx.Text(tr.To)))
	} else if len(wf.Limits) > 0 {
		// What fails from here on does not keep the events of the call
		// from being sent: it is reported once they are.
		if note, err := h.checkpoint(ctx, ref); err != nil {
			sideErr = errors.Join(sideErr, err)
		} else if note != "" {
			notes = append(notes, note)
		}
	}
	policies := h.activePolicies(wf.State)
	var files []string
	switch {
	case isEdit(canon):
		for _, f := range editedFiles(ev) {
			files = append(files, projectPath(h.project, ev.Cwd, f))
		}
		if maxFiles(policies) && !ev.Failed {
			if err := h.recordEdits(ctx, ev.SessionID, entered(wf), files); err != nil {
				sideErr = errors.Join(sideErr, err)
			}
		}
	case isShell(policies, name, canon):
		if a, err := shellpolicy.Analyze(command(ev)); err == nil {
			for _, p := range a.Writes() {
				if !p.Dynamic {
					files = append(files, projectPath(h.project, shellDir(ev), p.Path))
				}
			}
		}
	}
	reads, err := h.postReads(ctx, ev, wf, policies, canon, sess, tr != nil)
	if err != nil {
		sideErr = errors.Join(sideErr, err)
	}
	sent := map[string]bool{}
	for _, f := range files {
		in, ok := h.wf.MatchInterrupt(f)
		if !ok || sent[in.Event] {
			continue
		}
		sent[in.Event] = true
		p := PendingEvent{Interrupt: in.Name, Event: in.Event, File: f}
		if queued {
			if err := keep(p, errors.New("earlier events of this session are not applied yet")); err != nil {
				return Result{}, &appliedError{err}
			}
			continue
		}
		t, err := h.apply(ctx, ref, p)
		if err != nil {
			if kerr := keep(p, err); kerr != nil {
				return Result{}, &appliedError{fmt.Errorf("hook: sending interrupt %s: %w (%w)", in.Name, err, kerr)}
			}
			continue
		}
		if t == nil {
			continue // an interrupt is being handled already
		}
		phase := ""
		if now, err := h.gate.WorkflowOf(ctx, ref); err == nil {
			phase = "\n" + h.describe(ctx, ev.Host, ref, now)
		}
		notes = append(notes, fmt.Sprintf("chartgate: file %s triggered interrupt %q: the workflow moved from %s to %s.%s",
			f, in.Name, jsonx.Text(t.From), jsonx.Text(t.To), phase))
		reads = nil // about the state left
	}
	notes = append(notes, reads...)
	if sideErr != nil {
		return Result{}, &appliedError{sideErr}
	}
	if kept > 0 {
		notes = append(notes, fmt.Sprintf("chartgate: the workflow could not take %d event(s) this call sent (it is busy, or its store failed): they are kept, and applied before the next tool call is decided; until then tools are refused.", kept))
	}
	return Result{Context: strings.Join(notes, "\n")}, nil
}

// checkpoint returns the notice of a used-up budget whose state only
// warns (Statewright's max_iterations): the calls made, and how to move
// on.
func (h *Handler) checkpoint(ctx context.Context, ref gate.Ref) (string, error) {
	now, err := h.gate.WorkflowOf(ctx, ref)
	if err != nil {
		return "", err
	}
	for _, l := range now.Limits {
		if l.Warn && l.Calls >= l.Max {
			return fmt.Sprintf("chartgate checkpoint: %d calls made of %d in state %s. Move the workflow on with %s.\n%s",
				l.Calls, l.Max, l.State, h.o.TransitionTool, h.moveOn(now)), nil
		}
	}
	return "", nil
}

// recordEdits adds files to the session's edits in the current state.
func (h *Handler) recordEdits(ctx context.Context, session, since string, files []string) error {
	if len(files) == 0 {
		return nil
	}
	_, err := UpdateSession(ctx, h.store, session, func(s *AgentSession) bool {
		if s.Edits == nil || s.Edits.Since != since {
			s.Edits = &StateEdits{Since: since}
		}
		changed := false
		for _, f := range files {
			if !slices.Contains(s.Edits.Files, f) {
				s.Edits.Files = append(s.Edits.Files, f)
				changed = true
			}
		}
		return changed
	})
	return err
}

// stopEvent keeps the agent from stopping before a final state, when the
// workflow asks for it: at most MaxStopBlocks times in a row, and never
// while a transition waits for a person's approval (the agent cannot move
// the workflow then).
func (h *Handler) stopEvent(ctx context.Context, ev Event, ref gate.Ref, wf *gate.Workflow, done bool) (Result, error) {
	if done || !h.stop || wf.State.Status() != statechart.StatusActive {
		return Result{}, h.resetStops(ctx, ev.SessionID)
	}
	if a, err := h.gate.Pending(ctx, ref); err != nil || a != nil {
		return Result{}, err
	}
	block := false
	_, err := UpdateSession(ctx, h.store, ev.SessionID, func(s *AgentSession) bool {
		block = s.StopBlocks < h.o.MaxStopBlocks
		if block {
			s.StopBlocks++
		} else {
			s.StopBlocks = 0
		}
		return true
	})
	if err != nil || !block {
		return Result{}, err
	}
	return Result{Block: fmt.Sprintf("chartgate: the workflow is not finished: it is in state %s, not a final state. Move it on with %s before you stop, or say what keeps you from it.\n%s",
		jsonx.Text(wf.State.Value()), h.o.TransitionTool, h.describe(ctx, ev.Host, ref, wf))}, nil
}

// resetStops sets the session's count of refused stops to zero.
func (h *Handler) resetStops(ctx context.Context, session string) error {
	_, err := UpdateSession(ctx, h.store, session, func(s *AgentSession) bool {
		if s.StopBlocks == 0 {
			return false
		}
		s.StopBlocks = 0
		return true
	})
	return err
}
