package hook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: no input of any host makes Parse, the tool helpers or Encode
// panic; an event read without error has its tool's arguments as a JSON
// object and an output size within the input's, and every answer is JSON.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "hosts", "*", "*.json"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for i := range Hosts {
			f.Add(uint8(i), data)
		}
	}
	f.Add(uint8(1), []byte(`{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"apply_patch","tool_input":{"command":"*** Update File: a\n-x\n+y\n*** Move to: b\n"}}`))
	f.Add(uint8(4), []byte(`{"sessionId":"s","toolName":"edit","toolArgs":"{\"edits\":[{\"old_string\":\"a\\nb\",\"new_string\":\"\"}]}"}`))
	f.Fuzz(func(t *testing.T, host uint8, data []byte) {
		h := Hosts[int(host)%len(Hosts)]
		ev, err := Parse(h, data, "")
		results := []Result{{}, {Deny: "d\n\"x\""}, {Context: "c"}, {Block: "b"}}
		for _, r := range results {
			if out := Encode(ev, r); out != nil && !json.Valid(out) {
				t.Fatalf("%s %q: answer is not JSON: %s", h, data, out)
			}
		}
		if err != nil {
			return
		}
		if ev.Kind == KindPreTool || ev.Kind == KindPostTool {
			var args map[string]any
			if err := json.Unmarshal(ev.Input, &args); err != nil {
				t.Fatalf("%s %q: tool arguments %s: %v", h, data, ev.Input, err)
			}
			_ = canonical(ev)
			_ = editedFiles(ev)
			_ = editLines(ev)
			_ = command(ev)
			_ = shellDir(ev)
		}
		// The output counted is text of the input (an invalid UTF-8 byte
		// may be read as U+FFFD, three bytes).
		if ev.OutputBytes < 0 || ev.OutputBytes > 3*int64(len(data)) {
			t.Fatalf("%s %q: %d bytes of output", h, data, ev.OutputBytes)
		}
		if ev.Kind != KindOther && ev.SessionID == "" {
			t.Fatalf("%s %q: no session id and no error", h, data)
		}
	})
}
