package hosttest

// This file runs a project that already had an MCP server of its own: the
// test binary itself, serving one tool over stdio, which chartgate install
// moves behind the gateway.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
	os.Exit(m.Run())
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
	_ = s.Run(context.Background(), &mcp.StdioTransport{})
}

// TestClaudeCodeOwnServer: a project whose .mcp.json already runs an MCP
// server of its own, installed as the README says. Install moves the
// server behind the gateway and says so; the real Claude Code calls the
// server's tool through the gateway: refused in plan, where the workflow
// does not allow it (it never reaches the server), run in implement, where
// it does (the server notes it, and the model reads its answer).
// Uninstall gives .mcp.json back byte for byte.
func TestClaudeCodeOwnServer(t *testing.T) {
	t.Parallel()
	bin := hostBin(t, "claude")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(t.TempDir(), "notes.log")
	mcpJSON := "{\n  \"mcpServers\": {\n    \"notes\": {\"command\": " + quote(exe) + ", \"env\": {\"" + serverEnv + "\": " + quote(notes) + "}}\n  }\n}\n"
	wf := strings.Replace(string(readmeWorkflow(t)), `"allowed_tools": ["Read", "Edit", "Write", "Bash"]`, `"allowed_tools": ["Read", "Edit", "Write", "Bash", "note"]`, 1)
	if !strings.Contains(wf, `"note"`) {
		t.Fatal("the README workflow's implement state no longer has the tools this test adds note to")
	}
	p := newProjectWorkflow(t, []string{"claude-code"}, map[string]string{".mcp.json": mcpJSON}, wf)
	if !strings.Contains(p.installOutput, "moved the project's MCP server(s) notes from .mcp.json into .chartgate/servers.json") {
		t.Errorf("chartgate install did not say it moved the project's server:\n%s", p.installOutput)
	}
	if data, _ := os.ReadFile(filepath.Join(p.dir, ".mcp.json")); strings.Contains(string(data), `"notes"`) {
		t.Errorf(".mcp.json still runs the project's server directly after install:\n%s", data)
	}

	var script []step
	add := func(s ...step) int { script = append(script, s...); return len(script) - 1 }
	early := add(call("mcp__chartgate__note", jsonObj("text", "early")))
	add(call("mcp__chartgate__workflow_transition", jsonObj("event", "PLAN_READY")))
	late := add(call("mcp__chartgate__note", jsonObj("text", "late")))
	add(say("Done."))
	add(call("mcp__chartgate__workflow_transition", jsonObj("event", "DONE")))
	add(say("Finished."))
	ep := newEndpoint(t, script)

	running <- struct{}{}
	out, errOut, err := p.run(runLimit, []string{
		"ANTHROPIC_BASE_URL=" + ep.URL(),
		"ANTHROPIC_API_KEY=dummy",
		"IS_SANDBOX=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	}, bin, "-p", "Note it.", "--output-format", "stream-json", "--verbose", "--permission-mode", "bypassPermissions")
	<-running
	defer func() {
		if t.Failed() || os.Getenv("CHARTGATE_HOSTTEST_VERBOSE") != "" {
			t.Logf("claude stdout:\n%s\nstderr:\n%s", out, errOut)
			ep.dump()
		}
	}()
	if err != nil {
		t.Errorf("claude: %v", err)
	}

	noted, _ := os.ReadFile(notes)
	refusal := `Tool "note" is not available in the current workflow state ("plan")`
	if got := ep.shownAfter(early); strings.Contains(got, "noted: early") || !strings.Contains(got, refusal) {
		t.Errorf("after the note call in plan, the model was not shown chartgate's refusal %q:\n%s", refusal, got)
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
	t.Logf("chartgate uninstall claude-code:\n%s", p.chartgate("uninstall", "claude-code"))
	p.assertRestored(".chartgate/state.db*", ".chartgate/tools.lock.json")
}
