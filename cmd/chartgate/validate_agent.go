package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tidwall/gjson"
)

// The privilege of a tool, as Statewright's agent validator ranks the
// tools of its generated workflows: 0 for a tool it does not know.
var agentToolPrivilege = map[string]int{
	"read_file": 1, "search_files": 1, "list_directory": 1, "grep": 1, "git_status": 1, "git_log": 1, "git_diff": 1,
	"write_file": 2, "edit_file": 2, "create_file": 2, "delete_file": 2,
	"run_command": 3, "run_test": 3, "run_build": 3,
	"git_add": 3, "git_commit": 3, "git_push": 3, "git_checkout": 3, "git_branch": 3,
	"http_request": 4, "deploy": 4, "database_query": 4, "database_mutate": 4,
}

// agentWarnings are the checks Statewright's agent runs on the workflows
// it generates (crates/agent validator.rs), as warnings: Statewright's
// gateway runs such workflows, and so does chartgate. They apply to a
// Statewright workflow file whose meta sets danger_level, as the agent's
// workflows do:
//
//   - a "failed" state of type final, reachable from every state that is
//     not final (every state must be able to fail);
//   - with danger_level moderate or dangerous: no write, execute or
//     external tool in the initial state, a transition with
//     requires_approval somewhere, and none from a state whose tools are
//     at most read-only to a state with an external tool (deploy,
//     http_request, database_*) without one.
func agentWarnings(data []byte) []problem {
	root := gjson.ParseBytes(data)
	danger := root.Get("meta.danger_level")
	states := root.Get("states")
	if !danger.Exists() || !states.IsObject() {
		return nil
	}
	var out []problem
	warn := func(path, format string, args ...any) {
		out = append(out, problem{path: path, msg: fmt.Sprintf(format, args...), warning: true})
	}
	final := func(s gjson.Result) bool { return s.Get("type").String() == "final" }
	byName := map[string]gjson.Result{}
	names := []string{}
	states.ForEach(func(k, v gjson.Result) bool {
		if _, dup := byName[k.String()]; !dup {
			names = append(names, k.String())
		}
		byName[k.String()] = v
		return true
	})
	slices.Sort(names)
	state := func(name string) gjson.Result { return byName[name] }

	if failed := state("failed"); !failed.Exists() || !final(failed) {
		warn("states", `no "failed" state of type final: Statewright's agent requires one, reachable from every state, so that every state can fail`)
	} else {
		reach := agentReaching(byName, names, "failed")
		for _, name := range names {
			if !final(state(name)) && !reach[name] {
				warn("states."+name, `no path to the "failed" state: Statewright's agent requires that every state can fail`)
			}
		}
	}
	if d := danger.String(); d != "moderate" && d != "dangerous" {
		return out
	}
	initial := root.Get("initial").String()
	var strong []string
	for _, t := range state(initial).Get("allowed_tools").Array() {
		if agentToolPrivilege[t.String()] >= 2 {
			strong = append(strong, t.String())
		}
	}
	if len(strong) > 0 {
		warn("states."+initial+".allowed_tools", "the initial state of a %s workflow has write, execute or external tools (%s): Statewright's agent requires it to start read-only", danger.String(), strings.Join(strong, ", "))
	}
	approval := false
	for _, name := range names {
		agentTransitions(state(name), func(_, _ string, approved bool) { approval = approval || approved })
	}
	if !approval {
		warn("meta.danger_level", "a %s workflow without a transition with requires_approval: true: Statewright's agent requires at least one approval gate", danger.String())
	}
	for _, name := range names {
		s := state(name)
		if final(s) {
			continue
		}
		from := agentMaxPrivilege(s)
		agentTransitions(s, func(event, target string, approved bool) {
			if to := agentMaxPrivilege(state(target)); to >= 4 && from <= 1 && !approved {
				warn("states."+name+".on."+event, "tool escalation from %q (privilege %d) to %q (privilege %d) without requires_approval: Statewright's agent requires an approval gate there", name, from, target, to)
			}
		})
	}
	return out
}

// agentTransitions calls f with the event, target and requires_approval
// of each transition of s (each branch of a guarded array).
func agentTransitions(s gjson.Result, f func(event, target string, approved bool)) {
	s.Get("on").ForEach(func(k, t gjson.Result) bool {
		branches := []gjson.Result{t}
		if t.IsArray() {
			branches = t.Array()
		}
		for _, b := range branches {
			if b.Type == gjson.String {
				f(k.String(), b.String(), false)
			} else {
				f(k.String(), b.Get("target").String(), b.Get("requires_approval").Bool())
			}
		}
		return true
	})
}

// agentMaxPrivilege is the highest privilege of a state's allowed_tools.
func agentMaxPrivilege(s gjson.Result) int {
	m := 0
	for _, t := range s.Get("allowed_tools").Array() {
		m = max(m, agentToolPrivilege[t.String()])
	}
	return m
}

// agentReaching returns the states from which the transitions lead to
// target: one breadth-first walk of the reversed transitions, linear in
// the workflow's size.
func agentReaching(states map[string]gjson.Result, names []string, target string) map[string]bool {
	into := map[string][]string{}
	for _, name := range names {
		agentTransitions(states[name], func(_, to string, _ bool) {
			into[to] = append(into[to], name)
		})
	}
	reach := map[string]bool{}
	queue := []string{target}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, from := range into[cur] {
			if !reach[from] {
				reach[from] = true
				queue = append(queue, from)
			}
		}
	}
	return reach
}
