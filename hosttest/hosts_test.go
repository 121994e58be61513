package hosttest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// A host's run is bounded; a run that hangs fails its test.
const runLimit = 4 * time.Minute

// running bounds the hosts run at once: each is a Node.js or native
// process tree of several hundred MB that starts slowly when the cores are
// shared (on 2 cores, six at once took two minutes each to start).
var running = make(chan struct{}, 3)

// host is one agent host as the tests drive it: how it is installed and
// run headless against the scripted model, and how its model calls the
// tools the workflow walk needs.
type host struct {
	name string // chartgate's name for it (install, hook)
	bin  string // its npm binary
	// existing is the host configuration a project already has, which
	// chartgate uninstall must give back byte for byte.
	existing map[string]string
	// also are hosts chartgate is installed for too, before this one.
	also []string
	// setup writes the host's user configuration (in the run's home) and
	// returns the run's environment and arguments.
	setup func(t *testing.T, p *project, ep *endpoint, prompt string) (env, args []string)
	// write, shell and gateway are the model's calls of the host's file
	// writer, its shell and a tool of the chartgate gateway (a JSON object
	// input), as the host names them.
	write   func(path, content string) []step
	shell   func(command string) []step
	gateway func(tool, input string) []step
	// created are files the host's own run adds to the project
	// (patterns), which uninstall leaves.
	created []string
}

// walk is the README's walkthrough run by a real host: the model tries a
// Write and a shell redirect in plan (both refused, and it reads
// chartgate's refusal), moves the workflow with workflow_transition
// through the gateway (and reads the new state's instructions), writes
// the file, tries to stop in implement (held), moves to done and stops.
// Then chartgate uninstall gives the project's files back.
func walk(t *testing.T, h host) {
	bin := hostBin(t, h.bin)
	p := newProject(t, append(h.also, h.name), h.existing)
	notes := filepath.Join(p.dir, "notes.md")

	var script []step
	add := func(s []step) int { script = append(script, s...); return len(script) - 1 }
	refusedWrite := add(h.write(notes, "the plan\n"))
	refusedShell := add(h.shell("echo from the shell > notes.md"))
	moved := add(h.gateway("workflow_transition", jsonObj("event", "PLAN_READY")))
	wrote := add(h.write(notes, "the plan\n"))
	held := add([]step{say("Done.")})
	add(h.gateway("workflow_transition", jsonObj("event", "DONE")))
	add([]step{say("Finished.")})

	ep := newEndpoint(t, script)
	env, args := h.setup(t, p, ep, "Write the plan to notes.md.")
	running <- struct{}{}
	start := time.Now()
	out, errOut, err := p.run(runLimit, env, bin, args...)
	<-running
	if reqs := ep.agentRequests(); len(reqs) > 0 {
		t.Logf("%s asked the model first after %v, last after %v", h.bin, reqs[0].At.Sub(start).Round(time.Millisecond), reqs[len(reqs)-1].At.Sub(start).Round(time.Millisecond))
	}
	defer func() {
		if t.Failed() || os.Getenv("CHARTGATE_HOSTTEST_VERBOSE") != "" {
			t.Logf("%s stdout:\n%s\nstderr:\n%s", h.bin, out, errOut)
			ep.dump()
		}
	}()
	if err != nil {
		t.Errorf("%s: %v", h.bin, err)
	}

	refusal := `is not available in the current workflow state ("plan")`
	if got := ep.shownAfter(refusedWrite); strings.Count(got, refusal) != 1 {
		t.Errorf("after its Write in plan, the model was shown chartgate's refusal %q %d times, want once:\n%s", refusal, strings.Count(got, refusal), got)
	}
	if got := ep.shownAfter(refusedShell); !strings.Contains(got, refusal) {
		t.Errorf("after its shell redirect in plan, the model was not shown chartgate's refusal %q", refusal)
	}
	afterMove := ep.shownAfter(moved)
	if !strings.Contains(afterMove, "implement") || strings.Contains(afterMove, "workflow_start") {
		t.Errorf("after workflow_transition PLAN_READY, the model was not shown the move to implement (or was sent to workflow_start)")
	}
	if !strings.Contains(afterMove, implementInstructions(t)) {
		t.Errorf("after workflow_transition PLAN_READY, the model was not shown implement's instructions %q", implementInstructions(t))
	}
	if got := ep.shownAfter(wrote); strings.Contains(got, "not available in the current workflow state") {
		t.Errorf("the Write in implement was refused")
	}
	if data, err := os.ReadFile(notes); err != nil || string(data) != "the plan\n" {
		t.Errorf("notes.md after the run: %q, %v; want the Write's content (and no shell output)", data, err)
	}
	if got := ep.shownAfter(held); !strings.Contains(got, "the workflow is not finished") {
		t.Errorf("the stop in implement was not held: the model was not shown chartgate's reason")
	}
	if n, want := len(ep.agentRequests()), len(script); n != want {
		t.Errorf("the host asked the model %d times, want %d (one per step: the stop in done is let through)", n, want)
	}
	if st := p.chartgate("status"); !strings.Contains(st, "done") {
		t.Errorf("chartgate status after the run does not show the workflow done:\n%s", st)
	}
	if runtime.GOOS == "linux" && os.Getenv(captureEnv) == "" {
		// The hooks ran chartgate-hook, which starts the hook daemon at its
		// first event and sends it the next ones.
		if _, err := os.Stat(filepath.Join(p.home, ".config", "chartgate", "hookd", "sock")); err != nil {
			t.Errorf("the hook client started no hook daemon: %v", err)
		}
	}

	for _, name := range append([]string{h.name}, h.also...) {
		t.Logf("chartgate uninstall %s:\n%s", name, p.chartgate("uninstall", name))
	}
	p.assertRestored(append([]string{"notes.md", ".chartgate/state.db*"}, h.created...)...)
}

