// This file takes chartgate out of a host's configuration files, as
// `chartgate uninstall HOST` does: each file its installation changed is
// given back as it was, or, when something else changed it since, has
// chartgate's entries removed.

package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// installRecord is what [Install] keeps of an installation, in the
// project's .chartgate folder: each file it changed, as it was before the
// first installation (Old, nil if there was none) and as the last one
// wrote it (New), and the folders it created.
type installRecord struct {
	Files []recordedFile `json:"files"`
	Dirs  []string       `json:"dirs,omitempty"`
}

// recordedFile is one file of an installation. Moved names the MCP
// servers the installation moved out of it (a host's file) or into it
// (the gateway's servers file), for putting them back when the file was
// changed since.
type recordedFile struct {
	Path  string   `json:"path"`
	Old   []byte   `json:"old"`
	New   []byte   `json:"new"`
	Moved []string `json:"moved,omitempty"`
}

// recordPath is the record of host's installation, relative to the
// project folder.
func recordPath(host Host) string {
	return filepath.Join(ConfigDir, "installed-"+string(host)+".json")
}

// maxRecord bounds the size of an installation record.
const maxRecord = 64 << 20

func readRecord(dir string, host Host) (*installRecord, error) {
	path := filepath.Join(dir, recordPath(host))
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxRecord {
		return nil, fmt.Errorf("%s: larger than %d bytes", recordPath(host), maxRecord)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rec installRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("%s: %w", recordPath(host), err)
	}
	return &rec, nil
}

// Install writes an installation's changes ([Plan]) as [Apply] does, and
// records in the project's .chartgate folder what each file held before,
// so that [PlanUninstall] can give it back byte for byte. Installing
// again keeps what the files held before the first installation.
func Install(dir string, host Host, changes []FileChange) error {
	rec, err := readRecord(dir, host)
	if err != nil {
		return err
	}
	if rec == nil {
		rec = &installRecord{}
	}
	for _, c := range changes {
		for d := filepath.Dir(c.Path); d != "." && d != string(filepath.Separator); d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(dir, d)); errors.Is(err, fs.ErrNotExist) && !slices.Contains(rec.Dirs, d) {
				rec.Dirs = append(rec.Dirs, d)
			}
		}
		i := slices.IndexFunc(rec.Files, func(f recordedFile) bool { return f.Path == c.Path })
		if i < 0 {
			rec.Files = append(rec.Files, recordedFile(c))
		} else {
			rec.Files[i].New = c.New
			for _, m := range c.Moved {
				if !slices.Contains(rec.Files[i].Moved, m) {
					rec.Files[i].Moved = append(rec.Files[i].Moved, m)
				}
			}
		}
	}
	if err := Apply(dir, changes); err != nil {
		return err
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	return Apply(dir, []FileChange{{Path: recordPath(host), New: append(data, '\n')}})
}

// PlanUninstall returns the changes that take chartgate out of host's
// configuration files in the project folder dir, without writing them. A
// file its installation changed ([Install]) and nothing changed since is
// given back as it was before, byte for byte (removed, New nil, if it did
// not exist); a file changed since, or installed without a record, keeps
// everything but chartgate's entries: its hooks (recognised by their
// command, as [Plan] does) and the gateway's MCP server entry.
func PlanUninstall(host Host, dir string, opts *InstallOptions) ([]FileChange, error) {
	paths, ok := installFiles[host]
	if !ok {
		return nil, fmt.Errorf("hook: chartgate has no installation for %q: use one of claude-code, codex, cursor, gemini, copilot", host)
	}
	rec, err := readRecord(dir, host)
	if err != nil {
		return nil, err
	}
	var o InstallOptions
	if opts != nil {
		o = *opts
	}
	if o.ServerName == "" {
		o.ServerName = "chartgate"
	}
	in := installer{host: host, dir: dir, o: o}
	paths = slices.Clone(paths)
	if rec != nil {
		for _, f := range rec.Files {
			if f.Path != InstalledFile && !slices.Contains(paths, f.Path) {
				paths = append(paths, f.Path)
			}
		}
	}
	var out []FileChange
	for _, p := range paths {
		cur, err := in.read(p)
		if err != nil {
			return nil, err
		}
		var recorded *recordedFile
		if rec != nil {
			if i := slices.IndexFunc(rec.Files, func(f recordedFile) bool { return f.Path == p }); i >= 0 {
				recorded = &rec.Files[i]
			}
		}
		switch {
		case cur == nil:
			continue
		case recorded != nil && bytes.Equal(cur, recorded.New):
			if !bytes.Equal(cur, recorded.Old) || recorded.Old == nil {
				out = append(out, FileChange{Path: p, Old: cur, New: recorded.Old})
			}
			continue
		}
		next, err := in.strip(p, cur)
		if err != nil {
			return nil, err
		}
		if recorded != nil && len(recorded.Moved) > 0 {
			if next, err = in.unmove(p, next, recorded); err != nil {
				return nil, err
			}
		}
		if recorded != nil && recorded.Old == nil && isEmptyConfig(next) {
			next = nil
		}
		if !bytes.Equal(next, cur) || next == nil {
			out = append(out, FileChange{Path: p, Old: cur, New: next})
		}
	}
	// The record of the workflow's format serves every host installed:
	// it goes (back to what it was) with the last of them.
	if c, ok, err := in.formatRecordBack(rec); err != nil {
		return nil, err
	} else if ok {
		out = append(out, c)
	}
	return out, nil
}

