// Package hook enforces a workflow on an agent host's own tools (its
// shell, its file editor) through the host's hook protocol, as `chartgate
// hook HOST` does: one hook event read from the host's JSON ([Parse]),
// answered from the workflow of the event's agent session ([Handler]),
// written back in the host's JSON ([Encode]). The workflow is the one the
// chartgate gateway (`chartgate serve`) of the same agent session uses:
// same file, same store, same state, so a transition made through the
// gateway's workflow_transition changes what the hook allows, and an
// interrupt the hook fires changes what the gateway lists.
//
//	ev, err := hook.Parse(hook.ClaudeCode, stdin, "")
//	h, err := hook.NewHandler(w, gate, store, hook.ProjectDir(ev.Cwd), nil)
//	res, err := h.Handle(ctx, ev)
//	os.Stdout.Write(hook.Encode(ev, res))
//
// `chartgate install HOST` ([Plan], [Install]) writes the hooks and the
// gateway's MCP server entry into the host's configuration, moves the
// project's own MCP servers from there behind the gateway (into
// [ServersFile], unless [InstallOptions].KeepServersDirect), and records
// the workflow file's format in .chartgate/installed.json
// ([InstalledFile]): a workflow file that then loads in the other format
// is refused by the hooks, the gateway and `chartgate validate`
// ([CheckFormat]). `chartgate uninstall HOST` ([PlanUninstall],
// [ApplyUninstall]) gives the files back as they were. Codex's gateway
// entry also gets --list-all-tools: Codex reads an MCP server's tools once,
// when its session starts, and ignores notifications/tools/list_changed,
// so the gateway lists it every tool in every state (each saying in which
// states it works) and refuses a call outside them; the other hosts
// re-read the list when it changes and get the current state's tools.
//
// # Hosts
//
// The protocols, as each host documents them (read 2026-11-23; the test
// fixtures in testdata/hosts cite the pages):
//
//   - Claude Code (https://code.claude.com/docs/en/hooks): input
//     {session_id, transcript_path, cwd, permission_mode, hook_event_name,
//     tool_name, tool_input, tool_use_id, tool_response}. Events used:
//     SessionStart and UserPromptSubmit (context as
//     hookSpecificOutput.additionalContext), PreToolUse (deny as
//     hookSpecificOutput {hookEventName, permissionDecision: "deny",
//     permissionDecisionReason}), PostToolUse and PostToolUseFailure
//     (additionalContext), Stop ({"decision": "block", "reason"}).
//   - Codex (https://developers.openai.com/codex/hooks): Claude Code's
//     protocol, with differences its documentation and generated schemas
//     state: PreToolUse and PostToolUse fire for Bash, apply_patch (the
//     patch in tool_input.command) and MCP tools only, PostToolUse also
//     after a shell command that failed (tool_response.exit_code), and its
//     outputs reject unknown fields, so only the documented ones are
//     written. No PostToolUseFailure.
//   - Gemini CLI (https://geminicli.com/docs/hooks/reference): SessionStart
//     and BeforeAgent (hookSpecificOutput.additionalContext), BeforeTool
//     ({"decision": "deny", "reason"}), AfterTool (tool_response.error
//     marks a failure), AfterAgent ({"decision": "deny", "reason"} retries
//     with the reason as the prompt: the stop). Its hooks must print
//     JSON, so a "go on" is {}.
//   - Cursor (https://cursor.com/docs/hooks): sessionStart
//     ({"additional_context"}), beforeShellExecution, beforeMCPExecution,
//     beforeReadFile and the generic preToolUse ({"permission": "allow"} or
//     {"permission": "deny", "user_message", "agent_message"}; Cursor
//     reads an answer without permission as invalid, so "allow" is always
//     written), afterShellExecution, afterMCPExecution, afterFileEdit
//     (their answers are not read), postToolUse ({"additional_context"};
//     installed for Read, whose calls have no after event of their own),
//     stop ({"followup_message"}). The session is conversation_id (or
//     session_id), the folder cwd or workspace_roots[0].
//     beforeSubmitPrompt cannot add context.
//   - Copilot CLI (https://docs.github.com/en/copilot/reference/copilot-cli-reference/cli-hooks-reference):
//     preToolUse ({"permissionDecision": "deny",
//     "permissionDecisionReason"}), postToolUse, postToolUseFailure,
//     agentStop ({"decision": "block", "reason"}); both of its payload
//     formats. Its camelCase payloads do not carry their event's name: it
//     is read from their fields, or given with --event. Context
//     ({"additionalContext"}) at sessionStart, userPromptSubmitted and
//     postToolUse, which Copilot CLI 1.0.102 gives the agent (seen with
//     the real host, hosttest/). It also runs the hooks of
//     .claude/settings.json: where chartgate is installed for it, the
//     Claude Code hook run by Copilot CLI steps aside ([StepsAside]).
//
// Where a host's documentation differs from the issue that asked for this
// package (#10), the documentation was followed: the points above on
// Codex (tools covered, strict outputs), Cursor (allow written, no prompt
// context) and Copilot CLI (no event name).
//
// # What each event does
//
// Every event records its agent session in the store (see "One workflow
// per agent session"). Then:
//
//   - Context events (session start, prompt) inject the phase: the state,
//     its instructions, the tools allowed now, the shell commands and
//     environment variables of the state's policy, the call budgets, and
//     the events that move on with their targets, as Statewright's hook
//     does on every prompt. A transition waiting for a person's approval
//     is said instead of the events.
//   - Pre tool events ask the gate ([gate.Decider.Decide]): a tool the
//     state does not allow is refused with the gate's guidance, the same
//     a refused MCP call of the gateway gets (what is allowed now, which
//     transition makes the tool available, the instructions). The gate
//     decides on the workflow the event read ([gate.Request].Workflow):
//     an event loads its workflow's record once. The shell
//     tool (the active states' allowed_commands_tool, default Bash) is
//     then decided by package shellpolicy with each active state's
//     policy: allowed_commands (every simple command of the line must
//     match; one rule, shellpolicy.MatchCommand, the gateway's too),
//     blocked_env, and the tools allowed now for the classes of commands
//     (a write needs Write or Edit). Edits are held to max_edit_lines (the
//     larger of the lines removed and written, per replacement) and
//     max_files_per_state (the files edited since the state was entered,
//     kept in the session's record). In every state, a final one
//     included, what would move the gate itself is refused (below,
//     "chartgate's own files").
//     A shell command allowed in a state with env_overrides is rewritten
//     to run with them set, where the host lets a hook do so (see
//     "Environment variables").
//   - Post tool events record the call ([gate.Decider.Commit]): it counts
//     against the budgets (with Statewright's soft max_iterations, a
//     checkpoint notice once the budget is used up), and a successful
//     call sends the tool's bound event. Then every file the call wrote
//     (an edit tool's file, the paths shellpolicy finds a shell command
//     writes, the files of a Codex patch), relative to the project
//     folder, is matched against the workflow's interrupts
//     ([workflow.Workflow.MatchInterrupt]); a match sends
//     "chartgate.interrupt.<name>" ([gate.Decider.Send], by "hook"), and
//     the agent is told where it landed.
//     Post tool events also count the tool's output against the state's
//     context_budget_bytes, and the files read, for the notices of
//     "Context budget and repeated reads".
//   - Events the hook must send are never dropped (see "Pending
//     events").
//   - Stop events keep the agent going, with the phase as the reason,
//     until a final state, when the workflow asks for it (below).
//
// A final state ends enforcement: every tool and every command is allowed,
// and the agent may stop; chartgate's own files stay refused.
//
// # chartgate's own files
//
// The agent is assumed to use every tool its state allows against the
// gate. In every state, a final one included, and whatever the state's
// allowed_commands or allowed_tools, the hook refuses ([shellpolicy.Protection],
// built per event):
//
//   - writing, with the file tools (Write, Edit, MultiEdit, Codex's
//     apply_patch, Gemini CLI's write_file and replace, Copilot CLI's
//     create and edit) or with a shell command, the project's .chartgate/
//     (the workflow, the store), the hosts' project files (.claude/
//     settings.json and settings.local.json, .mcp.json, .codex/hooks.json
//     and config.toml, .cursor/hooks.json and mcp.json, .gemini/
//     settings.json, .github/hooks/), their user-level files
//     (~/.claude/settings.json and settings.local.json, where
//     disableAllHooks lives, ~/.claude.json, ~/.codex/config.toml and
//     hooks.json or under $CODEX_HOME, ~/.gemini/settings.json,
//     ~/.cursor/hooks.json and mcp.json, ~/.copilot/settings.json,
//     config.json, mcp-config.json and hooks/ or under $COPILOT_HOME),
//     and chartgate's user folder ($XDG_CONFIG_HOME/chartgate, else
//     ~/.config/chartgate, where the approvals' secret lives); a folder
//     that holds one of them (.claude/, .codex/) or an ancestor of one
//     (mv .claude x); paths are resolved relative to the tool's folder,
//     with ~, $HOME, $PWD, "..", the symbolic links that exist on disk,
//     and without regard to case;
//   - reading or naming the store (.chartgate/state.db and its -wal and
//     -shm files) or chartgate's user folder, with any tool or program;
//   - running chartgate (chartgate approve, chartgate install ...) from
//     the shell, by any path, through env, xargs, find -exec, sh -c, npx,
//     go run of its package or go test -exec, and the rest that package
//     shellpolicy lists under "Protected paths";
//   - a shell line not decided within 10 seconds.
//
// The shell side is shellpolicy's, with its limits: a program the line
// runs (a script, make, a test) can do whatever the user can, chartgate
// and its files included; only OS isolation stops that.
//
// The calls of the gateway's own MCP tools (mcp__chartgate__*, as each
// host names them, or, in Cursor, a server run as "chartgate serve") are
// left to the gateway, which gates and records them: the hook neither
// refuses nor counts them. After the gateway's workflow_transition, the
// post tool answer carries the new state's phase (its instructions, tools
// and events). Claude Code's ToolSearch and Codex's tool_search, which
// only find tools (an agent needs them to reach workflow_transition where
// MCP tools are deferred), are not gated.
//
// # One workflow per agent session
//
// The workflow's name is the agent session's id: the hook uses
// gate.Ref{Name: session id}, and the gateway names its MCP session's
// workflow the same through mcpbind.Options.SessionKey, on the same store
// and KeyPrefix (the default, from the machine's id), so both reach one
// record. The hook sees the session id; the gateway, an MCP server the
// host launched, does not. They meet in the store:
//
//   - Every hook event records its session under "chartgate:agents:<id>"
//     ([AgentKeyPrefix], [AgentSession]): the host, the project folder,
//     the time, and the hook process' ancestry, its parent process up to
//     init, each with its start time and name (/proc on Linux, one run of
//     ps on other Unix systems, none on Windows). The record is rewritten
//     at most every 30 s, and at every session start (a resumed session
//     runs in a new host process).
//   - The gateway (`chartgate serve --session auto`, which `chartgate
//     install` configures) calls [ResolveSession] through a [Resolver],
//     whose Name is its mcpbind.Options.SessionKey, with its own
//     ancestry:
//     among the sessions of its project seen in the last 12 hours, the one
//     whose ancestry shares the nearest common ancestor with the
//     gateway's, init aside; ties go to the session seen last. The agent
//     host launched both the hook's shell and the gateway, so that
//     ancestor is the host process. A match is exact when the ancestor is
//     the gateway's nearest ancestor that is not a shell or a wrapper
//     ([HostIndex]). The Resolver never waits: the host may connect to its
//     MCP servers before its first hook runs (Gemini CLI lists their
//     tools before SessionStart) or after. Each request looks in the store
//     until it finds the session: an exact match at once, the best match
//     once 5 s have passed since the first request; then it keeps it.
//     Until then the gateway serves a workflow of its own.
//   - Without ancestries, the session seen last in the project is taken
//     (after those 5 s). No session: the gateway keeps a workflow of its
//     own, and logs it.
//
// The limits: two agent sessions started at the same moment in one
// project on a system without /proc or ps cannot be told apart (the
// newest wins); an agent host that launches its hooks and its MCP servers
// from processes that share no ancestor below a terminal or a service
// manager resolves only to the newest session sharing that one; a gateway
// whose host has run no hook within 5 s of its first request may bind to
// another session of the project when one shares an ancestor with it
// (then inexact, and logged); hosts in containers with separate process
// namespaces share no ancestry.
//
// # Tool names
//
// A workflow names tools in Statewright's vocabulary, Claude Code's names:
// Bash, Read, Edit, Write, MultiEdit, NotebookEdit, Glob, Grep, WebFetch,
// WebSearch, Task. The hosts' own names are mapped to them (Gemini CLI's
// run_shell_command is Bash, write_file Write, replace Edit, read_file
// Read; Copilot CLI's bash, create, edit, view; Cursor's Shell and
// StrReplace; Codex's apply_patch is Write when it only adds files, else
// Edit), and an MCP tool goes by its own name: Claude Code and Codex call
// it mcp__<server>__<tool>, Gemini CLI mcp_<server>_<tool> (with
// mcp_context.server_name and tool_name in the event), Copilot CLI
// <server>-<tool>, as the real hosts send them (hosttest/). A workflow may also name a
// tool by the host's name (run_shell_command, mcp__github__create_issue,
// or a pattern such as mcp__github__*): a host's name that some state names
// (by name, or by a pattern other than "*") is used as it is.
//
// # Context budget and repeated reads
//
// A state's context_budget_bytes (meta.chartgate.context_budget_bytes of
// an XState state) bounds the bytes of tool output the agent reads while
// the state is active; with several active states, the tightest applies.
// The hook counts what each tool call gave the agent, as its host reports
// it in the post tool event: Claude Code's and Codex's tool_response (a
// Read's file content, Bash's stdout and stderr, an MCP tool's text; not
// an edit's response, which echoes the file written) or error, Gemini
// CLI's llmContent (not returnDisplay, which only the user sees), Cursor's
// output (shell), result_json (MCP) and tool_output (postToolUse),
// Copilot CLI's textResultForLlm or error. Every string of the output
// counts, JSON structure and numbers do not. The count, kept in the
// session's record in the store (safe under concurrent hooks, as
// max_files_per_state's files are), starts again each time the state is
// entered. From 90% of the budget on, the post tool answer of every call
// that adds to the count tells the agent the bytes read, the budget, the
// state and how to move on; past 100%, that the budget is exceeded. Where
// the host reads context from a pre tool answer (Claude Code's and Codex's
// PreToolUse), a read in such a state is warned about before it runs too,
// as Statewright's gateway warns before each call. Reads are never refused for
// it: Statewright only warns, and a refusal would stop an agent that
// needs one more look to finish the phase; the agent is told to move on
// instead. The phase injected with every prompt gives the count too.
//
// The files read (Read, Gemini CLI's read_file, Copilot CLI's view,
// Cursor's reads), relative to the project folder as edits are, are
// counted per state entry in the same record. The third read of one file
// and every later one is warned about, as Statewright's gateway does:
// before it runs where the host reads context from an answer that lets a
// tool run (Claude Code's PreToolUse), else after it (Gemini CLI's
// AfterTool, whose BeforeTool takes no context).
//
// With a workflow loaded with workflow.CompatStatewright, these warnings
// and the refusals of max_edit_lines, max_files_per_state,
// allowed_commands and the shell classes start with Statewright's
// gateway's sentence for them ("exceeds limit of", "is not in the allowed
// commands", "already edited 3 files", "You have read 'f' 2 times",
// "Context budget:", "performs a FileWrite operation"), followed by
// chartgate's guidance. Per host:
//
//   - Claude Code: budget after every tool, and before reads; repeated
//     reads before them.
//   - Codex: budget after Bash and MCP tools, the ones its hooks see; it
//     has no read tool (its reads are shell commands, whose output
//     counts).
//   - Gemini CLI: both after the tool (AfterTool's additionalContext).
//   - Cursor: beforeReadFile carries the file's content before the read:
//     the read and its bytes are counted there, once; the notices come
//     with the read's postToolUse (installed for Read), since a
//     permission answer carries no context and Cursor does not read the
//     answers of afterShellExecution and afterMCPExecution (their output
//     is counted, and the next read's answer carries the notice).
//   - Copilot CLI: counted, and the notice is in postToolUse's
//     additionalContext.
//
// # Environment variables
//
// A state's env_overrides (meta.chartgate.env_overrides of an XState
// state) are environment variables set for the commands of the shell
// tool while the state is active. A hook cannot set the environment of
// the host's shell; it can, in some hosts, rewrite the tool's input as it
// lets the tool run. chartgate decides the command the agent wrote (the
// gate, allowed_commands, blocked_env, writes to protected files: a
// refused command is refused as it is, and not rewritten), then rewrites
// it as shellpolicy.WithEnv does:
//
//	export GOFLAGS='-mod=mod' NOTE='it'\''s'
//	go build ./...
//
// a first line exporting the variables (names sorted, values
// single-quoted, so every byte of a value stays literal), then the command
// as it was. Every part of the command sees them, pipelines, lists, cd,
// here-documents, subshells and the programs it runs, and its exit status
// is its own. Names must be shell identifiers and values free of NUL
// bytes: the workflow does not load otherwise. The phase injected as
// context names the variables set (not their values). A variable that a
// state both sets and lists in blocked_env is set for the programs the
// command runs, and the agent's command still may not read it.
//
// With several active states, their variables are merged in the order of
// the states in the workflow: a nested state's value wins over its
// parent's, and of two parallel states that set one variable, the later
// one in the workflow (document order) wins. A final state ends
// enforcement, its env_overrides too.
//
// Per host (its documentation, read 2026-11-24; testdata/hosts/README.md
// cites the pages):
//
//   - Claude Code: PreToolUse answers {"hookSpecificOutput":
//     {"hookEventName": "PreToolUse", "permissionDecision": "ask",
//     "permissionDecisionReason": R, "updatedInput": I}}, I the whole
//     tool_input (updatedInput replaces it; every field but command is
//     kept as the agent gave it). Claude Code takes updatedInput only with
//     "allow", which would also approve the command in place of the user,
//     or with "ask", which shows the user the rewritten command. chartgate
//     never grants a permission, so it asks; in a session whose
//     permission_mode is "bypassPermissions", where nothing is asked, it
//     writes "allow".
//   - Codex: the same answer; Codex applies updatedInput only with
//     "allow" (its schema lists updatedInput; its parser rejects "allow"
//     without it, and "ask"). There "allow" only carries the rewrite: the
//     outcome of Codex's PreToolUse hooks is a block, a rewrite and
//     context, so its own approval of the command is unchanged. When
//     several of its hooks rewrite one call, the last to finish wins.
//   - Gemini CLI: BeforeTool answers {"hookSpecificOutput":
//     {"hookEventName": "BeforeTool", "tool_input": I}}, which Gemini CLI
//     merges into the tool's arguments; no decision is written, so its
//     own confirmation is unchanged.
//   - Copilot CLI: preToolUse answers {"modifiedArgs": I}, the arguments
//     used instead of the originals; no permissionDecision is written, so
//     its permission flow is unchanged.
//   - Cursor: not possible: beforeShellExecution answers with a permission
//     and messages only, and no field rewrites the command. The variables
//     are not set, and the phase does not claim they are.
//
// The rewrite is POSIX shell. On Windows, where Codex and Gemini CLI run
// PowerShell, nothing is rewritten for them; Claude Code runs its Bash
// tool in Git Bash and is rewritten there too. Copilot CLI's powershell
// tool is not the shell tool.
//
// # Stopping
//
// A workflow asks the agent not to stop before a final state with the
// setting "stop": "block" ("allow" says the opposite): meta.stop in a
// Statewright file, meta.chartgate.workflow.stop on an XState machine's
// root. Statewright workflows default to "block", as Statewright's
// gateway blocks stopping outside a final state; XState ones to "allow".
// Stops are refused at most three times in a row (Options.MaxStopBlocks)
// with no tool call between them, and never while a transition waits for
// a person's approval, so an agent that cannot move on is not kept in a
// loop.
//
// # Failures
//
// The hook does not fail open on a pre tool event. One that cannot be
// decided (input that does not parse as the host's, a workflow that does
// not load, a failing store, an internal error such as a panic, the
// hook's deadline passed) is refused with the reason, in the host's deny
// format and with exit code 0, which every host reads as its answer. The
// reason is a plain sentence: the stack of an internal error goes to
// .chartgate/hook-errors.log in the project (standard error when the
// project is not known yet), never to the agent. `chartgate hook`
// answers within its deadline (--deadline, default 30 s), below the
// timeout `chartgate install` gives the hosts ([HostTimeout], 60 s), so
// that the host does not give up on it first; an event whose workflow is
// held by another call waits at most two thirds of the deadline.
//
// What a host does with a hook that fails anyway (it cannot start, the
// host's timeout passes, it is killed) is the host's: `chartgate install`
// writes the setting that blocks the tool then where the host has one:
// Claude Code's "onFailure": "block" (2.1.295 and later) on PreToolUse,
// Cursor's "failClosed": true on its permission events. Codex and Gemini
// CLI have none: there a hook that does not run lets the tool run, and
// only the hook's own answer refuses it. Copilot CLI is not installed by
// `chartgate install`; its hooks' timeoutSec should be set above the
// hook's deadline by hand.
//
// Other events report an error on stderr and exit 1, which the hosts show
// and go on from. An input that is not a hook event at all (not JSON)
// cannot be answered in the host's format, and exits 1.
//
// # Pending events
//
// A post tool event's sends (the record of the call, with its bound
// event, and each interrupt it fires) wait for a call of the gateway that
// holds the session's workflow, up to the gate's BusyWait and at most two
// thirds of the way to the event's context deadline, which leaves the
// rest to keep what could not be applied. One the workflow still cannot
// take (still held, or its store fails) is kept, with every later send of
// the session, in order, in the session's record in the store
// (AgentSession.Pending, [PendingEvent]); when the store cannot be
// written at all (locked past its busy timeout), the whole post tool
// event is appended to .chartgate/pending/<digest of the session
// id>.jsonl instead. The agent is told either way.
//
// Every hook event of the session applies them first, before anything
// else: the file's events replayed as post tool events, then the pending
// events, each claimed in the record (one hook applies it; a claim lapses
// after a minute, longer than a hook lives), applied, and removed. Until
// all are applied, the session's pre tool events are refused, with what
// is pending and why; so the Write after a .env edit is decided in the
// state the interrupt leads to, never in the one it left. Limits: an
// event applied whose removal from the record then fails is applied again
// by the next event; a call replayed from the file after its record
// succeeded and an interrupt failed is counted twice against a budget.
//
// # The project
//
// The project folder holds .chartgate/ (the workflow, the store). A hook
// finds it ([FindProject]) from the folder the host names first
// ($CLAUDE_PROJECT_DIR, $GEMINI_PROJECT_DIR, Cursor's workspace root),
// then the event's cwd, then its own working directory, walking up each
// to the nearest .chartgate: an agent whose shell moved out of the project
// stays gated. Without one, nothing is gated. Files are matched against
// the interrupts relative to the project folder.
//
// # Speed
//
// A hook is a process started for every tool call. `chartgate hook` opens
// the SQLite store, compiles the workflow (about 1.5 ms for the coding
// workflow), builds the gate's core (internal/core, without an MCP
// server), records the session and decides; it reads its process tree
// only when it must know whether Copilot CLI runs it beside Claude Code
// ([StepsAside]). BenchmarkHookProcess in cmd/chartgate measures the whole
// process, BenchmarkHookInProcess the same work without the process'
// start, and BenchmarkHookRatio runs it alternately with a trivial Go
// program, with one that only opens a SQLite file, and with
// testdata/hookfloor (the hook's work in a program that links only the
// packages it needs), and reports the ratios. Most of a hook's time is
// the start of the chartgate program, whose other commands link go-sdk,
// OpenTelemetry's OTLP exporters (and through them gRPC and protobuf)
// and the stores' clients: a Go program initialises every package it
// links before main runs, whatever the command, so only a smaller program
// starts faster; chartgate's own packages do next to nothing at
// initialisation.
//
// That smaller program is chartgate-hook (cmd/chartgate-hook), which
// `chartgate install` writes as the hooks' command on Linux when it sits
// beside chartgate (the release archives and the npm package ship both).
// It links only the standard library and sends the event, with its
// arguments, working folder and environment, over a Unix socket to
// `chartgate hook-daemon`, one per user in chartgate's user folder (which
// the agent may not read, name or write), which answers by the code path
// of `chartgate hook` in the client's environment and ancestry, keeping
// the SQLite stores open and the compiled workflows while their files
// read the same bytes. The client uses a daemon only if the kernel says
// the socket's peer runs, as the same user, the very chartgate beside the
// client; otherwise, and when no daemon runs (it then starts one), it
// runs `chartgate hook` itself, so the answer is always the same. An
// event once sent is never decided again: a lost answer is the answer to
// an event that could not be decided. BenchmarkHookRatio's "client" case
// measures it.
//
// The hook process does not close a SQLite store: it exits with the
// file open, as a crash right after its last commit would, which
// SQLite's write-ahead log is made for. Every write it made was committed
// before it answered, and the next process alone on the file rebuilds the
// log's index from the log. The close it skips is what the last
// connection to a file does: a checkpoint of the log into the database,
// with its sync, the deletion of state.db-wal and state.db-shm, and then,
// for the next process that writes, a new log whose header is synced. The
// log is checkpointed when it reaches SQLite's automatic checkpoint (1,000
// pages) and when another process (the gateway, a command) closes the
// file last. Postgres and Redis stores are closed.
//
// No compiled form is cached between processes: it would save the
// Statewright compile (1-1.5 ms, a few percent of the process), could go
// stale (subflow files, options and chartgate's own version change it,
// not only the workflow file's digest), and an entry planted in
// .chartgate/ by a program the agent runs would change what is enforced
// while the workflow file stays as reviewed.
//
// # Compared with Statewright's hooks
//
//   - Refusing a tool the state does not allow: the same, with the
//     gateway's guidance (the transition that makes it available).
//   - The shell: better. One parser (shellpolicy) and one pattern rule for
//     every simple command of a line, nested ones included; Statewright's
//     hook uses case globs over the whole line, its gateway a prefix.
//     Statewright's prefix match lets "go build" allow "go build ./...";
//     here that takes "go build *".
//   - blocked_env: better: every expansion, assignment and printing of a
//     variable the parser sees, not a text search.
//   - Context on every prompt: the same (phase, tools, transitions with
//     targets, instructions), plus the shell policy, budgets and pending
//     approvals.
//   - Interrupts from edits: the same; and better, from the files shell
//     commands and Codex patches write.
//   - Stop until final: the same for Statewright workflows, bounded (three
//     refusals in a row) and never while an approval is pending.
//   - Checkpoints (max_iterations) and budgets: the same soft notice;
//     counted in the shared store with the gateway's calls.
//   - max_edit_lines, max_files_per_state: the same limits (Statewright
//     applies them in its gateway).
//   - context_budget_bytes: the same warning from 90% (Statewright's
//     gateway, on the calls it proxies), never a refusal; better: the
//     agent host's own tools are counted (its Read, its shell), the
//     tightest budget of parallel states applies, and past 100% the
//     agent is told the budget is exceeded.
//   - Read-dedup: the same warning from the third read of a file in a
//     state; better: it covers the hosts' own read tools, paths are
//     normalised to the project (a relative and an absolute path are one
//     file), and the count starts again with each entry of the state.
//   - Sessions: better: one workflow per agent session shared with the
//     gateway through the store, where Statewright's hook decides from a
//     state cached at the last prompt.
//   - Cursor: better than Statewright's advisory mode where Cursor lets a
//     hook refuse (shell, MCP, reads, preToolUse); its edits can only be
//     seen after they happen (afterFileEdit).
//   - chartgate's own files (.chartgate/, the store, the hosts' hook
//     and MCP configuration at project and user level, chartgate's user
//     folder, the chartgate program): new, refused to the agent in every
//     state, final ones included, where Statewright's hook leaves its
//     state and workflow files writable.
//   - env_overrides: Statewright's statewright_get_state returns a
//     state's env_overrides; the hook sets them for the shell tool, in the
//     hosts whose pre tool answer can rewrite a tool's input (Claude Code,
//     Codex, Gemini CLI, Copilot CLI; not Cursor), by a rewrite of the
//     command the agent wrote once the policy has allowed it.
//   - Not yet: model and thinking_level (no hook chooses the model).
//
// # Limits
//
//   - Hosts run the hook for the tools their hook protocol covers: Codex
//     for Bash, apply_patch and MCP tools, Cursor for the events listed.
//     Other tools are not seen.
//   - The shell policy's limits are shellpolicy's: a program the line
//     runs (a build, a script, a test) is not looked into, so writes it
//     makes, to .chartgate/ too, are not seen; only OS isolation (a
//     sandbox for the host's shell, file permissions) stops them.
//   - PowerShell commands (Copilot CLI's powershell tool) are not parsed:
//     the tool is gated by name only.
//   - Bytes are those of the output the host reports, which may differ a
//     little from what the model is given (a host may add line numbers,
//     or truncate); files read by shell commands (cat, head) count in the
//     budget, not as reads of the file.
package hook
