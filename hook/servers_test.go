package hook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/gateway"
)

// projectServers are, per host, the MCP servers a project has in that
// host's files, in the host's own format, and what the gateway's servers
// file must hold once they are moved.
var projectServers = map[Host]struct {
	files   map[string]string
	servers string
	left    map[string]string // what the host's MCP files keep of their own
}{
	ClaudeCode: {
		files: map[string]string{".mcp.json": `{
  "mcpServers": {
    "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "${HOME}/repo"], "env": {"LOG": "${LOG:-info}"}},
    "remote": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
    "old-gate": {"command": "/usr/local/bin/chartgate", "args": ["serve", "--workflow", "x.json"]}
  }
}
`},
		servers: `{
  "mcpServers": {
    "fs": {
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-filesystem",
        "${HOME}/repo"
      ],
      "env": {
        "LOG": "${LOG:-info}"
      }
    },
    "remote": {
      "type": "http",
      "url": "https://mcp.example.com/mcp",
      "headers": {
        "Authorization": "Bearer ${TOKEN}"
      }
    }
  }
}
`,
		left: map[string]string{".mcp.json": "old-gate chartgate"},
	},
	Codex: {
		files: map[string]string{".codex/config.toml": `# mine
model = "o4"

[mcp_servers.docs]
command = "docs-mcp" # local
args = [
  "--root", 'C:\docs',
]
tool_timeout_sec = 30
enabled = false

[mcp_servers.docs.env]
TOKEN = "a\"b"

[mcp_servers."remote_api"]
url = "https://mcp.example.com/mcp"
bearer_token_env_var = "API_TOKEN"
http_headers = { "X-Team" = "core" }

[profiles.fast]
model = "o4-mini"
`},
		servers: `{
  "mcpServers": {
    "docs": {
      "command": "docs-mcp",
      "args": [
        "--root",
        "C:\\docs"
      ],
      "timeout": 30000,
      "disabled": true,
      "env": {
        "TOKEN": "a\"b"
      }
    },
    "remote_api": {
      "url": "https://mcp.example.com/mcp",
      "headers": {
        "Authorization": "Bearer ${API_TOKEN}",
        "X-Team": "core"
      }
    }
  }
}
`,
	},
	Gemini: {
		files: map[string]string{".gemini/settings.json": `{"mcpServers": {"api": {"httpUrl": "http://127.0.0.1:9/mcp", "timeout": 5000, "trust": false}}}`},
		servers: `{
  "mcpServers": {
    "api": {
      "url": "http://127.0.0.1:9/mcp",
      "timeout": 5000,
      "trust": false,
      "type": "http"
    }
  }
}
`,
		left: map[string]string{".gemini/settings.json": "chartgate"},
	},
	Cursor: {
		files: map[string]string{".cursor/mcp.json": `{"mcpServers": {"db": {"command": "db-mcp", "env": {"URL": "${env:DB_URL}"}}}}`},
		servers: `{
  "mcpServers": {
    "db": {
      "command": "db-mcp",
      "env": {
        "URL": "${env:DB_URL}"
      }
    }
  }
}
`,
		left: map[string]string{".cursor/mcp.json": "chartgate"},
	},
	Copilot: {
		files: map[string]string{
			".mcp.json":        `{"mcpServers": {"fs": {"type": "local", "command": "fs-mcp", "tools": ["*"]}}}`,
			".github/mcp.json": `{"mcpServers": {"gh": {"type": "http", "url": "https://api.example.com/mcp"}}, "inputs": []}`,
		},
		servers: `{
  "mcpServers": {
    "fs": {
      "type": "stdio",
      "command": "fs-mcp",
      "tools": [
        "*"
      ]
    },
    "gh": {
      "type": "http",
      "url": "https://api.example.com/mcp"
    }
  }
}
`,
		left: map[string]string{".mcp.json": "chartgate", ".github/mcp.json": ""},
	},
}

