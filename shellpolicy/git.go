// This file defines the classification of git commands: global options,
// subcommands that read, write, reach the network or delete, and the files
// they write.

package shellpolicy

import (
	"slices"
	"strings"
)

// gitRead lists the subcommands that only read the repository.
var gitRead = []string{"log", "status", "diff", "show", "blame", "annotate", "shortlog", "describe", "rev-parse",
	"rev-list", "ls-files", "ls-tree", "cat-file", "grep", "whatchanged", "range-diff", "cherry", "show-ref",
	"show-branch", "for-each-ref", "name-rev", "merge-base", "count-objects", "fsck", "verify-commit", "verify-tag",
	"verify-pack", "check-ignore", "check-attr", "check-ref-format", "check-mailmap", "var", "help", "version",
	"diff-tree", "diff-files", "diff-index", "request-pull", "get-tar-commit-id", "merge-tree"}

// gitWorktree lists the writing subcommands that change files of the work
// tree (whose writes are recorded).
var gitWorktree = []string{"checkout", "switch", "restore", "reset", "stash", "pull", "merge", "rebase",
	"cherry-pick", "revert", "am", "apply", "rm", "mv", "bisect", "sparse-checkout", "read-tree", "checkout-index"}

// git handles git: global options, then the subcommand.
func (k *call) git() {
	c := k.c
	args := k.args
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.Dynamic {
			if a.mayBeOption() || i == 0 || !strings.HasPrefix(args[i-1].Value, "-") {
				c.explain(GitWrite, "the git subcommand is only known when the line runs")
				k.key(-1)
				k.key(i)
				return
			}
			continue
		}
		v := a.Value
		switch {
		case v == "-C" || v == "--git-dir" || v == "--work-tree" || v == "--namespace" || v == "--super-prefix" ||
			v == "--list-cmds" || v == "--attr-source":
			i++
		case v == "-c" || strings.HasPrefix(v, "-c") && !strings.HasPrefix(v, "--") || v == "--config-env" ||
			strings.HasPrefix(v, "--config-env=") || strings.HasPrefix(v, "--exec-path="):
			k.unknown("git " + v + " sets configuration, which can make git run any command")
			k.key(i)
			return
		case v == "--version" || v == "--help" || v == "-h" || v == "--exec-path" || v == "--html-path" ||
			v == "--man-path" || v == "--info-path":
			c.Class |= GitRead
			return
		case strings.HasPrefix(v, "-"):
		default:
			k.gitSub(i)
			return
		}
	}
	c.Class |= GitRead // git alone prints its help
}

