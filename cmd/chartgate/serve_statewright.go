// This file holds Statewright's own tools, served with --compat
// statewright next to the workflow gate: list, status, load (joining the
// session's workflow or a fork's branch), create, pause and deactivate;
// the middleware that answers get_state and transition for a session in a
// branch; implicit transitions; and the refusals in Statewright's words.

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/gateway"
	"github.com/chartgate/chartgate/hook"
	"github.com/chartgate/chartgate/internal/jsonx"
	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/workflow"
)

// statewrightOwnTools are Statewright's tools besides get_state and
// transition, which the gate never gates.
var statewrightOwnTools = []string{
	"statewright_list_workflows", "statewright_load_workflow", "statewright_deactivate",
	"statewright_get_status", "statewright_pause", "statewright_create_workflow",
}

// statewrightTools serves Statewright's other six tools, in its input and
// output shapes, on the gate's workflow store. None of them lets the agent
// change the workflow it works in or switch enforcement off: a load joins
// the session's workflow (it never resets it or loads another, and joins
// a fork's branch), pause and deactivate hold the workflow where no tool
// runs until a person resumes it (chartgate resume), and a created
// workflow is validated, then stored under keys of its own
// (createdWorkflowPrefix), which neither the gate nor the hooks read: it is
// listed, never enforced, and cannot replace the workflow in force.
type statewrightTools struct {
	w        *workflow.Workflow
	gate     *mcpbind.Gate
	gw       *gateway.Gateway // the upstream tools
	store    mcpbind.Store    // where created workflows are kept
	implicit bool             // --implicit-transitions
	session  string           // --session: the name of the session's workflow, if any
	resolver *hook.Resolver   // --session auto's
	logger   *slog.Logger

	mu      sync.Mutex
	created map[string]bool // the workflows create_workflow kept, when the store cannot list them
	// branches are the fork branches sessions joined with load_workflow
	// {branch}, until they finish them or the branch is no longer running.
	branches map[*mcp.ServerSession]string
}

func (t *statewrightTools) add(s *mcp.Server) {
	s.AddReceivingMiddleware(t.branchMiddleware)
	empty := json.RawMessage(`{"type":"object","properties":{}}`)
	s.AddTool(&mcp.Tool{Name: "statewright_list_workflows", Description: "List all available named workflows and which one is currently active.", InputSchema: empty}, t.listWorkflows)
	s.AddTool(&mcp.Tool{Name: "statewright_get_status", Description: "Get gateway status: active workflow, current state, available workflows.", InputSchema: empty}, t.getStatus)
	s.AddTool(&mcp.Tool{Name: "statewright_pause", Description: "Pause the current workflow: no tool runs until a person resumes it (chartgate resume).", InputSchema: empty}, t.pause("pause"))
	s.AddTool(&mcp.Tool{Name: "statewright_deactivate", Description: "Deactivate the workflow: here it is paused (no tool runs) until a person resumes it (chartgate resume); enforcement stays on.", InputSchema: empty}, t.pause("deactivate"))
	s.AddTool(&mcp.Tool{
		Name:        statewrightLoadWorkflow,
		Description: "Load a named workflow: here, join the workflow this session works in (its current state is kept).",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"name":{"type":"string","description":"The workflow name to load"},` +
			`"session_id":{"type":"string","description":"Client session identifier"},` +
			`"project_id":{"type":"string","description":"Project identifier"},` +
			`"resume":{"type":"boolean","description":"Resume the workflow"},` +
			`"branch":{"type":"string","description":"Connect to a specific fork branch"}` +
			`},"required":["name"]}`),
	}, t.loadWorkflow)
	s.AddTool(&mcp.Tool{
		Name:        "statewright_create_workflow",
		Description: "Create a new workflow from a JSON definition; it is validated first, then stored in the gateway's store and listed; a person enforces a workflow.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"name":{"type":"string","description":"Workflow name (lowercase, hyphens, e.g. 'data-pipeline')"},` +
			`"definition":{"type":"object","description":"Full workflow definition"},` +
			`"overwrite":{"type":"boolean","description":"Replace a workflow of that name created before"}` +
			`},"required":["name","definition"]}`),
	}, t.createWorkflow)
}

