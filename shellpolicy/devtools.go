// This file defines the classification of the developer tools that write
// files in place or run a program named in their options: the go command,
// gofmt and the formatters and fixers of other languages, cargo, sqlite3,
// and the package managers' install commands.

package shellpolicy

import (
	"slices"
	"strings"
)

// devtools handles the developer tools. It reports whether it knew the
// command.
func (k *call) devtools() bool {
	switch n := k.name; n {
	case "go":
		k.goCmd()
	case "gofmt", "goimports", "gofumpt":
		// -w writes the files (and the .go files of the folders) given;
		// without it they print.
		p := parseArgs(k.args, optSpec{short: "r", long: []string{"r", "cpuprofile"}})
		if p.has("-w") || p.dynamic {
			k.inPlace(n+" -w rewrites the files it is given", p.words(k.args))
		} else {
			k.c.Class |= FileRead
		}
	case "rustfmt":
		p := parseArgs(k.args, optSpec{long: []string{"edition", "config-path", "config", "emit", "color", "style-edition"}})
		if p.has("--check") && !p.dynamic {
			k.c.Class |= FileRead
			return true
		}
		k.inPlace("rustfmt rewrites the files it is given", p.words(k.args))
	case "prettier":
		p := parseArgs(k.args, optSpec{long: []string{"config", "ignore-path", "parser", "plugin", "log-level", "cache-location", "stdin-filepath"}})
		if p.has("--write", "-w") || p.dynamic {
			k.inPlace("prettier --write rewrites the files it is given", p.words(k.args))
		} else {
			k.c.Class |= FileRead
		}
	case "eslint":
		p := parseArgs(k.args, optSpec{short: "co", long: []string{"config", "ext", "format", "output-file", "rulesdir", "plugin", "rule", "parser", "resolve-plugins-relative-to", "cache-location", "ignore-path", "ignore-pattern", "max-warnings"}})
		if p.has("--fix", "--fix-dry-run") && !p.has("--fix-dry-run") || p.dynamic {
			k.inPlace("eslint --fix rewrites the files it is given", p.words(k.args))
		} else {
			k.c.Class |= FileRead
		}
		for _, o := range p.values("-o", "--output-file") {
			k.c.Class |= FileWrite
			k.write(o)
		}
	case "black", "isort", "autopep8", "yapf":
		p := parseArgs(k.args, optSpec{short: "lt", long: []string{"line-length", "target-version", "config", "include", "exclude", "extend-exclude", "force-exclude", "settings-path", "profile"}})
		check := p.has("--check", "--diff", "--check-only", "-c") && !(n == "autopep8" || n == "yapf")
		if n == "autopep8" || n == "yapf" {
			check = !p.has("-i", "--in-place")
		}
		if check && !p.dynamic {
			k.c.Class |= FileRead
			return true
		}
		k.inPlace(n+" rewrites the files it is given", p.words(k.args))
	case "ruff":
		k.ruff()
	case "clang-format":
		p := parseArgs(k.args, optSpec{long: []string{"style", "assume-filename", "lines", "offset", "length", "fallback-style"}})
		if p.has("-i") || p.dynamic {
			k.inPlace("clang-format -i rewrites the files it is given", p.words(k.args))
		} else {
			k.c.Class |= FileRead
		}
	case "terraform", "tofu":
		k.terraform()
	case "cargo":
		k.cargo()
	case "sqlite3", "sqlite":
		k.sqlite()
	case "npm", "pnpm", "yarn", "bun":
		k.install()
	default:
		return false
	}
	return true
}

// inPlace marks the command as rewriting files in place: FileModify, with
// the files given written (or, with none, files that cannot be named: the
// folder the command runs in).
func (k *call) inPlace(detail string, files []Word) {
	k.c.explain(FileModify, detail)
	if len(files) == 0 {
		k.writeUnknown()
	}
	for _, f := range files {
		k.write(f)
	}
}

