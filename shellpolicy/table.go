// This file defines the command table for builtins, file commands and
// network commands: which class each has and which files it writes.

package shellpolicy

import (
	"path"
	"slices"
	"strings"
)

// builtin handles the shell builtins with effects on variables or the
// directory. It reports whether it knew the command.
func (k *call) builtin() bool {
	c := k.c
	switch k.name {
	case "cd", "pushd":
		p := parseArgs(k.args, optSpec{})
		if p.dynamic {
			k.sc.dirUnknown = true
			return true
		}
		k.sc.cd(p.words(k.args))
	case "popd":
		k.sc.dirUnknown = true
	case "printenv":
		if len(k.args) == 0 {
			c.EnvReads = append(c.EnvReads, "*")
		}
		for _, a := range k.args {
			if a.Dynamic {
				c.EnvReads = append(c.EnvReads, "*")
			} else if !strings.HasPrefix(a.Value, "-") {
				c.nameRef(a.Value, false)
			}
		}
	case "env":
		c.EnvReads = append(c.EnvReads, "*") // env running no command prints the environment
	case "set":
		if len(k.args) == 0 {
			c.EnvReads = append(c.EnvReads, "*")
		}
	case "export", "readonly", "declare", "typeset", "local":
		p := parseArgs(k.args, optSpec{})
		if len(p.operands) == 0 && k.name != "local" || p.has("-p") {
			c.EnvReads = append(c.EnvReads, "*")
		}
		for _, a := range p.words(k.args) {
			if a.Dynamic {
				c.unknown("the names given to " + k.name + " are only known when the line runs")
				continue
			}
			name, val, _ := strings.Cut(a.Value, "=")
			c.nameRef(name, true)
			if execVar(name) && strings.Contains(a.Value, "=") {
				c.unknown("setting " + name + " changes which program or code runs")
			}
			if holdsSubst(val) {
				c.unknown("it stores text holding a command substitution in " + name + ", which bash runs if the variable is used in arithmetic")
			}
		}
	case "unset":
		p := parseArgs(k.args, optSpec{})
		if !p.has("-f") {
			for _, a := range p.words(k.args) {
				if !a.Dynamic {
					c.nameRef(a.Value, true)
				}
			}
		}
	case "read":
		p := parseArgs(k.args, optSpec{short: "adinNptu"})
		for _, v := range p.values("-a") {
			c.nameRef(v.Value, true)
		}
		names := p.words(k.args)
		if len(names) == 0 && !p.has("-a") {
			c.setVar("REPLY")
		}
		for _, a := range names {
			if !a.Dynamic {
				c.nameRef(a.Value, true)
			}
		}
		if k.in.stdin == stdinStatic && holdsSubst(k.in.stdinText) {
			c.unknown("read stores text holding a command substitution, which bash runs if the variable is used in arithmetic")
		}
	case "printf":
		p := parseArgs(k.args, optSpec{short: "v"})
		if vs := p.values("-v"); len(vs) > 0 {
			c.nameRef(vs[0].Value, true)
			for _, a := range p.words(k.args) {
				if !a.Dynamic && holdsSubst(a.Value) {
					c.unknown("printf -v stores text holding a command substitution, which bash runs if the variable is used in arithmetic")
				}
			}
		}
	case "mapfile", "readarray":
		p := parseArgs(k.args, optSpec{short: "dnOsuCc"})
		for _, cb := range p.values("-C") {
			k.runString(cb, k.w.dialect, k.name+" -C")
		}
		names := p.words(k.args)
		if len(names) == 0 {
			c.setVar("MAPFILE")
		}
		for _, a := range names {
			if !a.Dynamic {
				c.nameRef(a.Value, true)
			}
		}
	case "getopts":
		if len(k.args) >= 2 && !k.args[1].Dynamic {
			c.nameRef(k.args[1].Value, true)
		}
	case "test", "[":
		for i, a := range k.args {
			if !a.Dynamic && a.Value == "-v" && i+1 < len(k.args) && !k.args[i+1].Dynamic {
				c.nameRef(k.args[i+1].Value, false)
			}
		}
	default:
		return false
	}
	return true
}