// name is the workflow's name: its id.
func (t *statewrightTools) name() string { return t.w.Machine.ID() }

// names lists the active workflow and those create_workflow stored (in
// the store, by any process on it).
func (t *statewrightTools) names(ctx context.Context) []string {
	out := []string{t.name()}
	t.mu.Lock()
	for n := range t.created {
		out = append(out, n)
	}
	t.mu.Unlock()
	if l, ok := t.store.(keyLister); ok {
		keys, err := l.Keys(ctx, createdWorkflowPrefix)
		if err != nil {
			t.logger.Warn("chartgate serve: listing the created workflows", "error", err)
		}
		for _, k := range keys {
			out = append(out, strings.TrimPrefix(k, createdWorkflowPrefix))
		}
	}
	rest := out[1:]
	slices.Sort(rest)
	rest = slices.Compact(rest)
	rest = slices.DeleteFunc(rest, func(n string) bool { return n == t.name() })
	return append(out[:1], rest...)
}

// keyLister is a store that lists its keys (gate.Lister).
type keyLister interface {
	Keys(ctx context.Context, prefix string) ([]string, error)
}

// createdWorkflowPrefix starts the store keys of the workflows
// statewright_create_workflow stored. The gate's keys start with
// "mcpbind:" and the hooks' with "chartgate:agents:", so neither ever
// reads one.
const createdWorkflowPrefix = "chartgate:statewright:workflows:"

// Bounds of statewright_create_workflow: a name's form, a definition's
// size, and how many workflows a store keeps.
const (
	maxCreatedBytes     = 1 << 20
	maxCreatedWorkflows = 256
)

// validCreatedName reports whether name is a created workflow's name: 1
// to 128 ASCII letters, digits, '_', '.' and '-', starting with a letter
// or a digit. It is a loop rather than a regular expression because the
// expression's bounded repeat compiles into 128 nested states at every
// process start, the hook's included.
func validCreatedName(name string) bool {
	if len(name) == 0 || len(name) > 128 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case i > 0 && (c == '_' || c == '.' || c == '-'):
		default:
			return false
		}
	}
	return true
}

func (t *statewrightTools) listWorkflows(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return swJSON(map[string]any{"workflows": t.names(ctx), "active": t.name()}), nil
}

func (t *statewrightTools) getStatus(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	wf, err := t.gate.SessionWorkflow(ctx, req.Session)
	if err != nil {
		return swError(fmt.Sprintf("The workflow could not be read: %v", err)), nil
	}
	st := t.w.StatewrightState(wf)
	n := st["transition_count"]
	return swJSON(map[string]any{
		"active_workflow":     t.name(),
		"current_state":       st["state"],
		"iteration":           st["iteration"],
		"transition_count":    n,
		"is_final":            st["is_final"],
		"available_workflows": t.names(ctx),
		"usage":               map[string]any{"transitions": n, "limit": nil, "remaining": nil, "warning": nil},
	}), nil
}

