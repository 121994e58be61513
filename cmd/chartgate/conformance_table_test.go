// This file runs the MCP conformance suite's required server scenarios of
// the 2026-07-28 and 2025-11-25 revisions against go-sdk's own conformance
// server (everything-server, built from the go-sdk module this repository
// pins), directly and through chartgate serve, and checks that the
// README's per-scenario table is what the run found.

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const (
	mcpConformanceDir = "testdata/mcpconformance"
	readmePath        = "../../README.md"
	// envUpdateREADME, set to 1, makes TestMCPConformanceTable write the
	// table it found into the README instead of comparing.
	envUpdateREADME = "CHARTGATE_UPDATE_README"
	tableBegin      = "<!-- mcp-conformance-table: begin (written by go test ./cmd/chartgate -run TestMCPConformanceTable) -->"
	tableEnd        = "<!-- mcp-conformance-table: end -->"
)

// scenarioOutcome is what one run of the suite found for one scenario.
type scenarioOutcome struct {
	Passed bool
	// Reason is the first failed check and its message, when not Passed.
	Reason string
}

// suiteRun is one run of the suite: the scenarios in the suite's order,
// their outcomes, and why those the revision does not score are not.
type suiteRun struct {
	Order     []string
	Outcomes  map[string]scenarioOutcome
	NotScored map[string]string
}

// conformanceTarget is a server the table has a column for.
type conformanceTarget struct {
	Name string
	// start starts the server for a revision and returns its URL.
	start func(t *testing.T, stateless bool) string
}

