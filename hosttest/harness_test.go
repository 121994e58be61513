// Package hosttest runs chartgate with the real agent hosts: Claude Code,
// Codex, Gemini CLI and Copilot CLI from npm (package.json, package-lock.json
// here; .ci/run installs them), each run headless in a project set up as
// the README's walkthrough says, against a scripted model endpoint on
// loopback. The tests skip, saying why, when the hosts are not installed.
package hosttest

// This file sets up what every host's run needs: chartgate built from this
// repository and put on the PATH, a project made as the README's
// walkthrough says, a home and configuration folders of its own, and the
// host run under a deadline.

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// captureEnv, set to a folder, saves the input of every hook the hosts run
// there (FOLDER/HOST/*.json): the payloads the real hosts send, for
// hook/testdata/hosts.
const captureEnv = "CHARTGATE_HOSTTEST_CAPTURE"

// repoRoot is the repository's top folder.
func repoRoot(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(wd)
}

// hostBin returns the path of a host's binary installed by npm in this
// folder (.ci/run runs npm ci here), skipping the test when it is not.
func hostBin(t testing.TB, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("node_modules", ".bin", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s is not installed: run npm ci in hosttest/ (.ci/run does) to test with the real host", name)
	}
	return p
}

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// chartgateDir builds chartgate from this repository once and returns the
// folder that holds it, to put on the PATH.
func chartgateDir(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "chartgate-hosttest-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binDir = dir
		bin := filepath.Join(dir, "chartgate")
		capture := os.Getenv(captureEnv)
		if capture != "" {
			bin += ".real"
		}
		cmd := exec.Command("go", "build", "-o", bin, "./cmd/chartgate")
		cmd.Dir = repoRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = errors.New("go build ./cmd/chartgate: " + err.Error() + "\n" + string(out))
			return
		}
		// The hook client beside chartgate, as the release archives and
		// the npm package ship them: chartgate install then writes it as
		// the hooks' command, and the hosts run it.
		client := exec.Command("go", "build", "-o", filepath.Join(dir, "chartgate-hook"), "./cmd/chartgate-hook")
		client.Dir = repoRoot(t)
		if out, err := client.CombinedOutput(); err != nil {
			buildErr = errors.New("go build ./cmd/chartgate-hook: " + err.Error() + "\n" + string(out))
			return
		}
		if capture != "" {
			// chartgate hook HOST ... saves its input first.
			script := "#!/bin/sh\nif [ \"$1\" = hook ]; then\n  mkdir -p '" + capture + "'/\"$2\"\n" +
				"  f=$(mktemp '" + capture + "'/\"$2\"/XXXXXX.json)\n  cat > \"$f\"\n  exec '" + bin + "' \"$@\" < \"$f\"\nfi\n" +
				"exec '" + bin + "' \"$@\"\n"
			buildErr = os.WriteFile(filepath.Join(dir, "chartgate"), []byte(script), 0o755)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binDir
}

