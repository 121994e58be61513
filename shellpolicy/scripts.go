// This file defines the commands that run a program given in their
// arguments: sed and awk (whose scripts are scanned for writes and for
// commands they run), perl, and the interpreters with inline code
// (python -c, node -e, ruby -e, ...).

package shellpolicy

import (
	"slices"
	"strings"
)

// inline marks the command as running inline code, which can write any
// file: FileWrite, as Statewright classes interpreters.
func (k *call) inline(lang string, code []Word) {
	detail := "it runs inline " + lang + " code, which can write files"
	for _, w := range code {
		if w.Dynamic {
			detail = "it runs " + lang + " code that is only known when the line runs"
		}
		k.c.code = append(k.c.code, w.Value)
	}
	k.c.explain(FileWrite, detail)
}

// sed handles sed: -i is FileModify on the files; a script that writes
// (w, s///w) or runs commands (e, s///e) is FileWrite.
func (k *call) sed() {
	c := k.c
	args := k.args
	// BSD sed takes "-i ''": drop the empty suffix.
	for i := 0; i+1 < len(args); i++ {
		if !args[i].Dynamic && args[i].Value == "-i" && !args[i+1].Dynamic && args[i+1].Value == "" {
			args = append(args[:i+1:i+1], args[i+2:]...)
			break
		}
	}
	p := parseArgs(args, optSpec{short: "efl", long: []string{"expression", "file", "line-length"}})
	ops := p.words(args)
	scripts := p.values("-e", "--expression")
	fromFile := len(p.values("-f", "--file")) > 0
	if len(scripts) == 0 && !fromFile && len(ops) > 0 {
		scripts, ops = ops[:1], ops[1:]
	}
	switch {
	case p.dynamic:
		c.explain(FileModify, "the sed options are only known when the line runs")
		for _, w := range ops {
			k.write(w)
		}
	case p.has("-i", "--in-place"):
		c.explain(FileModify, "sed -i edits files in place")
		for _, w := range ops {
			k.write(w)
		}
	}
	if fromFile {
		c.explain(FileWrite, "a sed script file can write files and run commands")
	}
	if p.has("--sandbox") && !p.dynamic {
		return // GNU sed then refuses w, e and r
	}
	for _, s := range scripts {
		if s.Dynamic {
			c.explain(FileWrite, "the sed script is only known when the line runs")
			continue
		}
		writes, exec, ok := scanSed(s.Value)
		switch {
		case !ok:
			c.explain(FileWrite, "the sed script could not be read, and sed scripts can write files and run commands")
		case exec:
			c.explain(FileWrite, "the sed script runs shell commands (e)")
		}
		for _, f := range writes {
			if !harmlessDevice(f) {
				c.Class |= FileWrite
				k.write(Word{Value: f})
			}
		}
	}
}

