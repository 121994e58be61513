package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart"
)

// releaseWorkflow is a Statewright workflow whose deploy needs approval.
const releaseWorkflow = `{
  "id": "release", "initial": "build",
  "states": {
    "build": {"allowed_tools": ["Read", "Bash"], "on": {"BUILT": {"target": "deploy", "requires_approval": true, "approval_message": "ship it?"}}},
    "deploy": {"on": {"DONE": "done"}},
    "done": {"type": "final"}
  }
}`

// TestOutOfBandCommands: status lists the workflows of a SQLite store with
// the approval they wait for (its id, transition and expiry), approve
// approves it with the approver key (recording who, through which
// channel, and whether who was authenticated), once; history prints the
// run history.
func TestOutOfBandCommands(t *testing.T) {
	outOfBand(t, filepath.Join(t.TempDir(), "state.db"))
}

// outOfBand runs TestOutOfBandCommands on a store (a --store value).
func outOfBand(t *testing.T, store string) {
	wf := writeFile(t, "workflow.json", releaseWorkflow)
	flags := []string{"--workflow", wf, "--store", store}
	id := parkRelease(t, wf, store, "s1")

	code, out, errOut := chartgate(append([]string{"status"}, flags...)...)
	assert.Equal(t, exitOK, code, errOut)
	assert.Regexp(t, regexp.MustCompile(`^name:s1  build:BUILT:approval \(active\)  version [0-9a-f]{12}  last moved \S+  waits for approval `+id+`: "build" to "deploy" on BUILT: ship it\? \(expires \S+\)\n$`), out)

	key := filepath.Join(t.TempDir(), "cfg", "approver.key")
	code, out, errOut = chartgate("approve", "--init", "--key", key)
	assert.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "created the approver key at "+key+" (mode 0600)\n", out)
	fi, err := os.Stat(key)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	code, out, errOut = chartgate(append([]string{"approve", "name:s1", "--by", "alice", "--yes", "--key", key}, flags...)...)
	assert.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "approved approval "+id+" of workflow name:s1: build:BUILT:approval -> deploy on BUILT (by alice, not authenticated)\n", out)

	code, _, errOut = chartgate(append([]string{"approve", "name:s1", "--yes", "--key", key}, flags...)...)
	assert.Equal(t, exitFail, code)
	assert.Equal(t, "chartgate approve: workflow name:s1 waits for no approval\n", errOut)
	code, _, errOut = chartgate(append([]string{"approve", id, "--yes", "--key", key}, flags...)...)
	assert.Equal(t, exitFail, code)
	assert.Regexp(t, `^chartgate approve: approval `+id+` was already approved \(by alice through command, at \S+\)\n$`, errOut)
	code, _, errOut = chartgate(append([]string{"approve", "name:nosuch", "--yes", "--key", key}, flags...)...)
	assert.Equal(t, exitFail, code)
	assert.Equal(t, "chartgate approve: workflow name:nosuch does not exist\n", errOut)

	code, out, errOut = chartgate(append([]string{"history", "name:s1"}, flags...)...)
	assert.Equal(t, exitOK, code, errOut)
	got := lines(out)
	require.Len(t, got, 3, out)
	assert.Regexp(t, `  BUILT: build -> build:BUILT:approval \(by agent\)  rationale: "tests pass"$`, got[0])
	assert.Regexp(t, `  chartgate.approve: build:BUILT:approval -> deploy \(approval `+id+` by alice through command, not authenticated\)$`, got[1])
	assert.Equal(t, "now: deploy (active)", got[2])

	code, out, _ = chartgate(append([]string{"history", "name:s1", "--json"}, flags...)...)
	assert.Equal(t, exitOK, code)
	var last mcpbind.Transition
	require.NoError(t, json.Unmarshal([]byte(lines(out)[1]), &last))
	assert.Equal(t, "alice", last.By)
	assert.Equal(t, &mcpbind.ApprovalGrant{ID: id, Approved: true, By: "alice", Channel: mcpbind.ChannelCommand, Authenticated: false}, last.Approval)

	code, _, errOut = chartgate("history", "--workflow", filepath.Join(t.TempDir(), "missing.json"), "x")
	assert.Equal(t, exitFail, code)
	assert.True(t, strings.Contains(errOut, "reading the workflow"), errOut)
}

