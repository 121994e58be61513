// Package toolargs holds chartgate's one rule for reading a tool call's
// arguments as "these files were written": which argument names carry the
// path of a file the call writes. The gateway (a workflow's file interrupts
// after an upstream tool's call) and the hooks (an agent host's edit tools:
// interrupts, protected files, edit budgets) both call [WrittenPaths], so a
// call names the same files to both.
package toolargs

import "github.com/tidwall/gjson"

// pathKeys are the top-level argument names under which tools give the
// path of a file they write: the agent hosts' file tools (Claude Code's
// file_path and notebook_path, Gemini CLI's file_path and absolute_path,
// Copilot CLI's path, Cursor's filePath) and MCP servers' (the reference
// filesystem server's path and destination; filename, file and paths
// elsewhere). A value is a string or an array of strings.
var pathKeys = []string{"file_path", "notebook_path", "path", "filePath", "absolute_path", "filename", "file", "destination", "paths"}

// WrittenPaths returns the paths args, a JSON object of tool arguments,
// names under pathKeys, as given (not made relative to anything), in the
// order of pathKeys and without repeats. Anything that is not an object
// names no path; empty strings and non-string array elements are skipped.
func WrittenPaths(args []byte) []string {
	in := gjson.ParseBytes(args)
	if !in.IsObject() {
		return nil
	}
	var out []string
	add := func(v gjson.Result) {
		if v.Type != gjson.String || v.Str == "" {
			return
		}
		for _, p := range out {
			if p == v.Str {
				return
			}
		}
		out = append(out, v.Str)
	}
	for _, k := range pathKeys {
		v := in.Get(k)
		if v.IsArray() {
			v.ForEach(func(_, e gjson.Result) bool { add(e); return true })
			continue
		}
		add(v)
	}
	return out
}
