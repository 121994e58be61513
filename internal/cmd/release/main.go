// Command release builds chartgate for people who write no Go: an archive
// per platform and the npm packages that install the right binary.
//
//	go run ./internal/cmd/release -version 1.2.0 [-targets linux/amd64,...] [-out dist] [-pack]
//
// For each target (by default linux, darwin and windows on amd64 and
// arm64) it builds cmd/chartgate with CGO off, -trimpath and the version
// stamped (-ldflags -X main.releaseVersion, which chartgate --version
// prints), and writes into -out:
//
//   - chartgate_VERSION_OS_ARCH.tar.gz (.zip for windows): the binary
//     (on Linux also the hook client, cmd/chartgate-hook), LICENSE and
//     README.md, and SHA256SUMS over the archives;
//   - npm/chartgate-PLATFORM-ARCH/: the package @chartgate/chartgate-PLATFORM-ARCH
//     (Node.js names: linux, darwin, win32; x64, arm64), its "os" and
//     "cpu" set, the binaries in bin/;
//   - npm/chartgate/: the package chartgate (npm/chartgate in the
//     repository), whose optionalDependencies name every platform's
//     package at this version, and whose bin/chartgate.js runs the
//     binary of the platform it is installed on. It has no other
//     dependency and no install script: npm installs only the platform
//     package whose os and cpu match, as it does for the MCP servers and
//     agent hosts shipped as native binaries (Copilot CLI, esbuild).
//
// With -pack, npm pack writes each package's tarball into npm/. Publish
// the platform packages before chartgate.
package main

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// allTargets are the platforms a release is built for.
var allTargets = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "windows/arm64"}

func main() {
	version := flag.String("version", "", "the release's version, such as 1.2.0 (required)")
	targets := flag.String("targets", strings.Join(allTargets, ","), "GOOS/GOARCH pairs to build, comma-separated")
	out := flag.String("out", "dist", "the folder to write into (created; must be empty or missing)")
	pack := flag.Bool("pack", false, "run npm pack on each npm package")
	flag.Parse()
	if err := release(*version, strings.Split(*targets, ","), *out, *pack); err != nil {
		fmt.Fprintf(os.Stderr, "release: %v\n", err)
		os.Exit(1)
	}
}

// semver is the form of an npm version.
var semver = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

func release(version string, targets []string, out string, pack bool) error {
	version = strings.TrimPrefix(version, "v")
	if !semver.MatchString(version) {
		return fmt.Errorf("-version %q: want a semantic version such as 1.2.0 or 1.2.0-rc.1", version)
	}
	for _, t := range targets {
		if !slices.Contains(allTargets, t) {
			return fmt.Errorf("-targets: %q is not one of %s", t, strings.Join(allTargets, ", "))
		}
	}
	root, err := repoRoot()
	if err != nil {
		return err
	}
	if entries, err := os.ReadDir(out); err == nil && len(entries) > 0 {
		return fmt.Errorf("-out %s is not empty", out)
	}
	if out, err = filepath.Abs(out); err != nil {
		return err
	}
	var sums []string
	for _, t := range targets {
		goos, goarch, _ := strings.Cut(t, "/")
		exe := "chartgate"
		if goos == "windows" {
			exe += ".exe"
		}
		build := filepath.Join(out, "build", goos+"-"+goarch)
		bin := filepath.Join(build, exe)
		fmt.Printf("building %s\n", t)
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X main.releaseVersion="+version, "-o", bin, "./cmd/chartgate")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("building %s: %w", t, err)
		}
		files := map[string]string{exe: bin, "LICENSE": filepath.Join(root, "LICENSE"), "README.md": filepath.Join(root, "README.md")}
		bins := []string{bin}
		if goos == "linux" {
			// The hook client, which `chartgate install` writes in the
			// hooks when it sits beside chartgate (Linux only).
			client := filepath.Join(build, "chartgate-hook")
			cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", client, "./cmd/chartgate-hook")
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch)
			cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("building the hook client for %s: %w", t, err)
			}
			files["chartgate-hook"] = client
			bins = append(bins, client)
		}
		name := fmt.Sprintf("chartgate_%s_%s_%s", version, goos, goarch)
		archive := filepath.Join(out, name+".tar.gz")
		if goos == "windows" {
			archive = filepath.Join(out, name+".zip")
			err = writeZip(archive, name, files)
		} else {
			err = writeTarGz(archive, name, files)
		}
		if err != nil {
			return err
		}
		sum, err := sha256File(archive)
		if err != nil {
			return err
		}
		sums = append(sums, sum+"  "+filepath.Base(archive))
		if err := platformPackage(filepath.Join(out, "npm"), version, goos, goarch, bins...); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(out, "SHA256SUMS"), []byte(strings.Join(sums, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	if err := mainPackage(filepath.Join(root, "npm", "chartgate"), filepath.Join(out, "npm", "chartgate"), version); err != nil {
		return err
	}
	if pack {
		dirs, err := filepath.Glob(filepath.Join(out, "npm", "chartgate*"))
		if err != nil {
			return err
		}
		for _, d := range dirs {
			if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
				continue
			}
			cmd := exec.Command("npm", "pack", "--silent", "--pack-destination", filepath.Join(out, "npm"))
			cmd.Dir = d
			cmd.Stderr = os.Stderr
			b, err := cmd.Output()
			if err != nil {
				return fmt.Errorf("npm pack in %s: %w", d, err)
			}
			fmt.Printf("packed %s\n", strings.TrimSpace(string(b)))
		}
	}
	fmt.Printf("wrote %s\n", out)
	return nil
}