// files handles the commands that read, search, change, write or delete
// files. It reports whether it knew the command.
func (k *call) files() bool {
	c := k.c
	switch n := k.name; n {
	case "cat", "head", "tail", "bat", "batcat", "tac", "nl", "od", "hexdump", "strings",
		"zcat", "bzcat", "xzcat", "zless", "zmore":
		c.Class |= FileRead
	case "xxd":
		c.Class |= FileRead
		p := parseArgs(k.args, optSpec{short: "cglosC", long: []string{"cols", "groupsize", "len", "seek", "offset"}})
		if p.has("-r", "-revert") {
			if ops := p.words(k.args); len(ops) >= 2 {
				c.Class |= FileWrite
				k.write(ops[1])
			}
		}
	case "grep", "egrep", "fgrep", "rg", "ag", "ack", "ack-grep", "zgrep":
		c.Class |= ContentSearch
		if n == "rg" {
			for _, a := range k.args {
				if a.Dynamic && a.mayBeOption() || strings.HasPrefix(a.Value, "--pre") {
					k.unknown("rg --pre runs a command on each file")
					break
				}
			}
		}
	case "locate", "plocate", "mlocate", "mdfind":
		c.Class |= FileSearch
	case "less", "more", "most":
		c.Class |= FileRead
		for _, a := range k.args {
			if a.Dynamic && a.mayBeOption() || strings.HasPrefix(a.Value, "+") {
				k.unknown(n + " runs the commands given with +, which can run shell commands")
				break
			}
		}
	case "man":
		p := parseArgs(k.args, optSpec{short: "PHMLmSsCRE", long: []string{"pager", "html", "manpath", "locale", "systems", "sections", "config-file", "recode", "encoding"}})
		if p.has("-P", "--pager", "-H", "--html") || p.dynamic {
			k.unknown("man -P and -H run the program they name")
		}
	case "make", "gmake", "bmake":
		p := parseArgs(k.args, optSpec{short: "fCIjlOWoE", long: []string{"file", "makefile", "directory", "include-dir", "jobs", "load-average", "output-sync", "what-if", "new-file", "assume-new", "old-file", "assume-old", "eval"}})
		for _, f := range p.values("-f", "--file", "--makefile") {
			if f.Dynamic || stdinPath(f.Value) {
				c.explain(FileWrite, "make runs rules read from standard input, which can write files")
			}
		}
		if p.has("-E", "--eval") || p.dynamic {
			c.explain(FileWrite, "make runs the rules given on its command line, which can write files")
		}
	case "patch":
		k.patch()
	case "ed", "red":
		c.Class |= FileModify
		k.writeOperands(optSpec{short: "p"}, 0)
		if k.in.stdin != stdinStatic || strings.Contains(k.in.stdinText, "!") {
			c.explain(FileWrite, "ed commands can run shell commands and write any file")
		}
	case "ex", "vi", "vim", "nvim", "view", "nano", "emacs", "pico", "micro", "helix", "hx", "kak":
		c.Class |= FileModify
		p := parseArgs(k.args, optSpec{short: "cSsuUiTwWrdqt", long: []string{"cmd", "eval", "load", "script", "funcall"}})
		for _, w := range p.words(k.args) {
			if strings.HasPrefix(w.Value, "+") {
				c.explain(FileWrite, n+" runs the commands given in its arguments, which can write any file")
				continue
			}
			k.write(w)
		}
		if p.has("-c", "--cmd", "-S", "-s", "--eval", "--load", "--script", "--funcall", "-x", "-u") || p.dynamic || k.in.stdin != stdinNone {
			c.explain(FileWrite, n+" runs the commands given in its arguments, which can write any file")
		}
	case "chmod", "chown", "chgrp", "chattr", "setfacl", "touch", "mkdir", "mkfifo", "mknod", "dos2unix", "unix2dos":
		k.attrs()
	case "gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "lzma", "unlzma", "zstd", "unzstd", "lz4", "unlz4",
		"compress", "uncompress", "pigz", "unpigz", "brotli":
		p := parseArgs(k.args, optSpec{short: "S", long: []string{"suffix"}})
		if p.has("-c", "--stdout", "--to-stdout", "-l", "--list", "-t", "--test", "-h", "--help", "-V", "--version") && !p.dynamic {
			c.Class |= FileRead
			return true
		}
		c.Class |= FileModify
		for _, w := range p.words(k.args) {
			k.write(w)
		}
	case "tee":
		p := parseArgs(k.args, optSpec{})
		for _, w := range p.words(k.args) {
			if w.Dynamic || !harmlessDevice(w.Value) {
				c.Class |= FileWrite
			}
			k.write(w)
		}
		if p.dynamic {
			c.Class |= FileWrite
		}
	case "cp", "mv", "install", "ln", "link":
		k.copy()
	case "rsync":
		k.rsync()
	case "dd":
		k.dd()
	case "tar", "bsdtar", "gtar":
		k.tar()
	case "unzip":
		p := parseArgs(k.args, optSpec{short: "dxP"})
		if p.has("-l", "-v", "-t", "-Z", "-p", "-c", "-z") && !p.dynamic {
			c.Class |= FileRead
			return true
		}
		c.Class |= FileWrite
		if d := p.values("-d"); len(d) > 0 {
			k.writeInto(d[0])
		} else {
			k.writeUnknown()
		}
	case "zip":
		p := parseArgs(k.args, optSpec{short: "bnPtOZs", long: []string{"unzip-command", "temp-path", "suffixes", "password", "output-file"}})
		if p.has("--unzip-command") || slices.ContainsFunc(k.args, func(w Word) bool { return w.Value == "-TT" }) {
			k.unknown("zip -TT runs a command")
			return true
		}
		c.Class |= FileWrite
		if ops := p.words(k.args); len(ops) > 0 {
			k.write(ops[0])
		}
	case "7z", "7za", "7zr":
		if len(k.args) > 0 && !k.args[0].Dynamic && (k.args[0].Value == "l" || k.args[0].Value == "t") {
			c.Class |= FileRead
			return true
		}
		c.Class |= FileWrite
		if len(k.args) > 1 && !k.args[0].Dynamic && (k.args[0].Value == "a" || k.args[0].Value == "u" || k.args[0].Value == "d") {
			k.write(k.args[1])
		} else {
			k.writeUnknown()
		}
	case "cpio":
		p := parseArgs(k.args, optSpec{short: "FHIMOREs"})
		if p.has("-i", "--extract", "-p", "--pass-through") || p.dynamic {
			c.Class |= FileWrite
			k.writeUnknown()
		}
		for _, v := range p.values("-O", "-F") {
			c.Class |= FileWrite
			k.write(v)
		}
	case "sort":
		p := parseArgs(k.args, optSpec{short: "kotST", long: []string{"output", "key", "field-separator", "buffer-size", "temporary-directory", "compress-program", "files0-from", "batch-size", "parallel", "random-source", "sort"}})
		if p.has("--compress-program") {
			k.unknown("sort --compress-program runs a command")
		}
		for _, v := range p.values("-o", "--output") {
			c.Class |= FileWrite
			k.write(v)
		}
		if p.dynamic {
			c.Class |= FileWrite
		}
	case "uniq":
		p := parseArgs(k.args, optSpec{short: "fsw", long: []string{"skip-fields", "skip-chars", "check-chars"}})
		if ops := p.words(k.args); len(ops) >= 2 {
			c.Class |= FileWrite
			k.write(ops[1])
		}
		if p.dynamic {
			c.Class |= FileWrite
		}
	case "split", "csplit", "gsplit":
		c.Class |= FileWrite
		k.writeUnknown()
	case "rm", "rmdir", "unlink", "shred", "srm", "wipe", "truncate", "wipefs", "mkswap", "mke2fs", "fdisk", "sfdisk",
		"parted", "sgdisk", "blkdiscard":
		c.Class |= Destructive
		c.keys = append(c.keys, 0)
		spec := optSpec{}
		switch n {
		case "truncate":
			spec = optSpec{short: "sr", long: []string{"size", "reference"}}
		case "shred":
			spec = optSpec{short: "ns", long: []string{"iterations", "size", "random-source"}}
		}
		k.writeOperands(spec, 0)
	default:
		if strings.HasPrefix(n, "mkfs") {
			c.Class |= Destructive
			c.keys = append(c.keys, 0)
			return true
		}
		return false
	}
	return true
}

