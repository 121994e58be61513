// This file checks testdata/statewright-ledger.md, the map from each of
// Statewright's tests to the test of ours that covers it: every test the
// ledger names exists, so that a renamed or deleted test cannot leave a
// row pointing at nothing.

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStatewrightLedgerNamesRealTests(t *testing.T) {
	ledger, err := os.ReadFile(filepath.Join("testdata", "statewright-ledger.md"))
	require.NoError(t, err)

	// Every test function of the repository, by name.
	defined := map[string]bool{}
	funcRE := regexp.MustCompile(`(?m)^func (Test[A-Za-z0-9_]+)\(`)
	err = filepath.WalkDir(filepath.Join("..", ".."), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range funcRE.FindAllSubmatch(src, -1) {
			defined[string(m[1])] = true
		}
		return nil
	})
	require.NoError(t, err)

	rows, named := 0, 0
	nameRE := regexp.MustCompile(`\bTest[A-Z][A-Za-z0-9_]*`)
	for i, line := range strings.Split(string(ledger), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 6 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") || strings.TrimSpace(cells[1]) == "File" {
			continue
		}
		rows++
		status := strings.TrimSpace(cells[3])
		ours := cells[4]
		names := nameRE.FindAllString(ours, -1)
		if status != "n.a." {
			assert.NotEmpty(t, names, "ledger line %d (%s %s, %s) names no test of ours", i+1, strings.TrimSpace(cells[1]), strings.TrimSpace(cells[2]), status)
		}
		for _, n := range names {
			named++
			assert.True(t, defined[n], "ledger line %d names %s, which is no test of the repository", i+1, n)
		}
	}
	assert.Greater(t, rows, 200, "the ledger's table was not read")
	t.Logf("%d rows, %d test names checked", rows, named)
}