// scanSed reads a GNU sed script and returns the files its w, W and s///w
// commands write, whether it runs commands (e, s///e), and ok = false when
// it is not a script this scanner understands.
func scanSed(s string) (writes []string, exec, ok bool) {
	i := 0
	toEOL := func() string {
		start := i
		for i < len(s) && s[i] != '\n' {
			i++
		}
		return strings.TrimSpace(s[start:i])
	}
	// skipDelimited skips to just past the next unescaped delim.
	skipDelimited := func(delim byte) bool {
		for i < len(s) {
			switch s[i] {
			case '\\':
				i += 2
				continue
			case delim:
				i++
				return true
			case '\n':
				return false
			}
			i++
		}
		return false
	}
	for {
		for i < len(s) && strings.IndexByte(" \t\n;", s[i]) >= 0 {
			i++
		}
		if i >= len(s) {
			return writes, exec, true
		}
		if s[i] == '#' {
			toEOL()
			continue
		}
		// Addresses: number, $, /re/, \cREc, first~step, addr1,addr2,
		// addr,+N, addr,~N; then !.
		for n := 0; n < 2; n++ {
			switch {
			case i < len(s) && s[i] >= '0' && s[i] <= '9':
				for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '~') {
					i++
				}
			case i < len(s) && s[i] == '$':
				i++
			case i < len(s) && s[i] == '/':
				i++
				if !skipDelimited('/') {
					return nil, false, false
				}
				for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
					i++
				}
			case i+1 < len(s) && s[i] == '\\':
				d := s[i+1]
				i += 2
				if !skipDelimited(d) {
					return nil, false, false
				}
				for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
					i++
				}
			case n == 1 && i < len(s) && (s[i] == '+' || s[i] == '~'):
				i++
				for i < len(s) && s[i] >= '0' && s[i] <= '9' {
					i++
				}
			}
			if n == 0 && i < len(s) && s[i] == ',' {
				i++
				continue
			}
			break
		}
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '!') {
			i++
		}
		if i >= len(s) {
			return nil, false, false
		}
		cmd := s[i]
		i++
		switch cmd {
		case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 'l', 'L', 'q', 'Q':
			for i < len(s) && (s[i] == ' ' || s[i] >= '0' && s[i] <= '9') {
				i++
			}
		case ':', 'b', 't', 'T', 'v':
			for i < len(s) && s[i] != '\n' && s[i] != ';' {
				i++
			}
		case 'a', 'i', 'c':
		text:
			for i < len(s) {
				switch {
				case s[i] == '\\' && i+1 < len(s):
					i += 2
				case s[i] == '\n':
					break text
				default:
					i++
				}
			}
		case 'r', 'R':
			toEOL()
		case 'w', 'W':
			writes = append(writes, toEOL())
		case 'e':
			toEOL()
			exec = true
		case 's', 'y':
			if i >= len(s) || s[i] == '\n' || s[i] == '\\' {
				return nil, false, false
			}
			d := s[i]
			i++
			pattern := skipDelimited(d)
			if !pattern || !skipDelimited(d) { // the replacement (or y's target)
				return nil, false, false
			}
			if cmd == 'y' {
				continue
			}
		flags:
			for i < len(s) {
				switch f := s[i]; {
				case f == 'w':
					i++
					writes = append(writes, toEOL())
					break flags
				case f == 'e':
					exec = true
					i++
				case strings.IndexByte("gpiImM0123456789", f) >= 0:
					i++
				default:
					break flags
				}
			}
		default:
			return nil, false, false
		}
	}
}

// awk handles awk: -i inplace is FileModify; a program that writes files
// with > or runs commands (system, pipes) is FileWrite.
func (k *call) awk() {
	c := k.c
	p := parseArgs(k.args, optSpec{short: "fvFeEilWdop", long: []string{"file", "assign", "field-separator", "source",
		"include", "load", "exec"}})
	ops := p.words(k.args)
	progs := p.values("-e", "--source")
	files := p.values("-f", "--file", "-E", "--exec")
	if len(progs) == 0 && len(files) == 0 && len(ops) > 0 {
		progs, ops = ops[:1], ops[1:]
	}
	for _, inc := range p.values("-i", "--include") {
		if inc.Dynamic || strings.TrimSuffix(inc.Value, ".awk") == "inplace" {
			c.explain(FileModify, "awk -i inplace edits files in place")
			for _, w := range ops {
				if w.Dynamic || !strings.Contains(w.Value, "=") {
					k.write(w)
				}
			}
		}
	}
	if len(files) > 0 || p.has("-l", "--load") {
		c.explain(FileWrite, "an awk program file can write files and run commands")
	}
	if p.has("-d", "-o", "-p", "--dump-variables", "--pretty-print", "--profile") {
		c.Class |= FileWrite
		k.writeUnknown()
	}
	if p.dynamic {
		c.explain(FileModify, "the awk options are only known when the line runs")
		c.explain(FileWrite, "the awk options are only known when the line runs")
	}
	sandbox := p.has("-S", "--sandbox") && !p.dynamic
	for _, prog := range progs {
		c.code = append(c.code, prog.Value)
		if sandbox {
			continue
		}
		if prog.Dynamic {
			c.explain(FileWrite, "the awk program is only known when the line runs")
			continue
		}
		writes, dynamicWrite, exec := scanAwk(prog.Value)
		if exec {
			c.explain(FileWrite, "the awk program runs shell commands")
		}
		if dynamicWrite {
			c.Class |= FileWrite
			k.writeUnknown()
		}
		for _, f := range writes {
			if !harmlessDevice(f) && f != "-" {
				c.Class |= FileWrite
				k.write(Word{Value: f})
			}
		}
	}
}