// implementInstructions returns the instructions of the README
// workflow's implement state.
func implementInstructions(t *testing.T) string {
	t.Helper()
	wf := string(readmeWorkflow(t))
	_, rest, ok := strings.Cut(wf, `"implement":`)
	if !ok {
		t.Fatal("the README workflow has no implement state")
	}
	_, rest, ok = strings.Cut(rest, `"instructions": "`)
	if !ok {
		t.Fatal("the README workflow's implement state has no instructions")
	}
	instr, _, _ := strings.Cut(rest, `"`)
	return instr
}

func TestClaudeCode(t *testing.T) {
	t.Parallel()
	walk(t, claudeCode())
}

// claudeCode is Claude Code, in a project with settings of its own.
func claudeCode() host {
	return host{
		name: "claude-code", bin: "claude",
		existing: map[string]string{".claude/settings.json": "{\n  \"permissions\": {\"allow\": [\"Read\"]}\n}\n"},
		setup: func(t *testing.T, p *project, ep *endpoint, prompt string) ([]string, []string) {
			return []string{
					"ANTHROPIC_BASE_URL=" + ep.URL(),
					"ANTHROPIC_API_KEY=dummy",
					"IS_SANDBOX=1", // CI runs as root, where Claude Code refuses bypassPermissions otherwise
					"DISABLE_AUTOUPDATER=1",
					"DISABLE_TELEMETRY=1",
					"DISABLE_ERROR_REPORTING=1",
					"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
				}, []string{"-p", prompt, "--output-format", "stream-json", "--verbose",
					"--permission-mode", "bypassPermissions"}
		},
		write: func(path, content string) []step {
			return []step{call("Write", jsonObj("file_path", path, "content", content))}
		},
		shell: func(command string) []step {
			return []step{call("Bash", jsonObj("command", command, "description", "run it"))}
		},
		gateway: func(tool, input string) []step {
			return []step{call("mcp__chartgate__"+tool, input)}
		},
	}
}

func TestCodex(t *testing.T) {
	t.Parallel()
	walk(t, codex())
}

