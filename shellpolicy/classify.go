// This file defines how a simple command is classified: transparent
// prefixes, the dispatch on the command name, and the commands that run
// other commands (sudo, xargs, find -exec, bash -c, eval, trap, package
// runners).

package shellpolicy

import (
	"path"
	"slices"
	"strings"
)

// call is one simple command being classified.
type call struct {
	w    *walker
	c    *Command
	name string // base name of the command
	args []Word // words after the name
	in   input
	sc   *scope
}

// key marks argument i (an index in args; -1 for the command name) as one
// of the words that make the command blocked.
func (k *call) key(i int) { k.c.keys = append(k.c.keys, i+1) }

// unknown marks the command Unknown because of what its name does.
func (k *call) unknown(detail string) {
	k.c.unknown(detail)
	k.c.keys = append(k.c.keys, 0)
}

// write records a file written by the command.
func (k *call) write(w Word) {
	if !w.Dynamic && harmlessDevice(w.Value) {
		return
	}
	k.c.addWrite(w, k.sc)
}

// writeUnknown records files certainly written that cannot be named.
func (k *call) writeUnknown() {
	k.c.Writes = append(k.c.Writes, Path{Dynamic: true})
	k.c.touches = append(k.c.touches, touch{w: Word{Value: "."}, dir: k.sc.dir, dirUnknown: k.sc.dirUnknown, unnamed: true})
}

// writeInto records files certainly written under the folder w that
// cannot be named (tar -C, unzip -d), as writeUnknown does for the
// current folder.
func (k *call) writeInto(w Word) {
	k.c.Writes = append(k.c.Writes, Path{Dynamic: true})
	k.c.touches = append(k.c.touches, touch{w: w, dir: k.sc.dir, dirUnknown: k.sc.dirUnknown, unnamed: true})
}

// classify fills c from its words: transparent prefixes, class, writes,
// variables, and the commands it runs (appended after it).
func (w *walker) classify(c *Command, words []Word, in input, sc *scope) {
	words = prefixes(c, words, sc)
	c.Words = words
	name := words[0]
	if name.Dynamic {
		c.unknown("the command name " + name.Value + " is only known when the line runs")
		c.keys = append(c.keys, 0)
		return
	}
	k := &call{w: w, c: c, name: path.Base(name.Value), args: words[1:], in: in, sc: sc}
	if name.Value == "" {
		k.name = ""
	}
	k.dispatch()
}

// prefixes moves transparent prefixes (env, nice, timeout, ...) from the
// front of words to c.Prefix, recording what they do, and returns the
// wrapped command's words.
func prefixes(c *Command, words []Word, sc *scope) []Word {
	for len(words) > 1 && !words[0].Dynamic {
		n := prefixLen(c, words, sc)
		if n <= 0 || n >= len(words) {
			break
		}
		c.Prefix = append(c.Prefix, words[:n]...)
		words = words[n:]
	}
	return words
}

