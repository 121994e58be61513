package hook

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/chartgate/chartgate/internal/toolargs"
)

// TestEditedFilesAreTheWrittenFileRule: an edit tool's files are the paths
// toolargs.WrittenPaths reads from its arguments, the rule chartgate serve
// applies to an upstream tool's call (its file interrupts), whatever key
// the host or server uses; a Codex patch is read as a patch.
func TestEditedFilesAreTheWrittenFileRule(t *testing.T) {
	for _, in := range []string{
		`{"file_path":"a.env","content":"x"}`,
		`{"notebook_path":"n.ipynb"}`,
		`{"path":"b.env"}`,
		`{"filePath":"c.env"}`,
		`{"absolute_path":"/p/d.env"}`,
		`{"destination":"e.env","source":"f"}`, // a move, as the filesystem server takes it
		`{"paths":["g.env","h.env"]}`,
		`{"file_path":"a.env","path":"b.env"}`, // every key, not the first found
	} {
		ev := Event{Host: ClaudeCode, Tool: "Write", Input: json.RawMessage(in)}
		got, want := editedFiles(ev), toolargs.WrittenPaths([]byte(in))
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("%s: hook reads %q, the rule %q", in, got, want)
		}
	}
	patch, _ := json.Marshal(map[string]string{"command": "*** Begin Patch\n*** Add File: cfg/.env\n+A=1\n*** End Patch\n"})
	if got := editedFiles(Event{Host: Codex, Tool: "apply_patch", Input: patch}); !slices.Equal(got, []string{"cfg/.env"}) {
		t.Errorf("patch: %q", got)
	}
}
