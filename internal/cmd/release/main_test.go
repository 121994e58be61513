package main

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPackages: the package chartgate names every platform's package at
// the release's version as an optional dependency, keeps its launcher as
// its bin and has no other dependency nor install script; a platform's
// package has the Node.js os and cpu of its target and the binary,
// executable, in bin/.
func TestPackages(t *testing.T) {
	root, err := repoRoot()
	require.NoError(t, err)
	out := t.TempDir()
	require.NoError(t, mainPackage(filepath.Join(root, "npm", "chartgate"), filepath.Join(out, "chartgate"), "1.2.3"))
	var m struct {
		Name                 string
		Version              string
		Bin                  map[string]string
		Dependencies         map[string]string
		OptionalDependencies map[string]string
		Scripts              map[string]string
	}
	data, err := os.ReadFile(filepath.Join(out, "chartgate", "package.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &m))
	assert.Equal(t, "chartgate", m.Name)
	assert.Equal(t, "1.2.3", m.Version)
	assert.Equal(t, map[string]string{"chartgate": "bin/chartgate.js"}, m.Bin)
	assert.Empty(t, m.Dependencies)
	assert.Empty(t, m.Scripts, "no install script")
	assert.Contains(t, string(data), `"node": ">=18"`)
	assert.Equal(t, map[string]string{
		"@chartgate/chartgate-linux-x64": "1.2.3", "@chartgate/chartgate-linux-arm64": "1.2.3",
		"@chartgate/chartgate-darwin-x64": "1.2.3", "@chartgate/chartgate-darwin-arm64": "1.2.3",
		"@chartgate/chartgate-win32-x64": "1.2.3", "@chartgate/chartgate-win32-arm64": "1.2.3",
	}, m.OptionalDependencies)
	fi, err := os.Stat(filepath.Join(out, "chartgate", "bin", "chartgate.js"))
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode().Perm()&0o100, "the launcher is executable")

	bin := filepath.Join(t.TempDir(), "chartgate.exe")
	require.NoError(t, os.WriteFile(bin, []byte("MZ"), 0o755))
	require.NoError(t, platformPackage(out, "1.2.3", "windows", "arm64", bin))
	var p struct {
		Name, Version string
		OS, CPU       []string
	}
	data, err = os.ReadFile(filepath.Join(out, "chartgate-win32-arm64", "package.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &p))
	assert.Equal(t, "@chartgate/chartgate-win32-arm64", p.Name)
	assert.Equal(t, []string{"win32"}, p.OS)
	assert.Equal(t, []string{"arm64"}, p.CPU)
	fi, err = os.Stat(filepath.Join(out, "chartgate-win32-arm64", "bin", "chartgate.exe"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), fi.Mode().Perm())
}

// TestArchives: the archives hold the files under one folder, the binary
// first and executable.
func TestArchives(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "chartgate")
	require.NoError(t, os.WriteFile(bin, []byte("ELF"), 0o755))
	license := filepath.Join(dir, "LICENSE")
	require.NoError(t, os.WriteFile(license, []byte("license"), 0o644))
	files := map[string]string{"chartgate": bin, "LICENSE": license}

	tgz := filepath.Join(dir, "a.tar.gz")
	require.NoError(t, writeTarGz(tgz, "chartgate_1.2.3_linux_amd64", files))
	f, err := os.Open(tgz)
	require.NoError(t, err)
	defer f.Close()
	gz, err := gzip.NewReader(f)
	require.NoError(t, err)
	tr := tar.NewReader(gz)
	var names []string
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, h.Name)
		if h.Name == "chartgate_1.2.3_linux_amd64/chartgate" {
			assert.Equal(t, int64(0o755), h.Mode&0o777)
		}
	}
	assert.Equal(t, []string{"chartgate_1.2.3_linux_amd64/chartgate", "chartgate_1.2.3_linux_amd64/LICENSE"}, names)

	zp := filepath.Join(dir, "a.zip")
	require.NoError(t, writeZip(zp, "chartgate_1.2.3_windows_amd64", files))
	zr, err := zip.OpenReader(zp)
	require.NoError(t, err)
	defer zr.Close()
	names = nil
	for _, zf := range zr.File {
		names = append(names, zf.Name)
	}
	assert.Equal(t, []string{"chartgate_1.2.3_windows_amd64/chartgate", "chartgate_1.2.3_windows_amd64/LICENSE"}, names)
}

// TestReleaseRefusesBadInput: a version npm would not take, or a target
// that is not built, is refused before anything is built.
func TestReleaseRefusesBadInput(t *testing.T) {
	out := filepath.Join(t.TempDir(), "dist")
	assert.EqualError(t, release("1.2", []string{"linux/amd64"}, out, false), `-version "1.2": want a semantic version such as 1.2.0 or 1.2.0-rc.1`)
	assert.EqualError(t, release("v1.2.0", []string{"plan9/amd64"}, out, false), `-targets: "plan9/amd64" is not one of linux/amd64, linux/arm64, darwin/amd64, darwin/arm64, windows/amd64, windows/arm64`)
	_, err := os.Stat(out)
	assert.True(t, os.IsNotExist(err))
}
