package main

// This file defines the reset command: a person deletes the record of a
// workflow that the current version of the workflow cannot take over
// (mcpbind.VersionError), or of any workflow that should start again.

import (
	"context"
	"fmt"
	"io"

	"github.com/chartgate/chartgate/internal/jsonx"
	"github.com/chartgate/chartgate/mcpbind"
)

const resetUsage = `usage: chartgate reset WORKFLOW [--yes] [--key FILE] [project flags]

Deletes the record of a workflow, after confirming on the terminal (/dev/tty,
not standard input): a session's named workflow (name:ID) starts again from
the initial state at its next call; a workflow id is gone (the agent starts
another). Its run history goes with it. This is what a person runs when the
workflow file changed under a live workflow whose active states the new
version has not (chartgate status shows it REFUSED).

  --yes            do not ask on the terminal (the approver key is still needed)
  --key FILE       the approver key (default as for chartgate approve)
`

// cmdReset deletes a workflow's record.
func cmdReset(args []string, stdout, stderr io.Writer) int {
	return resetWith(args, stdout, stderr, openTTY)
}

func resetWith(args []string, stdout, stderr io.Writer, tty func() (terminal, error)) int {
	pc, code := startPersonCommand("reset", args, stdout, stderr)
	if pc == nil {
		return code
	}
	defer pc.p.close()
	ref, p, g, fail := pc.ref, pc.p, pc.g, pc.fail
	ctx := context.Background()
	ws, err := g.Workflows(ctx)
	if err != nil {
		return fail("%s", errText(err))
	}
	var found *mcpbind.WorkflowInfo
	for i := range ws {
		if ws[i].Ref == ref {
			found = &ws[i]
		}
	}
	if found == nil {
		return fail("no workflow %s in the store (chartgate status lists them)", refText(ref, ""))
	}
	what := "in state " + jsonx.Text(found.State)
	if found.Refused != nil {
		what = "refused: " + errText(found.Refused)
	}
	if !pc.yes {
		t, err := tty()
		if err != nil {
			return fail("cannot ask for confirmation on the terminal (%v); with the approver key, --yes answers without asking", err)
		}
		defer t.Close()
		fmt.Fprintf(t, "Workflow %s (version %s) is %s.\n", refText(ref, ""), versionText(found.Version), what)
		ok, err := confirm(t, "Delete its record and run history?")
		if err != nil {
			return fail("%v", err)
		}
		if !ok {
			return fail("not confirmed: workflow %s is unchanged", refText(ref, ""))
		}
	}
	if err := p.store.Delete(ctx, found.Key); err != nil {
		return fail("deleting workflow %s: %v", refText(ref, ""), err)
	}
	fmt.Fprintf(stdout, "reset workflow %s (was version %s, %s)\n", refText(ref, ""), versionText(found.Version), what)
	return exitOK
}

// versionText writes a record's workflow version for people.
func versionText(v string) string {
	if v == "" {
		return "unknown"
	}
	return v
}