// scanAwk reads an awk program and returns the files its print and printf
// redirections write (by name when it is a string constant; dynamicWrite
// otherwise), and whether it runs commands (system(), | pipes).
func scanAwk(prog string) (writes []string, dynamicWrite, exec bool) {
	const (
		tokOther = iota
		tokString
		tokName
	)
	regexOK := true // a / here starts a regular expression
	inPrint := false
	depth := 0 // parentheses since print
	redirect := false
	for i := 0; i < len(prog); {
		ch := prog[i]
		kind, text := tokOther, ""
		switch {
		case ch == ' ' || ch == '\t' || ch == '\r':
			i++
			continue
		case ch == '\\' && i+1 < len(prog) && prog[i+1] == '\n':
			i += 2
			continue
		case ch == '#':
			for i < len(prog) && prog[i] != '\n' {
				i++
			}
			continue
		case ch == '"':
			j := i + 1
			var b strings.Builder
			for j < len(prog) && prog[j] != '"' {
				if prog[j] == '\\' && j+1 < len(prog) {
					j++
				}
				b.WriteByte(prog[j])
				j++
			}
			i = j + 1
			kind, text = tokString, b.String()
		case ch == '/' && regexOK:
			j := i + 1
			inBracket := false
			for j < len(prog) && (prog[j] != '/' || inBracket) && prog[j] != '\n' {
				switch prog[j] {
				case '\\':
					j++
				case '[':
					inBracket = true
				case ']':
					inBracket = false
				}
				j++
			}
			i = j + 1
			kind = tokString
		case ch >= '0' && ch <= '9' || ch == '.' && i+1 < len(prog) && prog[i+1] >= '0' && prog[i+1] <= '9':
			// A number is an operand: a / after it divides.
			j := i
			for j < len(prog) && (prog[j] >= '0' && prog[j] <= '9' || prog[j] == '.' || prog[j] == 'e' || prog[j] == 'E' ||
				prog[j] == 'x' || prog[j] == 'X' || prog[j] >= 'a' && prog[j] <= 'f' || prog[j] >= 'A' && prog[j] <= 'F') {
				j++
			}
			kind, text = tokName, prog[i:j]
			i = j
		case ch == '@':
			exec = true // @load and @include bring in code this scanner does not see
			i++
			continue
		case ch == '_' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z':
			j := i
			for j < len(prog) && (prog[j] == '_' || prog[j] >= 'a' && prog[j] <= 'z' || prog[j] >= 'A' && prog[j] <= 'Z' || prog[j] >= '0' && prog[j] <= '9') {
				j++
			}
			kind, text = tokName, prog[i:j]
			i = j
		default:
			text = prog[i : i+1]
			if i+1 < len(prog) {
				switch two := prog[i : i+2]; two {
				case "||", "&&", ">>", "|&":
					text = two
				}
			}
			i += len(text)
		}
		if redirect {
			redirect = false
			if kind == tokString {
				writes = append(writes, text)
			} else {
				dynamicWrite = true
			}
		}
		switch {
		case kind == tokName && (text == "print" || text == "printf"):
			inPrint, depth = true, 0
		case kind == tokName && text == "system":
			exec = true
		case text == "|" || text == "|&":
			exec = true
		case text == "(":
			depth++
		case text == ")":
			depth--
		case text == ";" || text == "\n" || text == "}" || text == "{":
			inPrint = false
		case (text == ">" || text == ">>") && inPrint && depth <= 0:
			redirect = true
		}
		regexOK = kind == tokOther && text != ")" && text != "]"
	}
	if redirect {
		dynamicWrite = true
	}
	return writes, dynamicWrite, exec
}

