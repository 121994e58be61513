package hook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The hosts' documentation the fixtures in testdata/hosts come from, read
// on 2026-11-23 (testdata/hosts/README.md says which sections).
const (
	srcClaude  = "https://code.claude.com/docs/en/hooks (read 2026-11-23)"
	srcCodex   = "https://developers.openai.com/codex/hooks and github.com/openai/codex codex-rs/hooks/schema/generated (read 2026-11-23)"
	srcGemini  = "https://geminicli.com/docs/hooks/reference (read 2026-11-23)"
	srcCursor  = "https://cursor.com/docs/hooks (read 2026-11-23)"
	srcCopilot = "https://docs.github.com/en/copilot/reference/copilot-cli-reference/cli-hooks-reference (read 2026-11-23)"
	// srcCaptured: sent by the real host, in hosttest's walk
	// (CHARTGATE_HOSTTEST_CAPTURE), paths made /home/user.
	srcCaptured = "captured from the real host (hosttest, 2026-11-28: Claude Code 2.1.332, Codex 0.171.0, Gemini CLI 0.61.0, Copilot CLI 1.0.102)"
)

// hostCase is one documented input: what it parses to, and the answer a
// result gets in the host's format.
type hostCase struct {
	host   Host
	file   string
	source string
	name   string // --event, for inputs that do not name their event
	// The event read.
	kind            Kind
	session, cwd    string
	tool, canonical string
	server          string
	failed, active  bool
	input           string // a field of the tool's arguments that must be read: key=value
	output          int64  // the bytes of the tool's output read
	// The answer.
	result Result
	want   string // the exact output, "" for none
}