// parkRelease moves the release workflow named name to where BUILT waits
// for approval, as an agent session's hook would, and returns the
// approval's id.
func parkRelease(t *testing.T, wf, store, name string) string {
	t.Helper()
	p, err := openProject(projectFlagsOf(wf, store))
	require.NoError(t, err)
	defer p.close()
	g, err := p.gate()
	require.NoError(t, err)
	ctx := context.Background()
	_, err = g.Send(ctx, mcpbind.Ref{Name: name}, statechart.Event{Type: "BUILT", Data: map[string]any{"input": map[string]any{"rationale": "tests pass"}}}, "agent")
	require.NoError(t, err)
	a, err := g.Pending(ctx, mcpbind.Ref{Name: name})
	require.NoError(t, err)
	require.NotNil(t, a)
	require.True(t, mcpbind.IsApprovalID(a.ID), a.ID)
	return a.ID
}

// fakeTTY is a terminal whose person types input.
type fakeTTY struct {
	in  *strings.Reader
	out *strings.Builder
}

func (f fakeTTY) Read(p []byte) (int, error)  { return f.in.Read(p) }
func (f fakeTTY) Write(p []byte) (int, error) { return f.out.Write(p) }
func (f fakeTTY) Close() error                { return nil }

// approveOn runs chartgate approve with a terminal on which the person
// types typed (no terminal if typed is "none").
func approveOn(typed string, args ...string) (code int, stdout, stderr, shown string) {
	var out, errOut bytes.Buffer
	var tty strings.Builder
	env := approveEnv{now: time.Now, tty: func() (terminal, error) {
		if typed == "none" {
			return nil, errors.New("open /dev/tty: no such device or address")
		}
		return fakeTTY{in: strings.NewReader(typed), out: &tty}, nil
	}}
	code = approveWith(args, &out, &errOut, env)
	return code, out.String(), errOut.String(), tty.String()
}

// TestApproveProvesAPerson: chartgate approve grants only with the
// approver key and a person's confirmation on the terminal (or --yes,
// with the key): without the key, with a key others may read, without a
// terminal, or with "no" typed, nothing changes. The first use on a
// terminal creates the key. The OS user running it is recorded as
// authenticated.
func TestApproveProvesAPerson(t *testing.T) {
	wf := writeFile(t, "workflow.json", releaseWorkflow)
	store := filepath.Join(t.TempDir(), "state.db")
	flags := []string{"--workflow", wf, "--store", store}
	id := parkRelease(t, wf, store, "s1")
	dir := t.TempDir()
	key := filepath.Join(dir, "chartgate", "approver.key")
	pending := func() bool {
		t.Helper()
		code, out, _ := chartgate(append([]string{"status"}, flags...)...)
		require.Equal(t, exitOK, code)
		return strings.Contains(out, "waits for approval "+id)
	}

	// No key: --yes cannot sign the grant; no terminal cannot create it.
	code, _, errOut, _ := approveOn("none", append([]string{id, "--yes", "--key", key}, flags...)...)
	assert.Equal(t, exitFail, code)
	assert.Equal(t, "chartgate approve: no approver key at "+key+": the grant cannot be signed, so it is refused; a person creates the key with chartgate approve --init\n", errOut)
	code, _, errOut, _ = approveOn("none", append([]string{id, "--key", key}, flags...)...)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, "no approver key at "+key+", and no terminal to create one on")
	assert.True(t, pending())
	assert.NoFileExists(t, key)

	// On a terminal, the first use creates the key; "no" changes nothing.
	code, _, errOut, shown := approveOn("no\n", append([]string{id, "--key", key}, flags...)...)
	assert.Equal(t, exitFail, code)
	assert.Equal(t, "chartgate approve: not confirmed: approval "+id+" is still pending\n", errOut)
	assert.Contains(t, shown, "created the approver key at "+key)
	assert.Contains(t, shown, "Workflow name:s1 waits for approval "+id+`: "build" to "deploy" on BUILT: ship it? (expires `)
	assert.True(t, pending())
	fi, err := os.Stat(key)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	// Without --yes, no terminal: refused.
	code, _, errOut, _ = approveOn("none", append([]string{id, "--key", key}, flags...)...)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, "cannot ask for confirmation on the terminal")
	assert.True(t, pending())

	// A key others may read is refused.
	require.NoError(t, os.Chmod(key, 0o644))
	code, _, errOut, _ = approveOn("yes\n", append([]string{id, "--key", key}, flags...)...)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, "may be read or written by others (mode 0644)")
	require.NoError(t, os.Chmod(key, 0o600))
	assert.True(t, pending())

	// "yes" on the terminal, as the OS user: approved, authenticated.
	u, err := user.Current()
	require.NoError(t, err)
	code, out, errOut, _ := approveOn("yes\n", append([]string{id, "--reject", "--key", key}, flags...)...)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "rejected approval "+id+" of workflow name:s1: build:BUILT:approval -> build on BUILT (by "+u.Username+", authenticated)\n", out)
	assert.False(t, pending())

	// The default key is under $XDG_CONFIG_HOME.
	t.Setenv("XDG_CONFIG_HOME", dir)
	p, err := defaultKeyPath()
	require.NoError(t, err)
	assert.Equal(t, key, p)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("HOME", dir)
	p, err = defaultKeyPath()
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, ".config", "chartgate", "approver.key"), p)
}