// pause answers statewright_pause and statewright_deactivate: the
// workflow waits in its paused state, where no tool runs, until a person
// resumes it with chartgate resume; the agent cannot. It is a transition
// of the workflow (kept in its run history, by statewright_pause or
// statewright_deactivate). Enforcement never goes off: Statewright lets
// every tool run after either, which the agent must not be able to
// cause. A session's workflow without a name (no --session) is not
// paused: no person could name it to resume it.
func (t *statewrightTools) pause(what string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		name := t.session
		if name == "auto" {
			name = t.resolved()
		}
		if name == "" {
			return swError(fmt.Sprintf("Cannot %s: this session's workflow has no name, so no person could resume it; enforcement stays on. (A person names it with chartgate serve --session NAME.) Use statewright_get_state to see what the workflow allows.", what)), nil
		}
		wf, err := t.gate.SessionWorkflow(ctx, req.Session)
		if err != nil {
			return swError(fmt.Sprintf("The workflow could not be read: %v", err)), nil
		}
		state := t.w.StatewrightState(wf)["state"]
		tr, err := t.gate.Send(ctx, mcpbind.Ref{Name: name}, statechart.Event{Type: workflow.EventPause}, "statewright_"+what)
		if err != nil {
			return swError(fmt.Sprintf("Cannot %s: %v", what, err)), nil
		}
		if tr == nil {
			return swError(fmt.Sprintf("Cannot %s: the workflow is in state %s, which is final or already paused; enforcement stays on.", what, stateWords(state))), nil
		}
		t.logger.Warn("chartgate serve: the agent paused the workflow; a person resumes it with chartgate resume", "workflow", t.name(), "session", name, "by", "statewright_"+what, "state", state)
		out := map[string]any{
			"paused": true, "state": state, "workflow": t.name(), "run_id": nil,
			"message": fmt.Sprintf("Workflow paused: no tool runs until a person resumes it (chartgate resume name:%s). The agent cannot resume it.", name),
		}
		if what == "deactivate" {
			out["deactivated"] = true
		}
		return swJSON(out), nil
	}
}

// resolved is the name --session auto found, or "".
func (t *statewrightTools) resolved() string {
	if t.resolver == nil {
		return ""
	}
	return t.resolver.Name()
}

func (t *statewrightTools) loadWorkflow(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		Name   string `json:"name"`
		Branch string `json:"branch"`
		Resume bool   `json:"resume"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &in); err != nil || in.Name == "" {
		return swError(`statewright_load_workflow needs {"name": "<workflow>"}.`), nil
	}
	if in.Branch != "" && in.Name == t.name() {
		return t.joinBranch(ctx, req.Session, in.Name, in.Branch), nil
	}
	if in.Branch != "" {
		return swError(fmt.Sprintf("Branch '%s' not found. Is a fork active? Workflow '%s' is not the workflow this session works in ('%s').", in.Branch, in.Name, t.name())), nil
	}
	if in.Name != t.name() {
		if names := t.names(ctx); slices.Contains(names, in.Name) {
			return swError(fmt.Sprintf("Workflow '%s' cannot be loaded here: this session works in '%s', which a person chose; the agent cannot switch it.", in.Name, t.name())), nil
		}
		return swError(fmt.Sprintf("Workflow '%s' not found. Available: %s", in.Name, strings.Join(t.names(ctx), ", "))), nil
	}
	wf, err := t.gate.SessionWorkflow(ctx, req.Session)
	if err != nil {
		return swError(fmt.Sprintf("The workflow could not be read: %v", err)), nil
	}
	st := t.w.StatewrightState(wf)
	return swJSON(map[string]any{
		"loaded":         in.Name,
		"initial_state":  st["state"],
		"states":         t.w.StateNames(),
		"run_id":         st["run_id"],
		"capture_output": t.w.Meta.CaptureOutput,
		"resumed":        false,
	}), nil
}

func (t *statewrightTools) createWorkflow(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		Name       string          `json:"name"`
		Definition json.RawMessage `json:"definition"`
		Overwrite  bool            `json:"overwrite"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
		return swError(fmt.Sprintf("Invalid arguments: %v", err)), nil
	}
	switch {
	case in.Name == "":
		return swError("Workflow name is required"), nil
	case !validCreatedName(in.Name):
		return swError(fmt.Sprintf("Invalid workflow name %q: use letters, digits, '-', '_' and '.' (at most 128), e.g. 'data-pipeline'.", in.Name)), nil
	case len(in.Definition) > maxCreatedBytes:
		return swError(fmt.Sprintf("Invalid workflow definition: %d bytes, more than the %d a created workflow may have.", len(in.Definition), maxCreatedBytes)), nil
	case len(in.Definition) == 0 || !json.Valid(in.Definition) || bytes.TrimSpace(in.Definition)[0] != '{':
		return swError("Invalid workflow definition: definition must be a JSON object. See schema at https://statewright.ai/workflow-schema.json"), nil
	}
	// Validated before it is stored; a subflow it invokes is not resolved.
	if _, err := workflow.Load(in.Definition, &workflow.Options{Format: workflow.FormatStatewright}); err != nil {
		return swError(fmt.Sprintf("Workflow validation failed: %v. See schema at https://statewright.ai/workflow-schema.json", err)), nil
	}
	if in.Name == t.name() {
		return swError(fmt.Sprintf("Workflow '%s' is the workflow in force; the agent cannot replace it.", in.Name)), nil
	}
	verb, refusal := t.storeCreated(ctx, in.Name, in.Definition, in.Overwrite)
	if refusal != "" {
		return swError(refusal), nil
	}
	t.logger.Info("chartgate serve: the agent stored a workflow (not enforced)", "workflow", in.Name, "verb", verb)
	return textResult(fmt.Sprintf("Workflow '%s' %s. It is stored, not enforced: a person enforces a workflow with chartgate serve --workflow FILE.", in.Name, verb)), nil
}