// TestInstallMovesServers: for every host, the project's own MCP servers
// are moved from the host's files into .chartgate/servers.json (which the
// gateway parses, every server in it) and named in the changes; the
// gateway gets --config; an entry running chartgate serve stays; a second
// installation changes nothing; uninstall gives every file back byte for
// byte and takes servers.json out.
func TestInstallMovesServers(t *testing.T) {
	for _, host := range Installable {
		t.Run(string(host), func(t *testing.T) {
			p := projectServers[host]
			dir := t.TempDir()
			require.NoError(t, os.MkdirAll(filepath.Join(dir, ConfigDir), 0o755))
			for f, content := range p.files {
				writeTestFile(t, filepath.Join(dir, f), content)
			}
			before := snapshotDir(t, dir)
			changes, err := Plan(host, dir, nil)
			require.NoError(t, err)
			var moved []string
			for _, c := range changes {
				if c.Path == ServersFile {
					moved = c.Moved
				}
			}
			cfg, err := gateway.ParseConfig([]byte(p.servers), &gateway.ConfigOptions{LookupEnv: func(string) (string, bool) { return "x", true }})
			require.NoError(t, err)
			var names []string
			for _, s := range cfg.Servers {
				names = append(names, s.Name)
			}
			if host == Codex {
				names = append([]string{"docs"}, names...) // disabled: parsed, then skipped
			}
			assert.Equal(t, names, moved, "the changes name the servers moved")
			require.NoError(t, Install(dir, host, changes))
			assert.Equal(t, p.servers, readFile(t, filepath.Join(dir, ServersFile)))
			for f, keep := range p.left {
				var doc struct {
					MCPServers map[string]struct{ Args []string } `json:"mcpServers"`
				}
				require.NoError(t, json.Unmarshal([]byte(readFile(t, filepath.Join(dir, f))), &doc))
				got := keysOf(t, readFile(t, filepath.Join(dir, f)), "mcpServers")
				assert.Equal(t, keep, strings.Join(got, " "), "%s keeps its chartgate entries", f)
				if gw, ok := doc.MCPServers["chartgate"]; ok {
					assert.Contains(t, gw.Args, "--config")
					// The hosts that read list_changed get the list
					// of the current state.
					assert.NotContains(t, gw.Args, "--list-all-tools")
				}
			}
			if host == Codex {
				got := readFile(t, filepath.Join(dir, ".codex", "config.toml"))
				assert.Equal(t, "# mine\nmodel = \"o4\"\n\n[profiles.fast]\nmodel = \"o4-mini\"\n\n[mcp_servers.chartgate]\ncommand = \"chartgate\"\n"+
					"args = [\"serve\", \"--workflow\", \".chartgate/workflow.json\", \"--session\", \"auto\", \"--list-all-tools\", \"--config\", \".chartgate/servers.json\"]\n", got)
			}

			again, err := Plan(host, dir, nil)
			require.NoError(t, err)
			assert.Empty(t, again, "a second installation changes nothing")

			un, err := PlanUninstall(host, dir, nil)
			require.NoError(t, err)
			require.NoError(t, ApplyUninstall(dir, host, un))
			assert.Equal(t, before, snapshotDir(t, dir))
		})
	}
}

// TestInstallKeepsServersDirect: with KeepServersDirect, the project's
// servers stay in the host's file and no servers file is written.
func TestInstallKeepsServersDirect(t *testing.T) {
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, ".mcp.json"), `{"mcpServers": {"fs": {"command": "fs-mcp"}}}`)
	changes := install(t, ClaudeCode, dir, &InstallOptions{KeepServersDirect: true})
	for _, c := range changes {
		assert.Empty(t, c.Moved)
	}
	assert.Equal(t, []string{"fs", "chartgate"}, keysOf(t, readFile(t, filepath.Join(dir, ".mcp.json")), "mcpServers"))
	assert.NotContains(t, readFile(t, filepath.Join(dir, ".mcp.json")), "--config")
	_, err := os.Stat(filepath.Join(dir, ServersFile))
	assert.True(t, os.IsNotExist(err))
}

// TestInstallServersConflict: a server whose name the servers file
// already has, with another entry, stops the installation with both
// places named; the same entry is not a conflict.
func TestInstallServersConflict(t *testing.T) {
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, ".mcp.json"), `{"mcpServers": {"fs": {"command": "fs-mcp"}}}`)
	writeTestFile(t, filepath.Join(dir, ServersFile), `{"mcpServers": {"fs": {"command": "other"}}}`)
	_, err := Plan(ClaudeCode, dir, nil)
	assert.EqualError(t, err, `the MCP server "fs" of .mcp.json is also in .chartgate/servers.json, with another entry: remove one of them, or install with --keep-servers-direct`)

	writeTestFile(t, filepath.Join(dir, ServersFile), `{"mcpServers": {"fs": {"command": "fs-mcp"}}}`)
	changes, err := Plan(ClaudeCode, dir, nil)
	require.NoError(t, err)
	for _, c := range changes {
		assert.NotEqual(t, ServersFile, c.Path, "the same entry: the servers file stays as it is")
	}

	writeTestFile(t, filepath.Join(dir, ".codex", "config.toml"), "[mcp_servers.x]\ncommand = \"\"\"\nmulti\n\"\"\"\n")
	_, err = Plan(Codex, dir, nil)
	assert.EqualError(t, err, ".codex/config.toml: line 2: multi-line strings are not read (move this server by hand, or install with --keep-servers-direct)")
}