var hostCases = []hostCase{
	// Claude Code.
	{host: ClaudeCode, file: "session-start.json", source: srcClaude, kind: KindSessionStart, session: "abc123", cwd: "/home/user/my-project",
		result: Result{Context: "phase: plan"}, want: `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"phase: plan"}}`},
	{host: ClaudeCode, file: "user-prompt-submit.json", source: srcClaude, kind: KindPrompt, session: "abc123", cwd: "/home/user/my-project",
		result: Result{Context: "phase: plan"}, want: `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"phase: plan"}}`},
	{host: ClaudeCode, file: "pre-tool-use-bash.json", source: srcClaude, kind: KindPreTool, session: "abc123", cwd: "/home/user/my-project",
		tool: "Bash", canonical: "Bash", input: "command=npm test",
		result: Result{Deny: "no"}, want: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}`},
	{host: ClaudeCode, file: "pre-tool-use-bash.json", source: srcClaude, kind: KindPreTool, session: "abc123", cwd: "/home/user/my-project",
		tool: "Bash", canonical: "Bash", result: Result{}, want: ""},
	// env_overrides: the whole input, rewritten, with "ask" (the fixture's
	// permission_mode is "default": chartgate grants no permission).
	{host: ClaudeCode, file: "pre-tool-use-bash-full.json", source: srcClaude, kind: KindPreTool, session: "abc123", cwd: "/home/user/my-project",
		tool: "Bash", canonical: "Bash", input: "command=npm test",
		result: Result{UpdatedInput: json.RawMessage(`{"command":"export A='1'\nnpm test","description":"Run the test suite","timeout":120000,"run_in_background":false}`)},
		want:   `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"` + envAskReason + `","updatedInput":{"command":"export A='1'\nnpm test","description":"Run the test suite","timeout":120000,"run_in_background":false}}}`},
	{host: ClaudeCode, file: "pre-tool-use-write.json", source: srcClaude, kind: KindPreTool, session: "abc123", cwd: "/home/user/my-project",
		tool: "Write", canonical: "Write", input: "file_path=/home/user/my-project/file.txt",
		result: Result{Deny: "no"}, want: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}`},
	{host: ClaudeCode, file: "pre-tool-use-mcp.json", source: srcClaude, kind: KindPreTool, session: "abc123", cwd: "/home/user/my-project",
		tool: "mcp__memory__create_entities", canonical: "create_entities", server: "memory", want: ""},
	{host: ClaudeCode, file: "pre-tool-use-mcp-gateway.json", source: srcCaptured, kind: KindPreTool, session: "9fb90486-1435-4ce2-b05b-1081ca246048", cwd: "/home/user/project",
		tool: "mcp__chartgate__workflow_transition", canonical: "workflow_transition", server: "chartgate", input: "event=DONE", want: ""},
	{host: ClaudeCode, file: "post-tool-use-write.json", source: srcClaude, kind: KindPostTool, session: "abc123", cwd: "/home/user/my-project",
		tool: "Write", canonical: "Write", result: Result{Context: "moved"}, want: `{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"moved"}}`},
	{host: ClaudeCode, file: "post-tool-use-failure.json", source: srcClaude, kind: KindPostTool, session: "abc123", cwd: "/home/user/my-project",
		tool: "Bash", canonical: "Bash", failed: true, output: 42, want: ""},
	{host: ClaudeCode, file: "pre-tool-use-read.json", source: srcClaude, kind: KindPreTool, session: "abc123", cwd: "/home/user/my-project",
		tool: "Read", canonical: "Read", input: "file_path=/home/user/my-project/src/main.go",
		result: Result{Context: "read before"}, want: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"read before"}}`},
	{host: ClaudeCode, file: "post-tool-use-read.json", source: srcClaude, kind: KindPostTool, session: "abc123", cwd: "/home/user/my-project",
		tool: "Read", canonical: "Read", output: 29, result: Result{Context: "budget"}, want: `{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"budget"}}`},
	{host: ClaudeCode, file: "stop.json", source: srcClaude, kind: KindStop, session: "abc123", cwd: "/home/user/my-project", active: true,
		result: Result{Block: "not done"}, want: `{"decision":"block","reason":"not done"}`},
	{host: ClaudeCode, file: "stop.json", source: srcClaude, kind: KindStop, session: "abc123", cwd: "/home/user/my-project", active: true, want: ""},

	// Codex: Claude Code's protocol; its outputs refuse unknown fields.
	{host: Codex, file: "session-start.json", source: srcCodex, kind: KindSessionStart, session: "019a2b3c-4d5e-7f60-8a9b-0c1d2e3f4a5b", cwd: "/repo",
		result: Result{Context: "phase"}, want: `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"phase"}}`},
	{host: Codex, file: "user-prompt-submit.json", source: srcCodex, kind: KindPrompt, session: "019a2b3c-4d5e-7f60-8a9b-0c1d2e3f4a5b", cwd: "/repo",
		result: Result{Context: "phase"}, want: `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"phase"}}`},
	{host: Codex, file: "pre-tool-use-bash.json", source: srcCodex, kind: KindPreTool, session: "019a2b3c-4d5e-7f60-8a9b-0c1d2e3f4a5b", cwd: "/repo",
		tool: "Bash", canonical: "Bash", input: "command=cargo test",
		result: Result{Deny: "no"}, want: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}`},
	{host: Codex, file: "pre-tool-use-bash.json", source: srcCodex, kind: KindPreTool, session: "019a2b3c-4d5e-7f60-8a9b-0c1d2e3f4a5b", cwd: "/repo",
		tool: "Bash", canonical: "Bash", result: Result{UpdatedInput: json.RawMessage(`{"command":"export A='1'\ncargo test"}`)},
		want: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"export A='1'\ncargo test"}}}`},
	{host: Codex, file: "pre-tool-use-mcp.json", source: srcCaptured, kind: KindPreTool, session: "01a22117-5655-7081-828a-1aca937371ff", cwd: "/home/user/project",
		tool: "mcp__chartgate__workflow_transition", canonical: "workflow_transition", server: "chartgate", want: ""},
	{host: Codex, file: "pre-tool-use-apply-patch.json", source: srcCodex, kind: KindPreTool, session: "019a2b3c-4d5e-7f60-8a9b-0c1d2e3f4a5b", cwd: "/repo",
		tool: "apply_patch", canonical: "Edit", result: Result{Deny: "no"},
		want: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}`},
	{host: Codex, file: "post-tool-use-bash.json", source: srcCodex, kind: KindPostTool, session: "019a2b3c-4d5e-7f60-8a9b-0c1d2e3f4a5b", cwd: "/repo",
		tool: "Bash", canonical: "Bash", failed: true, result: Result{Context: "moved"}, output: 19, want: `{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"moved"}}`},
	{host: Codex, file: "stop.json", source: srcCodex, kind: KindStop, session: "019a2b3c-4d5e-7f60-8a9b-0c1d2e3f4a5b", cwd: "/repo",
		result: Result{Block: "not done"}, want: `{"decision":"block","reason":"not done"}`},

	// Gemini CLI.
	{host: Gemini, file: "session-start.json", source: srcGemini, kind: KindSessionStart, session: "gem-1", cwd: "/home/user/project",
		result: Result{Context: "phase"}, want: `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"phase"}}`},
	{host: Gemini, file: "before-agent.json", source: srcGemini, kind: KindPrompt, session: "gem-1", cwd: "/home/user/project",
		result: Result{Context: "phase"}, want: `{"hookSpecificOutput":{"hookEventName":"BeforeAgent","additionalContext":"phase"}}`},
	{host: Gemini, file: "before-tool-shell.json", source: srcGemini, kind: KindPreTool, session: "gem-1", cwd: "/home/user/project",
		tool: "run_shell_command", canonical: "Bash", input: "command=rm -rf build",
		result: Result{Deny: "no"}, want: `{"decision":"deny","reason":"no"}`},
	{host: Gemini, file: "before-tool-shell.json", source: srcGemini, kind: KindPreTool, session: "gem-1", cwd: "/home/user/project",
		tool: "run_shell_command", canonical: "Bash", want: `{}`},
	{host: Gemini, file: "before-tool-shell.json", source: srcGemini, kind: KindPreTool, session: "gem-1", cwd: "/home/user/project",
		tool: "run_shell_command", canonical: "Bash", result: Result{UpdatedInput: json.RawMessage(`{"command":"export A='1'\nrm -rf build","description":"clean the build"}`)},
		want: `{"hookSpecificOutput":{"hookEventName":"BeforeTool","tool_input":{"command":"export A='1'\nrm -rf build","description":"clean the build"}}}`},
	{host: Gemini, file: "before-tool-mcp.json", source: srcCaptured, kind: KindPreTool, session: "b1fd8d40-46e5-4b4b-a4ed-08a9aa72825f", cwd: "/home/user/project",
		tool: "mcp_chartgate_workflow_transition", canonical: "workflow_transition", server: "chartgate", input: "event=PLAN_READY", want: `{}`},
	{host: Gemini, file: "after-tool-mcp.json", source: srcCaptured, kind: KindPostTool, session: "b1fd8d40-46e5-4b4b-a4ed-08a9aa72825f", cwd: "/home/user/project",
		tool: "mcp_chartgate_workflow_transition", canonical: "workflow_transition", server: "chartgate", input: "event=DONE", output: 118,
		result: Result{Context: "phase"}, want: `{"hookSpecificOutput":{"hookEventName":"AfterTool","additionalContext":"phase"}}`},
	{host: Gemini, file: "after-tool.json", source: srcGemini, kind: KindPostTool, session: "gem-1", cwd: "/home/user/project",
		tool: "write_file", canonical: "Write", input: "file_path=/home/user/project/.env",
		result: Result{Context: "moved"}, output: 67, want: `{"hookSpecificOutput":{"hookEventName":"AfterTool","additionalContext":"moved"}}`},
	{host: Gemini, file: "after-tool-error.json", source: srcGemini, kind: KindPostTool, session: "gem-1", cwd: "/home/user/project",
		tool: "replace", canonical: "Edit", failed: true, output: 35, want: `{}`},
	{host: Gemini, file: "after-tool-read.json", source: srcGemini, kind: KindPostTool, session: "gem-1", cwd: "/home/user/project",
		tool: "read_file", canonical: "Read", input: "file_path=/home/user/project/main.go", output: 29,
		result: Result{Context: "budget"}, want: `{"hookSpecificOutput":{"hookEventName":"AfterTool","additionalContext":"budget"}}`},
	{host: Gemini, file: "after-agent.json", source: srcGemini, kind: KindStop, session: "gem-1", cwd: "/home/user/project",
		result: Result{Block: "not done"}, want: `{"decision":"deny","reason":"not done"}`},

	// Cursor.
	{host: Cursor, file: "session-start.json", source: srcCursor, kind: KindSessionStart, session: "conv-123", cwd: "/path/to/project",
		result: Result{Context: "phase"}, want: `{"additional_context":"phase"}`},
	{host: Cursor, file: "before-submit-prompt.json", source: srcCursor, kind: KindPrompt, session: "conv-123", cwd: "/path/to/project",
		result: Result{Context: "phase"}, want: `{"continue":true}`},
	{host: Cursor, file: "before-shell-execution.json", source: srcCursor, kind: KindPreTool, session: "conv-123", cwd: "/path/to/project",
		tool: "Shell", canonical: "Bash", input: "command=npm install express",
		result: Result{Deny: "Not now.\nTools available now: Read."}, want: `{"permission":"deny","user_message":"chartgate: Not now.","agent_message":"Not now.\nTools available now: Read."}`},
	{host: Cursor, file: "before-shell-execution.json", source: srcCursor, kind: KindPreTool, session: "conv-123", cwd: "/path/to/project",
		tool: "Shell", canonical: "Bash", want: `{"permission":"allow"}`},
	{host: Cursor, file: "before-shell-execution.json", source: srcCursor, kind: KindPreTool, session: "conv-123", cwd: "/path/to/project",
		tool: "Shell", canonical: "Bash", result: Result{UpdatedInput: json.RawMessage(`{"command":"export A='1'\nnpm install express"}`)},
		want: `{"permission":"allow"}`}, // no rewrite documented
	{host: Cursor, file: "before-mcp-execution.json", source: srcCursor, kind: KindPreTool, session: "conv-123", cwd: "/path/to/project",
		tool: "database_query", canonical: "database_query", server: "npx mcp-server", input: "query=SELECT * FROM users",
		result: Result{Deny: "no"}, want: `{"permission":"deny","user_message":"chartgate: no","agent_message":"no"}`},
	{host: Cursor, file: "before-mcp-execution-gateway.json", source: srcCursor, kind: KindPreTool, session: "conv-123", cwd: "/path/to/project",
		tool: "workflow_transition", canonical: "workflow_transition", server: "chartgate serve --workflow .chartgate/workflow.json", want: `{"permission":"allow"}`},
	{host: Cursor, file: "before-read-file.json", source: srcCursor, kind: KindPreTool, session: "conv-123", cwd: "/path/to/project",
		tool: "Read", canonical: "Read", input: "file_path=/path/to/project/secrets.env",
		result: Result{Deny: "no"}, output: 11, want: `{"permission":"deny","user_message":"chartgate: no","agent_message":"no"}`},
	{host: Cursor, file: "pre-tool-use-write.json", source: srcCursor, kind: KindPreTool, session: "conv-123", cwd: "/path/to/project",
		tool: "Write", canonical: "Write", input: "file_path=/path/to/project/src/main.ts",
		result: Result{Deny: "no"}, want: `{"permission":"deny","user_message":"chartgate: no","agent_message":"no"}`},
	{host: Cursor, file: "after-file-edit.json", source: srcCursor, kind: KindPostTool, session: "conv-123", cwd: "/path/to/project",
		tool: "Edit", canonical: "Edit", input: "file_path=/path/to/project/src/main.ts",
		result: Result{Context: "moved"}, want: `{"additional_context":"moved"}`},
	{host: Cursor, file: "after-shell-execution.json", source: srcCursor, kind: KindPostTool, session: "conv-123", cwd: "/path/to/project",
		tool: "Shell", canonical: "Bash", input: "command=echo TOKEN=1 > .env", want: `{}`},
	{host: Cursor, file: "after-mcp-execution.json", source: srcCursor, kind: KindPostTool, session: "conv-123", cwd: "/path/to/project",
		tool: "database_query", canonical: "database_query", server: "npx mcp-server", output: 13, want: `{}`},
	{host: Cursor, file: "post-tool-use-read.json", source: srcCursor, kind: KindPostTool, session: "conv-123", cwd: "/path/to/project",
		tool: "Read", canonical: "Read", input: "file_path=/path/to/project/src/main.ts", output: 9,
		result: Result{Context: "read thrice"}, want: `{"additional_context":"read thrice"}`},
	{host: Cursor, file: "stop.json", source: srcCursor, kind: KindStop, session: "conv-123", cwd: "/path/to/project",
		result: Result{Block: "not done"}, want: `{"followup_message":"not done"}`},

	// Copilot CLI: camelCase payloads name no event (read from their
	// fields, or given as --event); PascalCase ones are VS Code's.
	{host: Copilot, file: "session-start.json", source: srcCopilot, kind: KindSessionStart, session: "cp-1", cwd: "/repo",
		result: Result{Context: "phase"}, want: `{"additionalContext":"phase"}`},
	{host: Copilot, file: "user-prompt-submitted.json", source: srcCopilot, kind: KindPrompt, session: "cp-1", cwd: "/repo",
		result: Result{Context: "phase"}, want: `{"additionalContext":"phase"}`},
	{host: Copilot, file: "pre-tool-use.json", source: srcCopilot, kind: KindPreTool, session: "cp-1", cwd: "/repo",
		tool: "bash", canonical: "Bash", input: "command=rm -rf dist",
		result: Result{Deny: "no"}, want: `{"permissionDecision":"deny","permissionDecisionReason":"no"}`},
	{host: Copilot, file: "pre-tool-use.json", source: srcCopilot, name: "preToolUse", kind: KindPreTool, session: "cp-1", cwd: "/repo",
		tool: "bash", canonical: "Bash", want: ""},
	{host: Copilot, file: "pre-tool-use.json", source: srcCopilot, kind: KindPreTool, session: "cp-1", cwd: "/repo",
		tool: "bash", canonical: "Bash", result: Result{UpdatedInput: json.RawMessage(`{"command":"export A='1'\nrm -rf dist","description":"clean"}`)},
		want: `{"modifiedArgs":{"command":"export A='1'\nrm -rf dist","description":"clean"}}`},
	{host: Copilot, file: "pre-tool-use-string-args.json", source: srcCopilot, kind: KindPreTool, session: "cp-1", cwd: "/repo",
		tool: "edit", canonical: "Edit", input: "path=/repo/src/app.ts",
		result: Result{Deny: "no"}, want: `{"permissionDecision":"deny","permissionDecisionReason":"no"}`},
	{host: Copilot, file: "pre-tool-use-vscode.json", source: srcCopilot, kind: KindPreTool, session: "cp-1", cwd: "/repo",
		tool: "create", canonical: "Write", input: "path=/repo/.env",
		result: Result{Deny: "no"}, want: `{"permissionDecision":"deny","permissionDecisionReason":"no"}`},
	{host: Copilot, file: "post-tool-use.json", source: srcCopilot, kind: KindPostTool, session: "cp-1", cwd: "/repo",
		tool: "create", canonical: "Write", result: Result{Context: "moved"}, output: 23, want: `{"additionalContext":"moved"}`},
	{host: Copilot, file: "post-tool-use-failure.json", source: srcCopilot, kind: KindPostTool, session: "cp-1", cwd: "/repo",
		tool: "bash", canonical: "Bash", failed: true, output: 11, want: ""},
	{host: Copilot, file: "post-tool-use-view.json", source: srcCopilot, kind: KindPostTool, session: "cp-1", cwd: "/repo",
		tool: "view", canonical: "Read", input: "path=/repo/src/app.ts", output: 23, result: Result{Context: "budget"}, want: `{"additionalContext":"budget"}`},
	{host: Copilot, file: "pre-tool-use-mcp.json", source: srcCaptured, kind: KindPreTool, session: "f4b6a9fb-fa3f-4125-86aa-95242a094877", cwd: "/home/user/project",
		tool: "chartgate-workflow_transition", canonical: "workflow_transition", server: "chartgate", input: "event=DONE", want: ""},
	{host: Copilot, file: "pre-tool-use-apply-patch.json", source: srcCaptured, kind: KindPreTool, session: "f4b6a9fb-fa3f-4125-86aa-95242a094877", cwd: "/home/user/project",
		tool: "apply_patch", canonical: "Write", result: Result{Deny: "no"}, want: `{"permissionDecision":"deny","permissionDecisionReason":"no"}`},
	{host: Copilot, file: "agent-stop.json", source: srcCopilot, kind: KindStop, session: "cp-1", cwd: "/repo",
		result: Result{Block: "not done"}, want: `{"decision":"block","reason":"not done"}`},
}