// storeCreated stores a created workflow under its own key, unless it
// exists and overwrite is false; it says whether it was created or
// updated, or why it was not stored. The store's compare-and-swap keeps
// two creations of one name at once from both succeeding. A store that
// cannot list its keys keeps only what this process can list
// (t.created).
func (t *statewrightTools) storeCreated(ctx context.Context, name string, def json.RawMessage, overwrite bool) (verb, refusal string) {
	key := createdWorkflowPrefix + name
	_, version, err := t.store.Load(ctx, key)
	if err != nil {
		return "", fmt.Sprintf("Failed to save workflow: %v", err)
	}
	t.mu.Lock()
	exists := version != 0 || t.created[name]
	t.mu.Unlock()
	if exists && !overwrite {
		return "", fmt.Sprintf("Workflow '%s' already exists. Use overwrite=true to replace it.", name)
	}
	if !exists && len(t.names(ctx)) > maxCreatedWorkflows {
		return "", fmt.Sprintf("Failed to save workflow: the store keeps %d created workflows already, the most it keeps.", maxCreatedWorkflows)
	}
	record, err := json.Marshal(map[string]any{"name": name, "definition": def, "stored": time.Now().UTC(), "by": "statewright_create_workflow"})
	if err != nil {
		return "", fmt.Sprintf("Failed to save workflow: %v", err)
	}
	if _, err := t.store.CompareAndSwap(ctx, key, version, record); err != nil {
		return "", fmt.Sprintf("Failed to save workflow: %v", err)
	}
	if _, ok := t.store.(keyLister); !ok {
		t.mu.Lock()
		t.created[name] = true
		t.mu.Unlock()
	}
	if exists {
		return "updated", ""
	}
	return "created", ""
}

// swJSON answers with v as indented JSON text, as Statewright's tools do.
func swJSON(v any) *mcp.CallToolResult { return textResult(jsonx.Indented(v)) }

func swError(text string) *mcp.CallToolResult {
	r := textResult(text)
	r.IsError = true
	return r
}

// joinBranch answers statewright_load_workflow {name, branch}: the
// session joins a branch of the running fork, as a Statewright sub-agent
// joins its branch session. From then on its statewright_transition
// events are the branch's (sent as "<branch>.<EVENT>") and
// statewright_get_state shows the branch, until it sends
// BRANCH_DONE:<branch> or the branch stops running. What the session may
// call stays the workflow's.
func (t *statewrightTools) joinBranch(ctx context.Context, ss *mcp.ServerSession, name, branch string) *mcp.CallToolResult {
	wf, err := t.gate.SessionWorkflow(ctx, ss)
	if err != nil {
		return swError(fmt.Sprintf("The workflow could not be read: %v", err))
	}
	b, why := t.runningBranch(wf, branch)
	if b == nil {
		return swError(fmt.Sprintf("Branch '%s' not found. Is a fork active? %s", branch, why))
	}
	t.mu.Lock()
	_, bound := t.branches[ss]
	t.branches[ss] = branch
	t.mu.Unlock()
	if !bound {
		// The session's entry goes when the session does.
		go func() {
			ss.Wait()
			t.leaveBranch(ss)
		}()
	}
	return swJSON(map[string]any{
		"loaded": name, "branch": branch, "initial_state": b["state"], "states": t.w.StateNames(),
		"capture_output": false, "resumed": false,
	})
}