// prefixLen returns the index in words of the command a transparent prefix
// runs, or 0 when words[0] is not one (or runs nothing).
func prefixLen(c *Command, words []Word, sc *scope) int {
	args := words[1:]
	name := path.Base(words[0].Value)
	var spec optSpec
	switch name {
	case "env":
		p := parseArgs(args, optSpec{short: "uCS", long: []string{"unset", "chdir", "split-string"}, firstOperandEnds: true})
		if p.dynamic {
			c.unknown("the options of env are only known when the line runs")
			return 0
		}
		if p.has("-S", "--split-string") {
			c.unknown("env -S splits a string into a command")
			return 0
		}
		for _, v := range p.values("-u", "--unset") {
			c.nameRef(v.Value, true)
		}
		i := p.rest
		for i < len(args) && !args[i].Dynamic && strings.Contains(args[i].Value, "=") && !strings.HasPrefix(args[i].Value, "=") {
			name, val, _ := strings.Cut(args[i].Value, "=")
			c.setVar(name)
			if execVar(name) {
				c.unknown("setting " + name + " changes which program or code runs")
			}
			if holdsSubst(val) {
				c.unknown("it stores text holding a command substitution in " + name + ", which bash runs if the variable is used in arithmetic")
			}
			i++
		}
		if i >= len(args) {
			return 0 // env alone prints the environment
		}
		return i + 1
	case "timeout":
		p := parseArgs(args, optSpec{short: "sk", long: []string{"signal", "kill-after"}, firstOperandEnds: true})
		if p.dynamic || p.rest < len(args) && args[p.rest].Split {
			c.unknown("the arguments of timeout are only known when the line runs")
			return 0
		}
		return p.rest + 2 // the duration, then the command
	case "command":
		p := parseArgs(args, optSpec{firstOperandEnds: true})
		if p.has("-v", "-V") {
			return 0 // command -v only looks the name up
		}
		if p.dynamic {
			c.unknown("the arguments of command are only known when the line runs")
			return 0
		}
		return p.rest + 1
	case "ionice":
		p := parseArgs(args, optSpec{short: "cnpPu", long: []string{"class", "classdata", "pid", "pgid", "uid"}, firstOperandEnds: true})
		if p.has("-p", "-P", "-u", "--pid", "--pgid", "--uid") {
			return 0
		}
		if p.dynamic {
			c.unknown("the arguments of ionice are only known when the line runs")
			return 0
		}
		return p.rest + 1
	case "time", "strace", "ltrace":
		spec = optSpec{short: "fo", long: []string{"format", "output"}, firstOperandEnds: true}
		if name != "time" {
			spec = optSpec{short: "abeEIopPsSuUX", long: []string{"output", "signal", "trace", "attach", "user", "env"}, firstOperandEnds: true}
		}
		p := parseArgs(args, spec)
		for _, v := range p.values("-o", "--output") {
			if v.Dynamic || !harmlessDevice(v.Value) {
				c.Class |= FileWrite
				c.addWrite(v, sc)
			}
		}
		if p.has("-p", "--attach") && name != "time" {
			return 0
		}
		if p.dynamic {
			c.unknown("the arguments of " + name + " are only known when the line runs")
			return 0
		}
		return p.rest + 1
	case "taskset", "chrt", "repeat":
		// One operand (a CPU mask, a priority, a count), then the command.
		p := parseArgs(args, optSpec{firstOperandEnds: true})
		if p.has("-p", "--pid") {
			return 0
		}
		if p.dynamic || p.rest < len(args) && args[p.rest].Split {
			c.unknown("the arguments of " + name + " are only known when the line runs")
			return 0
		}
		return p.rest + 2
	case "nice":
		spec = optSpec{short: "n", long: []string{"adjustment"}}
	case "valgrind", "firejail", "dbus-run-session", "catchsegv", "eatmydata", "fakeroot", "ssh-agent", "nq":
	case "numactl":
		spec = optSpec{short: "NmCipPw", long: []string{"cpunodebind", "membind", "physcpubind", "interleave", "preferred", "weighted-interleave"}}
	case "unshare":
		spec = optSpec{short: "RwSG", long: []string{"root", "wd", "setuid", "setgid", "map-user", "map-group", "propagation"}}
	case "xvfb-run":
		spec = optSpec{short: "nsefpw", long: []string{"server-num", "server-args", "error-file", "auth-file", "xauth-protocol", "wait"}}
	case "proxychains", "proxychains4", "torsocks":
		spec = optSpec{short: "fuPai", long: []string{"user", "pass", "address", "port"}}
	case "sshpass":
		spec = optSpec{short: "pfdP"}
	case "nohup", "setsid", "builtin", "busybox", "toybox", "nocorrect", "noglob", "unbuffer":
	case "exec":
		spec = optSpec{short: "a"}
	case "stdbuf":
		spec = optSpec{short: "ioe", long: []string{"input", "output", "error"}}
	case "caffeinate":
		spec = optSpec{short: "tw"}
	default:
		return 0
	}
	spec.firstOperandEnds = true
	p := parseArgs(args, spec)
	if p.dynamic {
		c.unknown("the arguments of " + name + " are only known when the line runs")
		return 0
	}
	return p.rest + 1
}