// formatRecordBack returns the change that takes [InstalledFile], which
// chartgate writes for every host it installs, out of the project when
// no other host's installation is recorded there: back to what it was
// before, if rec recorded that and nothing changed it since, else
// removed. ok is false when it stays.
func (in *installer) formatRecordBack(rec *installRecord) (c FileChange, ok bool, err error) {
	for _, h := range Installable {
		if h == in.host {
			continue
		}
		if _, err := os.Stat(filepath.Join(in.dir, recordPath(h))); err == nil {
			return FileChange{}, false, nil // another host still relies on it
		}
	}
	cur, err := in.read(InstalledFile)
	if err != nil || cur == nil {
		return FileChange{}, false, err
	}
	c = FileChange{Path: InstalledFile, Old: cur}
	if rec != nil {
		if i := slices.IndexFunc(rec.Files, func(f recordedFile) bool { return f.Path == InstalledFile }); i >= 0 && bytes.Equal(cur, rec.Files[i].New) {
			c.New = rec.Files[i].Old
		}
	}
	return c, !bytes.Equal(c.New, cur), nil
}

// unmove puts back, in a file changed since installing, the MCP servers
// the installation moved: into a host's file, those it does not have
// again (as they were before installing); out of the servers file, those
// it moved in.
func (in *installer) unmove(rel string, data []byte, f *recordedFile) ([]byte, error) {
	if !slices.Contains(serverFiles[in.host], rel) {
		doc, err := parseJSON(data)
		if err != nil || doc.kind != '{' {
			return data, nil
		}
		if servers := doc.get("mcpServers"); servers != nil && servers.kind == '{' {
			for _, name := range f.Moved {
				servers.del(name)
			}
			if len(servers.keys) == 0 {
				doc.del("mcpServers")
			}
		}
		return doc.encode(indentOf(data)), nil
	}
	if strings.HasSuffix(rel, ".toml") {
		tables, err := parseTOMLServers(rel, data)
		if err != nil {
			return nil, err
		}
		var missing []string
		for _, name := range f.Moved {
			if !slices.ContainsFunc(tables, func(t *tomlServer) bool { return t.name == name }) {
				missing = append(missing, name)
			}
		}
		return append(data, tomlServerText(rel, f.Old, missing)...), nil
	}
	before, err := parseJSON(f.Old)
	if err != nil || before.kind != '{' || before.get("mcpServers") == nil {
		return data, nil
	}
	doc := &jvalue{kind: '{'}
	if len(bytes.TrimSpace(data)) > 0 {
		if doc, err = parseJSON(data); err != nil || doc.kind != '{' {
			return data, nil
		}
	}
	servers, err := doc.child("mcpServers", '{', rel+": mcpServers")
	if err != nil {
		return nil, err
	}
	for _, name := range f.Moved {
		if e := before.get("mcpServers").get(name); e != nil && servers.get(name) == nil {
			servers.set(name, e)
		}
	}
	return doc.encode(indentOf(data)), nil
}

// installFiles lists the files each host's installation touches.
var installFiles = map[Host][]string{
	ClaudeCode: {".claude/settings.json", ".mcp.json"},
	Codex:      {".codex/hooks.json", ".codex/config.toml"},
	Gemini:     {".gemini/settings.json"},
	Cursor:     {".cursor/hooks.json", ".cursor/mcp.json"},
	Copilot:    {CopilotHooksFile, ".mcp.json"},
}

// isEmptyConfig reports whether a file holds nothing but an empty JSON
// object (or nothing).
func isEmptyConfig(data []byte) bool {
	t := bytes.TrimSpace(data)
	return len(t) == 0 || bytes.Equal(bytes.Join(bytes.Fields(t), nil), []byte("{}"))
}

