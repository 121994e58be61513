// This file defines the context budget (context_budget_bytes) and the
// read-dedup warning: how many bytes a tool's output holds, the bytes and
// the files read since the state was entered (kept in the session's
// record), and the notices the agent gets about them.

package hook

import (
	"context"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/internal/jsonx"
	"github.com/chartgate/chartgate/workflow"
)

// Thresholds of the notices, as Statewright's gateway has them: the budget
// warning from 90% of context_budget_bytes, the read-dedup warning from
// the third read of one file in one state entry.
const (
	budgetWarnPercent = 90
	dedupWarnReads    = 3
)

// textBytes counts the bytes of text a tool's output holds: a string's
// bytes, and the strings inside arrays and objects, except the values of
// "type" keys (MCP content blocks' "text", Claude Code's Read "text"),
// which name the content rather than hold it. Numbers and booleans count
// nothing.
func textBytes(v gjson.Result) int64 {
	switch {
	case v.Type == gjson.String:
		return int64(len(v.Str))
	case v.IsArray():
		var n int64
		v.ForEach(func(_, x gjson.Result) bool {
			n += textBytes(x)
			return true
		})
		return n
	case v.IsObject():
		var n int64
		v.ForEach(func(k, x gjson.Result) bool {
			if k.Str != "type" {
				n += textBytes(x)
			}
			return true
		})
		return n
	}
	return 0
}

// jsonTextBytes counts the text of an output a host gives as a string
// holding JSON (Cursor's result_json and tool_output): the text inside
// the JSON, or the string's bytes when it is not JSON (or nested deeper
// than an input may be).
func jsonTextBytes(s string) int64 {
	if gjson.Valid(s) && !jsonx.TooDeep([]byte(s), maxDepth) {
		if v := gjson.Parse(s); v.IsObject() || v.IsArray() {
			return textBytes(v)
		}
	}
	return int64(len(s))
}

// responseBytes counts the output of a tool in Claude Code's and Codex's
// tool_response: the file's content for a Read ({"file": {"content"}}),
// the text of anything else (Bash's stdout and stderr, an MCP tool's
// content blocks). An edit's response counts nothing: it echoes the file
// the agent wrote or already holds (Claude Code's originalFile, content),
// which is not read into the agent's context.
func responseBytes(canon string, v gjson.Result) int64 {
	if isEdit(canon) {
		return 0
	}
	if c := v.Get("file.content"); c.Type == gjson.String {
		return int64(len(c.Str))
	}
	return textBytes(v)
}

// isRead reports whether a canonical tool reads one file (Read: Claude
// Code's Read, Gemini CLI's read_file, Copilot CLI's view, Cursor's
// reads).
func isRead(tool string) bool { return tool == toolRead }

// preContext reports whether a host reads context from the answer to a
// pre tool event that lets the tool run: Claude Code and Codex
// (hookSpecificOutput.additionalContext of PreToolUse). Gemini CLI's
// BeforeTool, Cursor's permission answers and Copilot CLI's preToolUse
// carry none, so their read-dedup warning comes after the read.
func preContext(h Host) bool { return h == ClaudeCode || h == Codex }

// contextBudget returns the tightest context_budget_bytes of the active
// states, -1 when none sets one.
func contextBudget(policies []workflow.StatePolicy) int64 {
	b := int64(-1)
	for _, p := range policies {
		if p.ContextBudgetBytes != nil && (b < 0 || *p.ContextBudgetBytes < b) {
			b = *p.ContextBudgetBytes
		}
	}
	return b
}

// readsSince returns what a session read since the state's entry.
func readsSince(s *AgentSession, since string) StateReads {
	if s == nil || s.Reads == nil || s.Reads.Since != since {
		return StateReads{Since: since}
	}
	return *s.Reads
}

// readFiles returns the files a read tool's call reads, relative to the
// project as edits are.
func (h *Handler) readFiles(ev Event) []string {
	var out []string
	for _, f := range editedFiles(ev) {
		out = append(out, projectPath(h.project, ev.Cwd, f))
	}
	return out
}

// recordReads adds bytes of tool output and one read of each of files to
// the session's reads in the state entered at since, and returns the
// reads as saved.
func (h *Handler) recordReads(ctx context.Context, session, since string, bytes int64, files []string) (StateReads, error) {
	s, err := UpdateSession(ctx, h.store, session, func(s *AgentSession) bool {
		if s.Reads == nil || s.Reads.Since != since {
			s.Reads = &StateReads{Since: since}
		}
		s.Reads.Bytes += bytes
		for _, f := range files {
			if s.Reads.Files == nil {
				s.Reads.Files = map[string]int{}
			}
			s.Reads.Files[f]++
		}
		return true
	})
	if err != nil {
		return StateReads{}, fmt.Errorf("hook: recording the reads of the state: %w", err)
	}
	return readsSince(s, since), nil
}