func TestMCPConformanceTable(t *testing.T) {
	node22, err := filepath.Abs(filepath.Join(mcpConformanceDir, "node_modules", ".bin", "node"))
	require.NoError(t, err)
	runner, err := filepath.Abs(filepath.Join(mcpConformanceDir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"))
	require.NoError(t, err)
	for _, f := range []string{node22, runner} {
		if _, err := os.Stat(f); err != nil {
			t.Skipf("the MCP conformance suite is not installed (no %s); to run this test: cd cmd/chartgate/%s && npm ci", f, mcpConformanceDir)
		}
	}
	suiteVersion := packageVersion(t, filepath.Join(mcpConformanceDir, "node_modules", "@modelcontextprotocol", "conformance", "package.json"))
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "github.com/modelcontextprotocol/go-sdk").Output()
	require.NoError(t, err)
	sdkVersion := strings.TrimSpace(string(out))

	// go-sdk's conformance server, as the SDK's own CI runs it: stateless
	// for 2026-07-28, with sessions for 2025-11-25.
	bin := filepath.Join(t.TempDir(), "everything-server")
	build := exec.Command("go", "build", "-o", bin, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building go-sdk's everything-server: %v\n%s", err, out)
	}
	cfg := writeFile(t, "servers.json", fmt.Sprintf(`{"mcpServers": {"everything": {"command": %q}}}`, bin))
	ungated := writeFile(t, "workflow.json", `{"id": "open", "initial": "work", "states": {"work": {}}}`)
	serve := func(extra ...string) func(t *testing.T, stateless bool) string {
		return func(t *testing.T, stateless bool) string {
			args := append([]string{"--config", cfg, "--log-level", "warn"}, extra...)
			if stateless {
				args = append(args, "--stateless")
			}
			url, _ := startServeHTTP(t, args...)
			return url
		}
	}
	targets := []conformanceTarget{
		{"go-sdk everything-server", func(t *testing.T, stateless bool) string {
			port := freePort(t)
			cmd := exec.Command(bin, "-http", "127.0.0.1:"+strconv.Itoa(port), "-stateless="+strconv.FormatBool(stateless))
			cmd.Stdout, cmd.Stderr = testWriter{t}, testWriter{t}
			require.NoError(t, cmd.Start())
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			waitListening(t, port)
			return fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
		}},
		{"chartgate serve", serve()},
		{"chartgate serve --workflow", serve("--workflow", ungated, "--store", "memory")},
	}

	var table strings.Builder
	fmt.Fprintf(&table, "@modelcontextprotocol/conformance %s, go-sdk %s's everything-server.\n", suiteVersion, sdkVersion)
	for _, rev := range []struct {
		name      string
		stateless bool
	}{{"2026-07-28", true}, {"2025-11-25", false}} {
		var runs []suiteRun
		for _, target := range targets {
			t.Run(rev.name+"/"+target.Name, func(t *testing.T) {
				// The suite checks DNS-rebinding protection with the Host
				// header: localhost, as it connects to it.
				url := strings.Replace(target.start(t, rev.stateless), "127.0.0.1", "localhost", 1)
				runs = append(runs, runSuite(t, node22, runner, url, rev.name))
			})
		}
		require.Len(t, runs, len(targets), "a run of the suite failed")
		required := requiredScenarios(t, rev.name)
		for i, r := range runs {
			for _, sc := range required {
				if _, ok := r.Outcomes[sc]; !ok {
					t.Errorf("%s, %s: required scenario %s has no result", rev.name, targets[i].Name, sc)
				}
			}
		}
		writeTable(&table, rev.name, rev.stateless, targets, runs)
	}

	readme, err := os.ReadFile(readmePath)
	require.NoError(t, err)
	begin := strings.Index(string(readme), tableBegin)
	end := strings.Index(string(readme), tableEnd)
	require.True(t, begin >= 0 && end > begin, "README.md has no table markers %q … %q", tableBegin, tableEnd)
	current := string(readme[begin+len(tableBegin) : end])
	found := "\n" + table.String()
	if os.Getenv(envUpdateREADME) == "1" {
		updated := string(readme[:begin+len(tableBegin)]) + found + string(readme[end:])
		require.NoError(t, os.WriteFile(readmePath, []byte(updated), 0o644))
		t.Logf("README.md: conformance table written")
		return
	}
	require.Equal(t, found, current, "the README's conformance table is not what this run found; if the change is expected, write it with %s=1 go test ./cmd/chartgate -run TestMCPConformanceTable", envUpdateREADME)
}

// writeTable writes the Markdown table of one revision.
func writeTable(b *strings.Builder, rev string, stateless bool, targets []conformanceTarget, runs []suiteRun) {
	mode := "with sessions"
	if stateless {
		mode = "stateless (`--stateless`, `-stateless`)"
	}
	fmt.Fprintf(b, "\n%s, required server scenarios and those run but not scored; servers %s:\n\n| scenario |", rev, mode)
	for _, target := range targets {
		fmt.Fprintf(b, " %s |", target.Name)
	}
	b.WriteString("\n|---|")
	for range targets {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	counts := make([]int, len(targets))
	scored := 0
	for _, sc := range runs[0].Order {
		name := "`" + sc + "`"
		why, notScored := runs[0].NotScored[sc]
		if notScored {
			name += " (not scored: " + why + ")"
		} else {
			scored++
		}
		fmt.Fprintf(b, "| %s |", name)
		for i, r := range runs {
			o, ok := r.Outcomes[sc]
			switch {
			case !ok:
				b.WriteString(" not run |")
			case o.Passed:
				b.WriteString(" pass |")
				if !notScored {
					counts[i]++
				}
			default:
				fmt.Fprintf(b, " **fail**: %s |", o.Reason)
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("| **scored scenarios passing** |")
	for _, n := range counts {
		fmt.Fprintf(b, " %d of %d |", n, scored)
	}
	b.WriteString("\n")
}

// summaryLine is a scenario's line in the suite's summary.
var summaryLine = regexp.MustCompile(`^[✓✗] (\S+): \d+ passed, \d+ failed`)

// notScoredLine is a scenario's line under "Not scored for REV".
var notScoredLine = regexp.MustCompile(`^\s+[✓✗] (\S+) \(([^)]+)\)$`)

// runSuite runs the suite's server scenarios of revision rev against url.
func runSuite(t *testing.T, node, runner, url, rev string) suiteRun {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, runner, "server", "--url", url, "--requirements", rev, "-o", dir)
	logs, _ := cmd.CombinedOutput() // exits 1 when a scenario fails
	require.NoError(t, ctx.Err(), "the conformance suite timed out:\n%s", logs)
	r := suiteRun{Outcomes: map[string]scenarioOutcome{}, NotScored: map[string]string{}}
	sc := bufio.NewScanner(strings.NewReader(string(logs)))
	for sc.Scan() {
		line := sc.Text()
		if m := summaryLine.FindStringSubmatch(line); m != nil {
			r.Order = append(r.Order, m[1])
		} else if m := notScoredLine.FindStringSubmatch(line); m != nil {
			r.NotScored[m[1]] = m[2]
		}
	}
	require.NotEmpty(t, r.Order, "the conformance suite printed no summary:\n%s", logs)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		m := scenarioDir.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name(), "checks.json"))
		require.NoError(t, err)
		var checks []struct{ ID, Status, ErrorMessage string }
		require.NoError(t, json.Unmarshal(data, &checks), e.Name())
		o := scenarioOutcome{Passed: true}
		for _, c := range checks {
			if c.Status == "FAILURE" {
				o = scenarioOutcome{Reason: "`" + c.ID + "`: " + cellText(c.ErrorMessage)}
				break
			}
		}
		r.Outcomes[m[1]] = o
	}
	return r
}

// hostPort matches the address the suite connected to, which changes
// from run to run.
var hostPort = regexp.MustCompile(`(localhost|127\.0\.0\.1):\d+`)

// inputRequest matches the input request of a multi-round-trip result that
// go-sdk's client (the gateway's, upstream) failed to fulfil: with several
// requests in a result it tries them in no fixed order, so which one a run
// names changes from run to run.
var inputRequest = regexp.MustCompile(`(fulfilling input request )"[^"]*": calling "[^"]*": "[^"]*"`)

// cellText makes a check's message one table cell: one line, no pipe, no
// address of the run or other part that changes between runs, at most 300
// characters.
func cellText(s string) string {
	s = hostPort.ReplaceAllString(s, "HOST")
	s = inputRequest.ReplaceAllString(s, `${1}"…": calling "…": "…"`)
	s = strings.Join(strings.Fields(s), " ")
	s = strings.ReplaceAll(s, "|", `\|`)
	if r := []rune(s); len(r) > 300 {
		s = string(r[:300]) + "…"
	}
	if s == "" {
		s = "(no message)"
	}
	return s
}

// requiredScenarios lists the server scenarios revision rev requires, as
// the suite itself lists them.
func requiredScenarios(t *testing.T, rev string) []string {
	t.Helper()
	node := filepath.Join(mcpConformanceDir, "node_modules", ".bin", "node")
	runner := filepath.Join(mcpConformanceDir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	out, err := exec.Command(node, runner, "list", "--server", "--requirements", rev).CombinedOutput()
	require.NoError(t, err, "%s", out)
	var list []string
	inServer := false
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, "Server scenarios"):
			inServer = true
		case strings.HasPrefix(line, "  - ") && inServer:
			list = append(list, strings.TrimPrefix(line, "  - "))
		case strings.TrimSpace(line) == "" && len(list) > 0:
			inServer = false
		}
	}
	require.NotEmpty(t, list, "the suite lists no required server scenario for %s:\n%s", rev, out)
	return list
}

// packageVersion reads the version of an npm package.json.
func packageVersion(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var p struct{ Version string }
	require.NoError(t, json.Unmarshal(data, &p))
	return p.Version
}