// strip removes chartgate's entries from one of a host's files.
func (in *installer) strip(rel string, data []byte) ([]byte, error) {
	if strings.HasSuffix(rel, ".toml") {
		return in.stripTOML(data), nil
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return data, nil
	}
	doc, err := parseJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w; it was not changed", rel, err)
	}
	if doc.kind != '{' {
		return data, nil
	}
	if hooks := doc.get("hooks"); hooks != nil && hooks.kind == '{' {
		for _, ev := range slices.Clone(hooks.keys) {
			list := hooks.get(ev)
			if list == nil || list.kind != '[' {
				continue
			}
			var kept []*jvalue
			for _, e := range list.vals {
				if in.ours(e.get("command").str()) || in.ours(e.get("bash").str()) {
					continue // Cursor's and Copilot CLI's entries
				}
				if hs := e.get("hooks"); hs != nil && hs.kind == '[' {
					var hk []*jvalue
					for _, h := range hs.vals {
						if !in.ours(h.get("command").str()) {
							hk = append(hk, h)
						}
					}
					if len(hk) == 0 && len(hs.vals) > 0 {
						continue // a group that held only ours
					}
					hs.vals = hk
				}
				kept = append(kept, e)
			}
			if len(kept) == 0 && len(list.vals) > 0 {
				hooks.del(ev)
				continue
			}
			list.vals = kept
		}
		if len(hooks.keys) == 0 {
			doc.del("hooks")
			if doc.get("version") != nil && len(doc.keys) == 1 && (in.host == Cursor || in.host == Copilot) {
				doc.del("version")
			}
		}
	}
	if servers := doc.get("mcpServers"); servers != nil && servers.kind == '{' && servers.get(in.o.ServerName) != nil {
		servers.del(in.o.ServerName)
		if len(servers.keys) == 0 {
			doc.del("mcpServers")
		}
	}
	return doc.encode(indentOf(data)), nil
}

// stripTOML removes the gateway's [mcp_servers.NAME] table from Codex's
// config.toml (up to the next table header), with the blank line
// installing put before it; the rest is kept byte for byte.
func (in *installer) stripTOML(data []byte) []byte {
	name := in.o.ServerName
	header := regexp.MustCompile(`^\s*\[\s*mcp_servers\s*\.\s*(` + regexp.QuoteMeta(name) + `|"` + regexp.QuoteMeta(name) + `")\s*\]\s*(#.*)?$`)
	anyHeader := regexp.MustCompile(`^\s*\[`)
	lines := splitLines(string(data))
	start := slices.IndexFunc(lines, func(l string) bool { return header.MatchString(strings.TrimRight(l, "\r\n")) })
	if start < 0 {
		return data
	}
	end := start + 1
	for end < len(lines) && !anyHeader.MatchString(lines[end]) {
		end++
	}
	from := start
	if from > 0 && strings.TrimSpace(lines[from-1]) == "" && (end == len(lines) || from > 1) {
		from-- // the blank line before the table
	}
	return []byte(strings.Join(lines[:from], "") + strings.Join(lines[end:], ""))
}

// ApplyUninstall writes the changes of [PlanUninstall] (removing the
// files whose New is nil, and the folders the installation created when
// they are left empty) and deletes the installation's record.
func ApplyUninstall(dir string, host Host, changes []FileChange) error {
	rec, err := readRecord(dir, host)
	if err != nil {
		return err
	}
	var writes []FileChange
	for _, c := range changes {
		if c.New != nil {
			writes = append(writes, c)
			continue
		}
		if err := os.Remove(filepath.Join(dir, c.Path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing %s: %w", c.Path, err)
		}
	}
	if err := Apply(dir, writes); err != nil {
		return err
	}
	if rec != nil {
		// Deepest first, so that a parent is empty once its children go.
		dirs := slices.Clone(rec.Dirs)
		slices.SortFunc(dirs, func(a, b string) int {
			return strings.Count(b, string(filepath.Separator)) - strings.Count(a, string(filepath.Separator))
		})
		for _, d := range dirs {
			_ = os.Remove(filepath.Join(dir, d)) // only when empty
		}
	}
	if err := os.Remove(filepath.Join(dir, recordPath(host))); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// del removes key from an object.
func (v *jvalue) del(key string) {
	if i := slices.Index(v.keys, key); i >= 0 {
		v.keys = slices.Delete(v.keys, i, i+1)
		v.vals = slices.Delete(v.vals, i, i+1)
	}
}
