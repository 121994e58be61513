// This file defines the hosts, the hook event every host's input is read
// into, and the result the handler gives back.

package hook

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Host is an agent host whose hook protocol the package speaks.
type Host string

// The hosts. Their names are the HOST argument of `chartgate hook HOST`.
const (
	ClaudeCode Host = "claude-code"
	Codex      Host = "codex"
	Gemini     Host = "gemini"
	Cursor     Host = "cursor"
	Copilot    Host = "copilot"
)

// Hosts lists every host, in the order the documentation gives them.
var Hosts = []Host{ClaudeCode, Codex, Gemini, Cursor, Copilot}

// ParseHost reads a host name ("claude-code", "codex", "gemini", "cursor",
// "copilot"; "claude" and "copilot-cli" are accepted too).
func ParseHost(s string) (Host, error) {
	switch strings.ToLower(s) {
	case "claude-code", "claude", "claudecode":
		return ClaudeCode, nil
	case "codex":
		return Codex, nil
	case "gemini", "gemini-cli":
		return Gemini, nil
	case "cursor":
		return Cursor, nil
	case "copilot", "copilot-cli":
		return Copilot, nil
	}
	names := make([]string, len(Hosts))
	for i, h := range Hosts {
		names[i] = string(h)
	}
	return "", fmt.Errorf("hook: unknown host %q: use one of %s", s, strings.Join(names, ", "))
}

// Kind is what a hook event asks of chartgate, whatever the host calls it.
type Kind uint8

// The kinds of events.
const (
	// KindOther is an event chartgate has nothing to say about: it
	// answers with the host's "go on".
	KindOther Kind = iota
	// KindSessionStart starts (or resumes) an agent session: chartgate
	// injects the phase of its workflow.
	KindSessionStart
	// KindPrompt is a prompt the user submitted: chartgate injects the
	// phase again, so that it stays in view.
	KindPrompt
	// KindPreTool asks whether a tool may run.
	KindPreTool
	// KindPostTool reports a tool that ran.
	KindPostTool
	// KindStop asks whether the agent may stop.
	KindStop
)

func (k Kind) String() string {
	switch k {
	case KindSessionStart:
		return "session start"
	case KindPrompt:
		return "prompt"
	case KindPreTool:
		return "pre tool"
	case KindPostTool:
		return "post tool"
	case KindStop:
		return "stop"
	}
	return "other"
}

// Event is one hook event, read from a host's input by [Parse].
type Event struct {
	Host Host
	// Name is the event's name in the host's protocol ("PreToolUse",
	// "BeforeTool", "beforeShellExecution", "preToolUse").
	Name string
	Kind Kind
	// SessionID identifies the agent session (Claude Code's session_id,
	// Cursor's conversation_id): the name of its workflow.
	SessionID string
	// Cwd is the directory the agent works in, as the host gives it.
	Cwd string
	// Root is the workspace's folder, when the host gives it apart from
	// Cwd (Cursor's workspace_roots[0]).
	Root string
	// Tool is the tool's name as the host gives it ("Bash",
	// "run_shell_command", "mcp__github__create_issue"); for pre and post
	// tool events only.
	Tool string
	// Server is the MCP server of an MCP tool, when the host says which
	// (from an mcp__<server>__<tool> name, or Cursor's server command).
	Server string
	// Input is the tool's arguments, a JSON object.
	Input json.RawMessage
	// Failed reports that the tool failed (post tool events).
	Failed bool
	// OutputBytes is the size of what the tool gave the agent, as the host
	// reports it: the text of its output (a Read's file content, a shell's
	// stdout and stderr, an MCP tool's text), or of its error. Post tool
	// events, and Cursor's beforeReadFile, which carries the file's
	// content before the read; 0 when the host gives no output.
	OutputBytes int64
	// PermissionMode is Claude Code's permission_mode ("default",
	// "acceptEdits", "plan", "bypassPermissions" …), "" for other hosts.
	PermissionMode string
	// StopActive reports that the agent already continued once because a
	// stop hook asked it to (Claude Code's stop_hook_active), or how often
	// it did (Cursor's loop_count) when above zero.
	StopActive bool
	// Prompt is the user's prompt (prompt events).
	Prompt string
}

// Result is what chartgate answers to an event. The zero Result lets
// everything go on.
type Result struct {
	// Deny, for a pre tool event, refuses the tool with this reason: what
	// is allowed now and how to move the workflow on.
	Deny string
	// Context is text for the agent: the phase at session start and with
	// prompts, a note after a tool that moved the workflow.
	Context string
	// Block, for a stop event, keeps the agent going with this reason.
	Block string
	// UpdatedInput, for a pre tool event that is not refused, is the tool's
	// input rewritten (the shell tool's command, with the active states'
	// env_overrides set), a JSON object; [Encode] writes it where the
	// host's protocol lets a hook rewrite a tool's input. Nil leaves the
	// input as the agent wrote it.
	UpdatedInput json.RawMessage
}
