package main

import "github.com/chartgate/chartgate/workflow"

// agentWarnings are the checks Statewright's agent runs on the workflows
// it generates, as warnings (workflow.AgentWarnings).
func agentWarnings(data []byte) []problem {
	var out []problem
	for _, w := range workflow.AgentWarnings(data) {
		out = append(out, problem{path: w.Path, msg: w.Msg, warning: true})
	}
	return out
}
