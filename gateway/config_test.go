// This file tests the configuration parser: the servers it reads, the
// ${VAR} expansion, and every error with its JSON path.

package gateway_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/gateway"
)

func env(vars map[string]string) *gateway.ConfigOptions {
	return &gateway.ConfigOptions{LookupEnv: func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}}
}

func TestParseConfig(t *testing.T) {
	cfg, err := gateway.ParseConfig([]byte("\uFEFF"+`{
	  "mcpServers": {
	    "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "${HOME}/repo"],
	           "env": {"LEVEL": "${LOG_LEVEL:-info}", "EMPTY": "${EMPTY:-fallback}", "KEEP": "$HOME stays"}, "cwd": "/tmp"},
	    "remote": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${env:TOKEN}"}},
	    "typed": {"type": "streamable-http", "url": "http://localhost:1/mcp"},
	    "legacy": {"type": "sse", "url": "http://localhost:2/sse"},
	    "off": {"command": "x", "disabled": true},
	    "extra": {"command": "y", "comand": "z", "autoApprove": []}
	  },
	  "otherHostSetting": true
	}`), env(map[string]string{"HOME": "/home/ada", "TOKEN": "t0k", "EMPTY": ""}))
	require.NoError(t, err)
	require.Len(t, cfg.Servers, 5)
	assert.Equal(t, &gateway.ServerConfig{
		Name: "fs", Transport: gateway.TransportStdio, Command: "npx",
		Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/home/ada/repo"},
		Env:  map[string]string{"LEVEL": "info", "EMPTY": "fallback", "KEEP": "$HOME stays"},
		Cwd:  "/tmp",
	}, cfg.Servers[0])
	assert.Equal(t, &gateway.ServerConfig{
		Name: "remote", Transport: gateway.TransportHTTP, URL: "https://mcp.example.com/mcp",
		Headers: map[string]string{"Authorization": "Bearer t0k"},
	}, cfg.Servers[1])
	assert.Equal(t, gateway.TransportHTTP, cfg.Servers[2].Transport)
	assert.Equal(t, gateway.TransportSSE, cfg.Servers[3].Transport)
	assert.Equal(t, "extra", cfg.Servers[4].Name)
	assert.Equal(t, []string{
		"mcpServers.off: disabled: skipped",
		`mcpServers.extra.comand: unknown key, ignored (did you mean "command"?)`,
		"mcpServers.extra.autoApprove: unknown key, ignored",
	}, cfg.Warnings)
}