// repoRoot is the module's folder (where go.mod is), from the working
// directory up.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run it inside the chartgate repository (no go.mod above the working directory)")
		}
		dir = parent
	}
}

// nodeNames are Node.js's names of Go's platforms and architectures
// (process.platform, process.arch).
var nodeNames = map[string]string{"linux": "linux", "darwin": "darwin", "windows": "win32", "amd64": "x64", "arm64": "arm64"}

// platformName is the npm package of one platform.
func platformName(goos, goarch string) string {
	return "@chartgate/chartgate-" + nodeNames[goos] + "-" + nodeNames[goarch]
}

// platformPackage writes the npm package of one platform's binaries.
func platformPackage(npmDir, version, goos, goarch string, bins ...string) error {
	dir := filepath.Join(npmDir, "chartgate-"+nodeNames[goos]+"-"+nodeNames[goarch])
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		return err
	}
	manifest := map[string]any{
		"name":            platformName(goos, goarch),
		"version":         version,
		"description":     fmt.Sprintf("The chartgate binary for %s-%s (installed by the package chartgate)", nodeNames[goos], nodeNames[goarch]),
		"license":         "Apache-2.0",
		"repository":      map[string]string{"type": "git", "url": "git+https://github.com/chartgate/chartgate.git"},
		"os":              []string{nodeNames[goos]},
		"cpu":             []string{nodeNames[goarch]},
		"files":           []string{"bin/"},
		"preferUnplugged": true,
	}
	if err := writeJSON(filepath.Join(dir, "package.json"), manifest); err != nil {
		return err
	}
	for _, bin := range bins {
		if err := copyFile(filepath.Join(dir, "bin", filepath.Base(bin)), bin, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// mainPackage writes the package chartgate from its source folder: its
// version, and every platform's package as an optional dependency at that
// version.
func mainPackage(src, dst, version string) error {
	data, err := os.ReadFile(filepath.Join(src, "package.json"))
	if err != nil {
		return err
	}
	var manifest map[string]any
	if err := json.Unmarshal(data, &manifest); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(src, "package.json"), err)
	}
	manifest["version"] = version
	deps := map[string]string{}
	for _, t := range allTargets {
		goos, goarch, _ := strings.Cut(t, "/")
		deps[platformName(goos, goarch)] = version
	}
	manifest["optionalDependencies"] = deps
	if err := os.MkdirAll(filepath.Join(dst, "bin"), 0o755); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(dst, "package.json"), manifest); err != nil {
		return err
	}
	if err := copyFile(filepath.Join(dst, "README.md"), filepath.Join(src, "README.md"), 0o644); err != nil {
		return err
	}
	return copyFile(filepath.Join(dst, "bin", "chartgate.js"), filepath.Join(src, "bin", "chartgate.js"), 0o755)
}

// writeJSON writes v indented, with <, > and & as they are (npm shows
// the manifest's text).
func writeJSON(path string, v any) error {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func copyFile(dst, src string, mode os.FileMode) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.WriteFile(dst, data, mode); err != nil {
		return err
	}
	return os.Chmod(dst, mode)
}

// sortedNames returns the archive's file names, the binary first.
func sortedNames(files map[string]string) []string {
	var names []string
	for n := range files {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		ab, bb := strings.HasPrefix(a, "chartgate"), strings.HasPrefix(b, "chartgate")
		switch {
		case ab && !bb:
			return -1
		case bb && !ab:
			return 1
		}
		return strings.Compare(a, b)
	})
	return names
}

// writeTarGz writes files (name in the archive: path on disk) under the
// folder prefix of a .tar.gz.
func writeTarGz(path, prefix string, files map[string]string) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	for _, name := range sortedNames(files) {
		fi, err := os.Stat(files[name])
		if err != nil {
			return err
		}
		hdr, err := tar.FileInfoHeader(fi, "")
		if err != nil {
			return err
		}
		hdr.Name = prefix + "/" + name
		hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = 0, 0, "", ""
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if err := copyInto(tw, files[name]); err != nil {
			return err
		}
	}
	return errors.Join(tw.Close(), gz.Close())
}

// writeZip writes files under the folder prefix of a .zip.
func writeZip(path, prefix string, files map[string]string) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	zw := zip.NewWriter(f)
	for _, name := range sortedNames(files) {
		fi, err := os.Stat(files[name])
		if err != nil {
			return err
		}
		hdr, err := zip.FileInfoHeader(fi)
		if err != nil {
			return err
		}
		hdr.Name = prefix + "/" + name
		hdr.Method = zip.Deflate
		w, err := zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		if err := copyInto(w, files[name]); err != nil {
			return err
		}
	}
	return zw.Close()
}

func copyInto(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

func sha256File(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
