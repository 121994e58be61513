package hook

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/mcpbind/sqlitestore"
	"github.com/chartgate/chartgate/workflow"
)

// BenchmarkHandle measures what one `chartgate hook` process does after it
// started, on the SQLite store: "setup" opens the store, loads the coding
// workflow and builds the gate and handler; the others decide one event
// with a handler built once.
func BenchmarkHandle(b *testing.B) {
	data, err := os.ReadFile(codingWorkflow)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	path := filepath.Join(dir, "state.db")
	setup := func() (*Handler, func()) {
		store, err := sqlitestore.Open(path, nil)
		if err != nil {
			b.Fatal(err)
		}
		w, err := workflow.Load(data, nil)
		if err != nil {
			b.Fatal(err)
		}
		gate, err := mcpbind.New(w.Machine.Engine(), &mcpbind.Options{Store: store, Logger: quiet()})
		if err != nil {
			b.Fatal(err)
		}
		h, err := NewHandler(w, gate, store, dir, nil)
		if err != nil {
			b.Fatal(err)
		}
		return h, func() { store.Close() }
	}
	b.Run("setup", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			_, done := setup()
			done()
		}
	})
	h, done := setup()
	defer done()
	ctx := context.Background()
	events := map[string]Event{
		"pre-tool-refused": {Kind: KindPreTool, Name: "PreToolUse", Tool: "Edit", Input: json.RawMessage(`{"file_path": "a.go", "old_string": "a", "new_string": "b"}`)},
		"pre-tool-allowed": {Kind: KindPreTool, Name: "PreToolUse", Tool: "Read", Input: json.RawMessage(`{"file_path": "a.go"}`)},
		"post-tool":        {Kind: KindPostTool, Name: "PostToolUse", Tool: "Read", Input: json.RawMessage(`{"file_path": "a.go"}`)},
		"session-start":    {Kind: KindPrompt, Name: "UserPromptSubmit"},
	}
	for _, name := range []string{"pre-tool-refused", "pre-tool-allowed", "post-tool", "session-start"} {
		ev := events[name]
		ev.Host, ev.SessionID, ev.Cwd = ClaudeCode, "bench", dir
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := h.Handle(ctx, ev); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAncestry reads the test process' ancestry, the cost a hook
// process skips when StepsAside does not need it (on Linux a walk of
// /proc; elsewhere a ps process).
func BenchmarkAncestry(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if len(Ancestry()) == 0 {
			b.Fatal("no ancestry")
		}
	}
}
