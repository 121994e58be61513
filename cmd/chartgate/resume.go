package main

// This file defines the resume command: a person resumes a workflow the
// agent paused with statewright_pause or statewright_deactivate (chartgate
// serve --compat statewright). The agent cannot: the event is reserved,
// and its shell is refused any chartgate command.

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/chartgate/chartgate/internal/jsonx"
	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/workflow"
)

const resumeUsage = `usage: chartgate resume WORKFLOW [--yes] [--key FILE] [project flags]

Resumes a workflow the agent paused (statewright_pause, statewright_deactivate
with chartgate serve --compat statewright), after confirming on the terminal
(/dev/tty, not standard input): it goes back to the state it was paused in,
and its tools run again. The resumption is kept in its run history.

  --yes            do not ask on the terminal (the approver key is still needed)
  --key FILE       the approver key (default as for chartgate approve)
`

// cmdResume resumes a paused workflow.
func cmdResume(args []string, stdout, stderr io.Writer) int {
	return resumeWith(args, stdout, stderr, openTTY)
}

func resumeWith(args []string, stdout, stderr io.Writer, tty func() (terminal, error)) int {
	pc, code := startPersonCommand("resume", args, stdout, stderr)
	if pc == nil {
		return code
	}
	defer pc.p.close()
	ref, p, g, fail := pc.ref, pc.p, pc.g, pc.fail
	ctx := context.Background()
	wf, err := g.WorkflowOf(ctx, ref)
	if err != nil {
		return fail("%s", errText(err))
	}
	paused := false
	for _, id := range wf.State.StateIDs() {
		paused = paused || id == p.workflow.Machine.ID()+"."+workflow.PausedState
	}
	if !paused {
		return fail("workflow %s is not paused (state %s)", refText(ref, ""), jsonx.Text(wf.State.Value()))
	}
	back, _ := wf.State.Context()[workflow.KeyPausedReturn].(string)
	if !pc.yes {
		t, err := tty()
		if err != nil {
			return fail("cannot ask for confirmation on the terminal (%v); with the approver key, --yes answers without asking", err)
		}
		defer t.Close()
		fmt.Fprintf(t, "Workflow %s was paused by the agent in state %s.\n", refText(ref, ""), back)
		ok, err := confirm(t, "Resume it (its tools run again)?")
		if err != nil {
			return fail("%v", err)
		}
		if !ok {
			return fail("not confirmed: workflow %s stays paused", refText(ref, ""))
		}
	}
	tr, err := g.Send(ctx, ref, statechart.Event{Type: workflow.EventResume}, "chartgate resume")
	if err != nil {
		return fail("resuming workflow %s: %v", refText(ref, ""), err)
	}
	if tr == nil {
		return fail("workflow %s did not resume (state %s)", refText(ref, ""), jsonx.Text(wf.State.Value()))
	}
	fmt.Fprintf(stdout, "resumed workflow %s in state %s\n", refText(ref, ""), jsonx.Text(tr.To))
	return exitOK
}

// yesNeedsKey checks that a person's command given --yes has the approver
// key (at keyFlag, or the default path): not asking a person on the
// terminal needs it, as for approve.
func yesNeedsKey(keyFlag string) error {
	keyPath := keyFlag
	if keyPath == "" {
		var err error
		if keyPath, err = defaultKeyPath(); err != nil {
			return err
		}
	}
	if _, err := readKey(keyPath); err != nil {
		if errors.Is(err, errNoKey) {
			return fmt.Errorf("%s: --yes needs the approver key; without --yes a person confirms on the terminal", keyMissing(keyPath))
		}
		return err
	}
	return nil
}

// personCommand is what a person's command on one workflow (reset,
// resume) starts from: its WORKFLOW, --yes (checked to have the approver
// key), the project and its gate, and how it fails.
type personCommand struct {
	ref  mcpbind.Ref
	yes  bool
	p    *project
	g    *mcpbind.Gate
	fail func(format string, a ...any) int
}

// startPersonCommand reads a person's command's flags (--yes, --key,
// project flags) and WORKFLOW, and opens the project's gate; on failure
// it reports and returns nil and the exit code.
func startPersonCommand(cmd string, args []string, stdout, stderr io.Writer) (*personCommand, int) {
	fs := newFlagSet(cmd)
	pf := addProjectFlags(fs)
	yes := fs.Bool("yes", false, "")
	keyFlag := fs.String("key", "", "")
	ref, code, ok := workflowArg(fs, cmd, args, stdout, stderr)
	if !ok {
		return nil, code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "chartgate "+cmd+": "+format+"\n", a...)
		return exitFail
	}
	if *yes {
		if err := yesNeedsKey(*keyFlag); err != nil {
			return nil, fail("%v", err)
		}
	}
	p, g, code := openGate(pf, stderr)
	if g == nil {
		return nil, code
	}
	return &personCommand{ref: ref, yes: *yes, p: p, g: g, fail: fail}, exitOK
}
