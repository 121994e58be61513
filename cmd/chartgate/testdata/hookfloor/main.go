// Command hookfloor answers one Claude Code hook event as `chartgate
// hook claude-code` does in a project with the default workflow file and
// SQLite store, in a program that links only the packages the hook needs
// (hook, workflow, internal/core, sqlitestore): the floor of a dedicated
// hook binary (BenchmarkHookRatio). It writes the answer on stdout and
// exits 1 on any error; it is a measurement, not the hook.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/chartgate/chartgate/hook"
	"github.com/chartgate/chartgate/internal/core"
	"github.com/chartgate/chartgate/mcpbind/sqlitestore"
	"github.com/chartgate/chartgate/workflow"
)

func main() {
	if err := answer(); err != nil {
		fmt.Fprintln(os.Stderr, "hookfloor:", err)
		os.Exit(1)
	}
}

func answer() error {
	data, err := io.ReadAll(os.Stdin)
	if err != nil {
		return err
	}
	ev, err := hook.Parse(hook.ClaudeCode, data, "")
	if err != nil {
		return err
	}
	dir, ok := hook.FindProject(ev.Cwd)
	if !ok {
		return fmt.Errorf("no project at %s", ev.Cwd)
	}
	file := filepath.Join(dir, ".chartgate", "workflow.json")
	src, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	w, err := workflow.Load(src, &workflow.Options{Resolve: workflow.DirResolver(filepath.Dir(file))})
	if err != nil {
		return err
	}
	store, err := sqlitestore.Open(filepath.Join(dir, sqlitestore.DefaultPath), &sqlitestore.Options{RelaxedSync: true})
	if err != nil {
		return err
	}
	defer store.Close()
	sum := sha256.Sum256(src)
	c, err := core.New(w.Machine.Engine(), &core.Options{Store: store, AuditCalls: true, HistoryLimit: 500,
		LeaseTTL: 10 * time.Second, ExternalTools: hook.CanonicalTools(), StartTool: "workflow_start", MaxArgumentBytes: hook.MaxInput,
		WorkflowVersion: hex.EncodeToString(sum[:6])})
	if err != nil {
		return err
	}
	h, err := hook.NewHandler(w, c, store, dir, nil)
	if err != nil {
		return err
	}
	res, err := h.Handle(context.Background(), ev)
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(hook.Encode(ev, res))
	return err
}