// writeOperands records the operands from index from on as written (a
// dynamic operand as a dynamic path).
func (k *call) writeOperands(spec optSpec, from int) {
	p := parseArgs(k.args, spec)
	ops := p.words(k.args)
	for i := from; i < len(ops); i++ {
		k.write(ops[i])
	}
}

// attrs handles the commands that create files or change their attributes:
// chmod, chown, chgrp (FileModify: the first operand is the mode or owner),
// touch, mkdir, mkfifo, mknod (FileWrite).
func (k *call) attrs() {
	switch k.name {
	case "chmod", "chown", "chgrp", "chattr", "setfacl":
		k.c.Class |= FileModify
		p := parseArgs(k.args, optSpec{short: "mMxX", long: []string{"reference", "from", "modify", "remove", "set", "set-file"}})
		from := 1
		if p.has("--reference") || k.name == "setfacl" {
			from = 0
		}
		ops := p.words(k.args)
		for i := from; i < len(ops); i++ {
			k.write(ops[i])
		}
	case "dos2unix", "unix2dos":
		k.c.Class |= FileModify
		k.writeOperands(optSpec{}, 0)
	case "touch":
		k.c.Class |= FileWrite
		k.writeOperands(optSpec{short: "rdt", long: []string{"reference", "date", "time"}}, 0)
	case "mkdir", "mkfifo":
		k.c.Class |= FileWrite
		k.writeOperands(optSpec{short: "mZ", long: []string{"mode", "context"}}, 0)
	case "mknod":
		k.c.Class |= FileWrite
		p := parseArgs(k.args, optSpec{short: "mZ", long: []string{"mode", "context"}})
		if ops := p.words(k.args); len(ops) > 0 {
			k.write(ops[0])
		}
	}
}

