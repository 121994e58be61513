// This file finds the project folder of a directory.

package hook

import (
	"os"
	"path/filepath"
)

// ConfigDir is the folder that marks a project using chartgate, and holds
// its workflow (workflow.json) and store (state.db).
const ConfigDir = ".chartgate"

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
