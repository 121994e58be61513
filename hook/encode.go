// This file writes a result in each host's output protocol.

package hook

import (
	"encoding/json"
	"strings"

	"github.com/chartgate/chartgate/internal/jsonx"
)

// Encode writes the answer to ev in its host's protocol, for the hook's
// standard output; nil means "print nothing" (the host's default: go on).
// Each shape follows the host's documentation:
//
//	Claude Code, Codex  PreToolUse deny: {"hookSpecificOutput": {"hookEventName": "PreToolUse",
//	                      "permissionDecision": "deny", "permissionDecisionReason": R}}
//	                    PreToolUse rewrite: {"hookSpecificOutput": {"hookEventName": "PreToolUse",
//	                      "permissionDecision": "allow", "updatedInput": I}}
//	                    context: {"hookSpecificOutput": {"hookEventName": E, "additionalContext": C}}
//	                    Stop: {"decision": "block", "reason": R}
//	Gemini CLI          BeforeTool deny: {"decision": "deny", "reason": R}
//	                    BeforeTool rewrite: {"hookSpecificOutput": {"hookEventName": "BeforeTool", "tool_input": I}}
//	                    context: {"hookSpecificOutput": {"hookEventName": E, "additionalContext": C}}
//	                    AfterAgent: {"decision": "deny", "reason": R} (a retry with R as the prompt)
//	                    otherwise {} (its hooks must print JSON)
//	Cursor              permission events: {"permission": "allow"} or {"permission": "deny",
//	                      "user_message": U, "agent_message": R}
//	                    sessionStart, post tool events: {"additional_context": C}
//	                    beforeSubmitPrompt: {"continue": true}; stop: {"followup_message": R}
//	Copilot CLI         preToolUse deny: {"permissionDecision": "deny", "permissionDecisionReason": R}
//	                    preToolUse rewrite: {"modifiedArgs": I}
//	                    sessionStart, userPromptSubmitted, postToolUse: {"additionalContext": C}
//	                    agentStop: {"decision": "block", "reason": R}
//
// Claude Code and Codex read additionalContext at SessionStart,
// UserPromptSubmit, PreToolUse and PostToolUse; Codex refuses unknown
// fields, so only these are written. Copilot CLI (1.0.102) reads
// additionalContext at sessionStart (the first user message),
// userPromptSubmitted (after the prompt) and postToolUse (after the tool's
// result).
//
// A rewrite (Result.UpdatedInput, I above) is the whole input, every field
// the agent gave kept: Claude Code's updatedInput replaces the input and
// Copilot CLI's modifiedArgs substitutes it, Gemini CLI's tool_input is
// merged into it. Cursor documents no rewrite: it is not written there.
func Encode(ev Event, r Result) []byte {
	switch ev.Host {
	case ClaudeCode, Codex:
		return encodeClaude(ev, r)
	case Gemini:
		return encodeGemini(ev, r)
	case Cursor:
		return encodeCursor(ev, r)
	case Copilot:
		return encodeCopilot(ev, r)
	}
	return nil
}

// obj is an ordered JSON object for the outputs (hosts show them in logs,
// so a stable order reads better than a map's).
type obj []field

type field struct {
	k string
	v any
}

// MarshalJSON writes the fields in order (see jsonx.Object).
func (o obj) MarshalJSON() ([]byte, error) {
	var jo jsonx.Object
	for _, f := range o {
		jo.Set(f.k, f.v)
	}
	return jo.MarshalJSON()
}

// encode marshals an output object; the values are strings, booleans
// and nested objs, which always marshal.
func encode(o obj) []byte {
	b, err := json.Marshal(o)
	if err != nil {
		return nil
	}
	return append(b, '\n')
}

// envAskReason is what Claude Code shows the user when it asks about a
// command chartgate rewrote to set the state's env_overrides.
const envAskReason = "chartgate: the workflow's state sets environment variables for shell commands (env_overrides): the command runs after the export line shown."

func specific(event string, fields ...field) obj {
	return obj{{"hookSpecificOutput", append(obj{{"hookEventName", event}}, fields...)}}
}