// patch handles patch: FileModify on the file named, or on files named in
// the patch.
func (k *call) patch() {
	c := k.c
	p := parseArgs(k.args, optSpec{short: "pioBDdrFVYzg", long: []string{"strip", "input", "output", "prefix", "ifdef",
		"directory", "reject-file", "fuzz", "version-control", "basename-prefix", "suffix", "get", "quoting-style"}})
	if p.has("--dry-run", "-C", "--check") && !p.dynamic {
		return
	}
	c.Class |= FileModify
	ops := p.words(k.args)
	outs := p.values("-o", "--output")
	switch {
	case len(outs) > 0:
		for _, o := range outs {
			k.write(o)
		}
	case len(ops) > 0:
		k.write(ops[0])
	default:
		k.writeUnknown()
	}
	for _, r := range p.values("-r", "--reject-file") {
		k.write(r)
	}
}

// copy handles cp, mv, install, ln and link: FileWrite on the destination
// (and, for mv, on the sources it removes).
func (k *call) copy() {
	c := k.c
	c.Class |= FileWrite
	spec := optSpec{short: "tS", long: []string{"target-directory", "suffix"}}
	if k.name == "install" {
		spec = optSpec{short: "tSmogZ", long: []string{"target-directory", "suffix", "mode", "owner", "group", "strip-program", "context"}}
	}
	p := parseArgs(k.args, spec)
	ops := p.words(k.args)
	if k.name == "install" && p.has("-d", "--directory") {
		for _, w := range ops {
			k.write(w)
		}
		return
	}
	targets := p.values("-t", "--target-directory")
	sources := ops
	switch {
	case len(targets) > 0:
		for _, t := range targets {
			k.write(t)
		}
	case len(ops) >= 2:
		dest := ops[len(ops)-1]
		n := len(k.c.touches)
		k.write(dest)
		sources = ops[:len(ops)-1]
		if len(k.c.touches) > n {
			k.intoFolder(dest, sources, p.has("-T", "--no-target-directory"))
		}
	case len(ops) == 1 && (k.name == "ln" || k.name == "link"):
		if ops[0].Dynamic {
			k.writeUnknown()
		} else {
			k.write(Word{Value: lastElem(ops[0].Value)})
		}
		sources = nil
	}
	if k.name == "mv" {
		for _, s := range sources {
			k.write(s)
		}
	}
	if k.name == "ln" || k.name == "link" {
		for _, s := range ops[:max(len(ops)-1, min(len(ops), 1))] {
			k.c.links = append(k.c.links, touch{w: s, dir: k.sc.dir, dirUnknown: k.sc.dirUnknown})
			if len(ops) >= 2 && !s.Dynamic && !path.IsAbs(s.Value) && !ops[len(ops)-1].Dynamic {
				// A relative target is relative to the link's folder.
				at := path.Join(path.Dir(strings.TrimSuffix(ops[len(ops)-1].Value, "/")), s.Value)
				k.c.links = append(k.c.links, touch{w: Word{Value: at}, dir: k.sc.dir, dirUnknown: k.sc.dirUnknown})
			}
		}
	}
}

