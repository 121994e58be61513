package toolargs_test

import (
	"slices"
	"testing"

	"github.com/chartgate/chartgate/internal/toolargs"
)

func TestWrittenPaths(t *testing.T) {
	for _, c := range []struct {
		args string
		want []string
	}{
		{`{"file_path":"a.go","content":"x"}`, []string{"a.go"}},          // Claude Code Write
		{`{"notebook_path":"n.ipynb"}`, []string{"n.ipynb"}},              // NotebookEdit
		{`{"absolute_path":"/p/a.go"}`, []string{"/p/a.go"}},              // Gemini CLI
		{`{"filePath":"b.ts"}`, []string{"b.ts"}},                         // Cursor
		{`{"path":"c.md","edits":[]}`, []string{"c.md"}},                  // filesystem server edit_file
		{`{"source":"a","destination":"b"}`, []string{"b"}},               // move_file
		{`{"paths":["x","y",3,""],"path":"x"}`, []string{"x", "y"}},       // arrays, repeats once
		{`{"filename":"f","file":"g"}`, []string{"f", "g"}},               // in the rule's key order
		{`{"content":"no path"}`, nil},                                    //
		{`["file_path"]`, nil},                                            // not an object
		{`not json`, nil},                                                 //
		{`{"file_path":{"nested":"x"}}`, nil},                             // not a string
		{`{"file_path":"a","file_path":"b"}`, []string{"a"}},              // the first of a duplicate
		{`{"nested":{"file_path":"deep"},"path":"top"}`, []string{"top"}}, // top level only
	} {
		if got := toolargs.WrittenPaths([]byte(c.args)); !slices.Equal(got, c.want) {
			t.Errorf("WrittenPaths(%s) = %q, want %q", c.args, got, c.want)
		}
	}
}

func FuzzWrittenPaths(f *testing.F) {
	f.Add([]byte(`{"paths":["a","b"],"file_path":"c"}`))
	f.Fuzz(func(t *testing.T, args []byte) {
		for _, p := range toolargs.WrittenPaths(args) {
			if p == "" {
				t.Fatal("an empty path")
			}
		}
	})
}
