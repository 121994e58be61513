package hook

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInstallHookClient: with HookCommand, every hook runs the hook
// client with the host and the flags; its entries are chartgate's, so
// installing again with `chartgate hook` replaces them in place, and
// uninstalling removes them.
func TestInstallHookClient(t *testing.T) {
	for _, host := range Installable {
		t.Run(string(host), func(t *testing.T) {
			dir := t.TempDir()
			changes := install(t, host, dir, &InstallOptions{Command: []string{"/opt/bin/chartgate"}, HookCommand: []string{"/opt/bin/chartgate-hook"}, DefaultDeny: true})
			hooks := string(changes[0].New)
			want := "/opt/bin/chartgate-hook " + string(host) + " --default-deny"
			assert.Contains(t, hooks, want)
			assert.NotContains(t, hooks, "chartgate hook")
			n := strings.Count(hooks, want)
			require.Positive(t, n)

			changes = install(t, host, dir, &InstallOptions{Command: []string{"/opt/bin/chartgate"}, DefaultDeny: true})
			hooks = string(changes[0].New)
			assert.NotContains(t, hooks, "chartgate-hook")
			assert.Equal(t, n, strings.Count(hooks, "/opt/bin/chartgate hook "+string(host)+" --default-deny"), "replaced in place, none added")

			install(t, host, dir, &InstallOptions{Command: []string{"/opt/bin/chartgate"}, HookCommand: []string{"/opt/bin/chartgate-hook"}, DefaultDeny: true})
			un, err := PlanUninstall(host, dir, nil)
			require.NoError(t, err)
			require.NoError(t, ApplyUninstall(dir, host, un))
			for _, c := range un {
				assert.NotContains(t, string(c.New), "chartgate-hook", c.Path)
			}
		})
	}
}