// child classifies a command run by this one (sudo, xargs, find -exec) as
// a nested entry.
func (k *call) child(words []Word, origin string) {
	if len(words) == 0 {
		return
	}
	if !k.w.enter(joinValues(words), k.c.Pos, k.sc) {
		return
	}
	defer k.w.leave()
	i := k.w.reserve()
	sc := k.sc.nest(origin)
	cc := Command{Kind: Simple, Text: joinValues(words), Pos: k.c.Pos, Origin: sc.origin}
	k.w.classify(&cc, words, input{}, sc)
	k.w.cmds[i] = cc
}

// joinValues joins the values of words with spaces.
func joinValues(words []Word) string {
	var b strings.Builder
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w.Value)
	}
	return b.String()
}

// dispatch classifies the command by its name.
func (k *call) dispatch() {
	switch n := k.name; {
	case n == "sudo" || n == "doas" || n == "sudoedit":
		k.sudo()
	case n == "su" || n == "runuser":
		k.su()
	case n == "chroot" || n == "pkexec" || n == "sg":
		k.privilegedRunner()
	case n == "xargs":
		k.xargs()
	case n == "find":
		k.find()
	case n == "fd" || n == "fdfind":
		k.fd()
	case isShell(n):
		k.shell()
	case n == "eval":
		k.eval()
	case n == "source" || n == ".":
		k.unknown(n + " runs the commands of a file, which are not in the line")
	case n == "trap":
		k.trap()
	case n == "watch":
		k.watch()
	case n == "flock":
		k.flock()
	case n == "script":
		p := parseArgs(k.args, optSpec{short: "cEIOmBT", long: []string{"command", "echo", "log-in", "log-out", "log-io", "logging-format", "log-timing"}})
		if cmds := p.values("-c", "--command"); len(cmds) > 0 {
			k.runString(cmds[0], Bash, "script -c")
		} else {
			k.unknown("script runs an interactive shell")
		}
	case n == "parallel" || n == "tmux" || n == "screen" || n == "at" || n == "batch" || n == "sched" ||
		n == "zmodload" || n == "autoload" || n == "enable" || n == "fc" || n == "expect" || n == "systemd-run" ||
		n == "gdb" || n == "lldb" || n == "perf" || n == "hyperfine" || n == "zpty" || n == "r" && k.w.dialect == Zsh:
		k.unknown(n + " runs or loads commands that are not in the line")
	case n == "crontab":
		if p := parseArgs(k.args, optSpec{short: "u"}); !p.has("-l") || p.dynamic {
			k.unknown("crontab installs commands to run later")
		}
	case n == "alias":
		for _, a := range k.args {
			if a.Dynamic || strings.Contains(a.Value, "=") {
				k.unknown("alias changes what a later command name runs")
				break
			}
		}
	case n == "hash":
		if p := parseArgs(k.args, optSpec{short: "p"}); p.has("-p") || p.dynamic {
			k.unknown("hash -p changes what a later command name runs")
		}
	case n == "git":
		k.git()
	case n == "sed" || n == "gsed":
		k.sed()
	case n == "awk" || n == "gawk" || n == "mawk" || n == "nawk":
		k.awk()
	case n == "perl":
		k.perl()
	case isInterpreter(n):
		k.interpreter()
	case isRunner(n):
		k.runner()
	default:
		// Builtins with effects, file and network commands; anything else
		// is a passthrough.
		_ = k.builtin() || k.files() || k.network() || k.devtools()
	}
}