// TestHostFixtures reads every documented input of every host and checks
// the event read and the answer written in the host's format.
func TestHostFixtures(t *testing.T) {
	used := map[string]bool{}
	for _, c := range hostCases {
		path := filepath.Join("testdata", "hosts", string(c.host), c.file)
		used[path] = true
		t.Run(string(c.host)+"/"+c.file, func(t *testing.T) {
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			ev, err := Parse(c.host, data, c.name)
			require.NoError(t, err, "source: %s", c.source)
			assert.Equal(t, c.kind, ev.Kind, "kind")
			assert.Equal(t, c.session, ev.SessionID, "session")
			assert.Equal(t, c.cwd, ev.Cwd, "cwd")
			assert.Equal(t, c.tool, ev.Tool, "tool")
			assert.Equal(t, c.server, ev.Server, "server")
			assert.Equal(t, c.failed, ev.Failed, "failed")
			assert.Equal(t, c.active, ev.StopActive, "stop active")
			assert.Equal(t, c.output, ev.OutputBytes, "output bytes")
			if c.kind == KindPreTool || c.kind == KindPostTool {
				assert.Equal(t, c.canonical, canonical(ev), "canonical name")
				var args map[string]any
				require.NoError(t, json.Unmarshal(ev.Input, &args), "tool arguments must be an object")
			}
			if c.input != "" {
				k, v, _ := strings.Cut(c.input, "=")
				var args map[string]any
				require.NoError(t, json.Unmarshal(ev.Input, &args))
				assert.Equal(t, v, args[k], "argument %s", k)
			}
			out := strings.TrimSuffix(string(Encode(ev, c.result)), "\n")
			assert.Equal(t, c.want, out, "answer to %+v (source: %s)", c.result, c.source)
			if out != "" {
				assert.True(t, json.Valid([]byte(out)), "the answer is JSON")
			}
		})
	}
	// Every fixture is checked.
	files, err := filepath.Glob(filepath.Join("testdata", "hosts", "*", "*.json"))
	require.NoError(t, err)
	sort.Strings(files)
	for _, f := range files {
		assert.True(t, used[f], "fixture %s is not in hostCases", f)
	}
}