// runningBranch returns the branch of the fork running in wf, or nil and
// why it is not running.
func (t *statewrightTools) runningBranch(wf *mcpbind.Workflow, branch string) (map[string]any, string) {
	_, fork, ok := t.w.ActiveFork(wf.State)
	if !ok {
		return nil, fmt.Sprintf("No fork is running: the workflow is in state %s.", stateWords(wf.State.Value()))
	}
	branches := fork["branches"].(map[string]any)
	b, ok := branches[branch].(map[string]any)
	switch {
	case !ok:
		return nil, fmt.Sprintf("The running fork's branches are: %s.", strings.Join(slices.Sorted(maps.Keys(branches)), ", "))
	case b["status"] != "running":
		return nil, fmt.Sprintf("Branch '%s' is %s (in state '%v'): it is no longer running.", branch, b["status"], b["state"])
	}
	return b, ""
}

// stateWords writes a state value for a sentence: a name quoted, a nested
// value as jsonx.Text writes it.
func stateWords(v any) string {
	if s, ok := v.(string); ok {
		return "'" + s + "'"
	}
	return jsonx.Text(v)
}

func (t *statewrightTools) branchOf(ss *mcp.ServerSession) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.branches[ss]
}

func (t *statewrightTools) leaveBranch(ss *mcp.ServerSession) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.branches, ss)
}

// branchMiddleware makes statewright_get_state and statewright_transition
// answer for the branch a session joined, and refuses BRANCH_DONE:<b>
// clearly when no fork runs or b is not one of its running branches. A
// session in a branch is listed, and may call, only the upstream tools its
// branch's state allows (Statewright's branch session has its state's
// allowed_tools), and completes only its own branch.
func (t *statewrightTools) branchMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if list, ok := req.(*mcp.ListToolsRequest); ok && method == "tools/list" {
			return t.listBranchTools(ctx, list, next)
		}
		call, ok := req.(*mcp.CallToolRequest)
		if !ok || method != "tools/call" || call.Params == nil {
			return next(ctx, method, req)
		}
		switch name := call.Params.Name; name {
		case workflow.StatewrightGetState:
			if branch := t.branchOf(call.Session); branch != "" {
				if wf, err := t.gate.SessionWorkflow(ctx, call.Session); err == nil {
					if b, _ := t.runningBranch(wf, branch); b == nil {
						t.leaveBranch(call.Session)
					} else {
						ctx = workflow.WithBranch(ctx, branch)
					}
				}
			}
		case workflow.StatewrightTransition:
			var args map[string]json.RawMessage
			var event string
			if json.Unmarshal(call.Params.Arguments, &args) != nil || json.Unmarshal(args["event"], &event) != nil || event == "" {
				break // the transition tool says what it needs
			}
			return t.transition(ctx, method, call, args, event, next)
		case statewrightLoadWorkflow:
			return t.withSnapshot(ctx, call, next)
		case workflowTransition:
			if branch, _, _, _ := t.branchTools(ctx, call.Session); branch != "" {
				return swError(fmt.Sprintf("This session joined branch '%s' of the fork: it sends the branch's events with %s (EVENT moves the branch, BRANCH_DONE:%s ends it).", branch, workflow.StatewrightTransition, branch)), nil
			}
		default:
			if !t.upstream(name) {
				return t.unknownTool(ctx, call, next)
			}
			branch, state, allows, listed := t.branchTools(ctx, call.Session)
			if allows == nil && t.implicit {
				return t.implicitCall(ctx, call, next)
			}
			if allows == nil || allows(name, t.gw.GatedAs(name)) {
				break // the gate decides
			}
			return swError(fmt.Sprintf("Tool %q is not available in the current workflow state (%q, in branch '%s' of the fork, which this session joined). Tools available now: %s",
				name, state, branch, strings.Join(t.branchAvailable(allows, listed), ", "))), nil
		}
		return next(ctx, method, req)
	}
}

