// This file defines how a state's env_overrides reach the shell tool: the
// variables of the active states, merged, and the tool's input rewritten so
// that the command runs with them set, for the hosts whose pre tool answer
// can rewrite a tool's input.

package hook

import (
	"encoding/json"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"

	"github.com/chartgate/chartgate/shellpolicy"
	"github.com/chartgate/chartgate/workflow"
)

// rewritesInput reports whether host's pre tool answer can rewrite the
// tool's input while letting it run, as its documentation says (see the
// package documentation, "Environment variables"), and whether its shell
// tool runs POSIX shell on the system goos: Codex and Gemini CLI run
// PowerShell on Windows, where the rewrite would not parse; Claude Code
// runs its Bash tool in Git Bash there. Cursor documents no rewrite.
func rewritesInput(host Host, goos string) bool {
	switch host {
	case ClaudeCode:
		return true
	case Codex, Gemini, Copilot:
		return goos != "windows"
	}
	return false
}

// envOverrides returns the variables the active states' policies set
// (env_overrides), merged in the order of the policies, which is the
// order of the states in the workflow: a nested state's value wins over
// its parent's, and of two parallel states that set one variable, the
// later one in the workflow wins. Nil when no state sets any.
func envOverrides(policies []workflow.StatePolicy) map[string]string {
	var env map[string]string
	for _, p := range policies {
		if len(p.EnvOverrides) == 0 {
			continue
		}
		if env == nil {
			env = map[string]string{}
		}
		maps.Copy(env, p.EnvOverrides)
	}
	return env
}

// withEnv returns the shell tool's input with its command rewritten to run
// with env set (shellpolicy.WithEnv); every other field of the input is
// kept as it was, in its order. It returns nil when env is empty or the
// host cannot rewrite the input.
func withEnv(ev Event, env map[string]string) (json.RawMessage, error) {
	if len(env) == 0 || !rewritesInput(ev.Host, runtime.GOOS) {
		return nil, nil
	}
	line, err := shellpolicy.WithEnv(command(ev), env)
	if err != nil {
		return nil, fmt.Errorf("hook: env_overrides: %w", err)
	}
	in, err := parseJSON(rawObject(ev.Input))
	if err != nil || in.kind != '{' {
		return nil, fmt.Errorf("hook: the shell tool's input is not a JSON object: %s", rawObject(ev.Input))
	}
	in.set("command", jstr(line))
	return json.RawMessage(strings.TrimSuffix(string(in.encode("")), "\n")), nil
}

// envNames returns the names of env, sorted, for the phase's text (the
// values may be secrets; the agent does not need them).
func envNames(env map[string]string) []string {
	return slices.Sorted(maps.Keys(env))
}