// codex is Codex, in a project with settings of its own, the project and
// its hooks trusted.
func codex() host {
	searched := map[string]bool{}
	return host{
		name: "codex", bin: "codex",
		existing: map[string]string{".codex/config.toml": "# the project's own settings\nmodel_reasoning_effort = \"low\"\n"},
		setup: func(t *testing.T, p *project, ep *endpoint, prompt string) ([]string, []string) {
			home := filepath.Join(p.home, ".codex")
			// A model Codex knows (its bundled catalog), so that it offers
			// apply_patch and tool_search; the project trusted, as a user
			// trusts it on Codex's first start.
			config := `model = "gpt-5.5"
model_provider = "scripted"

[model_providers.scripted]
name = "scripted"
base_url = "` + ep.URL() + `/v1"
wire_api = "responses"
env_key = "SCRIPTED_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[projects."` + p.dir + `"]
trust_level = "trusted"
`
			p.writeHome(".codex/config.toml", config)
			// Each hook trusted, as a person does in Codex's /hooks: its
			// hash, which Codex's app server lists, under [hooks.state].
			p.writeHome(".codex/config.toml", config+codexHookTrust(t, p, home))
			if out := p.chartgate("install", "codex"); strings.Contains(out, "warning") {
				t.Errorf("chartgate install codex still warns once Codex trusts the folder and the hooks:\n%s", out)
			}
			return []string{"CODEX_HOME=" + home, "SCRIPTED_API_KEY=dummy"},
				[]string{"exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", prompt}
		},
		write: func(path, content string) []step {
			rel := filepath.Base(path)
			patch := "*** Begin Patch\n*** Add File: " + rel + "\n+" + strings.TrimSuffix(content, "\n") + "\n*** End Patch\n"
			return []step{{Tool: "apply_patch", Input: patch, Custom: true}}
		},
		shell: func(command string) []step {
			return []step{call("exec_command", jsonObj("cmd", command))}
		},
		gateway: func(tool, input string) []step {
			var steps []step
			if !searched[tool] {
				// Codex lists MCP tools through its tool_search; the
				// gateway lists the tools of the current state, so after
				// a transition the model searches again.
				steps = append(steps, step{Tool: "tool_search", Input: `{"query": ` + quote(tool) + `, "limit": 5}`, Search: true})
				searched[tool] = true
			}
			if tool == "workflow_transition" {
				clear(searched)
				searched[tool] = true
			}
			return append(steps, step{Tool: tool, Namespace: "mcp__chartgate", Input: input})
		},
	}
}

// jsonObj writes a JSON object of string members, given as key, value
// pairs.
func jsonObj(kv ...string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quote(kv[i]) + ": " + quote(kv[i+1]))
	}
	b.WriteByte('}')
	return b.String()
}

func TestGemini(t *testing.T) {
	t.Parallel()
	walk(t, gemini())
}

// gemini is Gemini CLI, in a project with settings of its own.
func gemini() host {
	return host{
		name: "gemini", bin: "gemini",
		existing: map[string]string{".gemini/settings.json": "{\n  \"ui\": {\"hideTips\": true}\n}\n"},
		setup: func(t *testing.T, p *project, ep *endpoint, prompt string) ([]string, []string) {
			// The user's choice of an API key, as Gemini CLI's first start
			// asks for it.
			p.writeHome(".gemini/settings.json", `{"security": {"auth": {"selectedType": "gemini-api-key"}}, "privacy": {"usageStatisticsEnabled": false}}`)
			return []string{
				"GOOGLE_GEMINI_BASE_URL=" + ep.URL(),
				"GEMINI_API_KEY=dummy",
				"GEMINI_CLI_TRUST_WORKSPACE=true", // a user trusts the folder on Gemini CLI's first start
				"GEMINI_TELEMETRY_ENABLED=false",
			}, []string{"-p", prompt, "--approval-mode", "yolo", "-m", "gemini-2.5-pro", "--output-format", "stream-json"}
		},
		write: func(path, content string) []step {
			return []step{call("write_file", jsonObj("file_path", path, "content", content))}
		},
		shell: func(command string) []step {
			return []step{call("run_shell_command", jsonObj("command", command, "description", "run it"))}
		},
		gateway: func(tool, input string) []step {
			return []step{call("mcp_chartgate_"+tool, input)}
		},
	}
}

func TestCopilot(t *testing.T) {
	t.Parallel()
	walk(t, copilotAnthropic())
}

// TestCopilotBesideClaudeCode: in a project installed for Claude Code and
// Copilot CLI, which runs the hooks of both, each event is decided once
// (the Claude Code hook steps aside under Copilot CLI).
func TestCopilotBesideClaudeCode(t *testing.T) {
	t.Parallel()
	h := copilotAnthropic()
	h.also = []string{"claude-code"}
	walk(t, h)
}