// sudo handles sudo, doas and sudoedit: Privileged, and the command they
// run is a nested entry.
func (k *call) sudo() {
	k.c.Class |= Privileged
	k.c.keys = append(k.c.keys, 0)
	if k.name == "sudoedit" {
		k.c.Class |= FileModify
		for _, w := range parseArgs(k.args, optSpec{short: "ugChprtTUD"}).words(k.args) {
			k.write(w)
		}
		return
	}
	spec := optSpec{short: "ugChprtTURD", long: []string{"user", "group", "close-from", "host", "prompt", "role", "type", "command-timeout", "other-user", "chroot", "chdir"}, firstOperandEnds: true}
	if k.name == "doas" {
		spec = optSpec{short: "uC", firstOperandEnds: true}
	}
	p := parseArgs(k.args, spec)
	if p.dynamic {
		k.unknown("the arguments of " + k.name + " are only known when the line runs")
		return
	}
	rest := k.args[p.rest:]
	switch {
	case p.has("-e", "--edit"):
		k.c.Class |= FileModify
		for _, w := range rest {
			k.write(w)
		}
	case len(rest) > 0:
		k.child(rest, k.name)
	case p.has("-s", "--shell", "-i", "--login"):
		k.unknown(k.name + " opens a shell reading commands from standard input")
	}
}

// privilegedRunner handles chroot, pkexec and sg: Privileged, and the
// command they run (after the new root, or the group) is analysed.
func (k *call) privilegedRunner() {
	k.c.Class |= Privileged
	k.c.keys = append(k.c.keys, 0)
	spec := optSpec{long: []string{"userspec", "groups", "user"}, firstOperandEnds: true}
	p := parseArgs(k.args, spec)
	if p.dynamic {
		k.unknown("the arguments of " + k.name + " are only known when the line runs")
		return
	}
	rest := k.args[p.rest:]
	if k.name != "pkexec" && len(rest) > 0 {
		rest = rest[1:] // the new root, or the group
	}
	switch {
	case k.name == "sg" && len(rest) > 0:
		if !rest[0].Dynamic && rest[0].Value == "-c" {
			rest = rest[1:]
		}
		for _, w := range rest {
			if w.Dynamic {
				k.unknown("the command of sg is only known when the line runs")
				return
			}
		}
		k.w.reparse(joinValues(rest), Bash, "sg", k.c, k.sc)
	case len(rest) > 0:
		k.child(rest, k.name)
	default:
		k.unknown(k.name + " opens a shell reading commands from standard input")
	}
}

// su handles su and runuser: Privileged; -c strings are analysed.
func (k *call) su() {
	k.c.Class |= Privileged
	k.c.keys = append(k.c.keys, 0)
	p := parseArgs(k.args, optSpec{short: "cgGsw", long: []string{"command", "group", "supp-group", "shell", "whitelist-environment", "session-command"}})
	if cmds := p.values("-c", "--command", "--session-command"); len(cmds) > 0 {
		for _, s := range cmds {
			k.runString(s, Bash, k.name+" -c")
		}
		return
	}
	if p.dynamic {
		k.unknown("the arguments of " + k.name + " are only known when the line runs")
		return
	}
	k.unknown(k.name + " opens a shell reading commands from standard input")
}

// runString analyses a command string that this command runs (bash -c,
// su -c, rsync -e).
func (k *call) runString(s Word, d Dialect, origin string) {
	if s.Dynamic {
		k.unknown("the command string of " + origin + " is only known when the line runs")
		return
	}
	k.w.reparse(s.Value, d, origin, k.c, k.sc)
}

// xargs handles xargs: the command it runs is a nested entry, with the
// arguments it reads from its input as one dynamic word.
func (k *call) xargs() {
	p := parseArgs(k.args, optSpec{short: "aEdILnPs", long: []string{"arg-file", "eof", "delimiter", "replace", "max-lines", "max-args", "max-procs", "max-chars", "process-slot-var"}, firstOperandEnds: true})
	if p.dynamic {
		k.unknown("the arguments of xargs are only known when the line runs")
		return
	}
	repl := ""
	for _, o := range p.opts {
		switch {
		case o.name == "-I" && o.valid:
			repl = o.value.Value
		case o.name == "-i":
			repl = "{}"
		case o.name == "--replace":
			repl = "{}"
			if o.valid {
				repl = o.value.Value
			}
		}
	}
	rest := slices.Clone(k.args[p.rest:])
	if len(rest) == 0 {
		rest = []Word{{Value: "echo"}}
	}
	if repl != "" {
		for i, w := range rest {
			if strings.Contains(w.Value, repl) {
				rest[i] = Word{Value: w.Value, Dynamic: true, opt: true}
			}
		}
	} else {
		rest = append(rest, Word{Value: "<input>", Dynamic: true, Split: true, opt: true})
	}
	k.child(rest, "xargs")
}

