// This file defines the tool lock: the definitions of the upstreams' tools
// pinned in a JSON file, recorded the first time each tool is listed and
// replaced only when a person accepts a changed definition.

package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxLockBytes bounds the lock file read.
const maxLockBytes = 16 << 20

// lockVersion is the format of the lock file.
const lockVersion = 1

// ToolLock pins the definitions of the upstreams' tools to a lock file
// (see "Pinned tools" in the package documentation). Create it with
// [OpenToolLock] and give it to [New] in [Options.ToolLock]. It is safe
// for concurrent use, and several processes may share its file.
type ToolLock struct {
	path string

	mu   sync.Mutex
	file lockFile    // as last read or written, with what was recorded since
	stat fs.FileInfo // the file as last read or written; nil if it did not exist
	// Changes recorded since, to merge into the file when it is written:
	added     map[toolKey]toolPin     // tools pinned at their first listing
	proposed  map[toolKey]pendingTool // changed definitions refused
	withdrawn map[toolKey]bool        // pending definitions the upstream no longer lists
}

type toolKey struct{ up, name string }

// toolPin is the pinned definition of one tool: the SHA-256 of each of
// its fields as JSON.
type toolPin struct {
	Title        string `json:"title"`
	Description  string `json:"description"`
	InputSchema  string `json:"inputSchema"`
	OutputSchema string `json:"outputSchema"`
	Annotations  string `json:"annotations"`
}

// pendingTool is a changed definition the gateway refused, for a person
// to read and accept.
type pendingTool struct {
	Changed    []string  `json:"changed"`
	Definition *mcp.Tool `json:"definition"`
}

// lockFile is the lock file's JSON: upstream → tool (its upstream name) →
// pin, and the changed definitions waiting for a person.
type lockFile struct {
	Comment string                            `json:"comment,omitempty"`
	Version int                               `json:"version"`
	Tools   map[string]map[string]toolPin     `json:"tools"`
	Pending map[string]map[string]pendingTool `json:"pending,omitempty"`
}

const lockComment = "The tool definitions the gateway serves, as SHA-256 digests of each field, and the changed definitions it refuses until a person accepts them (chartgate serve --accept-tools)."

// OpenToolLock reads the lock file at path. A file that does not exist is
// an empty lock; it is written when the first tool is pinned. The errors
// name the file.
func OpenToolLock(path string) (*ToolLock, error) {
	l := &ToolLock{path: path}
	f, st, err := readLock(path)
	if err != nil {
		return nil, err
	}
	l.file, l.stat = f, st
	return l, nil
}

// Path is the lock file's path.
func (l *ToolLock) Path() string { return l.path }

// readLock reads and checks a lock file; one that does not exist is
// empty.
func readLock(path string) (lockFile, fs.FileInfo, error) {
	empty := lockFile{Version: lockVersion, Tools: map[string]map[string]toolPin{}, Pending: map[string]map[string]pendingTool{}}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return empty, nil, nil
	}
	if err != nil {
		return empty, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return empty, nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, maxLockBytes+1))
	if err != nil {
		return empty, nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > maxLockBytes {
		return empty, nil, fmt.Errorf("%s: more than %d bytes", path, maxLockBytes)
	}
	var lf lockFile
	if err := json.Unmarshal(data, &lf); err != nil {
		return empty, nil, fmt.Errorf("%s: not a tool lock: %w", path, err)
	}
	if lf.Version != lockVersion {
		return empty, nil, fmt.Errorf("%s: version: %d is not a version this gateway reads (%d)", path, lf.Version, lockVersion)
	}
	if lf.Tools == nil {
		lf.Tools = map[string]map[string]toolPin{}
	}
	if lf.Pending == nil {
		lf.Pending = map[string]map[string]pendingTool{}
	}
	for up, tools := range lf.Tools {
		for name, p := range tools {
			for _, f := range p.fields() {
				if d := f[1]; !strings.HasPrefix(d, "sha256:") || len(d) != len("sha256:")+64 {
					return empty, nil, fmt.Errorf("%s: tools.%s.%s.%s: not a sha256: digest", path, up, name, f[0])
				}
			}
		}
	}
	for up, tools := range lf.Pending {
		for name, p := range tools {
			if p.Definition == nil {
				return empty, nil, fmt.Errorf("%s: pending.%s.%s.definition: required", path, up, name)
			}
		}
	}
	return lf, st, nil
}

// fields returns the pin's digests by field name, in a fixed order.
func (p toolPin) fields() [][2]string {
	return [][2]string{
		{"title", p.Title}, {"description", p.Description}, {"inputSchema", p.InputSchema},
		{"outputSchema", p.OutputSchema}, {"annotations", p.Annotations},
	}
}

// pinOf computes the pin of a tool's definition. The name is the key it
// is kept under, not part of the pin.
func pinOf(t *mcp.Tool) toolPin {
	digest := func(v any) string {
		data, err := json.Marshal(v) // maps in key order: the same definition, the same digest
		if err != nil {
			data = fmt.Appendf(nil, "unencodable %T: %v", v, err)
		}
		sum := sha256.Sum256(data)
		return "sha256:" + hex.EncodeToString(sum[:])
	}
	return toolPin{
		Title: digest(t.Title), Description: digest(t.Description), InputSchema: digest(t.InputSchema),
		OutputSchema: digest(t.OutputSchema), Annotations: digest(t.Annotations),
	}
}

// changedFields names the fields in which two pins differ.
func changedFields(old, new toolPin) []string {
	var out []string
	a, b := old.fields(), new.fields()
	for i := range a {
		if a[i][1] != b[i][1] {
			out = append(out, a[i][0])
		}
	}
	return out
}

