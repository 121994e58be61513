// Package workflow loads the workflows `chartgate serve` enforces on the
// tools of an MCP server: XState machines whose states carry meta.mcp
// (package mcpbind's bindings), and Statewright workflow files, taken as
// they are and compiled to such a machine.
//
//	w, err := workflow.Load(data, nil) // either format
//	gate, err := mcpbind.New(w.Machine.Engine(), nil)
//
// [Load] returns a [Workflow]: the compiled [statechart.Machine] (with every
// guard and action it needs), the machine's JSON, the file interrupts, the
// per-state policies the gateway and the hooks apply (allowed_commands,
// blocked_env, max_edit_lines …) and the workflow's meta. Every problem of
// a file is reported at once, each with its JSON path, as a
// [statechart.ErrorList]:
//
//	states.plan.allowed_tool: unknown key "allowed_tool" (did you mean "allowed_tools"?)
//	states.plan.on.GO.target: "dnoe" is not a state (did you mean "done"?)
//
// # Formats
//
// [DetectFormat] tells the formats apart by their keys: a file is a
// Statewright workflow when it has a top-level "guards" or "interrupts",
// a state with a key only Statewright has (allowed_tools, instructions,
// max_iterations, safe_next …), or a transition only Statewright writes
// ("$return", fork, invoke, guards, requires_approval). A top-level
// "$schema" naming statewright or xstate decides. [Load] refuses a file
// both formats read, differently ([ErrAmbiguousFormat]: transitions, and
// only keys both have; Statewright merges an event's data into the
// context, XState does not): [Options.Format] (--format) or "$schema"
// says which it is. Anything else is XState.
//
// A Statewright gateway configuration, {"definition": {...},
// "upstream_servers": [{name, command, args, env}]}, loads as its
// definition (a Statewright workflow; errors have paths under
// "definition"), with the servers in [Workflow.Upstreams]: chartgate serve
// runs them when given neither --config nor a command. The gateway's own
// configuration, {"default": name, "workflows": {name: {...}},
// "upstream_servers", "workdir", "api_key", "cloud_url"}, loads the same
// way as its default workflow (paths under "workflows.<name>"); its other
// workflows are not read, and workdir, api_key and cloud_url are ignored. [DirResolver]
// finds subflows by the names of a directory's manifest.json
// (Statewright's {"workflows": [{"name", "file"}]}), else as
// <name>.json. `chartgate install` records the format
// a project's workflow file has, and the commands refuse that file once
// it loads in the other (package hook, CheckFormat).
//
// A workflow is loaded strictly: what [statechart.Compile] accepts with a
// warning because XState ignores it (an unknown key, a v4 "cond", an empty
// action name) is an error here, since in a workflow it is a mistake that
// may leave tools ungated (a misspelt "meta" gates nothing). For the same
// reason a workflow must define at least one state: a file without states
// ({}, or "states": {}) is a machine that is its root alone, which gates
// no tool, and does not load ("the workflow defines no state").
//
// # Statewright workflows
//
// Each field of Statewright's schema compiles to the machine as follows.
//
//   - id, initial, context: the machine's id (default "workflow"), initial
//     state and context. A missing or null context is {} (in Statewright it
//     is null, which silently drops every transition's data).
//   - states: one top-level state each, with the same key.
//   - allowed_tools: meta.mcp.tools (names, "*" patterns); omitted, ["*"]
//     (every tool). disallowed_tools: meta.mcp.deny, hidden whatever tools
//     says. instructions: meta.mcp.instructions.
//   - max_iterations: meta.mcp.maxCalls, with onMaxCalls "warn" (the call
//     runs and carries a checkpoint notice, Statewright's behaviour) or
//     "refuse" with [Options.Checkpoint] [CheckpointHard].
//   - type "final": a final state, meta.mcp.tools ["*"]: reaching it ends
//     the workflow and its enforcement (Statewright's gateway blocks every
//     tool in a final state; its documentation, and we, end enforcement).
//     With [CompatStatewright], meta.mcp {"tools": [], "deny": ["*"]}: it
//     blocks every tool, as Statewright's gateway does.
//     type "parallel" has no meaning in Statewright's engine, nor here.
//   - on: transitions the agent sends with mcpbind's workflow_transition
//     {event, data}. Every one merges data (the event's input) into the
//     context, shallowly, after the transition (action [ActionMerge]); the
//     reserved keys ([ReservedKey]: _interrupt_return, _fork, _parent,
//     _subflows) are not merged. Guards see the context before the merge,
//     as in Statewright; in a subflow, both work on the subflow's own
//     context (see "Subflows").
//   - guards {field, op, value} (eq, neq, gt, gte, lt, lte, exists,
//     not_exists, in, contains; see [Guard.Eval]): named guards of the machine; a transition's guard and
//     guards must all pass (xstate.and). A guarded array is an XState
//     array: the first branch whose guards pass is taken.
//   - safe_next: for every event of the workflow the state does not handle,
//     a transition to safe_next (with the data merge). Only the workflow's
//     own events: an event it never uses cannot be sent at all, so a
//     misspelt event does not silently take the fallback, and interrupts
//     and approvals are never taken for unknown events. With
//     [CompatStatewright], also a wildcard transition ([GuardUnhandled])
//     that takes any other event the agent sends, as Statewright does;
//     reserved events (chartgate.*, xstate.*) never take it.
//   - requires_approval, approval_message: see "Approvals".
//   - interrupts, $return: see "Interrupts".
//   - fork: see "Forks". invoke: see "Subflows".
//   - allowed_commands, allowed_commands_tool, blocked_env (deny_env),
//     env_overrides (env), max_edit_lines, max_files_per_state,
//     context_budget_bytes, max_iterations, model, thinking_level,
//     model_ladder: the state's [StatePolicy], in [Workflow.Policies] and in
//     the state's meta.chartgate; the gateway and the hooks apply them.
//     env_overrides' names must be shell identifiers and its values free
//     of NUL bytes (states.S.env_overrides.BAD-NAME: not a shell variable
//     name ...).
//   - meta (task_type, estimated_steps, danger_level,
//     requires_human_approval, capture_output, debug, approval_mode, and any
//     other key, kept as JSON): [Workflow.Meta], and the root's
//     meta.chartgate.workflow.
//   - "$schema" is allowed and ignored.
//
// Every state of the file is compiled at the top level, also the states
// only fork branches go through (they are never entered there).
//
// # Checked beyond Statewright
//
// Statewright's validate_definition checks that the initial state exists,
// that some state is final, that targets, guards, interrupt targets and
// fork branch states exist, and that every state is reachable. Load checks
// all of that, and also: every branch of a guarded array (Statewright
// checks the first branch's target and no branch's guards, and its engine
// passes a guard it does not know), safe_next,
// on_fail, invoke continuations, that "$return" is used only where the
// workflow has interrupts, that a final state has no transitions and is
// not the initial state, that every fork branch can reach its terminal
// state and that a branch that can fail has somewhere to go, that no fork
// contains itself and no subflow invokes itself, the types of every value,
// tool names mcpbind can gate, reserved names, and unknown keys (with a
// did-you-mean; Statewright ignores them). Unreachable states are reported
// once every target exists, so that a misspelt target does not also report
// the state it meant. [AgentWarnings] adds, as warnings, the checks
// Statewright's agent runs on the workflows it generates (a reachable
// "failed" state, approval gates in moderate and dangerous workflows);
// chartgate validate reports them.
//
// # Interrupts
//
// An interrupt {"trigger": {"file_pattern"}, "target"} sends the event
// "chartgate.interrupt.<name>" ([InterruptEventPrefix]) when a file
// matching the pattern changes ([MatchFile], Statewright's glob; the
// gateway sends it, from a hook's PostToolUse or from an upstream tool
// whose arguments name a path, with [Workflow.MatchInterrupt]: the first
// interrupt by name, as Statewright does). Events starting with
// "chartgate." are reserved: the agent cannot send them.
//
// Every top-level state that is not final and not an interrupt target
// handles the event: it moves to the target and sets
// context._interrupt_return to its own key, unless an interrupt is being
// handled (_interrupt_return is set: Statewright skips the interrupt then).
// A transition to "$return" becomes one guarded branch per such state
// ([GuardReturnTo]), which removes _interrupt_return; into a fork or a
// subflow it returns through a deep history state, so their branches resume
// where they were (a subflow with its context: see "Subflows"). With
// _interrupt_return unset, "$return" matches no branch and the event is
// refused (Statewright answers an error). _interrupt_return is always in
// the workflow's context, also when the interrupt left a subflow.
//
// # Approvals
//
// A transition from S on E to T with requires_approval moves to a state of
// its own, "S:E:approval", whose meta.mcp has S's tools and deny, the
// instructions "Waiting for approval: <approval_message>" and
// approval {"event", "from", "to", "message"}; it leaves on
// chartgate.approve (to T) or chartgate.reject (back to S), which only the
// gate sends (mcpbind's Gate.Approve). E's guards and data merge apply when
// it parks. Two fork branches waiting at once are approved together.
//
// # Forks
//
// A fork in state S on event E, {"branches": {b: {initial, terminal}},
// "join", "on_complete", "on_fail"}, moves to "S:E:fork", a parallel state
// with one region per branch. Region b holds copies of the states the
// branch goes through: those reachable from initial, up to its terminal
// state and the final states. Each copy keeps its meta.mcp and policies
// (the tools visible in a fork are those of every branch's state, less
// what any of them denies), and its events are prefixed "b.": the agent
// moves branch lint with workflow_transition {"event": "lint.PASS"}. The
// fork's instructions say so.
//
// A branch succeeds in its terminal state and fails in any other final
// state it reaches (such as "failed" or "lint_failed"). With join "all"
// (the default) the fork goes to on_complete when every branch succeeded
// (XState's onDone), and to on_fail as soon as one fails; with join "any"
// the first branch to succeed takes it to on_complete, and it goes to
// on_fail when every branch failed. Without on_fail a failing fork goes to
// the state "failed"; if there is none, a fork whose branches can fail does
// not load. Statewright runs branches as separate sessions that
// sub-agents join and end with BRANCH_DONE:<b>, trusting them; here a
// branch is done when its state is. With [CompatStatewright] tools,
// statewright_transition's result and statewright_get_state carry the
// fork in Statewright's shape ([Workflow.ActiveFork]; the session that
// forked is shown its current branch's state, as in Statewright), and
// [BranchDone]<b> ends branch b: its region goes to its terminal state, on
// the agent's word, as in Statewright; a BRANCH_DONE for a branch that is
// not running is refused, naming the fork's branches. A sub-agent (another
// MCP session, or another chartgate serve on the same store and --session
// name) joins a running branch with statewright_load_workflow {name,
// branch}: its statewright_transition events go to the branch (EVENT is
// sent as "<b>.EVENT"), statewright_get_state shows the branch's state,
// tools and transitions ([WithBranch]), it is listed and may call only
// the tools of its branch's state ([Workflow.BranchTools]), and it
// leaves the branch with BRANCH_DONE:<b> (its own only), or when the branch stops running (its next event meant
// for the branch is refused, not sent to the workflow). See "Compared
// with Statewright".
//
// # Subflows
//
// {"invoke": name, "on_complete", "on_fail", "input"} loads the named
// workflow with [Options.Resolve] and inlines it as the compound state
// "S:E:invoke": its states nested (its guards named "<name>/<guard>"), its
// final states moving on to on_complete, or to on_fail for a final state
// named "failed" (on_fail defaults to the state "failed"; without either,
// such a subflow does not load). Its tools are those of its states, as for
// any state. A subflow cannot have interrupts yet, and its meta is
// ignored. Problems of a subflow are reported at the invoke, with their
// paths in the subflow.
//
// A subflow runs in its own context, as a child workflow does in
// Statewright: on entry the context becomes the subflow's context with
// the invoke's input merged in (shallowly), and the workflow's context is
// kept under _parent ([KeyParent]). Guards and data merges inside the
// subflow work on its context; the workflow's is as the subflow found it
// (the invoke's own data merges into it first). When the subflow ends, for
// on_complete or on_fail alike, the workflow's context comes back with
// the subflow's final context merged into it, shallowly and without the
// reserved keys: Statewright's gateway does the same when a child
// workflow ends. The id of a subflow is the path of its state,
// "S:E:invoke" (a subflow in a subflow: "S:E:invoke.T:F:invoke").
//
// statewright_transition answers the invoking event with "invoke" (the
// machine, on_complete, on_fail and input), on_complete as "to", and
// "subflow_started" (the machine's name); the transition that ends the
// subflow answers with "subflow_completed": true, as Statewright's
// gateway does.
//
// The workflow's interrupts fire in a subflow too (they skip while
// _interrupt_return is set in the workflow's context, wherever the agent
// is). Leaving the subflow for the handler keeps its context under
// _subflows[id] ([KeySubflows]) in the workflow's context, in which the
// handler runs; "$return" resumes the subflow's states through its
// history state and its context from _subflows, as they were. A subflow
// invoked afresh (its invoke's event) starts from its initial context,
// dropping what a handler that never returned left. Subflows in subflows
// stack: each has its parent's context under _parent, and keeps its own
// suspended subflows in its context.
//
// This is done by four actions the compiled machine names
// ([ActionSubflowStart] on the invoke's transition, [ActionSubflowEnter]
// and [ActionSubflowExit] as the subflow state's entry and exit, and
// [ActionSubflowEnd] on the transitions leaving its final states), run in
// SCXML order: exit actions, then the transition's, then entry actions.
// In a fork's branch, where branches run at once with one context, a
// subflow still shares the workflow's context: its context and input are
// merged into it on entry ([ActionAssign]).
//
// # Compared with Statewright
//
// Where chartgate's default differs from Statewright, it is in this table,
// with the reason and the switch that gives Statewright's behaviour
// (`chartgate serve --compat statewright`, `chartgate install --compat
// statewright`; in Go, [Options.Compat] and [Workflow.StatewrightTools]).
// "None" means that Statewright's behaviour lets the agent past the gate,
// so no switch gives it; where the reason says that a switch would be
// safe, none is built.
//
//	| Behaviour | Default | Statewright | Why | Switch |
//	|---|---|---|---|---|
//	| allowed_commands entry without "*" | a prefix of words ("pytest" allows "pytest -x", not "pytester"), for every simple command of the line | a prefix of the line's characters: "pytest" allows "pytester" and "pytest; rm -rf /" | a prefix of characters lets any command through after a chain operator: a switch would let the agent run any command after an allowed one | none |
//	| safe_next | taken for the workflow's own events the state does not handle; any other event is refused with the events accepted | taken for any event the state does not handle | an invented or misspelt event should be refused, not silently move the workflow | --compat statewright |
//	| A guard's refusal | names the guard, its condition and the value it saw, and says whether the data sent with the event could be seen (it cannot: data is merged after the transition) | "Transition 'E' from state 'S' was blocked by a guard condition." | the same rule, explained: better in both modes | none needed |
//	| A final state | ends the workflow and its enforcement: every tool runs again | blocks every tool; tools/list has only its own tools | a finished workflow should not keep an agent from the work that follows it (also after a failed final state) | --compat statewright (final states compile to meta.mcp {"tools": [], "deny": ["*"]}) |
//	| A used-up max_iterations (soft) | the state's tools stay listed; each call runs with the checkpoint notice | the same calls, but tools/list has only its own tools | the agent may still need a tool to finish before it moves on; the notice says to move on | --compat statewright (mcpbind Options.CheckpointListsOwnTools) |
//	| A transition from a state to itself | without data it changes nothing: "transitioned": false, not in the history, the call count kept | a transition: counted in transition_count, iteration reset to 0 | a transition that changes nothing should not reset a budget that bounds the agent | --compat statewright (action statewright.reenter; mcpbind Options.ResetCallsOnTransition) |
//	| statewright_pause, statewright_deactivate | (compat only) the workflow waits in its paused state ([PausedState]; every top-level state that is not final leaves for it on [EventPause]): no tool runs, tools/list has only the workflow's tools; kept in the run history (by statewright_pause / statewright_deactivate); a person resumes it with chartgate resume, back in the state it left (a fork or subflow through its deep history). A session's workflow without a name (no --session) is not paused | the agent pauses (resumable with load_workflow {resume}) or deactivates its own enforcement: every tool passes through | nothing the agent can call may switch enforcement off, nor undo a pause | none |
//	| usage (statewright_transition, statewright_get_status) | (compat only) {transitions, limit: null, remaining: null} (get_status also warning: null) | the same, limit and remaining from the hosted plan's monthly step quota, and a warning near it | chartgate has no plans or quotas | none needed |
//	| statewright_load_workflow | (compat only) joins the session's workflow where it is (a sub-agent's load, session_id given or not), answering with state_snapshot (what get_state answers then, in the branch joined); another name is refused | loads the workflow afresh, at its initial state | a reset would let the agent undo its progress or escape a pending approval; a person chooses the workflow | none |
//	| statewright_create_workflow | (compat only) validated with every check of Load, then stored in the project's store under keys of its own ("chartgate:statewright:workflows:<name>", which the gate and the hooks never read), so that it survives a restart and every gateway on the store lists it; never enforced, and never the name of the workflow in force (overwrite or not). Names are letters, digits, "-", "_", "." (at most 128); a definition at most 1 MiB; a store keeps at most 256 | validated, stored, loadable by the agent | the agent must not choose its own rules | none |
//	| Forks | branches are regions of the one workflow, moved by "<branch>.<EVENT>"; a branch is done when its region reaches its terminal state | branch sessions that sub-agents join with statewright_load_workflow {branch}, each finished by the agent's BRANCH_DONE:<branch>, which is not checked; branches run one after the other (current_branch) | a branch is done when its work is, not when the agent says so | --compat statewright speaks the protocol: the transition that forks answers {forked, branches, current_branch, join, on_complete} with the fork; a sub-agent's load_workflow {branch} joins a running branch (another session or gateway process on the same store and --session name), its events go to the branch and get_state shows the branch; BRANCH_DONE:<branch> moves the branch to its terminal state (the join then runs as usual) and answers {branch_completed, next_branch, completed, remaining} or {joined, completed_branches} |
//	| Tools in a joined branch | (compat only) the session that joined a branch is listed, and may call, only the upstream tools its branch's state allows ([Workflow.BranchTools]; a gateway's SERVER__NAME by its NAME), completes only its own branch, and moves the workflow only through statewright_transition (workflow_transition is refused to it); the parent session's tools are every running branch's | the branch session's state's allowed_tools | — | — |
//	| get_state of the parent during a fork | (compat only) as Statewright: the current branch's state (its allowed_tools, transitions, instructions), with fork {active, current_branch, branches: {b: {status, initial, terminal}}, join}, and no run_id or capture_output; current_branch is the first running branch by name (branches run at once here), so after BRANCH_DONE:<b> the next one shows. context, iteration and transition_count are the workflow's (branches share one context and history here; Statewright's branch session starts with {} and counts its own) | the current branch session's state | branches run at once in one workflow | — |
//	| A transition that invokes a subflow | (compat only) the result has Statewright's invoke {machine, on_complete, on_fail, input}, on_complete as "to" and subflow_started; the transition that ends it has subflow_completed; chartgate runs the subflow in the workflow, so the agent is in its first state (get_state shows it) | the same result; the parent stays and the client runs the named workflow itself | one workflow enforces the subflow's states too | — |
//	| An invoke of a workflow that cannot be found, or that invokes itself | the workflow does not load (validate and serve name the invoke) | the invoke fails when it runs (to on_fail), or at the orchestrator's depth limit | found before the agent starts, not halfway through its work | none needed |
//	| statewright_transition {event: "INTERRUPT:<name>"} (Statewright's plugins send it when they see a watched file change) | (compat only) refused, saying that chartgate fires the interrupt itself when a tool writes a matching file (an upstream tool through the gateway, the host's tools through the hooks); an unknown name: "Unknown interrupt '<name>'", as in Statewright. The notice of an interrupt chartgate fires starts with Statewright's "[STATEWRIGHT INTERRUPT]" | moves to the interrupt's handler (skipped while one runs) | the agent could enter a handler state, and use its tools, at will | none |
//	| A call of a tool no server has | (compat only) a tool result (isError) naming the tool and the state, as Statewright answers; by default a protocol error (unknown tool) | "Tool 'T' is not available in state 'S'" | — | — |
//	| statewright_force_state (listed when meta.debug is true) | not served; meta.debug is read ([MachineMeta].Debug) and changes nothing | jumps to any state, past guards and approvals | the agent would move its own gate anywhere | none: a person resets the workflow (chartgate reset) |
//	| statewright_search_references, statewright_run_agent, statewright_get_model_traits, statewright_get_usage (Statewright's newer gateway) | not served | its repository index, its own agent runner, its model registry, its hosts' token usage ledger | chartgate gates agents; it runs none and keeps no index, registry or token counts | none |
//	| statewright_load_workflow's states | sorted, as Statewright's BTreeMap lists them | sorted | — | — |
//	| A file both formats read | refused until --format or "$schema" says which | read as Statewright's | the formats run it differently (data merge); a guess would be silently wrong | --format statewright |
//	| A name in allowed_tools that no upstream tool has | chartgate serve does not start, and names it (as for every name of a workflow) | the gateway starts; the state never offers that tool | a misspelt name is found before an agent is refused the tool it meant | --compat statewright: serve starts and logs a warning (a name that would leave a tool allowed, as in disallowed_tools, still stops it) |
//	| An interrupt whose file_pattern is "" | refused by validate and Load | accepted; it matches only the empty path, so it never fires | an interrupt that cannot fire is a mistake | none needed: leaving the interrupt out behaves as Statewright does |
//	| A call of a tool the state does not allow but a next state does (implicit transition) | refused, naming the event that makes it available ("call workflow_transition with event READY"); the workflow stays | the gateway and its hook send that event themselves (guards checked, approval not asked, not audited) and run the call | as Statewright does it, a tool call would move the workflow past an approval, unrecorded, without the agent reading the next state's instructions. The switch takes a safe subset only: the workflow in a top-level state of the file, and exactly one of the state's own events leading, unguarded (no guard on any branch), to a plain state that is not final, needs no approval and allows the tool ([Workflow.ImplicitEvent]); the event goes through statewright_transition as the agent's (checked, kept in the run history), then the call runs, its result ending with "[chartgate: implicit transition E: S → T, sent for TOOL]". It gives the agent nothing statewright_transition does not. Not in the hooks | chartgate serve --compat statewright --implicit-transitions |
//	| A destructive or git-writing shell command (rm, git push ...) in a state without allowed_tools | refused by the hooks | allowed: Statewright classifies commands only in states with allowed_tools | deleting files and rewriting history are never a default | allowed_commands naming it: ["*", "rm *"] allows every command and rm |
//	| Shell commands that write files the line does not name | refused by the hooks in every state: git checkout/switch/restore (any tracked file), wget without -O, patch < diff without a file; with the file named (wget -O F, patch F < diff) they need Write or Edit as usual | git checkout of a branch is GitRead; wget only needs WebFetch; patch needs Edit | any of these may rewrite the workflow or the store under .chartgate/ (a tracked workflow file changes with the branch) | none |
//	| A rejected approval (chartgate approve --reject) | back to the state the transition left, where the agent can change its work and ask again | Statewright's agent runner (crates/agent) ends the run in "failed" | a rejection asks for other work; ending the run is a separate decision | none: give the state an event to "failed" for the agent to send, or reset the workflow |
//	| An event in a final state | "Cannot transition: the workflow is in final state S." for any event | the same, for any event | — | — |
//
// # XState workflows
//
// An XState workflow is compiled by [statechart.Compile] with the
// built-ins ([ActionMerge], [ActionAssign], the subflow actions,
// [GuardReturnTo], [GuardNotInterrupted]) and [Options.Statechart]'s
// implementations. Its
// bindings are meta.mcp, as mcpbind reads them. What else a workflow holds
// is in meta.chartgate:
//
//	"meta": {"chartgate": {                              // the root state's
//	  "interrupts": {"env": {"file_pattern": "**/*.env*", "event": "chartgate.interrupt.env"}},
//	  "guards":     {"tests_passed": {"field": "test_result", "op": "eq", "value": "pass"}},
//	  "workflow":   {"task_type": "feature", "danger_level": "moderate"}
//	}}
//	"meta": {"chartgate": {"allowed_commands": ["go test"], "max_edit_lines": 200}}  // any state's
//
// interrupts maps names to a file pattern and the event to send (default
// "chartgate.interrupt.<name>", which some state must handle); guards
// declares Statewright guards the machine may name; workflow is the
// [MachineMeta]; any state may set the policy keys of Statewright states
// (the aliases deny_env and env included). Every key is checked, with its
// JSON path. The machine a Statewright workflow compiles to is such a
// workflow: loading [Workflow.JSON] as XState gives the same workflow.
package workflow