func TestParseConfigErrors(t *testing.T) {
	for _, c := range []struct {
		doc  string
		errs []string
	}{
		{`{"mcpServers": {"fs": {"args": ["x"]}}}`, []string{`mcpServers.fs.command: required: a stdio server needs "command" (or give "url" for an HTTP server)`}},
		{`{"mcpServers": {"r": {"type": "http"}}}`, []string{`mcpServers.r.url: required: an HTTP server needs "url"`}},
		{`{"mcpServers": {"r": {"command": "x", "url": "http://y"}}}`, []string{`mcpServers.r: has both "command" and "url": give "command" for a stdio server or "url" for an HTTP one`}},
		{`{"mcpServers": {"r": {"type": "websocket", "url": "ws://y"}}}`, []string{`mcpServers.r.type: "websocket" is not a transport: use "stdio", "http" (Streamable HTTP) or "sse"`}},
		{`{"mcpServers": {"r": {"url": "ftp://y"}}}`, []string{`mcpServers.r.url: "ftp://y" is not an http:// or https:// URL`}},
		{`{"mcpServers": {"fs": {"command": "", "args": "x", "env": {"PORT": 8080, "ON": true}}}}`, []string{
			"mcpServers.fs.command: must not be empty",
			"mcpServers.fs.args: must be an array of strings, not a string",
			`mcpServers.fs.env.PORT: must be a string, not a number (write "8080")`,
			`mcpServers.fs.env.ON: must be a string, not a boolean (write "true")`,
		}},
		{`{"mcpServers": {"fs": {"command": "x", "args": ["${MISSING}", "${BAD NAME}", "${OPEN"]}}}`, []string{
			"mcpServers.fs.args[0]: ${MISSING}: environment variable MISSING is not set (write ${MISSING:-default} to give a default)",
			`mcpServers.fs.args[1]: ${BAD NAME}: "BAD NAME" is not an environment variable name (use ${NAME}, ${NAME:-default} or ${env:NAME})`,
			`mcpServers.fs.args[2]: "${OPEN": "${" is not closed by "}"`,
		}},
		{`{"mcpServers": {"my server": {"command": "x"}, "a.b": {"command": "y"}}}`, []string{
			`mcpServers["my server"]: the server's name has ' ': use letters, digits, "_", "-" and "." (it prefixes tool names on collision)`,
		}},
		{`{"mcpServers": {"x": {"command": "a"}, "x": {"command": "b"}}}`, []string{"mcpServers.x: the server is named twice"}},
		{`{"mcpServers": {"x": {"command": "a", "disabled": "yes"}}}`, []string{"mcpServers.x.disabled: must be true or false, not a string"}},
		{`{"mcpServers": {"x": "npx server"}}`, []string{`mcpServers.x: must be an object with "command" or "url", not a string`}},
		{`{"mcpServers": []}`, []string{"mcpServers: must be an object naming each server, not an array"}},
		{`{"servers": {"x": {"command": "a"}}}`, []string{`mcpServers: required: an object naming each upstream server, as in {"mcpServers": {"fs": {"command": "npx", "args": [...]}}} (VS Code's "servers": rename it "mcpServers")`}},
		{`[]`, []string{`the document is an array, not an object with "mcpServers"`}},
		{`{"mcpServers": {"x": {"command": "a",}}}`, []string{"not valid JSON: line 1, column 38: invalid character '}' looking for beginning of object key string"}},
		{strings.Repeat("[", 100), []string{"the document nests more than 32 levels"}},
	} {
		_, err := gateway.ParseConfig([]byte(c.doc), env(nil))
		var list gateway.ErrorList
		require.True(t, errors.As(err, &list), "%s: %v", c.doc, err)
		var got []string
		for _, e := range list {
			got = append(got, e.Error())
		}
		assert.Equal(t, c.errs, got, c.doc)
	}
}

func TestLoadConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "servers.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"mcpServers": {"fs": {}}}`), 0o644))
	_, err := gateway.LoadConfig(path, nil)
	assert.EqualError(t, err, path+`: mcpServers.fs.command: required: a stdio server needs "command" (or give "url" for an HTTP server)`)
	_, err = gateway.LoadConfig(filepath.Join(t.TempDir(), "none.json"), nil)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// FuzzParseConfig checks that no document makes the parser panic, and
// that what it accepts is usable: named servers of a known transport with
// a command or URL.
func FuzzParseConfig(f *testing.F) {
	for _, seed := range []string{
		`{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "${HOME}"], "env": {"A": "${B:-c}"}}}}`,
		`{"mcpServers": {"r": {"url": "https://x/mcp", "headers": {"H": "${env:T}"}}, "s": {"type": "sse", "url": "http://y"}}}`,
		`{"mcpServers": {"x": {"command": "a", "disabled": true}, "y": {"comand": 1}}}`,
		`{"mcpServers": {"\u00e9": {"command": "${"}}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := gateway.ParseConfig(data, env(map[string]string{"HOME": "/h", "T": "t"}))
		if err != nil {
			var list gateway.ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("error is not a non-empty ErrorList: %v", err)
			}
			return
		}
		for _, s := range cfg.Servers {
			switch s.Transport {
			case gateway.TransportStdio:
				if s.Command == "" {
					t.Fatalf("stdio server %q without a command", s.Name)
				}
			case gateway.TransportHTTP, gateway.TransportSSE:
				if !strings.HasPrefix(s.URL, "http://") && !strings.HasPrefix(s.URL, "https://") {
					t.Fatalf("HTTP server %q with URL %q", s.Name, s.URL)
				}
			default:
				t.Fatalf("server %q has transport %q", s.Name, s.Transport)
			}
		}
	})
}