// intoFolder refines what the protected paths see of a copy's
// destination: a destination that must be a folder (".", "..", or ending
// in "/") is written only where each static source lands in it; any
// other destination may be a folder too, so the sources' landing places
// are added to it.
func (k *call) intoFolder(dest Word, sources []Word, noTarget bool) {
	if dest.Dynamic || noTarget {
		return
	}
	v := dest.Value
	folder := v == "." || v == ".." || strings.HasSuffix(v, "/") || strings.HasSuffix(v, "/.") || strings.HasSuffix(v, "/..")
	for _, s := range sources {
		if s.Dynamic {
			return // the destination itself stays
		}
	}
	if folder {
		k.c.touches = k.c.touches[:len(k.c.touches)-1]
	}
	for _, s := range sources {
		k.c.touches = append(k.c.touches, touch{w: Word{Value: path.Join(v, lastElem(s.Value))}, dir: k.sc.dir, dirUnknown: k.sc.dirUnknown})
	}
}

// lastElem returns the last element of a slash-separated path.
func lastElem(p string) string {
	p = strings.TrimRight(p, "/")
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// remote reports whether an rsync or scp operand names another host.
func remote(w Word) bool {
	v := w.Value
	if strings.Contains(v, "://") {
		return true
	}
	i := strings.IndexByte(v, ':')
	if i <= 0 {
		return false
	}
	slash := strings.IndexByte(v, '/')
	return slash < 0 || i < slash
}

// rsync handles rsync: FileWrite on a local destination, Network with a
// remote operand; -e commands are analysed.
func (k *call) rsync() {
	c := k.c
	c.Class |= FileWrite
	p := parseArgs(k.args, optSpec{short: "efBT", long: []string{"rsh", "rsync-path", "exclude", "include", "filter",
		"files-from", "exclude-from", "include-from", "backup-dir", "suffix", "log-file", "temp-dir", "partial-dir",
		"compare-dest", "copy-dest", "link-dest", "chmod", "chown", "password-file", "port", "out-format", "timeout",
		"max-size", "min-size", "bwlimit", "info", "debug", "usermap", "groupmap", "block-size", "config"}})
	for _, e := range p.values("-e", "--rsh") {
		c.Class |= Network
		k.runString(e, Bash, "rsync -e")
	}
	for _, f := range p.values("--log-file") {
		k.write(f)
	}
	ops := p.words(k.args)
	for _, w := range ops {
		if remote(w) || w.Dynamic {
			c.Class |= Network
		}
	}
	if len(ops) >= 2 && !remote(ops[len(ops)-1]) {
		k.write(ops[len(ops)-1])
	}
	if p.dynamic {
		c.Class |= Network
		k.writeUnknown()
	}
}

// dd handles dd: FileWrite on of=.
func (k *call) dd() {
	for _, a := range k.args {
		switch {
		case strings.HasPrefix(a.Value, "of="):
			k.c.Class |= FileWrite
			if a.Dynamic {
				k.write(a)
			} else if v := strings.TrimPrefix(a.Value, "of="); v != "" {
				k.write(Word{Value: v})
			}
		case a.Dynamic && !strings.Contains(leadOf(a), "="):
			k.c.Class |= FileWrite
			k.writeUnknown()
		}
	}
}

// leadOf returns the static start of a dynamic word's source text, up to
// its first $, `, quote or glob character.
func leadOf(w Word) string {
	if i := strings.IndexAny(w.Value, "$`*?[{~\"'"); i >= 0 {
		return w.Value[:i]
	}
	return w.Value
}

// tarValued lists tar's one-letter options that take a value.
const tarValued = "fCTXbHKLNVgIF"

// tar handles tar: creating or updating an archive writes it, extracting
// writes files that cannot be named, options that run commands are
// Unknown.
func (k *call) tar() {
	c := k.c
	args := k.args
	// Old style: "tar xzf a.tar": the first word is a cluster of letters
	// whose values follow in order.
	if len(args) > 0 && !args[0].Dynamic && args[0].Value != "" && !strings.HasPrefix(args[0].Value, "-") {
		args = expandOldTar(args[0].Value, args[1:])
	}
	p := parseArgs(args, optSpec{short: tarValued, long: []string{"file", "directory", "files-from", "exclude-from",
		"blocking-factor", "format", "starting-file", "tape-length", "newer", "label", "listed-incremental",
		"use-compress-program", "info-script", "new-volume-script", "to-command", "rsh-command", "rmt-command",
		"checkpoint-action", "owner", "group", "mode", "transform", "xform", "exclude", "strip-components"}})
	if p.has("-I", "--use-compress-program", "-F", "--info-script", "--new-volume-script", "--to-command",
		"--rsh-command", "--rmt-command") {
		k.unknown("tar runs a command given in its options")
		return
	}
	for _, v := range p.values("--checkpoint-action") {
		if strings.Contains(v.Value, "exec") || v.Dynamic {
			k.unknown("tar runs a command given in its options")
			return
		}
	}
	create := p.has("-c", "--create", "-r", "--append", "-u", "--update", "-A", "--catenate", "--concatenate", "--delete")
	extract := p.has("-x", "--extract", "--get")
	if p.dynamic {
		create, extract = true, true
	}
	if create {
		c.Class |= FileWrite
		for _, f := range p.values("-f", "--file") {
			k.write(f)
		}
	}
	if extract {
		c.Class |= FileWrite
		if d := p.values("-C", "--directory"); len(d) > 0 {
			for _, dir := range d {
				k.writeInto(dir)
			}
		} else {
			k.writeUnknown()
		}
	}
	if !create && !extract {
		c.Class |= FileRead
	}
}

// expandOldTar turns the old-style cluster "xzf" and its values into
// separate options "-x", "-z", "-f", value.
func expandOldTar(letters string, rest []Word) []Word {
	var out []Word
	for _, l := range letters {
		out = append(out, Word{Value: "-" + string(l)})
		if strings.ContainsRune(tarValued, l) && len(rest) > 0 {
			out = append(out, rest[0])
			rest = rest[1:]
		}
	}
	return append(out, rest...)
}

// network handles the commands that reach the network. It reports whether
// it knew the command.
func (k *call) network() bool {
	c := k.c
	switch n := k.name; n {
	case "curl":
		c.Class |= Network
		p := parseArgs(k.args, optSpec{short: "abcCdDeEFHKmoQrtTuUwxXyYz", long: []string{"output", "dump-header",
			"cookie-jar", "trace", "trace-ascii", "libcurl", "etag-save", "stderr", "config", "output-dir", "hsts", "alt-svc"}})
		for _, o := range p.opts {
			switch o.name {
			case "-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar", "--trace", "--trace-ascii",
				"--libcurl", "--etag-save", "--stderr", "--hsts", "--alt-svc":
				if o.valid && (o.value.Dynamic || o.value.Value != "-") {
					c.Class |= FileWrite
					k.write(o.value)
				}
			case "-O", "--remote-name", "--remote-name-all", "-J", "--remote-header-name", "--output-dir":
				c.Class |= FileWrite
				k.writeUnknown()
			case "-K", "--config":
				c.explain(FileWrite, "a curl config file can name files to write")
			}
		}
		if p.dynamic {
			c.Class |= FileWrite
		}
	case "wget", "wget2":
		c.Class |= Network
		p := parseArgs(k.args, optSpec{short: "oaOPiBeDlQtTwUXIAR", long: []string{"output-document", "output-file",
			"append-output", "directory-prefix", "input-file", "base", "execute", "domains", "level", "quota", "tries",
			"timeout", "wait", "user-agent", "header", "post-data", "post-file", "body-data", "method", "user", "password"}})
		docs := p.values("-O", "--output-document")
		switch {
		case len(docs) > 0:
			for _, d := range docs {
				if d.Dynamic || d.Value != "-" {
					c.Class |= FileWrite
					k.write(d)
				}
			}
		case !p.has("--spider"):
			c.Class |= FileWrite
			k.writeUnknown()
		}
		for _, l := range p.values("-o", "--output-file", "-a", "--append-output") {
			c.Class |= FileWrite
			k.write(l)
		}
		if p.dynamic {
			c.Class |= FileWrite
		}
	case "nc", "ncat", "netcat":
		c.Class |= Network
		p := parseArgs(k.args, optSpec{short: "ceoOpsgGiIMqTVwxXbP", long: []string{"exec", "sh-exec", "lua-exec", "output", "hex-dump"}})
		if p.has("-e", "-c", "--exec", "--sh-exec", "--lua-exec") || p.dynamic {
			k.unknown(n + " -e runs a program for the connection")
		}
		for _, o := range p.values("-o", "--output", "--hex-dump") {
			c.Class |= FileWrite
			k.write(o)
		}
	case "socat":
		c.Class |= Network
		for _, a := range k.args {
			u := strings.ToUpper(a.Value)
			if a.Dynamic || strings.Contains(u, "EXEC:") || strings.Contains(u, "SYSTEM:") {
				k.unknown("socat EXEC and SYSTEM addresses run programs")
				break
			}
			if strings.Contains(u, "OPEN:") || strings.Contains(u, "CREATE:") {
				c.Class |= FileWrite
				k.writeUnknown()
			}
		}
	case "ssh", "scp", "sftp", "slogin":
		c.Class |= Network
		p := parseArgs(k.args, optSpec{short: "BbcDEeFIiJLlmOopPQRSWw"})
		for _, o := range p.values("-o") {
			key := strings.ToLower(o.Value)
			if i := strings.IndexAny(key, "= \t"); i >= 0 {
				key = key[:i]
			}
			if o.Dynamic || key == "proxycommand" || key == "localcommand" || key == "permitlocalcommand" ||
				key == "knownhostscommand" || key == "match" {
				k.unknown(n + " -o " + o.Value + " runs a local command")
			}
		}
		if p.has("-F") || n != "ssh" && p.has("-S") || n == "sftp" && p.has("-D") || p.dynamic {
			k.unknown(n + " is given options that can run a local program")
		}
		for _, e := range p.values("-E") {
			c.Class |= FileWrite
			k.write(e)
		}
		if n == "scp" {
			ops := p.words(k.args)
			if len(ops) >= 2 && !remote(ops[len(ops)-1]) {
				c.Class |= FileWrite
				k.write(ops[len(ops)-1])
			}
		}
	case "aria2c":
		c.Class |= Network | FileWrite
		k.writeUnknown()
	case "http", "https", "xh", "xhs":
		c.Class |= Network
		p := parseArgs(k.args, optSpec{short: "oa", long: []string{"output", "auth", "session"}})
		for _, o := range p.values("-o", "--output") {
			c.Class |= FileWrite
			k.write(o)
		}
		if p.has("-d", "--download") || p.dynamic {
			c.Class |= FileWrite
			k.writeUnknown()
		}
	case "telnet", "ftp", "lftp", "tftp", "gh", "glab", "hub":
		c.Class |= Network
	default:
		return false
	}
	return true
}
