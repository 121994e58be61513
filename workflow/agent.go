// This file holds the checks Statewright's agent runs on the workflows it
// generates (crates/agent validator.rs), over the parsed Statewright
// document, for chartgate validate to report as warnings.

package workflow

import (
	"fmt"
	"slices"
	"strings"

	"github.com/chartgate/chartgate/internal/jsonx"
	"github.com/chartgate/chartgate/statechart"
)

// agentToolPrivilege is the privilege of a tool, as Statewright's agent
// validator ranks the tools of its generated workflows: 0 for a tool it
// does not know.
var agentToolPrivilege = map[string]int{
	"read_file": 1, "search_files": 1, "list_directory": 1, "grep": 1, "git_status": 1, "git_log": 1, "git_diff": 1,
	"write_file": 2, "edit_file": 2, "create_file": 2, "delete_file": 2,
	"run_command": 3, "run_test": 3, "run_build": 3,
	"git_add": 3, "git_commit": 3, "git_push": 3, "git_checkout": 3, "git_branch": 3,
	"http_request": 4, "deploy": 4, "database_query": 4, "database_mutate": 4,
}

// AgentWarnings returns, as warnings with their JSON paths, the checks
// Statewright's agent runs on the workflows it generates (crates/agent
// validator.rs): Statewright's gateway runs such workflows, and so does
// chartgate. They apply to a Statewright workflow file whose meta sets
// danger_level, as the agent's workflows do:
//
//   - a "failed" state of type final, reachable from every state that is
//     not final (every state must be able to fail);
//   - with danger_level moderate or dangerous: no write, execute or
//     external tool in the initial state, a transition with
//     requires_approval somewhere, and none from a state whose tools are
//     at most read-only to a state with an external tool (deploy,
//     http_request, database_*) without one.
//
// A file that is not such a workflow gets none; its errors are [Load]'s
// to report. Time and memory are linear in the file's size.
func AgentWarnings(data []byte) statechart.ErrorList {
	var e errs
	d := parseStatewright(data, statechart.Options{}, &e)
	if d == nil || d.meta.DangerLevel == "" {
		return nil
	}
	var out statechart.ErrorList
	warn := func(p jsonx.Path, format string, args ...any) {
		out = append(out, &statechart.Error{Path: string(p), Msg: fmt.Sprintf(format, args...), Warning: true})
	}
	states := slices.Clone(d.states)
	slices.SortFunc(states, func(a, b *swState) int { return strings.Compare(a.name, b.name) })

	if failed := d.byName["failed"]; failed == nil || !failed.final {
		warn(jsonx.Path("").Key("states"), `no "failed" state of type final: Statewright's agent requires one, reachable from every state, so that every state can fail`)
	} else {
		reach := d.reaching("failed")
		for _, s := range states {
			if !s.final && !reach[s.name] {
				warn(s.path, `no path to the "failed" state: Statewright's agent requires that every state can fail`)
			}
		}
	}
	danger := d.meta.DangerLevel
	if danger != "moderate" && danger != "dangerous" {
		return out
	}
	if init := d.byName[d.initial]; init != nil {
		var strong []string
		for _, t := range init.tools {
			if agentToolPrivilege[t] >= 2 {
				strong = append(strong, t)
			}
		}
		if len(strong) > 0 {
			warn(init.path.Key("allowed_tools"), "the initial state of a %s workflow has write, execute or external tools (%s): Statewright's agent requires it to start read-only", danger, strings.Join(strong, ", "))
		}
	}
	approval := false
	for _, s := range states {
		for _, ev := range s.on {
			approval = approval || ev.tr.approval
		}
	}
	if !approval {
		warn(jsonx.Path("").Key("meta").Key("danger_level"), "a %s workflow without a transition with requires_approval: true: Statewright's agent requires at least one approval gate", danger)
	}
	for _, s := range states {
		if s.final {
			continue
		}
		from := s.maxPrivilege()
		for _, ev := range s.on {
			for _, b := range ev.tr.branches {
				target := d.byName[b.target]
				if target == nil {
					continue
				}
				if to := target.maxPrivilege(); to >= 4 && from <= 1 && !ev.tr.approval {
					warn(ev.path, "tool escalation from %q (privilege %d) to %q (privilege %d) without requires_approval: Statewright's agent requires an approval gate there", s.name, from, target.name, to)
				}
			}
		}
	}
	return out
}

// maxPrivilege is the highest privilege of a state's allowed_tools.
func (s *swState) maxPrivilege() int {
	m := 0
	for _, t := range s.tools {
		m = max(m, agentToolPrivilege[t])
	}
	return m
}