// statewrightLoadWorkflow is the name of Statewright's tool that loads
// (here: joins) a workflow or a fork's branch.
const statewrightLoadWorkflow = "statewright_load_workflow"

// withSnapshot runs statewright_load_workflow and, when it loaded, adds
// "state_snapshot": what statewright_get_state answers right after (in
// the branch the session joined), as Statewright's gateway does, so the
// agent sees its tools and transitions without a second call.
func (t *statewrightTools) withSnapshot(ctx context.Context, call *mcp.CallToolRequest, next mcp.MethodHandler) (mcp.Result, error) {
	res, err := next(ctx, "tools/call", call)
	loaded, ok := resultJSON(res, err)
	if !ok {
		return res, err
	}
	if branch := t.branchOf(call.Session); branch != "" {
		ctx = workflow.WithBranch(ctx, branch)
	}
	get := &mcp.CallToolRequest{Session: call.Session, Params: &mcp.CallToolParamsRaw{Name: workflow.StatewrightGetState, Arguments: json.RawMessage("{}")}}
	snapshot, ok := resultJSON(next(ctx, "tools/call", get))
	if !ok {
		return res, err
	}
	loaded["state_snapshot"] = snapshot
	return swJSON(loaded), nil
}

// resultJSON is the JSON object a tool's successful result holds as its
// one text, or false.
func resultJSON(res mcp.Result, err error) (map[string]any, bool) {
	r, ok := res.(*mcp.CallToolResult)
	if err != nil || !ok || r.IsError || len(r.Content) != 1 {
		return nil, false
	}
	text, ok := r.Content[0].(*mcp.TextContent)
	var m map[string]any
	if !ok || json.Unmarshal([]byte(text.Text), &m) != nil {
		return nil, false
	}
	return m, true
}

// implicitCall runs a call of an upstream tool with --implicit-transitions:
// when the state refuses the tool and one event makes it available
// (workflow.ImplicitEvent), it first sends that event through
// statewright_transition, as the agent would (the gate checks, records
// and answers it as any transition), then lets the gate decide the call
// in the state it reached; the result says which transition was made.
func (t *statewrightTools) implicitCall(ctx context.Context, call *mcp.CallToolRequest, next mcp.MethodHandler) (mcp.Result, error) {
	name := call.Params.Name
	wf, err := t.gate.SessionWorkflow(ctx, call.Session)
	if err != nil {
		return next(ctx, "tools/call", call)
	}
	event, ok := t.w.ImplicitEvent(wf.State, name, t.gw.GatedAs(name))
	if !ok {
		return next(ctx, "tools/call", call)
	}
	args, _ := json.Marshal(map[string]string{"event": event})
	tr := &mcp.CallToolRequest{Session: call.Session, Extra: call.Extra, Params: &mcp.CallToolParamsRaw{Name: workflow.StatewrightTransition, Arguments: args}}
	res, err := next(ctx, "tools/call", tr)
	r, isResult := res.(*mcp.CallToolResult)
	if err != nil || !isResult || r.IsError {
		return next(ctx, "tools/call", call) // not moved: refused as usual
	}
	var moved struct {
		From any `json:"from"`
		To   any `json:"to"`
	}
	if len(r.Content) > 0 {
		if text, ok := r.Content[0].(*mcp.TextContent); ok {
			_ = json.Unmarshal([]byte(text.Text), &moved)
		}
	}
	t.logger.Info("chartgate serve: implicit transition", "event", event, "tool", name, "from", moved.From, "to", moved.To)
	res, err = next(ctx, "tools/call", call)
	if out, ok := res.(*mcp.CallToolResult); ok && err == nil {
		out.Content = append(out.Content, &mcp.TextContent{Text: fmt.Sprintf("[chartgate: implicit transition %s: %s → %s, sent for %s]", event, stateWords(moved.From), stateWords(moved.To), name)})
	}
	return res, err
}