// check compares a tool of an upstream, under its upstream name, with its
// pin, and returns the fields that changed, none if it is as pinned. A
// tool without a pin is pinned as it is; a changed one is kept pending.
// dirty reports that save has something to write.
func (l *ToolLock) check(up, name string, t *mcp.Tool) (changed []string, dirty bool) {
	p, k := pinOf(t), toolKey{up, name}
	l.mu.Lock()
	defer l.mu.Unlock()
	old, ok := l.file.Tools[up][name]
	if !ok {
		setIn(l.file.Tools, k, p)
		setIn(&l.added, k, p)
		return nil, true
	}
	pending, isPending := l.file.Pending[up][name]
	if changed = changedFields(old, p); len(changed) == 0 {
		if isPending { // back as accepted: nothing to accept
			delete(l.file.Pending[up], name)
			setIn(&l.withdrawn, k, true)
			delete(l.proposed, k)
			return nil, true
		}
		return nil, false
	}
	if isPending && pinOf(pending.Definition) == p {
		return changed, false
	}
	def := *t
	def.Name = name // as the upstream lists it
	pt := pendingTool{Changed: changed, Definition: &def}
	setIn(l.file.Pending, k, pt)
	setIn(&l.proposed, k, pt)
	delete(l.withdrawn, k)
	return changed, true
}

// setIn sets m[k.up][k.name], making the maps it needs. m is a nested map
// or a pointer to a flat one.
func setIn[V any](m any, k toolKey, v V) {
	switch m := m.(type) {
	case map[string]map[string]V:
		if m[k.up] == nil {
			m[k.up] = map[string]V{}
		}
		m[k.up][k.name] = v
	case *map[toolKey]V:
		if *m == nil {
			*m = map[toolKey]V{}
		}
		(*m)[k] = v
	}
}

// save writes what check recorded into the file, read again first: a pin
// another process wrote meanwhile wins over one recorded here (the next
// check compares with it); pending definitions are replaced.
func (l *ToolLock) save() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.added)+len(l.proposed)+len(l.withdrawn) == 0 {
		return nil
	}
	disk, _, err := readLock(l.path)
	if err != nil {
		return err
	}
	for k, p := range l.added {
		if _, ok := disk.Tools[k.up][k.name]; !ok {
			setIn(disk.Tools, k, p)
		}
	}
	for k, p := range l.proposed {
		setIn(disk.Pending, k, p)
	}
	for k := range l.withdrawn {
		delete(disk.Pending[k.up], k.name)
	}
	return l.write(disk)
}

// write replaces the file with f (writing a new file, then renaming it),
// and makes it the lock's. l.mu is held.
func (l *ToolLock) write(f lockFile) error {
	for up, tools := range f.Pending {
		if len(tools) == 0 {
			delete(f.Pending, up)
		}
	}
	f.Comment, f.Version = lockComment, lockVersion
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	dir := filepath.Dir(l.path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".tools.lock-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), l.path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", l.path, err)
	}
	if f.Pending == nil {
		f.Pending = map[string]map[string]pendingTool{}
	}
	l.file = f
	l.stat, _ = os.Stat(l.path)
	l.added, l.proposed, l.withdrawn = nil, nil, nil
	return nil
}

// reload reads the file again if it changed since it was last read or
// written (a person accepted tools), and reports whether it did. A file
// that cannot be read leaves the lock as it was.
func (l *ToolLock) reload() (bool, error) {
	st, err := os.Stat(l.path)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil || (l.stat != nil && os.SameFile(st, l.stat) && st.ModTime().Equal(l.stat.ModTime()) && st.Size() == l.stat.Size()) {
		return false, nil
	}
	f, st, err := readLock(l.path)
	if err != nil {
		return false, err
	}
	for k, p := range l.added {
		if _, ok := f.Tools[k.up][k.name]; !ok {
			setIn(f.Tools, k, p)
		}
	}
	l.file, l.stat = f, st
	l.proposed, l.withdrawn = nil, nil // the next check proposes again what is still refused
	return true, nil
}

// Accept pins every changed definition the lock file holds as pending
// (those a gateway refused), and returns them, each with the fields that
// changed and the definition now accepted. A gateway sharing the file
// serves them at its next tools/list or call of one of them. It is how a
// person accepts a changed tool (chartgate serve --accept-tools); the
// agent must have no way to call it or to write the file.
func (l *ToolLock) Accept() ([]ToolChange, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	disk, _, err := readLock(l.path)
	if err != nil {
		return nil, err
	}
	var out []ToolChange
	for _, up := range sortedKeys(disk.Pending) {
		for _, name := range sortedKeys(disk.Pending[up]) {
			p := disk.Pending[up][name]
			setIn(disk.Tools, toolKey{up, name}, pinOf(p.Definition))
			out = append(out, ToolChange{Upstream: up, Name: name, Fields: p.Changed, Tool: p.Definition})
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	disk.Pending = nil
	if err := l.write(disk); err != nil {
		return nil, err
	}
	return out, nil
}

// ToolChange is a changed tool definition [ToolLock.Accept] accepted.
type ToolChange struct {
	// Upstream is the server's name in the configuration; Name the
	// tool's name on it.
	Upstream, Name string
	// Fields are the fields whose definition changed: "title",
	// "description", "inputSchema", "outputSchema", "annotations".
	Fields []string
	// Tool is the definition now accepted, as the upstream listed it.
	Tool *mcp.Tool
}

// changedMessage is the refusal of a tool whose definition changed.
func changedMessage(up, name string, fields []string, lockPath string) string {
	return fmt.Sprintf("upstream %q changed the definition of tool %q since it was accepted into %s (changed: %s): the gateway refuses the tool until a person accepts the new definition (chartgate serve --accept-tools)",
		up, name, lockPath, strings.Join(fields, ", "))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