// TestUninstallPutsMovedServersBack: when the host's file and the servers
// file were changed after installing, uninstall puts the moved servers
// back into the host's file, takes them out of the servers file, and
// keeps the later changes.
func TestUninstallPutsMovedServersBack(t *testing.T) {
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, ".mcp.json"), `{"mcpServers": {"fs": {"command": "fs-mcp"}}}`)
	changes, err := Plan(ClaudeCode, dir, nil)
	require.NoError(t, err)
	require.NoError(t, Install(dir, ClaudeCode, changes))
	// Later: a server added to each file by hand.
	writeTestFile(t, filepath.Join(dir, ".mcp.json"), `{"mcpServers": {"chartgate": {"command": "chartgate", "args": ["serve"]}, "new": {"command": "new-mcp"}}}`)
	writeTestFile(t, filepath.Join(dir, ServersFile), `{"mcpServers": {"fs": {"command": "fs-mcp"}, "up": {"command": "up-mcp"}}}`)

	un, err := PlanUninstall(ClaudeCode, dir, nil)
	require.NoError(t, err)
	require.NoError(t, ApplyUninstall(dir, ClaudeCode, un))
	assert.Equal(t, []string{"new", "fs"}, keysOf(t, readFile(t, filepath.Join(dir, ".mcp.json")), "mcpServers"))
	assert.Equal(t, []string{"up"}, keysOf(t, readFile(t, filepath.Join(dir, ServersFile)), "mcpServers"))
}

// TestInstallRunnerCommand: a command of several words (npx's form) runs
// the hooks and the gateway, in JSON and in Codex's TOML; installing with
// it over an installation by absolute path replaces chartgate's entries
// in place, and uninstall recognises them.
func TestInstallRunnerCommand(t *testing.T) {
	dir := t.TempDir()
	install(t, ClaudeCode, dir, &InstallOptions{Command: []string{"/opt/chartgate/bin/chartgate"}})
	npx := &InstallOptions{Command: []string{"npx", "--no", "chartgate"}}
	install(t, ClaudeCode, dir, npx)
	settings := readFile(t, filepath.Join(dir, ".claude", "settings.json"))
	assert.Equal(t, 6, strings.Count(settings, `"command": "npx --no chartgate hook claude-code"`))
	assert.NotContains(t, settings, "/opt/chartgate")
	var m struct {
		MCPServers map[string]struct {
			Command string
			Args    []string
		} `json:"mcpServers"`
	}
	require.NoError(t, json.Unmarshal([]byte(readFile(t, filepath.Join(dir, ".mcp.json"))), &m))
	assert.Equal(t, "npx", m.MCPServers["chartgate"].Command)
	assert.Equal(t, []string{"--no", "chartgate", "serve", "--workflow", ".chartgate/workflow.json", "--session", "auto"}, m.MCPServers["chartgate"].Args)
	again, err := Plan(ClaudeCode, dir, npx)
	require.NoError(t, err)
	assert.Empty(t, again)

	assert.True(t, (&installer{host: ClaudeCode}).ours("pnpm exec chartgate hook claude-code"))
	assert.False(t, (&installer{host: ClaudeCode}).ours("./notify.sh chartgate hook claude-code"), "a command of the user's that names chartgate")

	install(t, Codex, dir, npx)
	assert.Contains(t, readFile(t, filepath.Join(dir, ".codex", "config.toml")),
		"command = \"npx\"\nargs = [\"--no\", \"chartgate\", \"serve\", \"--workflow\", \".chartgate/workflow.json\", \"--session\", \"auto\", \"--list-all-tools\"]\n")

	un, err := PlanUninstall(ClaudeCode, dir, nil)
	require.NoError(t, err)
	require.NoError(t, ApplyUninstall(dir, ClaudeCode, un))
	assert.NotContains(t, readFile(t, filepath.Join(dir, ".claude", "settings.json")), "chartgate", "chartgate's npx hooks were all recognised and taken out")
}

// FuzzCodexServers: any config.toml is read without a panic; the servers
// it yields encode as JSON, and taking them out leaves a file that yields
// none of them.
func FuzzCodexServers(f *testing.F) {
	f.Add([]byte(projectServers[Codex].files[".codex/config.toml"]))
	f.Add([]byte("[mcp_servers.a]\ncommand = \"x\"\nargs = [\"1\", '2',\n]\nenv = { A = \"\\u00e9\", B.C = 1_000 }\n[mcp_servers.a.env]\nX = true\n"))
	f.Add([]byte("[mcp_servers.\"q\"] # c\nurl = 'u'\n[[mcp_servers]]\n[mcp_servers.b.x.y]\nz = -1.5e3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tables, err := parseTOMLServers("config.toml", data)
		if err != nil {
			return
		}
		var names []string
		for _, s := range tables {
			if !json.Valid(codexEntry(s.entry).encode("  ")) {
				t.Fatalf("server %q encodes as invalid JSON", s.name)
			}
			names = append(names, s.name)
		}
		rest, err := removeTOMLServers("config.toml", data, names)
		if err != nil {
			t.Fatalf("removing the servers it read: %v", err)
		}
		if left, err := parseTOMLServers("config.toml", rest); err == nil && len(left) > 0 {
			t.Fatalf("servers left after removing them all: %q", left[0].name)
		}
	})
}
