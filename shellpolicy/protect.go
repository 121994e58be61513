// This file defines the protected paths and programs of a Policy: what no
// command may write, name or run, in any state.

package shellpolicy

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Protection lists what the commands of a line may not touch, whatever
// the state allows: see "Protected paths" in the package documentation.
type Protection struct {
	// Paths are the files and folders no command may write (nor a folder
	// that holds one, nor one of their ancestors). A pattern is absolute
	// ("/etc/x"), relative to Home ("~/.claude/settings.json") or
	// relative to Project (".claude/settings.json"). Within an element,
	// "*", "?" and "[...]" match as in path.Match; a pattern ending in
	// "/**" is a folder and everything in it.
	Paths []string
	// Secrets are paths, in the same patterns, that no command may name
	// at all, reading included: the store, the approval secret.
	Secrets []string
	// Programs are program names no command may run (chartgate): by
	// name, by any path ending in /name, through the commands that run
	// others, and as "go run", "go build" or "go install" of a package
	// whose path ends in /name.
	Programs []string
	// Dir is the absolute folder the line starts in ($PWD).
	Dir string
	// Project is the absolute folder relative patterns are relative to;
	// "" means Dir.
	Project string
	// Home is the user's home folder (~, $HOME).
	Home string
	// Resolve, when set, returns an absolute clean path with the symbolic
	// links that exist on disk resolved: a write through a link to a
	// protected path is refused too.
	Resolve func(string) string
}

// protPattern is a compiled pattern: its elements, lower-cased.
type protPattern struct {
	text   string
	segs   []string
	folder []string // the elements of the folder it protects, nil for none
	secret bool
	tree   bool // the pattern itself is a folder ("/**")
}

// protection is a Protection compiled for one decision.
type protection struct {
	p        *Protection
	paths    []protPattern
	marks    []string // names that inline code may not mention
	secretNm []string // names no word may hold
	programs []string
	// homeSet, pwdSet: the line assigns HOME or PWD, so ~, $HOME and
	// $PWD are not known before it runs.
	homeSet, pwdSet bool
}

// compile prepares pr for deciding a line; nil when there is nothing to
// protect.
func (pr *Protection) compile() *protection {
	if pr == nil || len(pr.Paths)+len(pr.Secrets)+len(pr.Programs) == 0 {
		return nil
	}
	c := &protection{p: pr}
	project := pr.Project
	if project == "" {
		project = pr.Dir
	}
	add := func(text string, secret bool) {
		base, rest := project, text
		switch {
		case rest == "~" || strings.HasPrefix(rest, "~/"):
			base, rest = pr.Home, strings.TrimPrefix(strings.TrimPrefix(rest, "~"), "/")
		case path.IsAbs(rest):
			base = "/"
			if pr.Home != "" && strings.HasPrefix(rest, pr.Home+"/") {
				base, rest = pr.Home, strings.TrimPrefix(rest, pr.Home+"/")
			}
		}
		folder := false
		if r, ok := strings.CutSuffix(rest, "/**"); ok {
			rest, folder = r, true
		}
		rest = strings.TrimSuffix(rest, "/")
		full := strings.ToLower(path.Join("/", base, rest))
		pp := protPattern{text: text, segs: split(full), secret: secret}
		baseLen := len(split(strings.ToLower(path.Join("/", base))))
		switch {
		case folder:
			pp.folder, pp.tree = pp.segs, true
		case len(pp.segs)-1 > baseLen:
			pp.folder = pp.segs[:len(pp.segs)-1] // the folder holding the file
		}
		c.paths = append(c.paths, pp)
		rel := split(strings.ToLower(rest))
		for i, s := range rel {
			if secret && i == len(rel)-1 && !folder && strings.TrimRight(s, "*?") != "" && !hasMeta(strings.TrimRight(s, "*?")) {
				c.secretNm = append(c.secretNm, strings.TrimRight(s, "*?"))
			}
			if hasMeta(s) || s == "" {
				continue
			}
			if strings.HasPrefix(s, ".") || i == len(rel)-1 && strings.Contains(s, ".") {
				c.marks = append(c.marks, s)
			}
		}
	}
	for _, t := range pr.Paths {
		add(t, false)
	}
	for _, t := range pr.Secrets {
		add(t, true)
	}
	for _, n := range pr.Programs {
		c.programs = append(c.programs, strings.ToLower(n))
	}
	return c
}

