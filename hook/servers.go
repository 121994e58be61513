// This file moves a project's own MCP servers behind the gateway, as
// `chartgate install HOST` does: their entries are taken out of the host's
// MCP configuration and put into the gateway's servers file, so that the
// workflow gates their tools too.

package hook

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// ServersFile is the gateway's upstream MCP servers, in the mcpServers
// format, relative to the project folder: the default of
// [InstallOptions].Servers.
const ServersFile = ConfigDir + "/servers.json"

// serverFiles lists the project files in which each host keeps the
// project's own MCP servers (its documentation and source, read
// 2026-11-28): Claude Code's .mcp.json, Codex's [mcp_servers.NAME] tables,
// Gemini CLI's settings.json, Cursor's mcp.json; Copilot CLI reads
// .mcp.json and .github/mcp.json.
var serverFiles = map[Host][]string{
	ClaudeCode: {".mcp.json"},
	Codex:      {".codex/config.toml"},
	Gemini:     {".gemini/settings.json"},
	Cursor:     {".cursor/mcp.json"},
	Copilot:    {".mcp.json", ".github/mcp.json"},
}

// server is one MCP server entry of a host's file, as the gateway's
// servers file gets it.
type server struct {
	name  string
	entry *jvalue
}

// serversRel returns the servers file relative to the project folder; ok
// is false when it is outside the project (servers are then not moved).
func (in *installer) serversRel() (string, bool) {
	s := in.o.Servers
	if !filepath.IsAbs(s) {
		return filepath.Clean(s), true
	}
	abs, err := filepath.Abs(in.dir)
	if err != nil {
		return "", false
	}
	rel, err := filepath.Rel(abs, s)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// moveServers is the step that adds the project's own MCP servers (every
// entry of the host's files but the gateway's) to the servers file, and
// notes in in.moved which to take out of which file. Entries are moved as
// they are, but for the keys the gateway reads under another name:
// Copilot CLI's "type": "local" (a stdio server), Gemini CLI's "httpUrl"
// (a Streamable HTTP server), and Codex's TOML keys (see codexServers). A
// name the servers file already has with another entry is an error: one
// of the two would be lost.
func (in *installer) moveServers() (FileChange, error) {
	in.moved = map[string][]string{}
	rel, ok := in.serversRel()
	if !ok {
		return FileChange{}, nil
	}
	if in.o.KeepServersDirect {
		old, err := in.read(rel)
		return FileChange{Path: rel, Old: old, New: old}, err
	}
	var found []server
	from := map[string]string{}
	for _, f := range serverFiles[in.host] {
		var ss []server
		var err error
		if strings.HasSuffix(f, ".toml") {
			ss, err = in.codexServers(f)
		} else {
			ss, err = in.jsonServers(f)
		}
		if err != nil {
			return FileChange{}, err
		}
		for _, s := range ss {
			if other, dup := from[s.name]; dup {
				return FileChange{}, fmt.Errorf("the MCP server %q is in both %s and %s: keep one, or install with --keep-servers-direct", s.name, other, f)
			}
			from[s.name] = f
			in.moved[f] = append(in.moved[f], s.name)
		}
		found = append(found, ss...)
	}
	old, doc, indent, err := in.readJSON(rel)
	if err != nil {
		return FileChange{}, err
	}
	if len(found) == 0 {
		return FileChange{Path: rel, Old: old, New: old}, nil
	}
	servers, err := doc.child("mcpServers", '{', rel+": mcpServers")
	if err != nil {
		return FileChange{}, err
	}
	added := false
	for _, s := range found {
		if cur := servers.get(s.name); cur != nil {
			if !bytes.Equal(cur.encode(""), s.entry.encode("")) {
				return FileChange{}, fmt.Errorf("the MCP server %q of %s is also in %s, with another entry: remove one of them, or install with --keep-servers-direct", s.name, from[s.name], rel)
			}
			continue
		}
		servers.set(s.name, s.entry)
		added = true
	}
	if !added {
		return FileChange{Path: rel, Old: old, New: old}, nil
	}
	return FileChange{Path: rel, Old: old, New: doc.encode(indent)}, nil
}

// jsonServers returns the servers of a host file in the mcpServers format
// but the gateway's own (its ServerName, or any entry that runs chartgate
// serve).
func (in *installer) jsonServers(rel string) ([]server, error) {
	_, doc, _, err := in.readJSON(rel)
	if err != nil {
		return nil, err
	}
	list := doc.get("mcpServers")
	if list == nil || list.kind != '{' {
		return nil, nil
	}
	var out []server
	for i, name := range list.keys {
		e := list.vals[i]
		if name == in.o.ServerName || e.kind != '{' || runsGateway(e) {
			continue
		}
		out = append(out, server{name: name, entry: gatewayEntry(e)})
	}
	return out, nil
}

// runsGateway reports whether a server entry runs chartgate serve (the
// gateway under another name): moving it behind the gateway would make
// the gateway start itself.
func runsGateway(e *jvalue) bool {
	words := []string{e.get("command").str()}
	if args := e.get("args"); args != nil && args.kind == '[' {
		for _, a := range args.vals {
			words = append(words, a.str())
		}
	}
	for i := 0; i+1 < len(words); i++ {
		if isChartgateWord(words[i]) && words[i+1] == "serve" {
			return true
		}
	}
	return false
}

// isChartgateWord reports whether a command word runs chartgate: a path
// whose last element starts with chartgate (chartgate.exe, chartgate@1.2.0
// as npx takes it), or the npm package's name.
func isChartgateWord(w string) bool {
	return strings.HasPrefix(filepath.Base(strings.Trim(w, `'"`)), "chartgate")
}

// gatewayEntry returns a host's server entry as the gateway reads it: a
// copy with Copilot CLI's "type": "local" written "stdio", and Gemini
// CLI's "httpUrl" written "url" with "type": "http".
func gatewayEntry(e *jvalue) *jvalue {
	c := &jvalue{kind: '{', keys: slices.Clone(e.keys), vals: slices.Clone(e.vals)}
	if c.get("type").str() == "local" {
		c.set("type", jstr("stdio"))
	}
	if u := c.get("httpUrl"); u != nil && c.get("url") == nil {
		i := slices.Index(c.keys, "httpUrl")
		c.keys[i] = "url"
		if c.get("type") == nil {
			c.set("type", jstr("http"))
		}
	}
	return c
}

// dropServers takes the servers moveServers moved out of rel from its
// mcpServers object.
func (in *installer) dropServers(rel string, doc *jvalue) {
	servers := doc.get("mcpServers")
	if servers == nil || servers.kind != '{' {
		return
	}
	for _, name := range in.moved[rel] {
		servers.del(name)
	}
}

// removeMoved is the step that takes the moved servers out of a host file
// chartgate writes nothing else into (Copilot CLI's .github/mcp.json).
func (in *installer) removeMoved(rel string) (FileChange, error) {
	if len(in.moved[rel]) == 0 {
		old, err := in.read(rel)
		return FileChange{Path: rel, Old: old, New: old}, err
	}
	old, doc, indent, err := in.readJSON(rel)
	if err != nil {
		return FileChange{}, err
	}
	in.dropServers(rel, doc)
	return FileChange{Path: rel, Old: old, New: doc.encode(indent)}, nil
}

// codexServers reads Codex's [mcp_servers.NAME] tables (and their
// sub-tables, such as [mcp_servers.NAME.env]) from config.toml, as server
// entries in the mcpServers format. Keys keep their names and values, but
// for those the gateway reads under another name: http_headers is
// "headers", env_http_headers {H = "VAR"} and bearer_token_env_var = "VAR"
// are headers with ${VAR}, tool_timeout_sec is "timeout" in milliseconds,
// enabled = false is "disabled": true. A table in a form this reader does
// not take (a multi-line string, a date) is an error naming its line.
func (in *installer) codexServers(rel string) ([]server, error) {
	data, err := in.read(rel)
	if err != nil || data == nil {
		return nil, err
	}
	tables, err := parseTOMLServers(rel, data)
	if err != nil {
		return nil, err
	}
	var out []server
	for _, t := range tables {
		if t.name == in.o.ServerName || runsGateway(t.entry) {
			continue
		}
		out = append(out, server{name: t.name, entry: codexEntry(t.entry)})
	}
	return out, nil
}

// codexEntry maps a Codex server table's keys onto the gateway's.
func codexEntry(t *jvalue) *jvalue {
	e := &jvalue{kind: '{'}
	headers := &jvalue{kind: '{'}
	for i, k := range t.keys {
		v := t.vals[i]
		switch k {
		case "http_headers":
			if v.kind == '{' {
				for j, h := range v.keys {
					headers.set(h, v.vals[j])
				}
				continue
			}
		case "env_http_headers":
			if v.kind == '{' {
				for j, h := range v.keys {
					headers.set(h, jstr("${"+v.vals[j].str()+"}"))
				}
				continue
			}
		case "bearer_token_env_var":
			if s := v.str(); s != "" {
				headers.set("Authorization", jstr("Bearer ${"+s+"}"))
				continue
			}
		case "tool_timeout_sec":
			if f, err := strconv.ParseFloat(string(v.raw), 64); v.kind == 0 && err == nil && f > 0 {
				e.set("timeout", jnum(int(f*1000)))
				continue
			}
		case "enabled":
			if string(v.raw) == "false" {
				e.set("disabled", &jvalue{raw: []byte("true")})
			}
			continue
		}
		e.set(k, v)
	}
	if len(headers.keys) > 0 {
		e.set("headers", headers)
	}
	return e
}

// tomlServer is one [mcp_servers.NAME] table of a config.toml: its entry
// (the table's keys, its sub-tables as objects) and the lines it spans,
// sub-tables included ([start, end) of each block).
type tomlServer struct {
	name   string
	entry  *jvalue
	blocks [][2]int
}

// The TOML patterns are compiled on first use, not when the program
// starts: every chartgate process, a hook's included, links this package,
// and only the commands that read a Codex config.toml use them.
var (
	tomlHeader       = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*\[\s*([^\[\]]*?)\s*\]\s*(#.*)?$`) })
	tomlAnyHeader    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*\[`) })
	tomlBareKeyChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
	tomlNumber       = sync.OnceValue(func() *regexp.Regexp {
		// TOML's decimal numbers: an underscore only between two digits.
		return regexp.MustCompile(`^[+-]?(0|[1-9](_?[0-9])*)(\.[0-9](_?[0-9])*)?([eE][+-]?[0-9](_?[0-9])*)?$`)
	})
)

// parseTOMLServers reads the [mcp_servers.NAME] tables of a Codex
// config.toml, in the order of the file.
func parseTOMLServers(rel string, data []byte) ([]*tomlServer, error) {
	lines := splitLines(string(data))
	var out []*tomlServer
	byName := map[string]*tomlServer{}
	for i := 0; i < len(lines); i++ {
		m := tomlHeader().FindStringSubmatch(strings.TrimRight(lines[i], "\r\n"))
		if m == nil {
			continue
		}
		keys, err := splitTOMLKey(m[1])
		if err != nil || len(keys) < 2 || keys[0] != "mcp_servers" {
			continue
		}
		end := i + 1
		for end < len(lines) && !tomlAnyHeader().MatchString(lines[end]) {
			end++
		}
		name := keys[1]
		s := byName[name]
		if s == nil {
			s = &tomlServer{name: name, entry: &jvalue{kind: '{'}}
			byName[name] = s
			out = append(out, s)
		}
		s.blocks = append(s.blocks, [2]int{i, end})
		target := s.entry
		for _, k := range keys[2:] {
			c, err := target.child(k, '{', rel)
			if err != nil {
				return nil, fmt.Errorf("%s: line %d: %s is not a table", rel, i+1, strings.Join(keys, "."))
			}
			target = c
		}
		p := &tomlParser{rel: rel, src: strings.Join(lines[i+1:end], ""), line: i + 2}
		if err := p.table(target); err != nil {
			return nil, err
		}
		i = end - 1
	}
	return out, nil
}

// splitTOMLKey splits a dotted TOML key into its parts (bare or quoted).
func splitTOMLKey(s string) ([]string, error) {
	p := &tomlParser{src: s}
	return p.key()
}

// tomlParser reads the key/value lines of one TOML table: strings (basic
// and literal), numbers, booleans, arrays and inline tables.
type tomlParser struct {
	rel  string
	src  string
	pos  int
	line int // the line of src[0], from 1
}

func (p *tomlParser) errorf(format string, a ...any) error {
	line := p.line + strings.Count(p.src[:p.pos], "\n")
	return fmt.Errorf("%s: line %d: %s (move this server by hand, or install with --keep-servers-direct)", p.rel, line, fmt.Sprintf(format, a...))
}

// skip skips spaces, tabs and, if nl, newlines and comments.
func (p *tomlParser) skip(nl bool) {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == ' ' || c == '\t':
			p.pos++
		case nl && (c == '\n' || c == '\r'):
			p.pos++
		case nl && c == '#':
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		default:
			return
		}
	}
}

// table reads key = value lines into t.
func (p *tomlParser) table(t *jvalue) error {
	for {
		p.skip(true)
		if p.pos >= len(p.src) {
			return nil
		}
		keys, err := p.key()
		if err != nil {
			return err
		}
		p.skip(false)
		if p.pos >= len(p.src) || p.src[p.pos] != '=' {
			return p.errorf("expected = after %s", strings.Join(keys, "."))
		}
		p.pos++
		v, err := p.value()
		if err != nil {
			return err
		}
		target := t
		for _, k := range keys[:len(keys)-1] {
			if target, err = target.child(k, '{', ""); err != nil {
				return p.errorf("%s is not a table", k)
			}
		}
		target.set(keys[len(keys)-1], v)
		p.skip(false)
		if p.pos < len(p.src) && p.src[p.pos] == '#' {
			p.skip(true)
			continue
		}
		if p.pos < len(p.src) && p.src[p.pos] != '\n' && p.src[p.pos] != '\r' {
			return p.errorf("unexpected %q after a value", p.src[p.pos])
		}
	}
}

// key reads a dotted key.
func (p *tomlParser) key() ([]string, error) {
	var keys []string
	for {
		p.skip(false)
		if p.pos >= len(p.src) {
			return nil, p.errorf("a key expected")
		}
		switch p.src[p.pos] {
		case '"', '\'':
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			keys = append(keys, v.str())
		default:
			start := p.pos
			for p.pos < len(p.src) && strings.IndexByte(tomlBareKeyChars, p.src[p.pos]) >= 0 {
				p.pos++
			}
			if p.pos == start {
				return nil, p.errorf("a key expected")
			}
			keys = append(keys, p.src[start:p.pos])
		}
		p.skip(false)
		if p.pos < len(p.src) && p.src[p.pos] == '.' {
			p.pos++
			continue
		}
		return keys, nil
	}
}

// value reads one value.
func (p *tomlParser) value() (*jvalue, error) {
	p.skip(false)
	if p.pos >= len(p.src) {
		return nil, p.errorf("a value expected")
	}
	rest := p.src[p.pos:]
	switch {
	case strings.HasPrefix(rest, `"""`), strings.HasPrefix(rest, `'''`):
		return nil, p.errorf("multi-line strings are not read")
	case rest[0] == '\'':
		end := strings.IndexAny(rest[1:], "'\n")
		if end < 0 || rest[1+end] != '\'' {
			return nil, p.errorf("unterminated string")
		}
		p.pos += end + 2
		return jstr(rest[1 : 1+end]), nil
	case rest[0] == '"':
		return p.basicString()
	case rest[0] == '[':
		p.pos++
		arr := &jvalue{kind: '['}
		for {
			p.skip(true)
			if p.pos < len(p.src) && p.src[p.pos] == ']' {
				p.pos++
				return arr, nil
			}
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			arr.vals = append(arr.vals, v)
			p.skip(true)
			if p.pos < len(p.src) && p.src[p.pos] == ',' {
				p.pos++
				continue
			}
			if p.pos >= len(p.src) || p.src[p.pos] != ']' {
				return nil, p.errorf("expected , or ] in an array")
			}
		}
	case rest[0] == '{':
		p.pos++
		obj := &jvalue{kind: '{'}
		for {
			p.skip(false)
			if p.pos < len(p.src) && p.src[p.pos] == '}' && len(obj.keys) == 0 {
				p.pos++
				return obj, nil
			}
			keys, err := p.key()
			if err != nil {
				return nil, err
			}
			p.skip(false)
			if p.pos >= len(p.src) || p.src[p.pos] != '=' {
				return nil, p.errorf("expected = in an inline table")
			}
			p.pos++
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			target := obj
			for _, k := range keys[:len(keys)-1] {
				if target, err = target.child(k, '{', ""); err != nil {
					return nil, p.errorf("%s is not a table", k)
				}
			}
			target.set(keys[len(keys)-1], v)
			p.skip(false)
			if p.pos < len(p.src) && p.src[p.pos] == ',' {
				p.pos++
				continue
			}
			if p.pos >= len(p.src) || p.src[p.pos] != '}' {
				return nil, p.errorf("expected , or } in an inline table")
			}
			p.pos++
			return obj, nil
		}
	}
	end := p.pos
	for end < len(p.src) && strings.IndexByte(" \t\r\n,]}#", p.src[end]) < 0 {
		end++
	}
	word := p.src[p.pos:end]
	switch {
	case word == "true" || word == "false":
		p.pos = end
		return &jvalue{raw: []byte(word)}, nil
	case tomlNumber().MatchString(word):
		p.pos = end
		num := strings.TrimPrefix(strings.ReplaceAll(word, "_", ""), "+")
		return &jvalue{raw: []byte(num)}, nil
	}
	return nil, p.errorf("a value of a form chartgate does not read: %q", word)
}

// basicString reads a "..." string with TOML's escapes.
func (p *tomlParser) basicString() (*jvalue, error) {
	var b strings.Builder
	i := p.pos + 1
	for i < len(p.src) {
		c := p.src[i]
		switch {
		case c == '"':
			p.pos = i + 1
			return jstr(b.String()), nil
		case c == '\n':
			return nil, p.errorf("unterminated string")
		case c != '\\':
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 >= len(p.src) {
			break
		}
		switch e := p.src[i+1]; e {
		case 'b':
			b.WriteByte('\b')
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'f':
			b.WriteByte('\f')
		case 'r':
			b.WriteByte('\r')
		case '"', '\\':
			b.WriteByte(e)
		case 'u', 'U':
			n := 4
			if e == 'U' {
				n = 8
			}
			if i+2+n > len(p.src) {
				return nil, p.errorf("a short \\%c escape", e)
			}
			r, err := strconv.ParseUint(p.src[i+2:i+2+n], 16, 32)
			if err != nil {
				return nil, p.errorf("a bad \\%c escape", e)
			}
			b.WriteRune(rune(r))
			i += n
		default:
			return nil, p.errorf("an unknown escape \\%c", e)
		}
		i += 2
	}
	return nil, p.errorf("unterminated string")
}

// removeTOMLServers takes the tables of the named servers (sub-tables
// included) out of a config.toml, each with the blank line before it; the
// rest is kept byte for byte.
func removeTOMLServers(rel string, data []byte, names []string) ([]byte, error) {
	if len(names) == 0 {
		return data, nil
	}
	tables, err := parseTOMLServers(rel, data)
	if err != nil {
		return nil, err
	}
	remove := map[string]bool{}
	for _, n := range names {
		remove[n] = true
	}
	lines := splitLines(string(data))
	drop := make([]bool, len(lines))
	for _, t := range tables {
		if !remove[t.name] {
			continue
		}
		for _, b := range t.blocks {
			// The blank lines and comments that end a block belong to
			// what follows; the blank line before it goes with it.
			from, to := b[0], b[1]
			for to > from+1 {
				if l := strings.TrimSpace(lines[to-1]); l != "" && !strings.HasPrefix(l, "#") {
					break
				}
				to--
			}
			if from > 0 && strings.TrimSpace(lines[from-1]) == "" && !drop[from-1] {
				from--
			}
			for i := from; i < to; i++ {
				drop[i] = true
			}
		}
	}
	var out strings.Builder
	for i, l := range lines {
		if !drop[i] {
			out.WriteString(l)
		}
	}
	return []byte(out.String()), nil
}

// tomlServerText returns the text of the named servers' tables in data
// (a config.toml as it was before installing), for putting them back.
func tomlServerText(rel string, data []byte, names []string) string {
	tables, err := parseTOMLServers(rel, data)
	if err != nil {
		return ""
	}
	lines := splitLines(string(data))
	var b strings.Builder
	for _, t := range tables {
		if !slices.Contains(names, t.name) {
			continue
		}
		for _, blk := range t.blocks {
			b.WriteString("\n")
			text := strings.Join(lines[blk[0]:blk[1]], "")
			b.WriteString(strings.TrimRight(text, "\n") + "\n")
		}
	}
	return b.String()
}