// ruff handles ruff: format rewrites files unless --check or --diff;
// check (and the old bare form) with --fix rewrites them.
func (k *call) ruff() {
	p := parseArgs(k.args, optSpec{long: []string{"config", "select", "ignore", "extend-select", "line-length", "target-version", "output-format", "exclude", "extend-exclude", "cache-dir", "output-file", "stdin-filename"}})
	ops := p.words(k.args)
	sub := ""
	if len(ops) > 0 && !ops[0].Dynamic {
		sub = ops[0].Value
	}
	for _, o := range p.values("--output-file") {
		k.c.Class |= FileWrite
		k.write(o)
	}
	switch {
	case p.dynamic:
		k.inPlace("the ruff options are only known when the line runs", nil)
	case sub == "format" && !p.has("--check", "--diff"):
		k.inPlace("ruff format rewrites the files it is given", ops[1:])
	case p.has("--fix", "--unsafe-fixes") && !p.has("--no-fix", "--diff"):
		if sub == "check" {
			ops = ops[1:]
		}
		k.inPlace("ruff --fix rewrites the files it is given", ops)
	default:
		k.c.Class |= FileRead
	}
}

// terraform handles terraform fmt, which rewrites files unless -check or
// -write=false; the other subcommands are passthrough.
func (k *call) terraform() {
	if len(k.args) == 0 || k.args[0].Dynamic {
		return
	}
	if k.args[0].Value != "fmt" {
		return
	}
	rest := k.args[1:]
	for _, a := range rest {
		if !a.Dynamic && (a.Value == "-check" || a.Value == "-write=false") {
			k.c.Class |= FileRead
			return
		}
	}
	var files []Word
	for _, a := range rest {
		if a.Dynamic || !strings.HasPrefix(a.Value, "-") {
			files = append(files, a)
		}
	}
	k.inPlace(k.name+" fmt rewrites the files of the folder", files)
}

// goValued lists the go command's build flags that take a value.
var goValued = []string{"o", "C", "p", "asmflags", "buildmode", "buildvcs", "compiler", "gccgoflags", "gcflags",
	"installsuffix", "ldflags", "mod", "modfile", "overlay", "pgo", "pkgdir", "tags", "toolexec", "exec", "vettool",
	"run", "skip", "bench", "benchtime", "count", "cpu", "parallel", "timeout", "coverprofile", "cpuprofile",
	"memprofile", "blockprofile", "mutexprofile", "trace", "outputdir", "covermode", "coverpkg", "list", "shuffle",
	"fuzz", "fuzztime", "fuzzminimizetime", "json", "failfast", "benchmem", "short", "v", "x", "n", "a", "race",
	"msan", "asan", "cover", "work", "fullpath", "compile", "memprofilerate", "blockprofilerate", "mutexprofilefraction",
	"test.v", "test.run", "modcacherw", "trimpath", "linkshared", "buildid", "debug-actiongraph", "debug-trace",
	"go", "format", "replace", "dropreplace", "require", "droprequire", "exclude", "dropexclude", "retract",
	"dropretract", "godebug", "dropgodebug", "tool", "droptool", "ignore", "dropignore", "d", "e", "u", "t", "fix",
	"f", "m", "i", "c", "l", "r", "s"}

// goBool lists the go flags that take no value (-v, -race, -short ...);
// "-flag=value" is parsed for every flag, "-flag value" only for the
// flags not listed here.
var goBool = []string{"v", "x", "n", "a", "race", "msan", "asan", "cover", "work", "trimpath", "linkshared",
	"modcacherw", "short", "failfast", "benchmem", "json", "fullpath", "compile", "d", "e", "u", "t", "m", "i", "c",
	"l", "s", "buildvcs", "x", "insecure", "fix", "tool", "tags"}