// statewrightInterrupt starts the events Statewright's plugins send when
// they see a file an interrupt watches change: INTERRUPT:<name>.
const statewrightInterrupt = "INTERRUPT:"

// interruptRefusal answers statewright_transition {event:
// "INTERRUPT:<name>"}: chartgate fires an interrupt itself, when a tool
// writes a file it watches (an upstream tool's arguments, or the hooks);
// the agent cannot, or it could enter a handler state, and use its tools,
// at will.
func (t *statewrightTools) interruptRefusal(name string) string {
	for _, in := range t.w.Interrupts {
		if in.Name == name {
			return fmt.Sprintf("Interrupt '%s' was not sent: chartgate fires it itself when a tool writes a file matching %s (through this gateway, or the agent host's tools through chartgate's hooks); the agent cannot send it.", name, in.FilePattern)
		}
	}
	return fmt.Sprintf("Unknown interrupt '%s'", name)
}

// unknownTool calls a tool that is not an upstream one (the gate's own
// tools answer); one that no server has is refused as Statewright refuses
// it, as a tool result naming the tool and the state, not a protocol
// error.
func (t *statewrightTools) unknownTool(ctx context.Context, call *mcp.CallToolRequest, next mcp.MethodHandler) (mcp.Result, error) {
	res, err := next(ctx, "tools/call", call)
	if err == nil || !strings.Contains(err.Error(), "unknown tool") {
		return res, err
	}
	state := any("?")
	if wf, werr := t.gate.SessionWorkflow(ctx, call.Session); werr == nil {
		state = t.w.StatewrightState(wf)["state"]
	}
	return swError(fmt.Sprintf("Tool %q is not available in the current workflow state (%s): no server of this gateway has it. statewright_get_state lists the tools allowed now.", call.Params.Name, stateWords(state))), nil
}

// workflowTransition is the name of the gate's own transition tool.
const workflowTransition = "workflow_transition"

// listBranchTools lists, to a session in a branch, the tools the gate
// lists less the upstream tools its branch's state does not allow.
func (t *statewrightTools) listBranchTools(ctx context.Context, req *mcp.ListToolsRequest, next mcp.MethodHandler) (mcp.Result, error) {
	res, err := next(ctx, "tools/list", req)
	lr, ok := res.(*mcp.ListToolsResult)
	if err != nil || !ok {
		return res, err
	}
	_, _, allows, _ := t.branchTools(ctx, req.Session)
	if allows == nil {
		return res, nil
	}
	out := *lr
	out.Tools = slices.DeleteFunc(slices.Clone(lr.Tools), func(tool *mcp.Tool) bool {
		return t.upstream(tool.Name) && !allows(tool.Name, t.gw.GatedAs(tool.Name))
	})
	return &out, nil
}

// branchTools returns, for a session in a running branch, the branch, its
// state, and the test of the tools it may call with the names its state
// lists; allows is nil for any other session (one whose branch stopped
// running leaves it).
func (t *statewrightTools) branchTools(ctx context.Context, ss *mcp.ServerSession) (branch string, state any, allows func(...string) bool, listed []string) {
	branch = t.branchOf(ss)
	if branch == "" {
		return "", nil, nil, nil
	}
	wf, err := t.gate.SessionWorkflow(ctx, ss)
	if err != nil {
		// Unreadable: nothing is allowed beyond the gate's own tools.
		return branch, nil, func(...string) bool { return false }, nil
	}
	b, _ := t.runningBranch(wf, branch)
	allows, listed, ok := t.w.BranchTools(wf.State, branch)
	if b == nil || !ok {
		t.leaveBranch(ss)
		return "", nil, nil, nil
	}
	return branch, b["state"], allows, listed
}