// copilotAnthropic is Copilot CLI with an Anthropic model.
func copilotAnthropic() host {
	return host{
		name: "copilot", bin: "copilot",
		setup: func(t *testing.T, p *project, ep *endpoint, prompt string) ([]string, []string) {
			// The folder trusted, as Copilot CLI's first start in it asks.
			p.writeHome(".copilot/config.json", `{"trusted_folders": [`+quote(p.dir)+`]}`)
			return []string{
				// Workspace MCP servers in prompt mode, as chartgate install's note says.
				"GITHUB_COPILOT_PROMPT_MODE_WORKSPACE_MCP=true",
				"COPILOT_PROVIDER_BASE_URL=" + ep.URL() + "/v1",
				"COPILOT_PROVIDER_TYPE=anthropic",
				"COPILOT_PROVIDER_API_KEY=dummy",
				"COPILOT_MODEL=claude-sonnet-4.5",
				"COPILOT_OFFLINE=true",
				"COPILOT_ALLOW_ALL=true",
			}, []string{"-p", prompt, "--allow-all"}
		},
		write: func(path, content string) []step {
			return []step{call("create", jsonObj("path", path, "file_text", content))}
		},
		shell: func(command string) []step {
			return []step{call("bash", jsonObj("command", command, "description", "run it"))}
		},
		gateway: func(tool, input string) []step {
			return []step{call("chartgate-"+tool, input)}
		},
	}
}

// TestCopilotGPT: Copilot CLI with a GPT model (OpenAI Responses), whose
// apply_patch is a freeform tool: its raw patch is decided like any write.
func TestCopilotGPT(t *testing.T) {
	t.Parallel()
	walk(t, host{
		name: "copilot", bin: "copilot",
		setup: func(t *testing.T, p *project, ep *endpoint, prompt string) ([]string, []string) {
			p.writeHome(".copilot/config.json", `{"trusted_folders": [`+quote(p.dir)+`]}`)
			return []string{
				"GITHUB_COPILOT_PROMPT_MODE_WORKSPACE_MCP=true",
				"COPILOT_PROVIDER_BASE_URL=" + ep.URL() + "/v1",
				"COPILOT_PROVIDER_TYPE=openai",
				"COPILOT_PROVIDER_WIRE_API=responses",
				"COPILOT_PROVIDER_API_KEY=dummy",
				"COPILOT_MODEL=gpt-5.4",
				"COPILOT_OFFLINE=true",
				"COPILOT_ALLOW_ALL=true",
			}, []string{"-p", prompt, "--allow-all"}
		},
		write: func(path, content string) []step {
			patch := "*** Begin Patch\n*** Add File: " + path + "\n+" + strings.TrimSuffix(content, "\n") + "\n*** End Patch\n"
			return []step{{Tool: "apply_patch", Input: patch, Custom: true}}
		},
		shell: func(command string) []step {
			return []step{call("bash", jsonObj("command", command, "description", "run it"))}
		},
		gateway: func(tool, input string) []step {
			return []step{call("chartgate-"+tool, input)}
		},
	})
}

// codexHookTrust asks Codex's app server (codex app-server, JSON-RPC on
// stdio: initialize, then hooks/list) for the project's hooks and returns
// the [hooks.state] tables that trust each: its key and its current hash,
// what Codex's /hooks writes when a person accepts them.
func codexHookTrust(t *testing.T, p *project, home string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, hostBin(t, "codex"), "app-server")
	cmd.Dir = p.dir
	cmd.Env = p.env("CODEX_HOME=" + home)
	setProcessGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Cancel(); _ = cmd.Wait() }()
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"hosttest","version":"1"}}}`+"\n"+
		`{"jsonrpc":"2.0","method":"initialized"}`+"\n"+
		`{"jsonrpc":"2.0","id":2,"method":"hooks/list","params":{"cwds":[`+quote(p.dir)+`]}}`+"\n")
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var msg struct {
			ID     int `json:"id"`
			Result struct {
				Data []struct {
					Hooks []struct {
						Key         string `json:"key"`
						CurrentHash string `json:"currentHash"`
					} `json:"hooks"`
				} `json:"data"`
			} `json:"result"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) != nil || msg.ID != 2 {
			continue
		}
		var b strings.Builder
		for _, d := range msg.Result.Data {
			for _, h := range d.Hooks {
				fmt.Fprintf(&b, "\n[hooks.state.%s]\ntrusted_hash = %s\n", quote(h.Key), quote(h.CurrentHash))
			}
		}
		if b.Len() == 0 {
			t.Fatal("codex app-server lists no hooks for the project")
		}
		return b.String()
	}
	t.Fatalf("codex app-server gave no hooks/list answer: %v", sc.Err())
	return ""
}