// findValued lists the find primaries that take a value.
var findValued = []string{"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex",
	"-type", "-xtype", "-size", "-perm", "-user", "-group", "-uid", "-gid", "-mtime", "-atime", "-ctime", "-mmin",
	"-amin", "-cmin", "-newer", "-anewer", "-cnewer", "-maxdepth", "-mindepth", "-links", "-inum", "-samefile",
	"-lname", "-ilname", "-fstype", "-printf", "-context", "-used", "-regextype", "-files0-from", "-D"}

// find handles find: FileSearch; -exec runs nested commands, -delete is
// Destructive, -fprint writes.
func (k *call) find() {
	k.c.Class |= FileSearch
	args := k.args
	expr := false // in the expression (past the starting points)
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.Dynamic {
			// Keep reading: an -exec further on is still analysed.
			if a.Split || a.mayBeOption() {
				k.c.unknown("the find expression is only known when the line runs")
			}
			continue
		}
		v := a.Value
		if !expr && !strings.HasPrefix(v, "-") && v != "(" && v != "!" && v != "," {
			continue // a starting point
		}
		if !expr && (v == "-H" || v == "-L" || v == "-P" || strings.HasPrefix(v, "-O")) {
			continue
		}
		expr = true
		switch {
		case v == "-exec" || v == "-execdir" || v == "-ok" || v == "-okdir":
			j := i + 1
			for j < len(args) && (args[j].Dynamic || args[j].Value != ";" && args[j].Value != "+") {
				j++
			}
			cmd := slices.Clone(args[i+1 : j])
			for m, w := range cmd {
				if strings.Contains(w.Value, "{}") {
					cmd[m] = Word{Value: w.Value, Dynamic: true, opt: w.mayBeOption()}
				}
			}
			k.child(cmd, "find "+v)
			i = j
		case v == "-delete":
			k.c.Class |= Destructive
			k.key(-1)
			k.key(i)
			k.writeUnknown()
		case v == "-fprint" || v == "-fprint0" || v == "-fls" || v == "-fprintf":
			k.c.Class |= FileWrite
			if i+1 < len(args) {
				k.write(args[i+1])
			}
			i++
			if v == "-fprintf" {
				i++
			}
		case slices.Contains(findValued, v):
			if i+1 < len(args) && args[i+1].Split {
				k.c.unknown("the find expression is only known when the line runs")
			}
			i++
		}
	}
}

// fd handles fd: FileSearch; --exec runs a nested command.
func (k *call) fd() {
	k.c.Class |= FileSearch
	for i, a := range k.args {
		if a.Dynamic && a.mayBeOption() {
			k.c.unknown("the arguments of fd are only known when the line runs")
			return
		}
		switch a.Value {
		case "-x", "--exec", "-X", "--exec-batch":
			j := i + 1
			for j < len(k.args) && (k.args[j].Dynamic || k.args[j].Value != ";") {
				j++
			}
			k.child(slices.Clone(k.args[i+1:j]), "fd "+a.Value)
			return
		}
	}
}

// isShell reports whether name is a shell that takes -c.
func isShell(name string) bool {
	switch name {
	case "bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "rbash", "yash", "fish", "csh", "tcsh", "pwsh", "powershell":
		return true
	}
	return false
}