// upstream reports whether name is a tool of the upstream servers (the
// gateway lists it, or refuses it).
func (t *statewrightTools) upstream(name string) bool {
	if t.gw == nil || strings.HasPrefix(name, "statewright_") {
		return false
	}
	for _, tool := range t.gw.Tools() {
		if tool.Name == name {
			return true
		}
	}
	_, refused := t.gw.RefusedTools()[name]
	return refused
}

// branchAvailable names the tools a branch's session may call: the
// upstream tools its state allows, and Statewright's.
func (t *statewrightTools) branchAvailable(allows func(...string) bool, listed []string) []string {
	var out []string
	for _, tool := range t.gw.Tools() {
		if allows(tool.Name, t.gw.GatedAs(tool.Name)) {
			out = append(out, tool.Name)
		}
	}
	if len(out) == 0 && len(listed) > 0 {
		out = append(out, "(none of "+strings.Join(listed, ", ")+" is served)")
	}
	slices.Sort(out)
	return append(out, workflow.StatewrightGetState, workflow.StatewrightTransition)
}

func (t *statewrightTools) transition(ctx context.Context, method string, call *mcp.CallToolRequest, args map[string]json.RawMessage, event string, next mcp.MethodHandler) (mcp.Result, error) {
	if name, ok := strings.CutPrefix(event, statewrightInterrupt); ok {
		return swError(t.interruptRefusal(name)), nil
	}
	ss := call.Session
	branch := t.branchOf(ss)
	done, isDone := strings.CutPrefix(event, workflow.BranchDone)
	if branch == "" && !isDone {
		return next(ctx, method, call)
	}
	wf, err := t.gate.SessionWorkflow(ctx, ss)
	if err != nil {
		return next(ctx, method, call)
	}
	if isDone && branch != "" {
		if b, _ := t.runningBranch(wf, branch); b == nil {
			t.leaveBranch(ss)
			branch = ""
		} else if done != branch {
			return swError(fmt.Sprintf("Cannot complete branch '%s': this session joined branch '%s', and completes that branch only (BRANCH_DONE:%s).", done, branch, branch)), nil
		}
	}
	if isDone {
		if b, why := t.runningBranch(wf, done); b == nil {
			_, fork, forked := t.w.ActiveFork(wf.State)
			switch {
			case !forked:
				return swError(fmt.Sprintf("No active fork. Cannot complete branch '%s'. %s", done, why)), nil
			case fork["branches"].(map[string]any)[done] != nil:
				return swError(fmt.Sprintf("Cannot complete branch '%s'. %s", done, why)), nil
			}
			return swError(fmt.Sprintf("Unknown branch '%s'. %s", done, why)), nil
		}
		if branch != "" {
			ctx = workflow.WithBranch(ctx, branch)
		}
		res, err := next(ctx, method, call)
		if r, ok := res.(*mcp.CallToolResult); ok && err == nil && !r.IsError && done == branch {
			t.leaveBranch(ss)
		}
		return res, err
	}
	if b, why := t.runningBranch(wf, branch); b == nil {
		t.leaveBranch(ss)
		if !strings.Contains(event, ".") {
			// An event meant for the branch must not move the workflow.
			return swError(fmt.Sprintf("Event '%s' was not sent: this session worked in branch '%s', which is not running any more (%s) This session has left the branch; statewright_get_state shows the workflow.", event, branch, why)), nil
		}
		return next(ctx, method, call)
	}
	if !strings.HasPrefix(event, branch+".") {
		raw, _ := json.Marshal(branch + "." + event)
		args["event"] = raw
		call.Params.Arguments, _ = json.Marshal(args)
	}
	return next(workflow.WithBranch(ctx, branch), method, call)
}
