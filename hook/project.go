// This file finds the project folder of a directory.

package hook

import (
	"os"
	"path/filepath"
)

// ConfigDir is the folder that marks a project using chartgate, and holds
// its workflow (workflow.json) and store (state.db).
const ConfigDir = ".chartgate"

// FindProject returns the project folder of a hook event: the first of
// dirs (in order: the folders the host names, then the event's cwd and the
// process' working directory) whose ProjectDir holds a .chartgate folder,
// and false when none does (the project is not gated). Empty entries are
// skipped.
func FindProject(dirs ...string) (string, bool) {
	for _, d := range dirs {
		if d == "" {
			continue
		}
		p := ProjectDir(d)
		if fi, err := os.Stat(filepath.Join(p, ConfigDir)); err == nil && fi.IsDir() {
			return p, true
		}
	}
	return "", false
}

// ProjectDir returns the project folder of dir: the nearest of dir and its
// parents that holds a .chartgate folder, else dir itself; made absolute
// and clean.
func ProjectDir(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return filepath.Clean(dir)
	}
	for d := abs; ; {
		if fi, err := os.Stat(filepath.Join(d, ConfigDir)); err == nil && fi.IsDir() {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return abs
		}
		d = parent
	}
}