// readmeWorkflow returns the workflow of the README's walkthrough
// ("Enforce a workflow in Claude Code"), as it is written there.
func readmeWorkflow(t testing.TB) []byte {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)cat > \.chartgate/workflow\.json <<'JSON'\n(.*?)\nJSON\n`).FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no walkthrough workflow (cat > .chartgate/workflow.json <<'JSON' ... JSON)")
	}
	return append(m[1], '\n')
}

// project is a temporary project set up for one host's run.
type project struct {
	t      *testing.T
	dir    string
	home   string
	path   string            // PATH for chartgate and the host
	before map[string][]byte // every file before chartgate install
	// installOutput is what chartgate install printed.
	installOutput string
}

// newProject makes a project as the README's walkthrough says: the
// workflow in .chartgate/workflow.json, then `chartgate install HOST` for
// each host;
// existing holds files the project had before (its own settings), which
// uninstall must give back byte for byte.
func newProject(t *testing.T, hosts []string, existing map[string]string) *project {
	t.Helper()
	return newProjectWorkflow(t, hosts, existing, string(readmeWorkflow(t)))
}

// newProjectWorkflow is newProject with another workflow.
func newProjectWorkflow(t *testing.T, hosts []string, existing map[string]string, workflow string) *project {
	t.Helper()
	root := t.TempDir()
	p := &project{t: t, dir: filepath.Join(root, "project"), home: filepath.Join(root, "home")}
	for _, d := range []string{p.dir, p.home, filepath.Join(p.dir, ".chartgate")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p.path = chartgateDir(t) + string(os.PathListSeparator) + filepath.Dir(nodeBin(t)) + string(os.PathListSeparator) + "/usr/bin:/bin"
	p.write(".chartgate/workflow.json", workflow)
	for name, content := range existing {
		p.write(name, content)
	}
	p.before = p.snapshot()
	out := p.chartgate("validate", ".chartgate/workflow.json")
	t.Logf("chartgate validate: %s", out)
	for _, host := range hosts {
		args := []string{"install", host}
		if os.Getenv(captureEnv) != "" {
			// The hooks run the capturing script, not the binary it runs.
			args = append(args, "--command", filepath.Join(chartgateDir(t), "chartgate"))
		}
		out := p.chartgate(args...)
		p.installOutput += out
		t.Logf("chartgate install %s:\n%s", host, out)
	}
	return p
}

// nodeBin returns the node the hosts' npm launchers run on.
func nodeBin(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the hosts' launchers need it")
	}
	return p
}

// write writes a file of the project; writeHome one of the run's home
// (the host's user configuration).
func (p *project) write(rel, content string) {
	p.t.Helper()
	writeFile(p.t, filepath.Join(p.dir, rel), content)
}

func (p *project) writeHome(rel, content string) {
	p.t.Helper()
	writeFile(p.t, filepath.Join(p.home, rel), content)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// snapshot reads every file of the project but the store.
func (p *project) snapshot() map[string][]byte {
	p.t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(p.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(p.dir, path)
		if strings.HasPrefix(rel, filepath.Join(".chartgate", "state.db")) {
			return nil
		}
		data, err := os.ReadFile(path)
		files[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		p.t.Fatal(err)
	}
	return files
}

// env is the environment of chartgate and the host: no proxy, a home of
// its own, the PATH with chartgate on it.
func (p *project) env(extra ...string) []string {
	env := []string{
		"HOME=" + p.home,
		"PATH=" + p.path,
		"XDG_CONFIG_HOME=" + filepath.Join(p.home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(p.home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(p.home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(p.home, ".local", "state"),
		"TMPDIR=" + os.TempDir(),
		"LANG=C.UTF-8",
		"TERM=dumb",
		"NO_COLOR=1",
		"NO_PROXY=127.0.0.1,localhost",
	}
	return append(env, extra...)
}

// chartgate runs chartgate in the project and returns its output, failing
// the test if it fails.
func (p *project) chartgate(args ...string) string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(chartgateDir(p.t), "chartgate"), args...)
	cmd.Dir = p.dir
	cmd.Env = p.env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		p.t.Fatalf("chartgate %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// run runs a host's command in the project under a deadline, and returns
// its standard output and error.
func (p *project) run(limit time.Duration, env []string, bin string, args ...string) (stdout, stderr string, err error) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = p.dir
	cmd.Env = p.env(env...)
	cmd.Stdin = nil
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	// The host's children (its hooks, the gateway) go with it.
	setProcessGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err = cmd.Run()
	p.t.Logf("%s ran for %v (exit: %v)", filepath.Base(bin), time.Since(start).Round(time.Millisecond), err)
	if ctx.Err() != nil {
		err = errors.Join(err, errors.New("the host did not finish within "+limit.String()))
	}
	return o.String(), e.String(), err
}

// assertRestored checks that the project's files are as they were before
// chartgate install: every file byte for byte, none added (the store and
// what the run itself wrote aside).
func (p *project) assertRestored(ignore ...string) {
	p.t.Helper()
	after := p.snapshot()
	for name, data := range p.before {
		got, ok := after[name]
		switch {
		case !ok:
			p.t.Errorf("after uninstall, %s is gone", name)
		case !bytes.Equal(got, data):
			p.t.Errorf("after uninstall, %s differs:\nbefore:\n%s\nafter:\n%s", name, data, got)
		}
	}
	for name := range after {
		if _, ok := p.before[name]; !ok && !matchesAny(name, ignore) {
			p.t.Errorf("after uninstall, %s is left", name)
		}
	}
}

func matchesAny(name string, patterns []string) bool {
	for _, pat := range patterns {
		if ok, _ := filepath.Match(pat, name); ok {
			return true
		}
	}
	return false
}