// trackReads counts a tool call's output against the context budget of
// the active states, and the files a read tool read, in the session's
// record for the current state entry. It returns the reads as saved, and
// whether anything was counted. Only what a budget or the read-dedup
// warning needs is kept: the bytes when a budget applies, the files of
// read tools that did not fail.
func (h *Handler) trackReads(ctx context.Context, ev Event, wf *gate.Workflow, budget int64, canon string) (StateReads, bool, error) {
	var bytes int64
	if budget >= 0 {
		bytes = ev.OutputBytes
	}
	var files []string
	if isRead(canon) && !ev.Failed {
		files = h.readFiles(ev)
	}
	if bytes == 0 && len(files) == 0 {
		return StateReads{}, false, nil
	}
	r, err := h.recordReads(ctx, ev.SessionID, entered(wf), bytes, files)
	return r, err == nil, err
}

// budgetNote returns the notice of a context budget used to 90% or more
// in the current state: the bytes read, the budget, and how to move on;
// "" below 90%.
func (h *Handler) budgetNote(wf *gate.Workflow, budget, used int64) string {
	if budget < 0 || used <= 0 || used*100 < budget*budgetWarnPercent {
		return ""
	}
	state := jsonx.Text(wf.State.Value())
	if h.statewright() {
		return h.swBudgetNote(wf, state, budget, used)
	}
	if used > budget {
		pct := ""
		if budget > 0 {
			pct = fmt.Sprintf(" (%d%%)", used*100/budget)
		}
		return fmt.Sprintf("chartgate: the context budget of state %s is exceeded: %d bytes of tool output read, more than its %d bytes%s. Read nothing more here: finish with what you have and move the workflow on with %s.\n%s",
			state, used, budget, pct, h.o.TransitionTool, h.moveOn(wf))
	}
	return fmt.Sprintf("chartgate: %d%% of the context budget of state %s used: %d of %d bytes of tool output read. Read only what you still need, then move the workflow on with %s.\n%s",
		used*100/budget, state, used, budget, h.o.TransitionTool, h.moveOn(wf))
}

// dedupNote returns the notice of a file read for the n-th time in the
// current state, from the third time on; "" before. done is how many of
// those reads have run: n-1 before the read, n after it.
func (h *Handler) dedupNote(wf *gate.Workflow, file string, n, done int) string {
	if n < dedupWarnReads {
		return ""
	}
	if h.statewright() {
		return fmt.Sprintf("chartgate: You have read '%s' %d times in this state. The content is already in your context: use it rather than reading the file again.",
			file, done)
	}
	return fmt.Sprintf("chartgate: %s is read for the %s time in state %s. Its content is already in your context: use it rather than reading the file again.",
		file, ordinal(n), jsonx.Text(wf.State.Value()))
}

// ordinal writes n as "3rd", "11th", "22nd".
func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprint(n) + suffix
}

// preRead warns, before a read runs, that it reads a file read twice
// already in the state, or that the state's context budget is used to 90%
// or more, where the host shows context with a pre tool answer (Claude
// Code, Codex). Cursor reports its reads only before they
// happen (beforeReadFile, with the file's content): they are counted
// there, as other hosts' reads are after.
func (h *Handler) preRead(ctx context.Context, ev Event, wf *gate.Workflow, policies []workflow.StatePolicy, sess *AgentSession) (Result, error) {
	if ev.Host == Cursor {
		if ev.Name == "beforeReadFile" {
			_, _, err := h.trackReads(ctx, ev, wf, contextBudget(policies), toolRead)
			return Result{}, err
		}
		return Result{}, nil
	}
	if !preContext(ev.Host) {
		return Result{}, nil
	}
	r := readsSince(sess, entered(wf))
	var notes []string
	// A read in a state whose budget is used to 90% is warned about before
	// it runs too, as Statewright's gateway warns before each call.
	if n := h.budgetNote(wf, contextBudget(policies), r.Bytes); n != "" {
		notes = append(notes, n)
	}
	for _, f := range h.readFiles(ev) {
		if n := h.dedupNote(wf, f, r.Files[f]+1, r.Files[f]); n != "" {
			notes = append(notes, n)
		}
	}
	return Result{Context: strings.Join(notes, "\n")}, nil
}

// postReads counts a call's output and reads (see trackReads) and returns
// the notices the agent gets after it: the budget's, and the read-dedup
// warning where the host could not show it before the read. Cursor's
// reads were counted before they ran (see preRead): its postToolUse of a
// read only gives the notices of the session's record, sess. quiet
// reports that the call moved the workflow: its bytes are counted in the
// state it ran in, and no notice is given about a state left.
func (h *Handler) postReads(ctx context.Context, ev Event, wf *gate.Workflow, policies []workflow.StatePolicy, canon string, sess *AgentSession, quiet bool) ([]string, error) {
	budget := contextBudget(policies)
	var r StateReads
	if ev.Host == Cursor && isRead(canon) {
		r = readsSince(sess, entered(wf))
	} else {
		var ok bool
		var err error
		if r, ok, err = h.trackReads(ctx, ev, wf, budget, canon); err != nil || !ok {
			return nil, err
		}
	}
	if quiet {
		return nil, nil
	}
	var notes []string
	if n := h.budgetNote(wf, budget, r.Bytes); n != "" {
		notes = append(notes, n)
	}
	if !preContext(ev.Host) && isRead(canon) && !ev.Failed {
		for _, f := range h.readFiles(ev) {
			if n := h.dedupNote(wf, f, r.Files[f], r.Files[f]); n != "" {
				notes = append(notes, n)
			}
		}
	}
	return notes, nil
}