// shell handles bash, sh, zsh and the like: a -c string or a here-document
// script is analysed as nested commands; a script file runs as a
// passthrough; commands from a pipe are Unknown.
func (k *call) shell() {
	d := Bash
	if k.name == "zsh" {
		d = Zsh
	}
	foreign := k.name == "fish" || k.name == "csh" || k.name == "tcsh" || k.name == "pwsh" || k.name == "powershell"
	cmdFlag, stdinMode := false, false
	operand := -1
scan:
	for i := 0; i < len(k.args); i++ {
		a := k.args[i]
		if a.Dynamic {
			if a.mayBeOption() {
				k.unknown("the arguments of " + k.name + " are only known when the line runs")
				return
			}
			operand = i
			break
		}
		v := a.Value
		if foreign {
			switch strings.ToLower(v) {
			case "-c", "-command", "-encodedcommand", "-ec", "-e":
				cmdFlag, operand = true, i+1
				break scan
			}
			if strings.HasPrefix(v, "-") {
				continue
			}
			operand = i
			break
		}
		if v == "--" || v == "-" {
			if v == "-" {
				stdinMode = true
			}
			if i+1 < len(k.args) {
				operand = i + 1
			}
			break
		}
		if strings.HasPrefix(v, "--") {
			if v == "--rcfile" || v == "--init-file" {
				i++
			}
			continue
		}
		if len(v) > 1 && (v[0] == '-' || v[0] == '+') {
			for _, ch := range v[1:] {
				switch ch {
				case 'c':
					cmdFlag = true
				case 's', 'i':
					stdinMode = true
				case 'o', 'O':
					i++
				}
			}
			continue
		}
		operand = i
		break
	}
	switch {
	case cmdFlag:
		if operand < 0 || operand >= len(k.args) {
			k.unknown(k.name + " -c without a command string")
			return
		}
		if foreign && !k.args[operand].Dynamic {
			k.unknown(k.name + " commands are not analysed")
			return
		}
		k.runString(k.args[operand], d, k.name+" -c")
	case operand >= 0 && !stdinMode && !stdinPath(k.args[operand].Value):
		// A script file: its commands are not in the line.
	default:
		switch k.in.stdin {
		case stdinStatic:
			if foreign {
				k.unknown(k.name + " commands are not analysed")
				return
			}
			k.w.reparse(k.in.stdinText, d, k.name+" <<EOF", k.c, k.sc)
		case stdinFile:
			// < script.sh: like a script file.
		default:
			k.unknown(k.name + " runs commands read from standard input, which are not in the line")
		}
	}
}

// eval handles eval: static text is analysed as nested commands.
func (k *call) eval() {
	if len(k.args) == 0 {
		return
	}
	for _, a := range k.args {
		if a.Dynamic {
			k.unknown("eval runs text that is only known when the line runs")
			return
		}
	}
	k.w.reparse(joinValues(k.args), k.w.dialect, "eval", k.c, k.sc)
}

// trap handles trap: its action is analysed as nested commands.
func (k *call) trap() {
	args := k.args
	if len(args) > 0 && !args[0].Dynamic && args[0].Value == "--" {
		args = args[1:]
	}
	if len(args) < 2 {
		return // listing, or resetting one signal
	}
	a := args[0]
	if a.Dynamic {
		k.unknown("the trap action is only known when the line runs")
		return
	}
	if a.Value == "" || a.Value == "-" || strings.HasPrefix(a.Value, "-") {
		return
	}
	k.w.reparse(a.Value, k.w.dialect, "trap", k.c, k.sc)
}

// watch handles watch: the command is run by sh -c (or directly with -x).
func (k *call) watch() {
	p := parseArgs(k.args, optSpec{short: "nq", long: []string{"interval", "equexit"}, firstOperandEnds: true})
	if p.dynamic {
		k.unknown("the arguments of watch are only known when the line runs")
		return
	}
	rest := k.args[p.rest:]
	if len(rest) == 0 {
		return
	}
	if p.has("-x", "--exec") {
		k.child(rest, "watch")
		return
	}
	for _, w := range rest {
		if w.Dynamic {
			k.unknown("the command of watch is only known when the line runs")
			return
		}
	}
	k.w.reparse(joinValues(rest), Bash, "watch", k.c, k.sc)
}

