// This file defines the upstream configuration: the "mcpServers" JSON that
// MCP hosts use, its parser with JSON-path errors, and the ${VAR}
// expansion the hosts do.

package gateway

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/chartgate/chartgate/internal/hint"
	"github.com/chartgate/chartgate/internal/jsonx"
	"github.com/chartgate/chartgate/internal/toolname"
)

// Config is the set of upstream MCP servers a [Gateway] proxies, as in the
// "mcpServers" object of the hosts' configuration files (Claude Code's
// .mcp.json, Claude Desktop, Cursor's mcp.json).
type Config struct {
	// Servers are the upstreams in the order of the document. Their names
	// are unique.
	Servers []*ServerConfig
	// Warnings are the things [ParseConfig] ignored, each with its JSON
	// path: unknown keys (with a did-you-mean when one is close) and
	// disabled servers.
	Warnings []string
}

// Transport kinds of a [ServerConfig].
const (
	TransportStdio = "stdio" // a child process speaking newline-delimited JSON on stdin and stdout
	TransportHTTP  = "http"  // a Streamable HTTP server
	TransportSSE   = "sse"   // a server of the older HTTP+SSE transport (protocol 2024-11-05)
)

// ServerConfig is one upstream: a command to run (stdio) or a URL to
// connect to (Streamable HTTP or HTTP+SSE). Values are as they will be
// used, ${VAR} references already expanded.
type ServerConfig struct {
	// Name is the server's key in mcpServers. It is used in logs and as
	// the prefix of tool and prompt names that collide.
	Name string
	// Transport is TransportStdio, TransportHTTP or TransportSSE.
	Transport string

	// Command, Args, Env and Cwd start a stdio server. The child gets the
	// gateway's environment with Env added (Env wins), and runs in Cwd if
	// set, else in the gateway's working directory.
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string

	// URL and Headers reach an HTTP server; every request carries the
	// headers.
	URL     string
	Headers map[string]string

	// CallTimeout, if not 0, bounds this upstream's tool calls instead of
	// [Options.CallTimeout]: the entry's "timeout", in milliseconds (as
	// Gemini CLI writes it).
	CallTimeout time.Duration
}

// ConfigOptions configures [ParseConfig]. The zero value is the default.
type ConfigOptions struct {
	// LookupEnv resolves ${VAR} references; nil means os.LookupEnv.
	LookupEnv func(name string) (string, bool)
}