// gitSub classifies the git subcommand at args[i].
func (k *call) gitSub(i int) {
	c := k.c
	sub := k.args[i].Value
	rest := k.args[i+1:]
	k.key(-1) // the word "git"
	k.key(i)
	first := "" // the first word after the subcommand, for sub-subcommands
	if len(rest) > 0 && !rest[0].Dynamic {
		first = rest[0].Value
	}
	dynamic := slices.ContainsFunc(rest, func(w Word) bool { return w.Dynamic && w.mayBeOption() })
	write := func(detail string) {
		if detail != "" {
			c.explain(GitWrite, detail)
		}
		c.Class |= GitWrite
		if slices.Contains(gitWorktree, sub) {
			k.gitWorktreeWrites(sub, rest)
		}
	}
	switch sub {
	case "clone":
		c.Class |= Network | FileWrite
		p := parseArgs(rest, optSpec{short: "obujc", long: []string{"origin", "branch", "upload-pack", "template",
			"reference", "reference-if-able", "separate-git-dir", "depth", "shallow-since", "shallow-exclude", "jobs",
			"config", "filter", "server-option", "bundle-uri", "ref-format", "revision"}})
		if p.has("-u", "--upload-pack", "-c", "--config", "--template") {
			k.unknown("git clone is given options that run a command or set configuration")
		}
		ops := p.words(rest)
		switch {
		case len(ops) >= 2:
			k.write(ops[1])
		case len(ops) == 1 && !ops[0].Dynamic:
			k.write(Word{Value: strings.TrimSuffix(lastElem(ops[0].Value), ".git")})
		default:
			k.writeUnknown()
		}
	case "fetch", "ls-remote":
		c.Class |= Network
		if slices.ContainsFunc(rest, func(w Word) bool { return strings.HasPrefix(w.Value, "--upload-pack") }) {
			k.unknown("git --upload-pack runs a command")
		}
	case "pull", "push":
		c.Class |= Network
		write("")
		if slices.ContainsFunc(rest, func(w Word) bool {
			return strings.HasPrefix(w.Value, "--upload-pack") || strings.HasPrefix(w.Value, "--receive-pack") || strings.HasPrefix(w.Value, "--exec")
		}) {
			k.unknown("git " + sub + " is given options that run a command")
		}
	case "clean":
		p := parseArgs(rest, optSpec{short: "e", long: []string{"exclude"}})
		if p.has("-n", "--dry-run") && !p.has("-f", "--force") && !p.dynamic {
			c.Class |= GitRead
			return
		}
		c.Class |= Destructive
		k.writeUnknown()
	case "branch", "tag":
		spec := optSpec{short: "u", long: []string{"contains", "no-contains", "merged", "no-merged", "points-at",
			"sort", "format", "set-upstream-to"}}
		writes := []string{"-d", "-D", "-m", "-M", "-c", "-C", "-f", "-u", "--delete", "--move", "--copy", "--force",
			"--set-upstream-to", "--unset-upstream", "--edit-description", "--track", "--no-track", "--create-reflog"}
		lists := []string{"-l", "--list"}
		if sub == "tag" {
			spec = optSpec{short: "mFu", long: []string{"contains", "no-contains", "merged", "no-merged", "points-at",
				"sort", "format", "message", "file", "local-user", "cleanup"}}
			writes = []string{"-d", "--delete", "-a", "--annotate", "-s", "--sign", "-m", "--message", "-F", "--file",
				"-f", "--force", "-u", "--local-user"}
			lists = []string{"-l", "--list", "-v", "--verify"}
		}
		p := parseArgs(rest, spec)
		for _, o := range p.opts {
			if slices.Contains(writes, o.name) {
				k.key(i + 1 + o.idx)
				write("")
				return
			}
		}
		if len(p.operands) > 0 && !p.has(lists...) || p.dynamic {
			write("")
			return
		}
		c.Class |= GitRead
	case "remote":
		if len(rest) == 0 || first == "-v" || first == "--verbose" || first == "show" || first == "get-url" {
			c.Class |= GitRead
			return
		}
		if first == "update" || first == "prune" {
			c.Class |= Network
		}
		k.key(i + 1)
		write("")
	case "stash":
		if first == "list" || first == "show" {
			c.Class |= GitRead
			return
		}
		if first != "" {
			k.key(i + 1)
		}
		write("")
	case "config":
		k.gitConfig(rest, write)
	case "worktree":
		if first == "list" {
			c.Class |= GitRead
			return
		}
		k.key(i + 1)
		write("")
		k.writeUnknown()
	case "submodule":
		switch first {
		case "status", "summary", "":
			c.Class |= GitRead
		case "foreach":
			k.key(i + 1)
			cmd := rest[1:]
			for len(cmd) > 0 && !cmd[0].Dynamic && strings.HasPrefix(cmd[0].Value, "-") {
				cmd = cmd[1:]
			}
			if len(cmd) == 0 {
				return
			}
			for _, w := range cmd {
				if w.Dynamic {
					k.unknown("the command of git submodule foreach is only known when the line runs")
					return
				}
			}
			k.w.reparse(joinValues(cmd), Bash, "git submodule foreach", c, k.sc)
		default:
			k.key(i + 1)
			if first == "update" || first == "add" || first == "sync" {
				c.Class |= Network
			}
			write("")
			k.writeUnknown()
		}
	case "notes":
		if len(rest) == 0 || first == "list" || first == "show" {
			c.Class |= GitRead
			return
		}
		write("")
	case "reflog":
		if first == "expire" || first == "delete" {
			k.key(i + 1)
			write("")
			return
		}
		c.Class |= GitRead
	case "archive":
		p := parseArgs(rest, optSpec{short: "o", long: []string{"output", "remote", "exec", "format", "prefix", "add-file", "add-virtual-file"}})
		if p.has("--exec") {
			k.unknown("git archive --exec runs a command")
		}
		if p.has("--remote") {
			c.Class |= Network
		}
		c.Class |= GitRead
		for _, o := range p.values("-o", "--output") {
			c.Class |= FileWrite
			k.write(o)
		}
	case "format-patch":
		c.Class |= GitRead
		if slices.ContainsFunc(rest, func(w Word) bool { return w.Value == "--stdout" }) {
			return
		}
		c.Class |= FileWrite
		k.writeUnknown()
	case "bundle":
		c.Class |= GitRead
		if first == "create" {
			c.Class |= FileWrite
			if len(rest) > 1 {
				k.write(rest[1])
			}
		}
	case "apply":
		p := parseArgs(rest, optSpec{short: "pC", long: []string{"exclude", "include", "directory", "whitespace", "build-fake-ancestor"}})
		if !p.dynamic && !p.has("--index", "--cached", "--3way", "-3", "--apply") &&
			p.has("--check", "--stat", "--numstat", "--summary") {
			c.Class |= GitRead
			return
		}
		write("")
	case "difftool", "mergetool":
		write("git " + sub + " runs an external tool")
	default:
		if !slices.Contains(gitRead, sub) {
			detail := ""
			if !isGitWrite(sub) {
				detail = "git " + sub + " is not a subcommand this analysis knows (an alias or an extension), so it is taken to change the repository"
			}
			write(detail)
			return
		}
		c.Class |= GitRead
		if sub == "grep" && slices.ContainsFunc(rest, func(w Word) bool {
			return w.Value == "-O" || strings.HasPrefix(w.Value, "--open-files-in-pager")
		}) {
			k.unknown("git grep -O runs a pager")
		}
		for j, w := range rest {
			if w.Dynamic {
				continue
			}
			if v, ok := strings.CutPrefix(w.Value, "--output="); ok {
				c.Class |= FileWrite
				k.write(Word{Value: v})
			} else if w.Value == "--output" && j+1 < len(rest) {
				c.Class |= FileWrite
				k.write(rest[j+1])
			}
		}
		if dynamic {
			c.explain(FileWrite, "git options only known when the line runs may write a file (--output)")
		}
	}
}