// perl handles perl: -e code is inline code; -i edits the files in place.
func (k *call) perl() {
	args := k.args
	var code []Word
	inPlace, stdin, info := false, false, false
	i := 0
options:
	for ; i < len(args); i++ {
		a := args[i]
		if a.Dynamic {
			if a.mayBeOption() {
				k.c.explain(FileModify, "the perl options are only known when the line runs")
				k.inline("perl", []Word{a})
				return
			}
			break
		}
		v := a.Value
		if v == "--" {
			i++
			break
		}
		if v == "-" {
			stdin = true
			i++
			break
		}
		if !strings.HasPrefix(v, "-") || len(v) < 2 {
			break
		}
		for j := 1; j < len(v); j++ {
			switch ch := v[j]; ch {
			case 'e', 'E':
				if j+1 < len(v) {
					code = append(code, Word{Value: v[j+1:]})
				} else if i+1 < len(args) {
					i++
					code = append(code, args[i])
				}
				continue options
			case 'i':
				inPlace = true
				continue options
			case 'l', '0':
				for j+1 < len(v) && (v[j+1] >= '0' && v[j+1] <= '9' || ch == '0' && strings.IndexByte("xXabcdefABCDEF", v[j+1]) >= 0) {
					j++
				}
			case 'I':
				if j+1 == len(v) {
					i++
				}
				continue options
			case 'M', 'm', 'x', 'C', 'd', 'D', 'F':
				continue options
			case 'v', 'V', 'h':
				info = true
			}
		}
	}
	operands := args[i:]
	files := operands
	switch {
	case len(code) > 0:
		k.inline("perl", code)
	case stdin || len(operands) == 0 && !info:
		k.inline("perl", []Word{{Value: k.in.stdinText, Dynamic: k.in.stdin != stdinStatic}})
	case len(operands) == 0:
	case stdinPath(operands[0].Value) && !operands[0].Dynamic:
		k.inline("perl", []Word{{Value: k.in.stdinText, Dynamic: k.in.stdin != stdinStatic}})
		files = operands[1:]
	default:
		files = operands[1:] // a script file
	}
	if inPlace {
		k.c.explain(FileModify, "perl -i edits files in place")
		for _, f := range files {
			k.write(f)
		}
	}
}

// interpSpec describes an interpreter's options.
type interpSpec struct {
	lang     string
	code     string   // short options whose value is inline code
	codeLong []string // long options whose value is inline code
	valued   string   // short options taking another value
	long     []string // long options taking a value
	ends     string   // short options naming a module or file to run
	info     []string // options that only print information
	inPlace  bool     // -i edits the files in place (ruby)
}

// interpreterSpec returns the spec of an interpreter, and whether name is
// one.
func interpreterSpec(name string) (interpSpec, bool) {
	info := []string{"-V", "--version", "-v", "-h", "--help"}
	switch {
	case strings.HasPrefix(name, "python") || strings.HasPrefix(name, "pypy") || strings.HasPrefix(name, "ipython"):
		return interpSpec{lang: "python", code: "c", valued: "WX", ends: "m", long: []string{"check-hash-based-pycs"},
			info: []string{"-V", "--version", "-h", "--help"}}, versioned(name)
	case name == "node" || name == "nodejs":
		return interpSpec{lang: "JavaScript", code: "ep", codeLong: []string{"eval", "print"}, valued: "rC",
			long: []string{"require", "import", "input-type", "loader", "experimental-loader", "conditions", "title", "env-file", "stack-size"},
			info: append(info, "-c", "--check")}, true
	case name == "ruby" || name == "irb" || name == "jruby":
		return interpSpec{lang: "ruby", code: "e", valued: "ICEr", info: info, inPlace: true}, true
	case strings.HasPrefix(name, "php"):
		return interpSpec{lang: "PHP", code: "rBRE", valued: "cdztS", ends: "f", info: append(info, "-i", "-m", "-l")}, versioned(name)
	case strings.HasPrefix(name, "lua"):
		return interpSpec{lang: "Lua", code: "e", valued: "l", info: info}, versioned(name)
	case name == "Rscript" || name == "R":
		return interpSpec{lang: "R", code: "e", long: []string{"file"}, info: info}, true
	case name == "osascript":
		return interpSpec{lang: "AppleScript", code: "e", valued: "ls", info: info}, true
	case name == "tclsh" || name == "wish" || name == "jshell":
		return interpSpec{lang: name, info: info}, true
	case name == "julia" || name == "elixir" || name == "racket" || name == "groovy":
		return interpSpec{lang: name, code: "e", codeLong: []string{"eval"}, info: info}, true
	case name == "guile":
		return interpSpec{lang: name, code: "c", info: info}, true
	}
	return interpSpec{}, false
}