// flock handles flock FILE CMD and flock FILE -c STRING.
func (k *call) flock() {
	p := parseArgs(k.args, optSpec{short: "wEc", long: []string{"timeout", "wait", "conflict-exit-code", "command"}, firstOperandEnds: true})
	if cmds := p.values("-c", "--command"); len(cmds) > 0 {
		k.runString(cmds[0], Bash, "flock -c")
		return
	}
	if p.dynamic {
		k.unknown("the arguments of flock are only known when the line runs")
		return
	}
	if p.rest+1 < len(k.args) {
		rest := k.args[p.rest+1:]
		if len(rest) >= 2 && !rest[0].Dynamic && (rest[0].Value == "-c" || rest[0].Value == "--command") {
			k.runString(rest[1], Bash, "flock -c")
			return
		}
		k.child(rest, "flock")
	}
}

// runnerSpec describes a package-manager command that runs another
// command given in its arguments ("uv run pytest", "npx eslint").
type runnerSpec struct {
	sub    string   // the subcommands before the command ("run", "exec|dlx"), "" for none
	valued []string // options taking a value
	flags  []string // options taking none
}

var runners = map[string]runnerSpec{
	"uv": {sub: "run", valued: []string{"--with", "--with-editable", "--with-requirements", "--python", "-p", "--package",
		"--extra", "--group", "--only-group", "--no-group", "--env-file", "--directory", "--project", "--index",
		"--default-index", "--index-url", "--extra-index-url", "--find-links", "-f", "--config-file", "--cache-dir",
		"--color", "--resolution", "--prerelease", "--exclude-newer", "--link-mode"},
		flags: []string{"--frozen", "--locked", "--no-sync", "--isolated", "--no-project", "--all-extras", "--no-dev",
			"--dev", "--active", "--no-active", "-q", "--quiet", "-v", "--verbose", "--offline", "--no-cache", "--script",
			"--no-env-file", "--all-packages", "--exact", "--refresh", "-U", "--upgrade", "--reinstall", "--no-build",
			"--compile-bytecode", "-n", "--module", "-m", "--gui-script", "--no-editable", "--only-dev"}},
	"uvx":        {valued: []string{"--from", "--with", "--with-editable", "--with-requirements", "--python", "-p", "--index", "--index-url", "--extra-index-url", "--cache-dir", "--color"}, flags: []string{"--isolated", "-q", "--quiet", "-v", "--verbose", "--offline", "--no-cache", "--refresh", "-U", "--upgrade"}},
	"poetry":     {sub: "run", valued: []string{"-C", "--directory", "-P", "--project"}, flags: []string{"-q", "--quiet", "-v", "-vv", "-vvv", "--verbose", "--no-interaction", "-n", "--ansi", "--no-ansi", "--no-plugins", "--no-cache"}},
	"pipenv":     {sub: "run", flags: []string{"-q", "--quiet", "-v", "--verbose"}},
	"pdm":        {sub: "run", valued: []string{"-p", "--project", "-s", "--site-packages"}, flags: []string{"-v", "--verbose", "-q", "--quiet", "-l", "--list", "-g", "--global"}},
	"hatch":      {sub: "run", valued: []string{"-e", "--env"}, flags: []string{"-v", "--verbose", "-q", "--quiet"}},
	"conda":      {sub: "run", valued: []string{"-n", "--name", "-p", "--prefix", "--cwd"}, flags: []string{"--no-capture-output", "--live-stream", "-v", "--verbose", "--dev"}},
	"mamba":      {sub: "run", valued: []string{"-n", "--name", "-p", "--prefix", "--cwd"}, flags: []string{"--no-capture-output", "--live-stream", "-v", "--verbose"}},
	"micromamba": {sub: "run", valued: []string{"-n", "--name", "-p", "--prefix", "--cwd"}, flags: []string{"-a", "--attach"}},
	"bundle":     {sub: "exec", valued: []string{"--gemfile"}, flags: []string{"--keep-file-descriptors"}},
	"npx":        {valued: []string{"-p", "--package", "-c", "--call", "--cache", "--registry", "-w", "--workspace"}, flags: []string{"-y", "--yes", "--no", "-q", "--quiet", "--no-install", "--ignore-existing", "--prefer-offline", "--prefer-online", "-ws", "--workspaces", "--include-workspace-root"}},
	"bunx":       {valued: []string{"-p", "--package"}, flags: []string{"--bun", "--silent", "--verbose", "--no-install"}},
	"pnpm":       {sub: "exec|dlx", valued: []string{"-C", "--dir", "--filter", "-F", "--package", "--reporter"}, flags: []string{"-r", "--recursive", "--parallel", "-c", "--shell-mode", "-s", "--silent", "--no-bail", "--report-summary"}},
	"npm":        {sub: "exec|x", valued: []string{"-p", "--package", "-c", "--call", "-w", "--workspace", "--registry", "--cache"}, flags: []string{"-y", "--yes", "--no", "-q", "--quiet", "-ws", "--workspaces", "--include-workspace-root", "--prefer-offline"}},
	"yarn":       {sub: "exec|dlx", valued: []string{"-p", "--package"}, flags: []string{"-q", "--quiet"}},
	"pipx":       {sub: "run", valued: []string{"--spec", "--python", "--index-url", "-i", "--pip-args"}, flags: []string{"--no-cache", "--path", "--pypackages", "-v", "--verbose", "-q", "--quiet", "--system-site-packages"}},
	"direnv":     {sub: "exec"},
	"mise":       {sub: "exec|x", valued: []string{"-C", "--cd", "-j", "--jobs", "-E", "--env"}, flags: []string{"--raw", "-q", "--quiet", "-y", "--yes", "-v", "--verbose"}},
	"asdf":       {sub: "exec"},
	"rbenv":      {sub: "exec"},
	"pyenv":      {sub: "exec"},
	"dotenv":     {valued: []string{"-e", "-v", "-c"}, flags: []string{"-o", "--debug", "-p", "--quiet"}},
}