// goFlags splits the go command's arguments (after the subcommand) into
// flags (name without dashes -> value words) and operands. Flags the go
// command stops at ("--") end them; go test's flags after the packages
// are read too.
func goFlags(args []Word) (flags map[string][]Word, ops []Word, dynamic bool) {
	flags = map[string][]Word{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.Dynamic {
			if a.mayBeOption() {
				dynamic = true
			}
			ops = append(ops, a)
			continue
		}
		v := a.Value
		if v == "--" {
			ops = append(ops, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(v, "-") || v == "-" {
			ops = append(ops, a)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(v, "-"), "=")
		switch {
		case hasVal:
			flags[name] = append(flags[name], Word{Value: val})
		case slices.Contains(goBool, name) || !slices.Contains(goValued, name):
			flags[name] = append(flags[name], Word{Value: "true"})
		case i+1 < len(args):
			i++
			flags[name] = append(flags[name], args[i])
		default:
			flags[name] = append(flags[name], Word{})
		}
	}
	return flags, ops, dynamic
}

// goCmd handles the go command: the writers (build -o, test's profiles,
// mod tidy/edit/vendor/init, get, work, fmt, fix), the options that name
// a program to run (-exec, -toolexec, -vettool: Unknown, and the program
// is analysed as a nested command), and go generate (Unknown).
func (k *call) goCmd() {
	c := k.c
	args := k.args
	if len(args) == 0 {
		return
	}
	if args[0].Dynamic {
		k.unknown("the go subcommand is only known when the line runs")
		return
	}
	sub := args[0].Value
	flags, ops, dynamic := goFlags(args[1:])
	if dynamic {
		k.unknown("the go options are only known when the line runs, and some (-exec, -toolexec) run a program")
	}
	for _, f := range []string{"exec", "toolexec", "vettool"} {
		for _, v := range flags[f] {
			k.unknown("go " + sub + " -" + f + " runs the program it names")
			k.runString(v, Bash, "go "+sub+" -"+f)
		}
	}
	sc := k.sc
	if dirs := flags["C"]; len(dirs) > 0 {
		sc = sc.sub()
		sc.cd(dirs[len(dirs)-1:])
	}
	writeIn := func(name string) {
		c.Class |= FileWrite
		c.addWrite(Word{Value: name}, sc)
	}
	for _, o := range flags["o"] {
		c.Class |= FileWrite
		k.write(o)
	}
	switch sub {
	case "test":
		for _, f := range []string{"coverprofile", "cpuprofile", "memprofile", "blockprofile", "mutexprofile", "trace"} {
			for _, v := range flags[f] {
				c.Class |= FileWrite
				if d := flags["outputdir"]; len(d) > 0 && !v.Dynamic && !strings.HasPrefix(v.Value, "/") {
					v = Word{Value: d[0].Value + "/" + v.Value, Dynamic: d[0].Dynamic}
				}
				k.write(v)
			}
		}
		if len(flags["c"]) > 0 && len(flags["o"]) == 0 {
			c.Class |= FileWrite
			k.writeUnknown()
		}
	case "mod":
		if len(ops) == 0 || ops[0].Dynamic {
			k.unknown("the go mod subcommand is only known when the line runs")
			return
		}
		switch ops[0].Value {
		case "tidy", "edit", "init":
			if ops[0].Value == "edit" && (len(flags["json"]) > 0 || len(flags["print"]) > 0) {
				c.Class |= FileRead
				return
			}
			writeIn("go.mod")
			if ops[0].Value == "tidy" {
				writeIn("go.sum")
			}
		case "vendor":
			if len(flags["o"]) == 0 {
				writeIn("vendor")
			}
		}
	case "get":
		c.Class |= Network
		writeIn("go.mod")
		writeIn("go.sum")
	case "work":
		if len(flags["json"]) > 0 || len(flags["print"]) > 0 {
			return
		}
		writeIn("go.work")
	case "fmt", "fix":
		c.explain(FileModify, "go "+sub+" rewrites the files of the packages")
		k.writeUnknown()
	case "vet":
		if len(flags["fix"]) > 0 {
			c.explain(FileModify, "go vet -fix rewrites the files of the packages")
			k.writeUnknown()
		}
	case "generate":
		k.unknown("go generate runs the commands of the //go:generate lines of the files, which are not in the line")
	case "tool":
		if len(ops) > 0 && !ops[0].Dynamic && (ops[0].Value == "pprof" || ops[0].Value == "trace") {
			return
		}
		k.unknown("go tool runs a tool named in go.mod or the toolchain, whose effects are not seen")
	case "env":
		if len(flags["w"]) > 0 || len(flags["u"]) > 0 {
			k.unknown("go env -w changes the go command's settings (GOFLAGS can add -toolexec to every build)")
		}
	}
}

// cargo handles cargo: fmt, fix and clippy --fix rewrite files; add,
// remove and update write the manifest and the lock file.
func (k *call) cargo() {
	c := k.c
	args := k.args
	for len(args) > 0 && !args[0].Dynamic && strings.HasPrefix(args[0].Value, "+") {
		args = args[1:] // a toolchain: cargo +nightly fmt
	}
	if len(args) == 0 {
		return
	}
	if args[0].Dynamic {
		k.unknown("the cargo subcommand is only known when the line runs")
		return
	}
	rest := args[1:]
	has := func(names ...string) bool {
		return slices.ContainsFunc(rest, func(w Word) bool { return !w.Dynamic && slices.Contains(names, w.Value) })
	}
	switch args[0].Value {
	case "fmt":
		if has("--check") {
			c.Class |= FileRead
			return
		}
		k.inPlace("cargo fmt rewrites the files of the crate", nil)
	case "fix":
		k.inPlace("cargo fix rewrites the files of the crate", nil)
	case "clippy":
		if has("--fix") {
			k.inPlace("cargo clippy --fix rewrites the files of the crate", nil)
		}
	case "add", "remove", "rm", "update", "upgrade", "generate-lockfile":
		c.Class |= FileWrite | Network
		c.addWrite(Word{Value: "Cargo.toml"}, k.sc)
		c.addWrite(Word{Value: "Cargo.lock"}, k.sc)
	case "install":
		c.Class |= FileWrite | Network
	}
}

// sqlite handles sqlite3 FILE [SQL]: a writer of FILE (SQL can change
// it), unless -readonly; SQL that runs programs (.shell, .system) or
// writes other files (.output, .once, .save, .backup, ATTACH) is
// Unknown, and so is SQL read from an input the line does not show.
func (k *call) sqlite() {
	c := k.c
	p := parseArgs(k.args, optSpec{long: []string{"cmd", "init", "separator", "newline", "nullvalue", "vfs", "mmap", "lookaside", "pagecache", "heap", "maxsize", "escape"}})
	ops := p.words(k.args)
	var sql []Word
	sql = append(sql, p.values("-cmd", "--cmd")...)
	if len(p.values("-init", "--init")) > 0 {
		k.unknown("sqlite3 -init runs the commands of a file, which are not in the line")
	}
	if p.dynamic {
		k.unknown("the sqlite3 options are only known when the line runs")
	}
	if len(ops) > 1 {
		sql = append(sql, ops[1:]...)
	}
	readonly := p.has("-readonly", "--readonly") && !p.dynamic
	if len(ops) > 0 {
		if readonly {
			c.Class |= FileRead
		} else {
			c.Class |= FileWrite
			k.write(ops[0])
		}
	}
	if len(ops) <= 1 && len(p.values("-cmd", "--cmd")) == 0 {
		switch k.in.stdin {
		case stdinStatic:
			sql = append(sql, Word{Value: k.in.stdinText})
		case stdinNone:
		default:
			k.unknown("sqlite3 runs SQL and dot-commands read from its input, which are not in the line and can run programs (.shell)")
		}
	}
	for _, s := range sql {
		if s.Dynamic {
			k.unknown("sqlite3 runs SQL that is only known when the line runs, and its dot-commands can run programs (.shell)")
			continue
		}
		c.code = append(c.code, s.Value)
		low := strings.ToLower(s.Value)
		for _, dot := range []string{".shell", ".system", ".output", ".once", ".save", ".backup", ".load", ".read", ".import", ".excel", "attach", "load_extension", "writefile", "edit("} {
			if strings.Contains(low, dot) {
				k.unknown("the SQL runs " + strings.TrimPrefix(dot, ".") + ", which can run programs or write other files")
				break
			}
		}
	}
}

// install handles the package managers' install commands (npm install,
// ci, add, update, uninstall; pnpm, yarn and bun alike): they write
// node_modules and the manifest and lock files, reach the network, and
// run the packages' install scripts as make runs rules (a passthrough's
// effects, not seen). It reports nothing for other subcommands, which
// the runner table handles (npm exec) or are passthrough (npm test).
func (k *call) install() {
	if len(k.args) == 0 {
		if k.name == "yarn" {
			k.installs()
		}
		return
	}
	if k.args[0].Dynamic {
		return
	}
	switch k.args[0].Value {
	case "install", "i", "ci", "add", "update", "up", "upgrade", "uninstall", "remove", "rm", "un", "link", "dedupe", "prune":
		k.installs()
	}
}

func (k *call) installs() {
	c := k.c
	c.Class |= Network
	c.explain(FileWrite, strings.TrimSpace(k.name+" "+joinValues(k.args[:min(1, len(k.args))]))+" writes node_modules and the manifest and lock files")
	for _, f := range []string{"node_modules", "package.json", "package-lock.json"} {
		c.addWrite(Word{Value: f}, k.sc)
	}
}
