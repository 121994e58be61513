package hosttest

// This file runs a project that already had an MCP server of its own: the
// test binary itself, serving one tool over stdio, which chartgate install
// moves behind the gateway.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/internal/stdio"
)

// serverEnv, set to a file, makes the test binary the project's own MCP
// server: a stdio server with one tool, note, which appends its text to
// that file (so the test sees which calls reached it).
const serverEnv = "CHARTGATE_HOSTTEST_NOTES"

func TestMain(m *testing.M) {
	if file := os.Getenv(serverEnv); file != "" {
		serveNotes(file)
		os.Exit(0)
	}
	code := m.Run()
	if binDir != "" { // what chartgateDir built
		stopHookDaemons(binDir)
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

type noteArgs struct {
	Text string `json:"text" jsonschema:"what to note"`
}

func serveNotes(file string) {
	s := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "note", Description: "Notes a text."}, func(_ context.Context, _ *mcp.CallToolRequest, in noteArgs) (*mcp.CallToolResult, any, error) {
		f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, nil, err
		}
		_, err = fmt.Fprintln(f, in.Text)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "noted: " + in.Text}}}, nil, nil
	})
	// Standard input through the poller: see stdio.Pollable.
	_ = s.Run(context.Background(), &mcp.IOTransport{Reader: stdio.Pollable(os.Stdin), Writer: os.Stdout})
}

// ownServer is a host's own-server walk: a project whose host configuration
// already runs an MCP server of its own (rel, written by config for the
// server command exe with its notes file in env value notes), installed as
// the README says. Install moves the server behind the gateway and says
// so; the real host calls the server's tool through the gateway: refused
// in plan, where the workflow does not allow it (it never reaches the
// server), run in implement, where it does (the server notes it, and the
// model reads its answer); the transition's answer carries implement's
// instructions. Uninstall gives the files back byte for byte.
// unlisted, if not empty, is what the host shows its model instead of
// chartgate's refusal when it calls the tool in plan: a host that checks a
// call against the tools the gateway lists (only the current state's)
// before its hooks run.
func ownServer(t *testing.T, h host, rel string, config func(exe, notes string) string, unlisted string) {
	bin := hostBin(t, h.bin)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(t.TempDir(), "notes.log")
	wf := strings.Replace(string(readmeWorkflow(t)), `"allowed_tools": ["Read", "Edit", "Write", "Bash"]`, `"allowed_tools": ["Read", "Edit", "Write", "Bash", "note"]`, 1)
	if !strings.Contains(wf, `"note"`) {
		t.Fatal("the README workflow's implement state no longer has the tools this test adds note to")
	}
	p := newProjectWorkflow(t, []string{h.name}, map[string]string{rel: config(exe, notes)}, wf)
	if want := "moved the project's MCP server(s) notes from " + rel + " into .chartgate/servers.json"; !strings.Contains(p.installOutput, want) {
		t.Errorf("chartgate install %s did not say %q:\n%s", h.name, want, p.installOutput)
	}
	if data, _ := os.ReadFile(filepath.Join(p.dir, rel)); strings.Contains(string(data), exe) {
		t.Errorf("%s still runs the project's server directly after install:\n%s", rel, data)
	}

	var script []step
	add := func(s []step) int { script = append(script, s...); return len(script) - 1 }
	early := add(h.gateway("note", jsonObj("text", "early")))
	moved := add(h.gateway("workflow_transition", jsonObj("event", "PLAN_READY")))
	late := add(h.gateway("note", jsonObj("text", "late")))
	add([]step{say("Done.")})
	add(h.gateway("workflow_transition", jsonObj("event", "DONE")))
	add([]step{say("Finished.")})
	ep := newEndpoint(t, script)

	env, args := h.setup(t, p, ep, "Note it.")
	running <- struct{}{}
	out, errOut, err := p.run(runLimit, env, bin, args...)
	<-running
	defer func() {
		if t.Failed() || os.Getenv("CHARTGATE_HOSTTEST_VERBOSE") != "" {
			t.Logf("%s stdout:\n%s\nstderr:\n%s", h.bin, out, errOut)
			ep.dump()
		}
	}()
	if err != nil {
		t.Errorf("%s: %v", h.bin, err)
	}

	noted, _ := os.ReadFile(notes)
	refusal := `Tool "note" is not available in the current workflow state ("plan")`
	if unlisted != "" {
		refusal = unlisted
	}
	if got := ep.shownAfter(early); strings.Contains(got, "noted: early") || !strings.Contains(got, refusal) {
		t.Errorf("after the note call in plan, the model was not shown chartgate's refusal %q:\n%s", refusal, got)
	}
	// The answer to the transition says what the agent may call now.
	if got := ep.shownAfter(moved); !strings.Contains(got, implementInstructions(t)) {
		t.Errorf("after workflow_transition PLAN_READY, the model was not shown implement's instructions %q:\n%s", implementInstructions(t), got)
	}
	if got := ep.shownAfter(late); !strings.Contains(got, "noted: late") {
		t.Errorf("the note call in implement did not reach the server through the gateway; the model was shown:\n%s", got)
	}
	if string(noted) != "late\n" {
		t.Errorf("the project's server noted %q, want only the call made in implement", noted)
	}
	if st := p.chartgate("status"); !strings.Contains(st, "done") {
		t.Errorf("chartgate status after the run does not show the workflow done:\n%s", st)
	}
	t.Logf("chartgate uninstall %s:\n%s", h.name, p.chartgate("uninstall", h.name))
	p.assertRestored(append([]string{".chartgate/state.db*", ".chartgate/tools.lock.json"}, h.created...)...)
}