// isRunner reports whether name has a runner spec.
func isRunner(name string) bool {
	_, ok := runners[name]
	return ok
}

// runner handles the package-manager runners: the command they run is a
// nested entry. When an option this package does not know is followed by
// a word, that word may be the option's value or the command, and the
// runner is Unknown.
func (k *call) runner() {
	spec := runners[k.name]
	args := k.args
	origin := k.name
	if spec.sub != "" {
		if len(args) == 0 {
			k.install()
			return
		}
		if args[0].Dynamic {
			k.unknown("the subcommand of " + k.name + " is only known when the line runs")
			return
		}
		if !slices.Contains(strings.Split(spec.sub, "|"), args[0].Value) {
			k.install() // another subcommand: install, test, build...
			return
		}
		origin += " " + args[0].Value
		args = args[1:]
	}
	if k.name == "direnv" && len(args) > 0 {
		args = args[1:] // the directory
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.Dynamic {
			if a.mayBeOption() {
				k.unknown("the arguments of " + origin + " are only known when the line runs")
				return
			}
			k.child(args[i:], origin)
			return
		}
		v := a.Value
		switch {
		case v == "--":
			k.child(args[i+1:], origin)
			return
		case !strings.HasPrefix(v, "-") || v == "-":
			k.child(args[i:], origin)
			return
		case strings.Contains(v, "="):
		case (k.name == "npx" || k.name == "npm") && (v == "-c" || v == "--call"):
			if i+1 < len(args) {
				k.runString(args[i+1], Bash, origin+" -c")
			}
			return
		case slices.Contains(spec.valued, v):
			i++
		case slices.Contains(spec.flags, v):
		default:
			if i+1 < len(args) && !args[i+1].mayBeOption() {
				k.unknown("cannot tell which command " + origin + " runs: " + v + " may take a value")
				return
			}
		}
	}
}