// codexOutputKeys are the fields Codex's output schemas allow
// (codex-rs/hooks/schema/generated/*.command.output.schema.json, all
// "additionalProperties": false), by event: an answer with another field
// is rejected.
var codexOutputKeys = map[string]struct{ top, specific []string }{
	"PreToolUse":       {[]string{"continue", "hookSpecificOutput", "stopReason", "suppressOutput", "systemMessage"}, []string{"additionalContext", "hookEventName", "permissionDecision", "permissionDecisionReason", "updatedInput"}},
	"PostToolUse":      {[]string{"continue", "decision", "hookSpecificOutput", "reason", "stopReason", "suppressOutput", "systemMessage"}, []string{"additionalContext", "hookEventName", "updatedMCPToolOutput", "updatedToolOutput"}},
	"SessionStart":     {[]string{"continue", "hookSpecificOutput", "stopReason", "suppressOutput", "systemMessage"}, []string{"additionalContext", "env", "hookEventName"}},
	"UserPromptSubmit": {[]string{"continue", "decision", "hookSpecificOutput", "reason", "stopReason", "suppressOutput", "systemMessage"}, []string{"additionalContext", "hookEventName"}},
	"Stop":             {[]string{"continue", "decision", "reason", "stopReason", "suppressOutput", "systemMessage"}, nil},
}