// split returns the elements of a clean absolute path.
func split(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// hasMeta reports whether an element holds an unescaped glob character.
func hasMeta(s string) bool { return hasGlob(s) }

// segMatch reports whether two elements, either of which may be a glob
// pattern, may name the same file.
func segMatch(a, b string) bool {
	ma, mb := hasMeta(a), hasMeta(b)
	switch {
	case ma && mb:
		return true
	case ma:
		ok, err := path.Match(a, unescape(b, ""))
		return ok || err != nil
	case mb:
		ok, err := path.Match(b, unescape(a, ""))
		return ok || err != nil
	}
	return unescape(a, "") == unescape(b, "")
}

// prefixMatch reports whether the first len(a) elements of b match a.
func prefixMatch(a, b []string) bool {
	if len(a) > len(b) {
		return false
	}
	for i := range a {
		if a[i] == "**" {
			return true
		}
		if !segMatch(a[i], b[i]) {
			return false
		}
	}
	return true
}

// hits returns the pattern a path (elements, maybe glob patterns) is
// protected by: it is one of its paths or an ancestor of one, or it is in
// a protected folder; with secretsOnly, only secrets count, and an
// ancestor only when it is below the folder the pattern is relative to.
func (pc *protection) hits(g []string, secretsOnly bool) *protPattern {
	for i := range pc.paths {
		pp := &pc.paths[i]
		if secretsOnly && !pp.secret {
			continue
		}
		if prefixMatch(g, pp.segs) && (!secretsOnly || pp.folder != nil && len(g) >= len(pp.folder)) {
			return pp
		}
		if pp.folder != nil && (pp.tree || !secretsOnly) && len(g) > len(pp.folder) && prefixMatch(pp.folder, g) {
			return pp
		}
		if slices.Contains(g, "**") && prefixMatch(g[:slices.Index(g, "**")], pp.segs) {
			return pp
		}
	}
	return nil
}

// resolveTouch returns the absolute paths (lower-cased elements, maybe
// glob patterns) a word may name, or ok = false when it cannot be known
// before the line runs (an expansion other than $HOME and $PWD, a
// command substitution, a folder of a cd not known, a glob that may
// climb with "..").
func (pc *protection) resolveTouch(t touch) (out [][]string, ok bool) {
	var pats []string
	if t.w.Dynamic {
		pat, good := wordPattern(t.w.Value)
		if !good {
			return nil, false
		}
		alts, good := expandBraces(pat, 64)
		if !good {
			return nil, false
		}
		pats = alts
	} else {
		if t.w.Value == "" {
			return nil, true
		}
		pats = []string{escapeMeta(t.w.Value)}
	}
	cwd := path.Join(pc.p.Dir, t.dir)
	if path.IsAbs(t.dir) {
		cwd = t.dir
	}
	for _, p := range pats {
		switch {
		case strings.HasPrefix(p, homeMark):
			if pc.p.Home == "" || pc.homeSet {
				return nil, false
			}
			p = escapeMeta(pc.p.Home) + "/" + strings.TrimPrefix(p, homeMark)
		case strings.HasPrefix(p, pwdMark):
			if t.dirUnknown || pc.p.Dir == "" || pc.pwdSet {
				return nil, false
			}
			p = escapeMeta(cwd) + "/" + strings.TrimPrefix(p, pwdMark)
		case strings.Contains(p, homeMark) || strings.Contains(p, pwdMark):
			return nil, false
		case !path.IsAbs(p):
			if t.dirUnknown || pc.p.Dir == "" {
				return nil, false
			}
			p = escapeMeta(cwd) + "/" + p
		}
		for _, s := range strings.Split(p, "/") {
			// A glob matches ".." only when it starts with a dot (bash's
			// globs never match a leading dot otherwise).
			if hasMeta(s) && (strings.HasPrefix(s, ".") || strings.HasPrefix(s, "[") || strings.HasPrefix(s, "\\")) {
				if m, _ := path.Match(s, ".."); m {
					return nil, false
				}
			}
		}
		clean := path.Clean(p)
		out = append(out, split(strings.ToLower(clean)))
		if pc.p.Resolve != nil && !hasGlob(clean) {
			if r := pc.p.Resolve(unescape(clean, "")); r != "" && r != clean {
				out = append(out, split(strings.ToLower(escapeMeta(r))))
			}
		}
	}
	return out, true
}

// The markers wordPattern puts for $HOME (and ~) and $PWD.
const (
	homeMark = "\x00home\x00"
	pwdMark  = "\x00pwd\x00"
)

// wordPattern turns the source text of a dynamic word into a glob
// pattern: quoted text with its glob characters escaped, unquoted globs
// and braces kept, ~, $HOME and $PWD as markers. ok is false for any other
// expansion.
func wordPattern(src string) (string, bool) {
	var words []*syntax.Word
	for w, err := range syntax.NewParser().WordsSeq(strings.NewReader(src)) {
		if err != nil || len(words) > 0 {
			return "", false
		}
		words = append(words, w)
	}
	if len(words) != 1 {
		return "", false
	}
	var b strings.Builder
	param := func(pe *syntax.ParamExp) bool {
		if pe.Param == nil || pe.Exp != nil || pe.Index != nil || pe.Length || pe.Excl || pe.Slice != nil || pe.Repl != nil {
			return false
		}
		switch pe.Param.Value {
		case "HOME":
			b.WriteString(homeMark)
		case "PWD":
			b.WriteString(pwdMark)
		default:
			return false
		}
		return true
	}
	for i, part := range words[0].Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v := p.Value
			if i == 0 && (v == "~" || strings.HasPrefix(v, "~/")) {
				b.WriteString(homeMark)
				v = strings.TrimPrefix(strings.TrimPrefix(v, "~"), "/")
			} else if i == 0 && strings.HasPrefix(v, "~") {
				return "", false // ~user
			}
			b.WriteString(v)
		case *syntax.SglQuoted:
			if p.Dollar {
				b.WriteString(escapeMeta(ansiC(p.Value)))
			} else {
				b.WriteString(escapeMeta(p.Value))
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				switch q := q.(type) {
				case *syntax.Lit:
					b.WriteString(escapeMeta(unescape(q.Value, "$`\"\\\n")))
				case *syntax.ParamExp:
					if !param(q) {
						return "", false
					}
				default:
					return "", false
				}
			}
		case *syntax.ParamExp:
			if !param(p) {
				return "", false
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// escapeMeta escapes the glob and brace characters of a literal.
func escapeMeta(s string) string {
	if !strings.ContainsAny(s, "*?[]{}\\,") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte("*?[]{}\\,", s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// expandBraces expands the unescaped brace expansions of a pattern
// ({a,b}; a sequence {1..9} becomes "*"), giving up (ok = false) past
// limit alternatives.
func expandBraces(p string, limit int) ([]string, bool) {
	open, close, commas := -1, -1, []int(nil)
	depth := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			if depth == 0 {
				open, commas = i, nil
			}
			depth++
		case ',':
			if depth == 1 {
				commas = append(commas, i)
			}
		case '}':
			if depth == 0 {
				continue
			}
			depth--
			if depth == 0 {
				close = i
			}
		}
		if close >= 0 {
			break
		}
	}
	if open < 0 || close < 0 {
		return []string{p}, true
	}
	pre, body, post := p[:open], p[open+1:close], p[close+1:]
	var alts []string
	if len(commas) == 0 {
		if !strings.Contains(body, "..") {
			// Not an expansion: literal braces.
			rest, ok := expandBraces(post, limit)
			if !ok {
				return nil, false
			}
			for _, r := range rest {
				alts = append(alts, pre+"\\{"+body+"\\}"+r)
			}
			return alts, len(alts) <= limit
		}
		alts = []string{"*"}
	} else {
		start := open + 1
		for _, c := range append(commas, close) {
			alts = append(alts, p[start:c])
			start = c + 1
		}
	}
	var out []string
	for _, a := range alts {
		sub, ok := expandBraces(pre+a+post, limit)
		if !ok {
			return nil, false
		}
		out = append(out, sub...)
		if len(out) > limit {
			return nil, false
		}
	}
	return out, true
}

// mentions reports whether text holds name as a word of its own (not
// within a longer name of letters, digits, "_" or "-").
func mentions(text, name string) bool {
	isName := func(b byte) bool {
		return b == '_' || b == '-' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
	}
	for i := 0; ; {
		j := strings.Index(text[i:], name)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(name)
		if (j == 0 || !isName(text[j-1]) && text[j-1] != '.') && (end == len(text) || !isName(text[end])) {
			return true
		}
		i = j + 1
	}
}

// programName returns a command name's base name, lower-cased, without
// ".exe".
func programName(name string) string {
	return strings.TrimSuffix(strings.ToLower(path.Base(name)), ".exe")
}

// reason returns why c is refused in every state by the protection, or
// "".
func (pc *protection) reason(c *Command, source string) string {
	if c.Kind == Simple && len(c.Words) > 0 && c.Words[0].Dynamic {
		low := strings.ToLower(source)
		for _, p := range pc.programs {
			if mentions(low, p) {
				return "its command name " + shorten(c.Words[0].Value) + " is only known when the line runs, and the line names " + p + ", which the agent may not run"
			}
		}
	}
	// Secrets: named by any word, or their name in any text.
	for _, t := range c.seen {
		low := strings.ToLower(t.w.Value)
		for _, n := range pc.secretNm {
			if n != "" && strings.Contains(low, n) {
				return "it names " + n + ", which no command may read or write"
			}
		}
		if gs, ok := pc.resolveTouch(t); ok {
			for _, g := range gs {
				if pp := pc.hits(g, true); pp != nil {
					return "it names " + shorten(t.w.Value) + ", which is " + pp.text + ": no command may read or write it"
				}
			}
		}
	}
	for _, code := range c.code {
		low := strings.ToLower(code)
		for _, n := range pc.secretNm {
			if n != "" && strings.Contains(low, n) {
				return "it runs code that names " + n + ", which no command may read or write"
			}
		}
		if c.Class&(FileWrite|FileModify|Unknown) != 0 {
			for _, m := range pc.marks {
				if strings.Contains(low, m) {
					return "it runs code that names " + m + ", a protected path"
				}
			}
		}
	}
	// Programs.
	if c.Kind == Simple && len(c.Words) > 0 && len(pc.programs) > 0 {
		name := c.Words[0]
		if !name.Dynamic && slices.Contains(pc.programs, programName(name.Value)) {
			return "it runs " + programName(name.Value) + ", which the agent may not run"
		}
		if name.Dynamic || c.Class&Unknown != 0 || len(c.code) > 0 {
			texts := append(c.Values(), c.code...)
			for _, t := range texts {
				low := strings.ToLower(t)
				for _, p := range pc.programs {
					if mentions(low, p) {
						return "it may run " + p + " (named in " + shorten(t) + "), which the agent may not run"
					}
				}
			}
		}
		for _, w := range c.Words[1:] {
			low := strings.ToLower(w.Value)
			for _, p := range pc.programs {
				switch {
				case w.Dynamic && mentions(low, p):
					// "$(which chartgate)": its path, to run or copy.
					return "it uses " + shorten(w.Value) + ", only known when the line runs, which names " + p + ", which the agent may not run"
				case !w.Dynamic && programName(w.Value) == p && isCopy(c.Name()):
					return "it copies or links " + p + " (" + shorten(w.Value) + "), which the agent may not run under any name"
				}
			}
		}
		if r := pc.goRuns(c); r != "" {
			return r
		}
	}
	if len(pc.paths) == 0 {
		return ""
	}
	// Writes.
	for _, t := range c.touches {
		gs, ok := pc.resolveTouch(t)
		if !ok {
			return "it writes " + shorten(t.w.Value) + ", a path only known when the line runs, and protected paths (" + pc.list() + ") may not be written"
		}
		for _, g := range gs {
			if pp := pc.hits(g, false); pp != nil {
				what := "writes " + shorten(t.w.Value)
				if t.unnamed {
					what = "writes files it does not name in " + shorten(t.w.Value)
				}
				return "it " + what + ", which is, holds or is in the protected path " + pp.text
			}
		}
	}
	for _, t := range c.links {
		gs, ok := pc.resolveTouch(t)
		if !ok {
			return "it makes a link to " + shorten(t.w.Value) + ", a path only known when the line runs, and protected paths (" + pc.list() + ") may not be linked to"
		}
		for _, g := range gs {
			if pp := pc.hits(g, false); pp != nil {
				return "it makes a link to " + shorten(t.w.Value) + ", which is, holds or is in the protected path " + pp.text
			}
		}
	}
	return ""
}

// goRuns returns why a go command runs a protected program: go run, build
// or install of a package whose path ends in its name.
func (pc *protection) goRuns(c *Command) string {
	if c.Name() != "go" || len(c.Words) < 2 || c.Words[1].Dynamic {
		return ""
	}
	switch c.Words[1].Value {
	case "run", "build", "install", "test", "vet":
	default:
		return ""
	}
	_, ops, _ := goFlags(c.Words[2:])
	for _, op := range ops {
		v := op.Value
		if i := strings.IndexByte(v, '@'); i >= 0 {
			v = v[:i]
		}
		if strings.HasSuffix(v, ".go") {
			v = path.Dir(v)
		}
		v = strings.TrimSuffix(v, "/...")
		if v == "." || v == "" || v == "./" {
			for _, t := range c.seen {
				if t.w == op && !t.dirUnknown {
					v = path.Join(pc.p.Dir, t.dir)
				}
			}
		}
		if slices.Contains(pc.programs, programName(v)) {
			return "it runs or builds " + programName(v) + " (go " + c.Words[1].Value + " " + op.Value + "), which the agent may not run"
		}
		if op.Dynamic && slices.ContainsFunc(pc.programs, func(p string) bool { return mentions(strings.ToLower(op.Value), p) }) {
			return "it may build " + op.Value + ", which the agent may not run"
		}
		if c.Words[1].Value == "run" {
			break // the program's arguments follow
		}
	}
	return ""
}

// list names the protected paths, shortened.
func (pc *protection) list() string {
	var names []string
	for _, p := range pc.paths {
		names = append(names, p.text)
		if len(names) == 4 && len(pc.paths) > 4 {
			names = append(names, "...")
			break
		}
	}
	return strings.Join(names, ", ")
}

// shorten quotes s, cut to 60 characters.
func shorten(s string) string {
	if r := []rune(s); len(r) > 60 {
		s = string(r[:57]) + "..."
	}
	return `"` + s + `"`
}

// Covers reports whether writing file is refused by the protection, and
// the pattern that refuses it: file is, holds or is in a protected path
// or a secret, compared as the shell's writes are (relative to Dir, "~/"
// and "$HOME/" to Home, ".." resolved lexically, links on disk through
// Resolve, without regard to case). It is the rule for the agent host's
// own file tools (Write, Edit), which name one path.
func (pr *Protection) Covers(file string) (string, bool) {
	pc := pr.compile()
	if pc == nil || file == "" {
		return "", false
	}
	gs, ok := pc.resolveFile(file)
	if !ok {
		return file + " (a path only known when it is used)", true
	}
	for _, g := range gs {
		if pp := pc.hits(g, false); pp != nil {
			return pp.text, true
		}
	}
	return "", false
}

// resolveFile resolves a path a file tool names as the shell would a
// written word: "~/" and "$HOME/" are expanded to Home.
func (pc *protection) resolveFile(file string) ([][]string, bool) {
	w := Word{Value: file}
	if file == "~" || strings.HasPrefix(file, "~/") || strings.HasPrefix(file, "$HOME/") {
		w = Word{Value: file, Dynamic: true}
	}
	return pc.resolveTouch(touch{w: w})
}

// Names reports whether a tool that reads or searches file would read a
// secret, and which: file is, or is in, a secret (or a folder below the
// secret's base that holds it).
func (pr *Protection) Names(file string) (string, bool) {
	pc := pr.compile()
	if pc == nil || file == "" {
		return "", false
	}
	gs, ok := pc.resolveFile(file)
	if !ok {
		return "", false
	}
	for _, g := range gs {
		if pp := pc.hits(g, true); pp != nil {
			return pp.text, true
		}
	}
	return "", false
}

// isCopy reports whether a command copies or links files to another
// name.
func isCopy(name string) bool {
	switch path.Base(name) {
	case "cp", "mv", "ln", "link", "install", "rsync", "dd", "scp", "tar", "zip":
		return true
	}
	return false
}