// versioned reports whether an interpreter name is its stem followed by a
// version only ("python3.12", "luajit", not "pythonista").
func versioned(name string) bool {
	for _, stem := range []string{"ipython", "python", "pypy", "php", "luajit", "lua"} {
		if rest, ok := strings.CutPrefix(name, stem); ok {
			return strings.Trim(rest, "0123456789.") == ""
		}
	}
	return false
}

// isInterpreter reports whether name is an interpreter with inline code,
// deno or bun.
func isInterpreter(name string) bool {
	if name == "deno" || name == "bun" {
		return true
	}
	_, ok := interpreterSpec(name)
	return ok
}

// interpreter handles the interpreters: inline code (-c, -e, code read
// from standard input) is FileWrite; a script or a module runs as a
// passthrough.
func (k *call) interpreter() {
	switch k.name {
	case "deno":
		if len(k.args) > 0 && !k.args[0].Dynamic && (k.args[0].Value == "eval" || k.args[0].Value == "repl") {
			k.inline("JavaScript", k.args[1:])
		}
		return
	case "bun":
		k.install()
		p := parseArgs(k.args, optSpec{short: "ep", long: []string{"eval", "print"}})
		if code := p.values("-e", "--eval", "-p", "--print"); len(code) > 0 {
			k.inline("JavaScript", code)
		}
		return
	}
	spec, _ := interpreterSpec(k.name)
	args := k.args
	var code []Word
	script := -1
	info := false
scan:
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.Dynamic {
			if a.mayBeOption() {
				k.inline(spec.lang, []Word{a})
				return
			}
			script = i
			break
		}
		v := a.Value
		switch {
		case v == "-":
			break scan
		case v == "--":
			if i+1 < len(args) {
				script = i + 1
			}
			break scan
		case slices.Contains(spec.info, v):
			info = true
		case strings.HasPrefix(v, "--"):
			name, val, hasVal := strings.Cut(v[2:], "=")
			switch {
			case slices.Contains(spec.codeLong, name):
				if hasVal {
					code = append(code, Word{Value: val})
				} else if i+1 < len(args) {
					i++
					code = append(code, args[i])
				}
				break scan
			case slices.Contains(spec.long, name) && !hasVal:
				i++
			}
		case strings.HasPrefix(v, "-") && len(v) > 1:
			for j := 1; j < len(v); j++ {
				ch := v[j]
				switch {
				case strings.IndexByte(spec.code, ch) >= 0:
					if j+1 < len(v) {
						code = append(code, Word{Value: v[j+1:]})
					} else if i+1 < len(args) {
						i++
						code = append(code, args[i])
					}
					if spec.inPlace {
						continue scan // ruby takes several -e
					}
					break scan
				case strings.IndexByte(spec.ends, ch) >= 0:
					return // a module or a file
				case strings.IndexByte(spec.valued, ch) >= 0:
					if j+1 == len(v) {
						i++
					}
					continue scan
				case ch == 'i' && spec.inPlace:
					k.c.explain(FileModify, k.name+" -i edits files in place")
					continue scan
				}
			}
		default:
			script = i
			break scan
		}
	}
	if script >= 0 && !args[script].Dynamic && stdinPath(args[script].Value) {
		script = -1 // "python3 /dev/stdin": the program is the input
	}
	switch {
	case len(code) > 0:
		k.inline(spec.lang, code)
	case script >= 0 || info:
	default:
		k.inline(spec.lang, []Word{{Value: k.in.stdinText, Dynamic: k.in.stdin != stdinStatic}})
	}
	if k.c.Class&FileModify != 0 {
		ops := parseArgs(args, optSpec{short: spec.code + spec.valued}).words(args)
		if len(code) == 0 && script >= 0 && len(ops) > 0 {
			ops = ops[1:] // the script
		}
		for _, f := range ops {
			k.write(f)
		}
	}
}