// TestCodexOutputsHaveOnlySchemaFields: every answer chartgate gives Codex
// holds only the fields Codex's output schemas allow (source: srcCodex).
func TestCodexOutputsHaveOnlySchemaFields(t *testing.T) {
	results := []Result{{Deny: "d"}, {Context: "c"}, {Block: "b"}, {Deny: "d", Context: "c", Block: "b"}}
	for name, keys := range codexOutputKeys {
		for _, r := range results {
			ev := Event{Host: Codex, Name: name, Kind: claudeKinds[name]}
			out := Encode(ev, r)
			if out == nil {
				continue
			}
			var m map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(out, &m), "%s %+v", name, r)
			for k := range m {
				assert.Contains(t, keys.top, k, "%s: field %q", name, k)
			}
			if hs, ok := m["hookSpecificOutput"]; ok {
				var s map[string]any
				require.NoError(t, json.Unmarshal(hs, &s))
				for k := range s {
					assert.Contains(t, keys.specific, k, "%s: hookSpecificOutput.%s", name, k)
				}
				assert.Equal(t, name, s["hookEventName"])
			}
		}
	}
}

// TestParseErrors: an input that cannot be read says where, and keeps the
// event's kind when it was found, so that a pre tool event is refused.
func TestParseErrors(t *testing.T) {
	cases := []struct {
		host Host
		in   string
		kind Kind
		msg  string
	}{
		{ClaudeCode, `not json`, KindOther, "hook input: not valid JSON"},
		{ClaudeCode, `[1]`, KindOther, "hook input: must be a JSON object, not an array"},
		{ClaudeCode, `{"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": "Bash", "tool_input": "rm -rf /"}`, KindPreTool, "hook input: tool_input: must be an object, or a string holding a JSON object"},
		{ClaudeCode, `{"hook_event_name": "PreToolUse", "session_id": "s", "tool_input": {}}`, KindPreTool, "hook input: tool_name: missing"},
		{ClaudeCode, `{"hook_event_name": "PreToolUse", "tool_name": "Bash"}`, KindPreTool, "hook input: no session id"},
		{ClaudeCode, `{"hook_event_name": "Stop", "session_id": "s", "stop_hook_active": "yes"}`, KindStop, "hook input: stop_hook_active: must be true or false, not a string"},
		{ClaudeCode, `{"hook_event_name": 3}`, KindOther, "hook input: hook_event_name: must be a string, not a number"},
		{ClaudeCode, `{"hook_event_name": "PreToolUse", "session_id": "a\u0000b", "tool_name": "Bash"}`, KindPreTool, "control characters"},
		{Gemini, `{"hook_event_name": "BeforeTool", "session_id": "s", "tool_name": "x", "tool_input": 5}`, KindPreTool, "hook input: tool_input: must be an object, not a number"},
		{Cursor, `{"hook_event_name": "beforeShellExecution", "conversation_id": "c"}`, KindPreTool, "hook input: command: missing"},
		{Copilot, `{"sessionId": "s", "toolName": "bash", "toolArgs": "{nope"}`, KindPreTool, "hook input: toolArgs: must be an object, or a string holding a JSON object"},
		{ClaudeCode, strings.Repeat("[", 200) + strings.Repeat("]", 200), KindOther, "nested more than 128 levels deep"},
	}
	for _, c := range cases {
		ev, err := Parse(c.host, []byte(c.in), "")
		require.Error(t, err, "%s", c.in)
		assert.Contains(t, err.Error(), c.msg)
		assert.Equal(t, c.kind, ev.Kind, "%s", c.in)
		var ie *InputError
		assert.ErrorAs(t, err, &ie)
	}
	// Events chartgate does not handle need no session.
	ev, err := Parse(ClaudeCode, []byte(`{"hook_event_name": "Notification", "message": "hi"}`), "")
	require.NoError(t, err)
	assert.Equal(t, KindOther, ev.Kind)
	assert.Nil(t, Encode(ev, Result{}))
}

func TestParseHost(t *testing.T) {
	for in, want := range map[string]Host{"claude-code": ClaudeCode, "claude": ClaudeCode, "codex": Codex, "gemini": Gemini, "gemini-cli": Gemini, "cursor": Cursor, "copilot": Copilot, "Copilot-CLI": Copilot} {
		h, err := ParseHost(in)
		require.NoError(t, err)
		assert.Equal(t, want, h)
	}
	_, err := ParseHost("vscode")
	assert.EqualError(t, err, `hook: unknown host "vscode": use one of claude-code, codex, gemini, cursor, copilot`)
}