// jsonServers is a host file in the mcpServers format with one server,
// notes: the test binary, with extra members of its entry (JSON text,
// ending in a comma, or empty).
func jsonServers(extra string) func(exe, notes string) string {
	return func(exe, notes string) string {
		return "{\n  \"mcpServers\": {\n    \"notes\": {" + extra + "\"command\": " + quote(exe) + ", \"env\": {\"" + serverEnv + "\": " + quote(notes) + "}}\n  }\n}\n"
	}
}

func TestClaudeCodeOwnServer(t *testing.T) {
	t.Parallel()
	ownServer(t, claudeCode(), ".mcp.json", jsonServers(""), "")
}

// TestCodexOwnServer: the server is a [mcp_servers.NAME] table of the
// project's .codex/config.toml, beside the project's other settings.
//
// Codex 0.171 reads an MCP server's tools once, at the session's start, and
// ignores notifications/tools/list_changed (openai/codex#10105, #33266,
// #37417, open): install gives its gateway --list-all-tools, so note is
// listed from the start, refused by the gateway in plan, and run in
// implement.
func TestCodexOwnServer(t *testing.T) {
	t.Parallel()
	ownServer(t, codex(), ".codex/config.toml", func(exe, notes string) string {
		return "# the project's own settings\nmodel_reasoning_effort = \"low\"\n\n[mcp_servers.notes]\ncommand = " + quote(exe) +
			"\n\n[mcp_servers.notes.env]\n" + serverEnv + " = " + quote(notes) + "\n"
	}, "")
}

// TestGeminiOwnServer: the server is in mcpServers of the project's
// .gemini/settings.json, beside the project's other settings.
func TestGeminiOwnServer(t *testing.T) {
	t.Parallel()
	ownServer(t, gemini(), ".gemini/settings.json", func(exe, notes string) string {
		return "{\n  \"ui\": {\"hideTips\": true},\n  \"mcpServers\": {\n    \"notes\": {\"command\": " + quote(exe) + ", \"env\": {\"" + serverEnv + "\": " + quote(notes) + "}}\n  }\n}\n"
	}, `Tool "mcp_chartgate_note" not found`)
}

// TestCopilotOwnServer: the server is in the project's .github/mcp.json,
// in Copilot CLI's form (a "local" server offering all its tools).
func TestCopilotOwnServer(t *testing.T) {
	t.Parallel()
	ownServer(t, copilotAnthropic(), ".github/mcp.json", jsonServers(`"type": "local", "tools": ["*"], `), "")
}

// stopHookDaemons ends the hook daemons that the hook client started from
// the chartgate in dir (they would otherwise wait 10 idle minutes).
func stopHookDaemons(dir string) {
	procs, _ := filepath.Glob("/proc/[0-9]*/exe")
	for _, exe := range procs {
		target, err := os.Readlink(exe)
		if err != nil || filepath.Dir(target) != dir {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(exe))); err == nil {
			if p, err := os.FindProcess(pid); err == nil {
				_ = p.Kill()
			}
		}
	}
}