// TestApproveWithAnotherKey: a grant signed with a key other than the
// one the gate verifies with is refused by the gate (the command signs
// with the key it reads; the gate here holds another).
func TestApproveWithAnotherKey(t *testing.T) {
	wf := writeFile(t, "workflow.json", releaseWorkflow)
	store := filepath.Join(t.TempDir(), "state.db")
	id := parkRelease(t, wf, store, "s1")
	p, err := openProject(projectFlagsOf(wf, store))
	require.NoError(t, err)
	defer p.close()
	opts := agreedGateOptions(p, nil, false, defaultLeaseTTL)
	opts.ApproverKey = []byte("the person's key, 32 bytes long!")
	g, err := mcpbind.New(p.workflow.Machine.Engine(), opts)
	require.NoError(t, err)
	now := time.Now()
	_, err = g.Approve(context.Background(), mcpbind.Ref{}, mcpbind.Grant{ID: id, Approve: true, By: "alice", Time: now,
		Token: mcpbind.ApprovalToken([]byte("a key the agent made up, 32 byte"), id, true, "alice", now)})
	assert.ErrorIs(t, err, mcpbind.ErrApprovalToken)
}

func projectFlagsOf(wf, store string) projectFlags {
	format, subflows, durable := "auto", "", false
	return projectFlags{workflow: &wf, store: &store, format: &format, subflows: &subflows, durable: &durable}
}

// TestProjectCommandsRefuseWarnings: a workflow is loaded strictly (what
// XState would ignore may leave tools ungated): status, history and approve
// refuse one with warnings, naming every problem.
func TestProjectCommandsRefuseWarnings(t *testing.T) {
	wf := writeFile(t, "workflow.json", `{"id": "w", "initial": "a", "tsTypes": {},
  "states": {"a": {"on": {"GO": {"target": "b", "cond": "ready"}}}, "b": {"type": "final"}}}`)
	flags := []string{"--workflow", wf, "--store", "memory"}
	for _, args := range [][]string{{"status"}, {"history", "w:1"}} {
		code, _, errOut := chartgate(append(args, flags...)...)
		assert.Equal(t, exitFail, code, args)
		assert.Equal(t, []string{
			"chartgate: " + wf + ": 2 errors:",
			"\ttsTypes: \"tsTypes\" is ignored: XState v4's typegen, for TypeScript only",
			"\tstates.a.on.GO.cond: \"cond\" is ignored: it is XState v4's name of \"guard\", so the transition is unguarded (XState's development build refuses it)",
		}, lines(errOut), args)
	}
}

// TestOutOfBandCommandsFromASubfolder: status, history and approve find
// the project's workflow and store from any folder inside the project, as
// the hooks do (the nearest folder above that holds .chartgate/).
func TestOutOfBandCommandsFromASubfolder(t *testing.T) {
	project := t.TempDir()
	wf := filepath.Join(project, ".chartgate", "workflow.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(wf), 0o755))
	require.NoError(t, os.WriteFile(wf, []byte(releaseWorkflow), 0o644))
	id := parkRelease(t, wf, filepath.Join(project, ".chartgate", "state.db"), "s1")
	sub := filepath.Join(project, "src", "deep")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	t.Chdir(sub)

	code, out, errOut := chartgate("status")
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "name:s1  build:BUILT:approval (active)")
	assert.Contains(t, out, "waits for approval "+id)

	code, out, errOut = chartgate("history", "name:s1")
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "now: build:BUILT:approval (active)\n")

	key := filepath.Join(t.TempDir(), "approver.key")
	code, _, errOut = chartgate("approve", "--init", "--key", key)
	require.Equal(t, exitOK, code, errOut)
	code, _, errOut = chartgate("approve", "name:nosuch", "--yes", "--key", key)
	assert.Equal(t, exitFail, code)
	assert.Equal(t, "chartgate approve: workflow name:nosuch does not exist\n", errOut)
	code, out, errOut = chartgate("approve", "name:s1", "--by", "ada", "--yes", "--key", key)
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "approved approval "+id+" of workflow name:s1")
	_, err := os.Stat(filepath.Join(sub, ".chartgate"))
	assert.True(t, os.IsNotExist(err), "nothing is created in the subfolder")
}