// Error is one problem of a configuration, at a JSON path such as
// "mcpServers.fs.command". An empty path means the document itself.
type Error struct {
	Path string
	Msg  string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// ErrorList is every problem [ParseConfig] found, in document order.
type ErrorList []*Error

func (l ErrorList) Error() string {
	if len(l) == 1 {
		return l[0].Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d errors:", len(l))
	for _, e := range l {
		b.WriteString("\n\t")
		b.WriteString(e.Error())
	}
	return b.String()
}

// Unwrap returns the individual errors, for errors.As.
func (l ErrorList) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

// maxConfigBytes and maxServerName bound what ParseConfig accepts: a
// configuration is a small hand-written file, and a server's name
// prefixes tool names, which MCP limits to 128 characters.
const (
	maxConfigBytes = 4 << 20
	maxConfigDepth = 32
	maxServerName  = 64
)

// serverKeys are the keys of a server entry ParseConfig reads.
var serverKeys = []string{"type", "command", "args", "env", "cwd", "url", "headers", "disabled", "timeout"}

// LoadConfig reads and parses the configuration file at path. Its errors
// start with the path.
func LoadConfig(path string, opts *ConfigOptions) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cfg, err := ParseConfig(data, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// ParseConfig parses a configuration document:
//
//	{"mcpServers": {
//	  "fs":     {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "${HOME}/repo"],
//	             "env": {"LOG_LEVEL": "${LOG_LEVEL:-info}"}},
//	  "remote": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${env:TOKEN}"}}
//	}}
//
// An entry with "command" is a stdio server, one with "url" a Streamable
// HTTP server; "type" may say so ("stdio", "http" or its aliases
// "streamable-http" and "streamableHttp", or "sse" for the older HTTP+SSE
// transport). "timeout" bounds each tool call to the server, in
// milliseconds ([ServerConfig].CallTimeout). "disabled": true skips an
// entry. Other keys of the document
// and of the entries are ignored with a warning ([Config.Warnings]).
//
// ${VAR} and ${VAR:-default} (Claude Code's forms) and ${env:VAR}
// (Cursor's and VS Code's) are replaced by the environment variable's
// value in command, args, env values, cwd, url and header values; with
// :-, an unset or empty variable gives the default. A variable that is not
// set and has no default is an error, not an empty string or the literal
// text: a missing token should stop the gateway, not be sent. $VAR
// without braces is left as it is, as the hosts do.
//
// Every problem is reported, each with its JSON path, as an [ErrorList]:
//
//	mcpServers.fs.command: required: a stdio server needs "command" (or give "url" for an HTTP server)
//	mcpServers.remote.headers.Authorization: ${TOKEN}: environment variable TOKEN is not set (write ${TOKEN:-default} to give a default)
func ParseConfig(data []byte, opts *ConfigOptions) (*Config, error) {
	p := &configParser{lookup: os.LookupEnv}
	if opts != nil && opts.LookupEnv != nil {
		p.lookup = opts.LookupEnv
	}
	if len(data) > maxConfigBytes {
		return nil, ErrorList{{Msg: fmt.Sprintf("the document is %d bytes, more than the %d accepted", len(data), maxConfigBytes)}}
	}
	data = trimBOM(data)
	if jsonx.TooDeep(data, maxConfigDepth) {
		return nil, ErrorList{{Msg: fmt.Sprintf("the document nests more than %d levels", maxConfigDepth)}}
	}
	if !gjson.ValidBytes(data) {
		return nil, ErrorList{{Msg: "not valid JSON: " + jsonx.SyntaxError(data)}}
	}
	doc := gjson.ParseBytes(data)
	if !doc.IsObject() {
		return nil, ErrorList{{Msg: "the document is " + jsonx.Kind(doc) + `, not an object with "mcpServers"`}}
	}
	cfg := p.parse(doc)
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	return cfg, nil
}

func trimBOM(data []byte) []byte {
	if len(data) >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF {
		return data[3:]
	}
	return data
}

type configParser struct {
	lookup   func(string) (string, bool)
	errs     ErrorList
	warnings []string
}

func (p *configParser) errorf(path, format string, args ...any) {
	p.errs = append(p.errs, &Error{Path: path, Msg: fmt.Sprintf(format, args...)})
}

func (p *configParser) warnf(path, format string, args ...any) {
	p.warnings = append(p.warnings, path+": "+fmt.Sprintf(format, args...))
}

func (p *configParser) parse(doc gjson.Result) *Config {
	cfg := &Config{}
	servers := doc.Get(gjsonKey("mcpServers"))
	if !servers.Exists() {
		msg := `required: an object naming each upstream server, as in {"mcpServers": {"fs": {"command": "npx", "args": [...]}}}`
		if doc.Get("servers").IsObject() {
			msg += ` (VS Code's "servers": rename it "mcpServers")`
		}
		p.errorf("mcpServers", "%s", msg)
		return cfg
	}
	if !servers.IsObject() {
		p.errorf("mcpServers", "must be an object naming each server, not %s", jsonx.Kind(servers))
		return cfg
	}
	for _, m := range jsonx.Members(servers, func(key string) {
		p.errorf(memberPath("mcpServers", key), "the server is named twice")
	}) {
		if s := p.server(memberPath("mcpServers", m.Key), m.Key, m.Value); s != nil {
			cfg.Servers = append(cfg.Servers, s)
		}
	}
	cfg.Warnings = p.warnings
	return cfg
}

// server parses one entry; it returns nil for a disabled or invalid one.
func (p *configParser) server(path, name string, v gjson.Result) *ServerConfig {
	if !v.IsObject() {
		p.errorf(path, `must be an object with "command" or "url", not %s`, jsonx.Kind(v))
		return nil
	}
	nerr := len(p.errs)
	if d := v.Get("disabled"); d.Exists() {
		switch d.Type {
		case gjson.True:
			p.warnf(path, "disabled: skipped")
			return nil
		case gjson.False:
		default:
			p.errorf(path+".disabled", "must be true or false, not %s", jsonx.Kind(d))
		}
	}
	if err := checkServerName(name); err != nil {
		p.errorf(path, "%v", err)
	}
	for _, m := range jsonx.Members(v, func(key string) {
		p.errorf(memberPath(path, key), "given twice")
	}) {
		if !slices.Contains(serverKeys, m.Key) {
			p.warnf(memberPath(path, m.Key), "unknown key, ignored%s", hint.DidYouMean(m.Key, serverKeys))
		}
	}
	s := &ServerConfig{Name: name}
	command, url := v.Get("command"), v.Get("url")
	switch t := v.Get("type"); {
	case !t.Exists():
		if url.Exists() && !command.Exists() {
			s.Transport = TransportHTTP
		} else {
			s.Transport = TransportStdio
		}
	case t.Type != gjson.String:
		p.errorf(path+".type", `must be "stdio", "http" or "sse", not %s`, jsonx.Kind(t))
	default:
		switch t.Str {
		case "stdio":
			s.Transport = TransportStdio
		case "http", "streamable-http", "streamableHttp":
			s.Transport = TransportHTTP
		case "sse":
			s.Transport = TransportSSE
		default:
			p.errorf(path+".type", `%q is not a transport: use "stdio", "http" (Streamable HTTP) or "sse"`, t.Str)
		}
	}
	switch s.Transport {
	case TransportStdio:
		if url.Exists() {
			p.errorf(path, `has both "command" and "url": give "command" for a stdio server or "url" for an HTTP one`)
		}
		if !command.Exists() {
			p.errorf(path+".command", `required: a stdio server needs "command" (or give "url" for an HTTP server)`)
		} else {
			before := len(p.errs)
			s.Command = p.str(path+".command", command)
			if s.Command == "" && len(p.errs) == before {
				p.errorf(path+".command", "must not be empty")
			}
		}
		s.Args = p.strings(path+".args", v.Get("args"))
		s.Env = p.strMap(path+".env", v.Get("env"))
		s.Cwd = p.str(path+".cwd", v.Get("cwd"))
		for _, k := range []string{"headers"} {
			if v.Get(k).Exists() {
				p.warnf(path+"."+k, "ignored: a stdio server has no headers")
			}
		}
	case TransportHTTP, TransportSSE:
		if command.Exists() {
			p.errorf(path, `has both "command" and "url": give "command" for a stdio server or "url" for an HTTP one`)
		}
		if !url.Exists() {
			p.errorf(path+".url", `required: an HTTP server needs "url"`)
		} else {
			before := len(p.errs)
			s.URL = p.str(path+".url", url)
			if len(p.errs) == before && !strings.HasPrefix(s.URL, "http://") && !strings.HasPrefix(s.URL, "https://") {
				p.errorf(path+".url", "%q is not an http:// or https:// URL", s.URL)
			}
		}
		s.Headers = p.strMap(path+".headers", v.Get("headers"))
		for _, k := range []string{"args", "env", "cwd"} {
			if v.Get(k).Exists() {
				p.warnf(path+"."+k, "ignored: an HTTP server is not started by the gateway")
			}
		}
	}
	if t := v.Get("timeout"); t.Exists() {
		// At most a day: a bound, not a way to switch the bound off.
		switch {
		case t.Type != gjson.Number:
			p.errorf(path+".timeout", "must be a number of milliseconds, not %s", jsonx.Kind(t))
		case t.Num != float64(int64(t.Num)) || t.Num < 1 || t.Num > 86_400_000:
			p.errorf(path+".timeout", "must be a whole number of milliseconds from 1 to 86400000 (a day), not %s", t.Raw)
		default:
			s.CallTimeout = time.Duration(t.Num) * time.Millisecond
		}
	}
	if len(p.errs) > nerr {
		return nil
	}
	return s
}

// checkServerName checks that a server's name can prefix a tool name.
func checkServerName(name string) error {
	if name == "" {
		return errors.New("the server's name is empty")
	}
	if len(name) > maxServerName {
		return fmt.Errorf("the server's name is %d characters, more than %d (it prefixes tool names, which are at most 128)", len(name), maxServerName)
	}
	for _, r := range name {
		if !toolname.ValidRune(r) {
			return fmt.Errorf(`the server's name has %q: use letters, digits, "_", "-" and "." (it prefixes tool names on collision)`, r)
		}
	}
	return nil
}

// str reads a string value and expands it; a missing one is "".
func (p *configParser) str(path string, v gjson.Result) string {
	if !v.Exists() {
		return ""
	}
	if v.Type != gjson.String {
		p.errorf(path, "must be a string, not %s", jsonx.Kind(v))
		return ""
	}
	return p.expand(path, v.Str)
}

func (p *configParser) strings(path string, v gjson.Result) []string {
	if !v.Exists() {
		return nil
	}
	if !v.IsArray() {
		p.errorf(path, "must be an array of strings, not %s", jsonx.Kind(v))
		return nil
	}
	out := []string{}
	for i, e := range v.Array() {
		ep := string(jsonx.Path(path).Index(i))
		if e.Type != gjson.String {
			p.errorf(ep, "must be a string, not %s%s", jsonx.Kind(e), quoteHint(e))
			continue
		}
		out = append(out, p.expand(ep, e.Str))
	}
	return out
}

func (p *configParser) strMap(path string, v gjson.Result) map[string]string {
	if !v.Exists() {
		return nil
	}
	if !v.IsObject() {
		p.errorf(path, "must be an object of strings, not %s", jsonx.Kind(v))
		return nil
	}
	out := map[string]string{}
	for _, m := range jsonx.Members(v, func(key string) {
		p.errorf(memberPath(path, key), "given twice")
	}) {
		mp := memberPath(path, m.Key)
		if m.Value.Type != gjson.String {
			p.errorf(mp, "must be a string, not %s%s", jsonx.Kind(m.Value), quoteHint(m.Value))
			continue
		}
		out[m.Key] = p.expand(mp, m.Value.Str)
	}
	return out
}

// quoteHint suggests quoting a number or boolean, which hosts reject too.
func quoteHint(v gjson.Result) string {
	switch v.Type {
	case gjson.Number, gjson.True, gjson.False:
		return fmt.Sprintf(" (write %q)", v.Raw)
	}
	return ""
}

// expand replaces ${VAR}, ${VAR:-default} and ${env:VAR} in s.
func (p *configParser) expand(path, s string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			p.errorf(path, `%q: "${" is not closed by "}"`, s[i:])
			return ""
		}
		ref := s[i+2 : i+end]
		s = s[i+end+1:]
		name, def, hasDef := strings.Cut(ref, ":-")
		name = strings.TrimPrefix(name, "env:")
		if !envName(name) {
			p.errorf(path, "${%s}: %q is not an environment variable name (use ${NAME}, ${NAME:-default} or ${env:NAME})", ref, name)
			return ""
		}
		val, ok := p.lookup(name)
		switch {
		case hasDef && val == "":
			val = def
		case !ok:
			p.errorf(path, "${%s}: environment variable %s is not set (write ${%s:-default} to give a default)", ref, name, name)
			return ""
		}
		b.WriteString(val)
	}
}

// envName reports whether s is a portable environment variable name.
func envName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// memberPath appends key to path as ".key", or as `["key"]` when the key
// is not a plain name (see [jsonx.Path]).
func memberPath(path, key string) string { return string(jsonx.Path(path).Key(key)) }

// gjsonKey escapes a key for a gjson path.
func gjsonKey(k string) string {
	r := strings.NewReplacer(`\`, `\\`, ".", `\.`, "*", `\*`, "?", `\?`, "|", `\|`, "#", `\#`, "@", `\@`)
	return r.Replace(k)
}