func encodeClaude(ev Event, r Result) []byte {
	switch ev.Kind {
	case KindPreTool:
		if r.Deny != "" {
			return encode(specific(ev.Name, field{"permissionDecision", "deny"}, field{"permissionDecisionReason", r.Deny}))
		}
		if r.UpdatedInput != nil {
			// updatedInput replaces the whole input. Codex takes it only
			// with "allow", which there carries the rewrite and nothing
			// else. Claude Code takes it with "allow", which would also
			// skip the permission prompt the user's rules ask for, or with
			// "ask": chartgate never grants a permission, so it asks, unless
			// the session bypasses permissions anyway.
			fields := []field{{"permissionDecision", "allow"}, {"updatedInput", r.UpdatedInput}}
			if ev.Host == ClaudeCode && ev.PermissionMode != "bypassPermissions" {
				fields = []field{{"permissionDecision", "ask"}, {"permissionDecisionReason", envAskReason}, {"updatedInput", r.UpdatedInput}}
			}
			if r.Context != "" {
				fields = append(fields, field{"additionalContext", r.Context})
			}
			return encode(specific(ev.Name, fields...))
		}
		if r.Context != "" {
			return encode(specific(ev.Name, field{"additionalContext", r.Context}))
		}
	case KindSessionStart, KindPrompt, KindPostTool:
		if r.Context != "" {
			return encode(specific(ev.Name, field{"additionalContext", r.Context}))
		}
	case KindStop:
		if r.Block != "" {
			return encode(obj{{"decision", "block"}, {"reason", r.Block}})
		}
	}
	return nil
}

func encodeGemini(ev Event, r Result) []byte {
	switch ev.Kind {
	case KindPreTool:
		if r.Deny != "" {
			return encode(obj{{"decision", "deny"}, {"reason", r.Deny}})
		}
		if r.UpdatedInput != nil {
			return encode(specific(ev.Name, field{"tool_input", r.UpdatedInput}))
		}
	case KindSessionStart, KindPrompt, KindPostTool:
		if r.Context != "" {
			return encode(specific(ev.Name, field{"additionalContext", r.Context}))
		}
	case KindStop:
		if r.Block != "" {
			return encode(obj{{"decision", "deny"}, {"reason", r.Block}})
		}
	}
	return []byte("{}\n")
}

// cursorPermission lists Cursor's events that answer with a permission.
var cursorPermission = map[string]bool{
	"preToolUse": true, "beforeShellExecution": true, "beforeMCPExecution": true, "beforeReadFile": true,
}

func encodeCursor(ev Event, r Result) []byte {
	switch {
	case cursorPermission[ev.Name]:
		if r.Deny != "" {
			return encode(obj{{"permission", "deny"}, {"user_message", "chartgate: " + firstLine(r.Deny)}, {"agent_message", r.Deny}})
		}
		return encode(obj{{"permission", "allow"}})
	case ev.Name == "beforeSubmitPrompt":
		return encode(obj{{"continue", true}})
	case ev.Kind == KindStop:
		if r.Block != "" {
			return encode(obj{{"followup_message", r.Block}})
		}
	case ev.Kind == KindSessionStart || ev.Kind == KindPostTool:
		if r.Context != "" {
			return encode(obj{{"additional_context", r.Context}})
		}
	}
	return []byte("{}\n")
}

func encodeCopilot(ev Event, r Result) []byte {
	switch ev.Kind {
	case KindSessionStart, KindPrompt, KindPostTool:
		if r.Context != "" {
			return encode(obj{{"additionalContext", r.Context}})
		}
	case KindPreTool:
		if r.Deny != "" {
			return encode(obj{{"permissionDecision", "deny"}, {"permissionDecisionReason", r.Deny}})
		}
		if r.UpdatedInput != nil {
			return encode(obj{{"modifiedArgs", r.UpdatedInput}})
		}
	case KindStop:
		if r.Block != "" {
			return encode(obj{{"decision", "block"}, {"reason", r.Block}})
		}
	}
	return nil
}

// firstLine returns the first line of s.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
