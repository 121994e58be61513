// This file reads a hook event from each host's input: Claude Code and
// Codex (one protocol), Gemini CLI, Cursor and Copilot CLI (both of its
// payload formats).

package hook

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"github.com/tidwall/gjson"

	"github.com/chartgate/chartgate/internal/hookwire"
	"github.com/chartgate/chartgate/internal/jsonx"
)

// MaxInput bounds the size of one hook event's input, in bytes. A tool's
// arguments can be large (a Write of a whole file), so the bound is loose.
const MaxInput = hookwire.MaxInput

// maxDepth bounds the nesting of an event's input.
const maxDepth = 128

// maxSessionID bounds the length of an agent session id.
const maxSessionID = 256

// InputError is the error of [Parse]: where in the input, as a JSON path,
// and what is wrong.
type InputError struct {
	Path string // "" for the input as a whole
	Msg  string
}

func (e *InputError) Error() string {
	if e.Path == "" {
		return "hook input: " + e.Msg
	}
	return "hook input: " + e.Path + ": " + e.Msg
}

// Parse reads one hook event of host h. name, if not empty, is the event's
// name (as the host calls it) and overrides the one in the input: Copilot
// CLI's camelCase payloads do not carry their event's name, and the
// configuration may pass it. On an error the returned Event still has the
// Host, Name and Kind found so far, so that a caller can refuse a pre tool
// event whose input it could not read rather than let it through.
func Parse(h Host, data []byte, name string) (Event, error) {
	ev := Event{Host: h, Name: name}
	if len(data) > MaxInput {
		return ev, &InputError{Msg: fmt.Sprintf("larger than %d bytes", MaxInput)}
	}
	if jsonx.TooDeep(data, maxDepth) {
		return ev, &InputError{Msg: fmt.Sprintf("nested more than %d levels deep", maxDepth)}
	}
	if !gjson.ValidBytes(data) {
		msg := "not valid JSON"
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			msg += " (" + jsonx.SyntaxError(data) + ")"
		}
		return ev, &InputError{Msg: msg}
	}
	root := gjson.ParseBytes(data)
	if !root.IsObject() {
		return ev, &InputError{Msg: "must be a JSON object, not " + jsonx.Kind(root)}
	}
	r := reader{root: root}
	switch h {
	case ClaudeCode, Codex:
		r.claude(&ev)
	case Gemini:
		r.gemini(&ev)
	case Cursor:
		r.cursor(&ev)
	case Copilot:
		r.copilot(&ev)
	default:
		return ev, &InputError{Msg: fmt.Sprintf("unknown host %q", h)}
	}
	if r.err == nil && ev.Kind != KindOther {
		r.checkSession(&ev)
	}
	if r.err != nil {
		return ev, r.err
	}
	return ev, nil
}

// reader reads fields of one input, keeping the first error.
type reader struct {
	root gjson.Result
	err  *InputError
}

func (r *reader) fail(path, format string, args ...any) {
	if r.err == nil {
		r.err = &InputError{Path: path, Msg: fmt.Sprintf(format, args...)}
	}
}

// str reads an optional string; null counts as missing.
func (r *reader) str(path string) string {
	v := r.root.Get(escapePath(path))
	switch v.Type {
	case gjson.String:
		return v.String()
	case gjson.Null:
		return ""
	}
	r.fail(path, "must be a string, not %s", jsonx.Kind(v))
	return ""
}

// need reads a string that must be there.
func (r *reader) need(path string) string {
	s := r.str(path)
	if s == "" && r.err == nil {
		r.fail(path, "missing")
	}
	return s
}

// flag reads an optional boolean.
func (r *reader) flag(path string) bool {
	v := r.root.Get(escapePath(path))
	switch v.Type {
	case gjson.True:
		return true
	case gjson.False, gjson.Null:
		return false
	}
	r.fail(path, "must be true or false, not %s", jsonx.Kind(v))
	return false
}

// object reads a tool's arguments: an object, or a string holding one
// (Copilot CLI's toolArgs, Cursor's MCP tool_input); missing or null is {}.
func (r *reader) object(path string) json.RawMessage {
	v := r.root.Get(escapePath(path))
	switch {
	case v.Type == gjson.Null:
		return json.RawMessage("{}")
	case v.IsObject():
		return json.RawMessage(v.Raw)
	case v.Type == gjson.String:
		s := v.String()
		if strings.TrimSpace(s) == "" {
			return json.RawMessage("{}")
		}
		if inner := gjson.Parse(s); gjson.Valid(s) && inner.IsObject() && !jsonx.TooDeep([]byte(s), maxDepth) {
			return json.RawMessage(inner.Raw)
		}
		r.fail(path, "must be an object, or a string holding a JSON object")
		return nil
	}
	r.fail(path, "must be an object, not %s", jsonx.Kind(v))
	return nil
}