// gitConfig classifies git config: reading a value or listing is GitRead,
// anything else changes configuration.
func (k *call) gitConfig(rest []Word, write func(string)) {
	p := parseArgs(rest, optSpec{short: "f", long: []string{"file", "blob", "type", "default", "comment", "value"}})
	ops := p.words(rest)
	writing := p.dynamic || p.has("--add", "--unset", "--unset-all", "--replace-all", "--rename-section",
		"--remove-section", "--edit", "-e")
	reading := p.has("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l") ||
		len(ops) > 0 && !ops[0].Dynamic && (ops[0].Value == "get" || ops[0].Value == "list") ||
		len(ops) == 1
	if reading && !writing {
		k.c.Class |= GitRead
		return
	}
	write("git config changes the configuration, which can make git run any command")
}

// isGitWrite reports whether sub is a known git subcommand that changes
// the repository or the work tree.
func isGitWrite(sub string) bool {
	switch sub {
	case "commit", "push", "reset", "rebase", "merge", "cherry-pick", "revert", "am", "checkout", "switch",
		"restore", "add", "rm", "mv", "init", "gc", "prune", "repack", "maintenance", "update-ref", "update-index",
		"symbolic-ref", "filter-branch", "filter-repo", "replace", "commit-tree", "write-tree", "read-tree", "bisect",
		"sparse-checkout", "pull", "stash", "checkout-index", "fast-import", "pack-refs", "hash-object", "lfs",
		"commit-graph", "multi-pack-index", "unpack-objects", "mktag", "mktree", "merge-file", "notes", "citool", "gui":
		return true
	}
	return false
}

// gitWorktreeWrites records the files a work-tree-changing subcommand
// writes: the paths after "--" (or the operands of rm, mv, restore) when
// they are given, files that cannot be named otherwise.
func (k *call) gitWorktreeWrites(sub string, rest []Word) {
	dash := slices.IndexFunc(rest, func(w Word) bool { return !w.Dynamic && w.Value == "--" })
	var paths []Word
	switch {
	case dash >= 0:
		paths = rest[dash+1:]
	case sub == "rm" || sub == "mv" || sub == "restore":
		paths = parseArgs(rest, optSpec{short: "s", long: []string{"source", "pathspec-from-file"}}).words(rest)
	}
	if len(paths) == 0 || slices.ContainsFunc(rest, func(w Word) bool { return w.Dynamic && w.mayBeOption() }) {
		k.writeUnknown()
	}
	for _, p := range paths {
		k.write(p)
	}
}