// checkSession checks the session id: it names a workflow in the store.
func (r *reader) checkSession(ev *Event) {
	switch {
	case ev.SessionID == "":
		r.fail("", "no session id: the host did not say which agent session this is")
	case len(ev.SessionID) > maxSessionID:
		r.fail("", "the session id is longer than %d bytes", maxSessionID)
	case strings.ContainsFunc(ev.SessionID, unicode.IsControl):
		r.fail("", "the session id holds control characters")
	}
}

// escapePath escapes a field name for gjson (names with dots or wildcards).
func escapePath(name string) string {
	if !strings.ContainsAny(name, ".*?|#@\\!=<>%") {
		return name
	}
	var b strings.Builder
	for _, c := range name {
		if strings.ContainsRune(".*?|#@\\!=<>%", c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// splitMCP splits an MCP tool name as Claude Code and Codex write it,
// mcp__<server>__<tool>.
func splitMCP(name string) (server, tool string, ok bool) {
	rest, ok := strings.CutPrefix(name, "mcp__")
	if !ok {
		return "", "", false
	}
	server, tool, ok = strings.Cut(rest, "__")
	if !ok || server == "" || tool == "" {
		return "", "", false
	}
	return server, tool, true
}

// claudeKinds maps Claude Code's and Codex's event names to kinds.
var claudeKinds = map[string]Kind{
	"SessionStart":       KindSessionStart,
	"UserPromptSubmit":   KindPrompt,
	"PreToolUse":         KindPreTool,
	"PostToolUse":        KindPostTool,
	"PostToolUseFailure": KindPostTool,
	"Stop":               KindStop,
}

// claude reads Claude Code's input, which Codex shares
// (https://code.claude.com/docs/en/hooks, https://developers.openai.com/codex/hooks).
func (r *reader) claude(ev *Event) {
	if ev.Name == "" {
		ev.Name = r.need("hook_event_name")
	}
	ev.Kind = claudeKinds[ev.Name]
	ev.SessionID = r.str("session_id")
	ev.Cwd = r.str("cwd")
	if ev.Host == ClaudeCode {
		ev.PermissionMode = r.str("permission_mode")
	}
	switch ev.Kind {
	case KindPreTool, KindPostTool:
		ev.Tool = r.need("tool_name")
		ev.Input = r.object("tool_input")
		ev.Server, _, _ = splitMCP(ev.Tool)
		ev.Failed = ev.Name == "PostToolUseFailure" || failedResponse(r.root.Get("tool_response"))
		switch {
		case ev.Name == "PostToolUseFailure":
			ev.OutputBytes = textBytes(r.root.Get("error"))
		case ev.Kind == KindPostTool:
			ev.OutputBytes = responseBytes(canonical(*ev), r.root.Get("tool_response"))
		}
	case KindStop:
		ev.StopActive = r.flag("stop_hook_active")
	case KindPrompt:
		ev.Prompt = r.str("prompt")
	}
}

// failedResponse reads whether a tool's response says it failed: Codex
// runs PostToolUse after a shell command that exited non-zero too, and
// some tools answer {"success": false} or {"is_error": true}.
func failedResponse(v gjson.Result) bool {
	if !v.IsObject() {
		return false
	}
	if c := v.Get("exit_code"); c.Type == gjson.Number && c.Int() != 0 {
		return true
	}
	if v.Get("success").Type == gjson.False || v.Get("is_error").Type == gjson.True || v.Get("isError").Type == gjson.True {
		return true
	}
	return false
}

// geminiKinds maps Gemini CLI's event names to kinds.
var geminiKinds = map[string]Kind{
	"SessionStart": KindSessionStart,
	"BeforeAgent":  KindPrompt,
	"BeforeTool":   KindPreTool,
	"AfterTool":    KindPostTool,
	"AfterAgent":   KindStop,
}

// gemini reads Gemini CLI's input
// (https://geminicli.com/docs/hooks/reference).
func (r *reader) gemini(ev *Event) {
	if ev.Name == "" {
		ev.Name = r.need("hook_event_name")
	}
	ev.Kind = geminiKinds[ev.Name]
	ev.SessionID = r.str("session_id")
	ev.Cwd = r.str("cwd")
	switch ev.Kind {
	case KindPreTool, KindPostTool:
		ev.Tool = r.need("tool_name")
		ev.Input = r.object("tool_input")
		ev.Server = r.geminiServer(ev.Tool)
		if e := r.root.Get("tool_response.error"); e.Exists() && e.Type != gjson.Null && e.Type != gjson.False && e.String() != "" {
			ev.Failed = true
		}
		if ev.Kind == KindPostTool {
			// llmContent is what the model gets (returnDisplay is the user's).
			if c := r.root.Get("tool_response.llmContent"); c.Exists() {
				ev.OutputBytes = textBytes(c)
			} else {
				ev.OutputBytes = textBytes(r.root.Get("tool_response.error"))
			}
		}
	case KindStop:
		ev.StopActive = r.flag("stop_hook_active")
	case KindPrompt:
		ev.Prompt = r.str("prompt")
	}
}

// geminiServer returns the MCP server of a Gemini CLI tool: the event's
// mcp_context.server_name, which Gemini CLI sends with an MCP tool's
// events, else the server of a name written mcp_<server>_<tool> (the
// server's name cut at its first "_") or mcp__<server>__<tool>; "" for
// Gemini CLI's own tools.
func (r *reader) geminiServer(tool string) string {
	if v := r.root.Get("mcp_context.server_name"); v.Type == gjson.String && v.Str != "" {
		s := v.Str
		if !strings.HasPrefix(tool, "mcp_"+s+"_") && !strings.HasPrefix(tool, "mcp__"+s+"__") {
			r.fail("tool_name", "%q is not a tool of the MCP server %q that mcp_context names", tool, s)
		}
		return s
	}
	if s, _, ok := splitMCP(tool); ok {
		return s
	}
	if rest, ok := strings.CutPrefix(tool, "mcp_"); ok {
		if s, t, ok := strings.Cut(rest, "_"); ok && s != "" && t != "" {
			return s
		}
	}
	return ""
}

// copilotServer returns the MCP server of a Copilot CLI tool, whose MCP
// tools are named <server>-<tool> (its own tools have no "-"); "" for its
// own tools.
func copilotServer(tool string) string {
	if s, _, ok := splitMCP(tool); ok {
		return s
	}
	if s, t, ok := strings.Cut(tool, "-"); ok && s != "" && t != "" {
		return s
	}
	return ""
}

// cursorKinds maps Cursor's event names to kinds.
var cursorKinds = map[string]Kind{
	"sessionStart":         KindSessionStart,
	"beforeSubmitPrompt":   KindPrompt,
	"preToolUse":           KindPreTool,
	"beforeShellExecution": KindPreTool,
	"beforeMCPExecution":   KindPreTool,
	"beforeReadFile":       KindPreTool,
	"postToolUse":          KindPostTool,
	"postToolUseFailure":   KindPostTool,
	"afterShellExecution":  KindPostTool,
	"afterMCPExecution":    KindPostTool,
	"afterFileEdit":        KindPostTool,
	"stop":                 KindStop,
}

// cursor reads Cursor's input (https://cursor.com/docs/hooks): the
// dedicated events (beforeShellExecution and the like) and the generic
// preToolUse and postToolUse.
func (r *reader) cursor(ev *Event) {
	if ev.Name == "" {
		ev.Name = r.need("hook_event_name")
	}
	ev.Kind = cursorKinds[ev.Name]
	ev.SessionID = r.str("session_id")
	if ev.SessionID == "" {
		ev.SessionID = r.str("conversation_id")
	}
	if w := r.root.Get("workspace_roots.0"); w.Type == gjson.String {
		ev.Root = w.String()
	}
	ev.Cwd = r.str("cwd")
	if ev.Cwd == "" {
		ev.Cwd = ev.Root
	}
	switch ev.Name {
	case "beforeShellExecution", "afterShellExecution":
		ev.Tool = "Shell"
		ev.Input = objectOf(map[string]string{"command": r.need("command")})
		if c := r.root.Get("exit_code"); c.Type == gjson.Number && c.Int() != 0 {
			ev.Failed = true
		}
		ev.OutputBytes = textBytes(r.root.Get("output"))
	case "beforeMCPExecution", "afterMCPExecution":
		ev.Tool = r.need("tool_name")
		ev.Input = r.object("tool_input")
		ev.Server = r.str("command")
		if ev.Server == "" {
			ev.Server = r.str("url")
		}
		if ev.Server == "" {
			ev.Server = "mcp"
		}
		ev.OutputBytes = outputText(r.root.Get("result_json"))
	case "beforeReadFile":
		ev.Tool = "Read"
		ev.Input = objectOf(map[string]string{"file_path": r.need("file_path")})
		ev.OutputBytes = textBytes(r.root.Get("content"))
	case "afterFileEdit":
		ev.Tool = "Edit"
		ev.Input = objectOf(map[string]string{"file_path": r.need("file_path")})
	case "preToolUse", "postToolUse", "postToolUseFailure":
		ev.Tool = r.need("tool_name")
		ev.Input = r.object("tool_input")
		ev.Server, _, _ = splitMCP(ev.Tool)
		ev.Failed = ev.Name == "postToolUseFailure"
		if ev.Name == "postToolUse" {
			ev.OutputBytes = outputText(r.root.Get("tool_output"))
		}
	case "stop":
		ev.StopActive = r.root.Get("loop_count").Int() > 0
	case "beforeSubmitPrompt":
		ev.Prompt = r.str("prompt")
	}
}

// copilotKinds maps Copilot CLI's event names, in both of its payload
// formats, to kinds.
var copilotKinds = map[string]Kind{
	"sessionStart":        KindSessionStart,
	"SessionStart":        KindSessionStart,
	"userPromptSubmitted": KindPrompt,
	"UserPromptSubmit":    KindPrompt,
	"preToolUse":          KindPreTool,
	"PreToolUse":          KindPreTool,
	"postToolUse":         KindPostTool,
	"PostToolUse":         KindPostTool,
	"postToolUseFailure":  KindPostTool,
	"PostToolUseFailure":  KindPostTool,
	"agentStop":           KindStop,
	"Stop":                KindStop,
}

// copilot reads Copilot CLI's input
// (https://docs.github.com/en/copilot/reference/copilot-cli-reference/cli-hooks-reference):
// the camelCase payload of events configured in camelCase, which does not
// name its event, and the snake_case one (with hook_event_name) of events
// configured in PascalCase.
func (r *reader) copilot(ev *Event) {
	snake := r.root.Get("hook_event_name").Exists()
	if ev.Name == "" {
		if snake {
			ev.Name = r.need("hook_event_name")
		} else {
			ev.Name = r.copilotEvent()
		}
	}
	ev.Kind = copilotKinds[ev.Name]
	field := func(camel, snakeName string) string {
		if snake {
			return snakeName
		}
		return camel
	}
	ev.SessionID = r.str(field("sessionId", "session_id"))
	ev.Cwd = r.str("cwd")
	switch ev.Kind {
	case KindPreTool, KindPostTool:
		ev.Tool = r.need(field("toolName", "tool_name"))
		if args := r.root.Get(field("toolArgs", "tool_input")); ev.Tool == "apply_patch" && args.Type == gjson.String && !gjson.Valid(args.Str) {
			// With a GPT model apply_patch is a freeform tool: its
			// arguments are the patch itself.
			ev.Input = objectOf(map[string]string{"input": args.Str})
		} else {
			ev.Input = r.object(field("toolArgs", "tool_input"))
		}
		ev.Server = copilotServer(ev.Tool)
		if strings.HasSuffix(ev.Name, "Failure") {
			ev.Failed = true
		} else if ev.Kind == KindPostTool {
			t := r.root.Get(field("toolResult.resultType", "tool_result.result_type"))
			ev.Failed = t.Exists() && t.String() != "success"
		}
		if ev.Kind == KindPostTool {
			if res := r.root.Get(field("toolResult.textResultForLlm", "tool_result.text_result_for_llm")); res.Exists() {
				ev.OutputBytes = textBytes(res)
			} else {
				ev.OutputBytes = textBytes(r.root.Get("error"))
			}
		}
	case KindPrompt:
		ev.Prompt = r.str("prompt")
	}
}

// copilotEvent tells a camelCase Copilot CLI payload's event by its
// fields, for a configuration that did not pass the event's name.
func (r *reader) copilotEvent() string {
	has := func(k string) bool { return r.root.Get(k).Exists() }
	switch {
	case has("toolName") && has("toolResult"):
		return "postToolUse"
	case has("toolName") && has("error"):
		return "postToolUseFailure"
	case has("toolName"):
		return "preToolUse"
	case has("prompt"):
		return "userPromptSubmitted"
	case has("stopReason") && !has("agentName"):
		return "agentStop"
	case has("source"):
		return "sessionStart"
	}
	return "unknown"
}

// outputText counts the text of an output that Cursor gives as a string
// holding JSON (result_json, tool_output), or as JSON.
func outputText(v gjson.Result) int64 {
	if v.Type == gjson.String {
		return jsonTextBytes(v.Str)
	}
	return textBytes(v)
}

// objectOf writes a flat object of strings.
func objectOf(m map[string]string) json.RawMessage {
	b, err := json.Marshal(m)
	if err != nil { // strings always marshal
		return json.RawMessage("{}")
	}
	return b
}
