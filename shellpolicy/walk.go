// This file defines the walk over a parsed command line: statements, lists,
// pipelines, compound commands, words, expansions, assignments and
// redirections, producing the entries of an Analysis.

package shellpolicy

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// maxDepth bounds the nesting of strings parsed again (bash -c, eval,
// trap, here-documents fed to a shell). A deeper string is Unknown.
const maxDepth = 16

// walker accumulates the entries of one Analysis.
type walker struct {
	dialect Dialect
	cmds    []Command
	ctx     context.Context
	err     error // ctx's error, once seen: the walk stops
	steps   int   // statements walked, to look at ctx every so often
	level   int   // constructs entered (see enter)
}

// enter counts one more level of nesting for a construct of scope sc,
// and reports false (having added an entry refused in every state) when
// the construct is nested more than maxNesting levels deep, or when the
// deadline has passed. Every call that returns true is paired with leave.
func (w *walker) enter(text string, pos Position, sc *scope) bool {
	if w.err != nil {
		return false
	}
	if w.level >= maxNesting {
		c := Command{Kind: Expression, Text: text, Pos: pos, Origin: sc.origin}
		c.refuse = fmt.Sprintf("it is nested more than %d levels deep, which no command needs", maxNesting)
		c.unknown(c.refuse)
		w.cmds = append(w.cmds, c)
		return false
	}
	w.level++
	return true
}

func (w *walker) leave() { w.level-- }

// dropped marks a reserved entry that turned out to have no effect.
const dropped Kind = 255

// stdinKind says where a command's standard input comes from, which matters
// for a shell or an interpreter given no script.
type stdinKind uint8

const (
	stdinNone    stdinKind = iota // the line's own input: nothing visible
	stdinPipe                     // the output of another command
	stdinFile                     // a file (< f): like a script file
	stdinStatic                   // a here-document or here-string known in full
	stdinDynamic                  // a here-document or here-string with expansions
)

// scope is what a command inherits from the text around it.
type scope struct {
	src        string   // text positions refer to
	origin     []string // nesting chain
	depth      int      // number of strings parsed again
	dir        string   // directory of the last static cd, "" = start
	dirUnknown bool     // a cd to a directory not known
	stdin      stdinKind
	stdinText  string // with stdinStatic
	// kids remembers the origin chains made by nest from this scope, so
	// that sibling constructs share one: memory stays linear in the
	// number of constructs however deep they are.
	kids *[]kid
}

// kid is an origin chain made by nest, by its last element.
type kid struct {
	origin string
	chain  []string
}

// sub returns a copy of sc for a subshell or a pipeline stage: what it
// changes (the directory) does not flow back.
func (sc *scope) sub() *scope {
	c := *sc
	return &c
}

// nest returns a copy of sc one level deeper in origin.
func (sc *scope) nest(origin string) *scope {
	c := *sc
	if sc.kids == nil {
		sc.kids = new([]kid)
	}
	var o []string
	for _, k := range *sc.kids {
		if k.origin == origin {
			o = k.chain
			break
		}
	}
	if o == nil {
		o = append(slices.Clip(sc.origin), origin)
		*sc.kids = append(*sc.kids, kid{origin, o})
	}
	c.origin = o
	c.kids = nil
	c.stdin = stdinNone
	c.stdinText = ""
	return &c
}

// text returns the source text of n, or "" if its offsets are not in src.
func (sc *scope) text(n syntax.Node) string {
	if !n.Pos().IsValid() || !n.End().IsValid() {
		return ""
	}
	start, end := n.Pos().Offset(), n.End().Offset()
	if start > end || end > uint(len(sc.src)) {
		return ""
	}
	return sc.src[start:end]
}

// resolve turns a written path into a Path, joined to the scope's
// directory.
func (sc *scope) resolve(w Word) Path {
	if w.Dynamic {
		return Path{Path: w.Value, Dynamic: true}
	}
	p := w.Value
	if p == "" {
		return Path{Path: p}
	}
	if path.IsAbs(p) {
		return Path{Path: path.Clean(p)}
	}
	if sc.dirUnknown {
		return Path{Path: p, Dynamic: true}
	}
	return Path{Path: path.Join(sc.dir, p)}
}

// cd applies "cd dir" to the scope.
func (sc *scope) cd(args []Word) {
	if len(args) != 1 || args[0].Dynamic || args[0].Value == "-" || args[0].Value == "" {
		sc.dirUnknown = true
		return
	}
	d := args[0].Value
	if path.IsAbs(d) {
		sc.dir, sc.dirUnknown = path.Clean(d), false
		return
	}
	if !sc.dirUnknown {
		sc.dir = path.Join(sc.dir, d)
	}
}

// reserve appends a placeholder entry and returns its index, so that the
// commands nested in a construct's words come after it.
func (w *walker) reserve() int {
	w.cmds = append(w.cmds, Command{Kind: dropped})
	return len(w.cmds) - 1
}

// store puts c at index i, or leaves it dropped when it is a non-simple
// entry with no effect.
func (w *walker) store(i int, c Command) {
	if c.Kind != Simple && c.Class == 0 && len(c.Writes) == 0 && len(c.EnvReads) == 0 && len(c.EnvSets) == 0 {
		return
	}
	w.cmds[i] = c
}

// newCmd starts an entry for node n.
func newCmd(kind Kind, n syntax.Node, sc *scope) Command {
	text := sc.text(n)
	if s, ok := n.(*syntax.Stmt); ok {
		text = sc.stmtText(s)
	}
	return Command{Kind: kind, Text: text, Pos: position(n.Pos()), Origin: sc.origin}
}

// stmtText returns the source text of a statement without the ";" or "&"
// that ends it.
func (sc *scope) stmtText(s *syntax.Stmt) string {
	start := s.Pos().Offset()
	end := start
	if s.Cmd != nil {
		end = max(end, s.Cmd.End().Offset())
	}
	for _, r := range s.Redirs {
		if r.Word != nil {
			end = max(end, r.Word.End().Offset()) // not a here-document's body
		}
	}
	if !s.Pos().IsValid() || end > uint(len(sc.src)) || start > end {
		return ""
	}
	return sc.src[start:end]
}

// file walks a parsed text.
func (w *walker) file(src string, f *syntax.File, sc *scope) {
	if sc == nil {
		sc = &scope{src: src}
	}
	w.stmts(f.Stmts, sc)
	w.cmds = slices.DeleteFunc(w.cmds, func(c Command) bool { return c.Kind == dropped })
}

// reparse analyses text given to bash -c, eval, trap or a shell's input,
// as a nested origin. A text that does not parse, or is nested too deeply,
// makes c Unknown.
func (w *walker) reparse(text string, d Dialect, origin string, c *Command, sc *scope) {
	if sc.depth >= maxDepth {
		c.unknown("the " + origin + " text is nested too deeply to be analysed")
		return
	}
	f, err := parse(text, d)
	if err != nil {
		pe := err.(*ParseError)
		c.unknown("the " + origin + " text does not parse (" + pe.Pos.String() + ": " + pe.Msg + ")")
		return
	}
	if !w.enter(text, c.Pos, sc) {
		return
	}
	defer w.leave()
	inner := sc.nest(origin)
	inner.src = text
	inner.depth++
	inner.kids = nil
	w.stmts(f.Stmts, inner)
}

func (w *walker) stmts(list []*syntax.Stmt, sc *scope) {
	for _, s := range list {
		w.stmt(s, sc)
	}
}

// stmt walks one statement. Simple commands, declarations and let become
// Simple entries; compound commands are walked for their parts, with an
// entry for their own redirections and words when those have effects.
func (w *walker) stmt(s *syntax.Stmt, sc *scope) {
	if w.err != nil {
		return
	}
	if w.steps++; w.steps%256 == 0 && w.ctx != nil {
		if err := w.ctx.Err(); err != nil {
			w.err = err
			return
		}
	}
	switch s.Cmd.(type) {
	case *syntax.CallExpr, *syntax.DeclClause, *syntax.LetClause, *syntax.BinaryCmd, nil:
	default:
		if !w.enter(sc.stmtText(s), position(s.Pos()), sc) {
			return
		}
		defer w.leave()
	}
	switch cmd := s.Cmd.(type) {
	case *syntax.CallExpr:
		w.call(s, cmd, sc)
		return
	case *syntax.DeclClause:
		w.decl(s, cmd, sc)
		return
	case *syntax.LetClause:
		w.let(s, cmd, sc)
		return
	}
	inner := sc
	if len(s.Redirs) > 0 {
		i := w.reserve()
		c := newCmd(Redirection, s, sc)
		in := w.redirects(&c, s.Redirs, sc)
		w.store(i, c)
		if in.stdin != stdinNone {
			inner = sc.sub()
			inner.stdin, inner.stdinText = in.stdin, in.stdinText
		}
	}
	switch cmd := s.Cmd.(type) {
	case nil:
	case *syntax.BinaryCmd:
		if cmd.Op == syntax.Pipe || cmd.Op == syntax.PipeAll {
			w.stmt(cmd.X, inner.sub())
			right := inner.sub()
			right.stdin, right.stdinText = stdinPipe, ""
			w.stmt(cmd.Y, right)
		} else {
			w.stmt(cmd.X, inner)
			w.stmt(cmd.Y, inner)
		}
	case *syntax.Subshell:
		w.stmts(cmd.Stmts, inner.sub())
	case *syntax.Block:
		w.stmts(cmd.Stmts, inner)
	case *syntax.IfClause:
		for cl := cmd; cl != nil; cl = cl.Else {
			w.stmts(cl.Cond, inner)
			w.stmts(cl.Then, inner)
		}
	case *syntax.WhileClause:
		w.stmts(cmd.Cond, inner)
		w.stmts(cmd.Do, inner)
	case *syntax.ForClause:
		i := w.reserve()
		c := newCmd(Expression, s, sc)
		c.Text = sc.text(cmd.Loop)
		switch loop := cmd.Loop.(type) {
		case *syntax.WordIter:
			c.setVar(loop.Name.Value)
			for _, wd := range loop.Items {
				w.word(wd, &c, inner)
			}
		case *syntax.CStyleLoop:
			for _, x := range []syntax.ArithmExpr{loop.Init, loop.Cond, loop.Post} {
				if x != nil {
					w.arithm(x, &c, inner)
				}
			}
		}
		w.store(i, c)
		w.stmts(cmd.Do, inner)
	case *syntax.CaseClause:
		i := w.reserve()
		c := newCmd(Expression, s, sc)
		c.Text = sc.text(cmd.Word)
		w.word(cmd.Word, &c, inner)
		for _, item := range cmd.Items {
			for _, p := range item.Patterns {
				w.word(p, &c, inner)
			}
		}
		w.store(i, c)
		for _, item := range cmd.Items {
			w.stmts(item.Stmts, inner)
		}
	case *syntax.FuncDecl:
		i := w.reserve()
		c := newCmd(Function, s, sc)
		name := ""
		if cmd.Name != nil {
			name = cmd.Name.Value
		}
		c.unknown("it defines the function " + name + ", which would run instead of a command of that name")
		w.store(i, c)
		if cmd.Body != nil {
			w.stmt(cmd.Body, inner.nest("function "+name))
		}
	case *syntax.ArithmCmd:
		i := w.reserve()
		c := newCmd(Expression, s, sc)
		w.arithm(cmd.X, &c, inner)
		w.store(i, c)
	case *syntax.TestClause:
		i := w.reserve()
		c := newCmd(Expression, s, sc)
		w.test(cmd.X, &c, inner)
		w.store(i, c)
	case *syntax.TimeClause:
		if cmd.Stmt != nil {
			w.stmt(cmd.Stmt, inner)
		}
	case *syntax.CoprocClause:
		if cmd.Stmt != nil {
			w.stmt(cmd.Stmt, inner.sub())
		}
	case *syntax.TestDecl:
		if cmd.Body != nil {
			w.stmt(cmd.Body, inner.sub())
		}
	default:
		i := w.reserve()
		c := newCmd(Expression, s, sc)
		c.unknown("it uses a shell construct this analysis does not know")
		w.store(i, c)
	}
}

// test walks the expression of [[ ]].
func (w *walker) test(x syntax.TestExpr, c *Command, sc *scope) {
	switch x := x.(type) {
	case *syntax.Word:
		w.word(x, c, sc)
	case *syntax.BinaryTest:
		w.test(x.X, c, sc)
		w.test(x.Y, c, sc)
	case *syntax.UnaryTest:
		if x.Op == syntax.TsVarSet {
			if wd, ok := x.X.(*syntax.Word); ok {
				v := w.word(wd, c, sc)
				if !v.Dynamic {
					c.nameRef(v.Value, false)
				}
				return
			}
		}
		w.test(x.X, c, sc)
	case *syntax.ParenTest:
		w.test(x.X, c, sc)
	}
}

// call walks a simple command (or a line of assignments).
func (w *walker) call(s *syntax.Stmt, ce *syntax.CallExpr, sc *scope) {
	i := w.reserve()
	c := newCmd(Simple, s, sc)
	for _, a := range ce.Assigns {
		w.assign(a, &c, sc)
	}
	words := make([]Word, len(ce.Args))
	for j, wd := range ce.Args {
		words[j] = w.word(wd, &c, sc)
	}
	in := w.redirects(&c, s.Redirs, sc)
	if in.stdin == stdinNone {
		in.stdin, in.stdinText = sc.stdin, sc.stdinText
	}
	if len(words) == 0 {
		c.Kind = Assignment
		w.store(i, c)
		return
	}
	w.classify(&c, words, in, sc)
	w.cmds[i] = c
}

// decl walks declare, local, export, readonly, typeset and nameref.
func (w *walker) decl(s *syntax.Stmt, d *syntax.DeclClause, sc *scope) {
	i := w.reserve()
	c := newCmd(Simple, s, sc)
	c.Words = []Word{{Value: d.Variant.Value}}
	nameref := d.Variant.Value == "nameref"
	printing := true
	for _, a := range d.Args {
		if a.Naked && a.Name == nil && a.Value != nil {
			v := w.word(a.Value, &c, sc)
			c.Words = append(c.Words, v)
			switch {
			case v.Dynamic:
				c.unknown("the " + d.Variant.Value + " arguments are only known when the line runs")
			case strings.HasPrefix(v.Value, "-") || strings.HasPrefix(v.Value, "+"):
				if strings.Contains(v.Value, "n") {
					nameref = true
				}
				if strings.ContainsAny(v.Value, "fF") {
					printing = false // functions, not variables
				}
			default:
				printing = false
				c.nameRef(v.Value, true)
			}
			continue
		}
		printing = false
		txt := sc.text(a)
		val := w.assign(a, &c, sc)
		if nameref && !val.Dynamic {
			c.nameRef(val.Value, false)
		}
		c.Words = append(c.Words, Word{Value: txt, Dynamic: val.Dynamic})
	}
	if printing && d.Variant.Value != "local" {
		c.EnvReads = append(c.EnvReads, "*")
	}
	w.redirects(&c, s.Redirs, sc)
	w.cmds[i] = c
}

// let walks let.
func (w *walker) let(s *syntax.Stmt, l *syntax.LetClause, sc *scope) {
	i := w.reserve()
	c := newCmd(Simple, s, sc)
	c.Words = []Word{{Value: "let"}}
	for _, x := range l.Exprs {
		w.arithm(x, &c, sc)
		txt := sc.text(x)
		c.Words = append(c.Words, Word{Value: txt, Dynamic: strings.ContainsAny(txt, "$`")})
	}
	w.redirects(&c, s.Redirs, sc)
	w.cmds[i] = c
}

// assign walks an assignment, records the variable set, and returns its
// value.
func (w *walker) assign(a *syntax.Assign, c *Command, sc *scope) Word {
	name := ""
	if a.Name != nil {
		name = a.Name.Value
		c.setVar(name)
	}
	if a.Index != nil {
		w.arithm(a.Index, c, sc)
	}
	var val Word
	if a.Value != nil {
		val = w.word(a.Value, c, sc)
		if !val.Dynamic && holdsSubst(val.Value) {
			c.unknown("it stores text holding a command substitution in " + name + ", which bash runs if the variable is used in arithmetic")
		}
	}
	if a.Array != nil {
		val.Dynamic = true
		for _, e := range a.Array.Elems {
			if e.Index != nil {
				w.arithm(e.Index, c, sc)
			}
			if e.Value != nil {
				v := w.word(e.Value, c, sc)
				if !v.Dynamic && holdsSubst(v.Value) {
					c.unknown("it stores text holding a command substitution in " + name + ", which bash runs if the value is used in arithmetic")
				}
			}
		}
	}
	if execVar(name) {
		c.unknown("setting " + name + " changes which program or code runs")
	}
	return val
}

// input is what redirections say about a command's standard input.
type input struct {
	stdin     stdinKind
	stdinText string
}

// redirects walks the redirections of a statement: their words' effects,
// the files they write, and the command's standard input.
func (w *walker) redirects(c *Command, rs []*syntax.Redirect, sc *scope) input {
	var in input
	for _, r := range rs {
		var target Word
		if r.Word != nil {
			target = w.word(r.Word, c, sc)
		}
		if !target.Dynamic && (strings.HasPrefix(target.Value, "/dev/tcp/") || strings.HasPrefix(target.Value, "/dev/udp/")) {
			c.explain(Network, "it opens a network connection through "+target.Value)
			continue
		}
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob,
			syntax.RdrAll, syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob:
			c.redirWrite(target, sc)
		case syntax.RdrInOut:
			c.redirWrite(target, sc)
			in = input{stdin: stdinFile}
		case syntax.DplOut:
			// 2>&1, >&- and >&3 duplicate or close descriptors; ">& file"
			// writes the file.
			if target.Dynamic || !isFD(target.Value) {
				c.redirWrite(target, sc)
			}
		case syntax.RdrIn, syntax.DplIn:
			// "< script.sh" is like a script file; "< <(cmd)" or "< $F" feed
			// text that is not in the line.
			in = input{stdin: stdinFile}
			if target.Dynamic || stdinPath(target.Value) {
				in = input{stdin: stdinDynamic}
			}
		case syntax.Hdoc, syntax.DashHdoc:
			if r.Hdoc == nil {
				in = input{stdin: stdinStatic}
				continue
			}
			body := w.heredoc(r.Hdoc, c, sc)
			if body.Dynamic {
				in = input{stdin: stdinDynamic}
			} else {
				in = input{stdin: stdinStatic, stdinText: body.Value}
			}
		case syntax.WordHdoc:
			if target.Dynamic {
				in = input{stdin: stdinDynamic}
			} else {
				in = input{stdin: stdinStatic, stdinText: target.Value + "\n"}
			}
		}
	}
	return in
}

// redirWrite records a write by redirection.
func (c *Command) redirWrite(target Word, sc *scope) {
	if !target.Dynamic && harmlessDevice(target.Value) {
		return
	}
	c.Class |= FileWrite
	c.addWrite(target, sc)
}

// addWrite records a written path; writing to a disk or memory device is
// Destructive.
func (c *Command) addWrite(w Word, sc *scope) {
	p := sc.resolve(w)
	c.touches = append(c.touches, touch{w: w, dir: sc.dir, dirUnknown: sc.dirUnknown})
	if !p.Dynamic && blockDevice(p.Path) {
		c.explain(Destructive, "it writes to the device "+p.Path)
	}
	c.Writes = append(c.Writes, p)
}

// blockDevice reports whether p names a disk, a partition or memory.
func blockDevice(p string) bool {
	dev, ok := strings.CutPrefix(p, "/dev/")
	if !ok {
		return false
	}
	for _, prefix := range []string{"sd", "hd", "vd", "xvd", "nvme", "mmcblk", "disk", "rdisk", "mapper/", "dm-",
		"md", "loop", "nbd", "sr", "mem", "kmem", "port", "fd0"} {
		if strings.HasPrefix(dev, prefix) {
			return true
		}
	}
	return false
}

// stdinPath reports whether a file name is the standard input itself.
func stdinPath(p string) bool {
	return p == "-" || p == "/dev/stdin" || p == "/dev/fd/0" || p == "/proc/self/fd/0"
}

// isFD reports whether s is a descriptor number, a number followed by "-"
// (move) or "-" (close).
func isFD(s string) bool {
	if s == "-" {
		return true
	}
	s = strings.TrimSuffix(s, "-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// harmlessDevice reports whether writing to p writes no file.
func harmlessDevice(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty":
		return true
	}
	return strings.HasPrefix(p, "/dev/fd/") && isFD(strings.TrimPrefix(p, "/dev/fd/"))
}

// heredoc walks a here-document body and returns its text: static when
// the delimiter was quoted or the body has no expansion.
func (w *walker) heredoc(body *syntax.Word, c *Command, sc *scope) Word {
	w.expansions(body, c, sc)
	var b strings.Builder
	for _, p := range body.Parts {
		lit, ok := p.(*syntax.Lit)
		if !ok {
			return Word{Value: sc.text(body), Dynamic: true}
		}
		b.WriteString(lit.Value)
	}
	// An unquoted delimiter leaves \$, \`, \\ and \newline to the shell;
	// a quoted one gives the text as is. The parser gives both as one
	// literal; unescaping either way can only add commands to analyse
	// (a "\$(x)" read as "$(x)"), never hide one.
	return Word{Value: unescape(b.String(), "$`\\\n")}
}

// word walks one word: its expansions' effects (nested commands,
// variables read and set) go to c, and its value is returned.
func (w *walker) word(wd *syntax.Word, c *Command, sc *scope) Word {
	w.expansions(wd, c, sc)
	v := w.value(wd, c, sc)
	c.seen = append(c.seen, touch{w: v, dir: sc.dir, dirUnknown: sc.dirUnknown})
	if strings.HasPrefix(v.Value, "/proc/") && strings.HasSuffix(v.Value, "/environ") {
		c.EnvReads = append(c.EnvReads, "*") // a process's environment
	}
	return v
}

// expansions walks every expansion in n: command and process
// substitutions become nested entries, parameter expansions record the
// variables they read or set, arithmetic records its variables.
func (w *walker) expansions(n syntax.Node, c *Command, sc *scope) {
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			origin := "$(...)"
			switch {
			case n.Backquotes:
				origin = "`...`"
			case n.TempFile || n.ReplyVar:
				origin = "${ ...;}"
			}
			if w.enter(sc.text(n), position(n.Pos()), sc) {
				w.stmts(n.Stmts, sc.nest(origin))
				w.leave()
			}
			return false
		case *syntax.ProcSubst:
			origin := "<(...)"
			if n.Op == syntax.CmdOut {
				origin = ">(...)"
			}
			if w.enter(sc.text(n), position(n.Pos()), sc) {
				w.stmts(n.Stmts, sc.nest(origin))
				w.leave()
			}
			return false
		case *syntax.ParamExp:
			w.param(n, c)
			return true
		case *syntax.ArithmExp:
			w.arithm(n.X, c, sc)
			return false
		case *syntax.ExtGlob:
			if n.Pattern != nil && strings.ContainsAny(n.Pattern.Value, "e+") {
				c.unknown("the glob " + n.Op.String() + n.Pattern.Value + ") holds a zsh glob qualifier, which can run code")
			}
		}
		return true
	})
}

// param records what a parameter expansion reads and sets.
func (w *walker) param(pe *syntax.ParamExp, c *Command) {
	if pe.Param == nil {
		return
	}
	name := pe.Param.Value
	switch {
	case pe.Excl && pe.Names == 0 && pe.Index == nil:
		// ${!x}: the variable named by x's value.
		c.EnvReads = append(c.EnvReads, "*")
	case pe.Names != 0:
		// ${!prefix*}: names only, no values.
		return
	}
	if isVarName(name) {
		c.EnvReads = append(c.EnvReads, name)
	}
	if pe.Exp != nil {
		switch pe.Exp.Op {
		case syntax.AssignUnset, syntax.AssignUnsetOrNull:
			c.setVar(name)
		case syntax.OtherParamOps:
			if pe.Exp.Word != nil && strings.Contains(pe.Exp.Word.Lit(), "P") {
				c.unknown("${" + name + "@P} expands the value as a prompt, which can run commands")
			}
		}
	}
	if pe.Flags != nil && strings.Contains(pe.Flags.Value, "e") {
		c.unknown("the (e) flag expands the value of " + name + " again, which can run commands")
	}
}

// arithm walks an arithmetic expression: bare names are variables read,
// assignments set them.
func (w *walker) arithm(x syntax.ArithmExpr, c *Command, sc *scope) {
	syntax.Walk(x, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Word:
			if lit := n.Lit(); lit != "" && isVarName(lit) {
				c.EnvReads = append(c.EnvReads, lit)
				return false
			}
			w.expansions(n, c, sc)
			if v := w.value(n, c, sc); !v.Dynamic && holdsSubst(v.Value) {
				c.unknown("the arithmetic text " + v.Value + " holds a command substitution, which bash runs")
			}
			return false
		case *syntax.BinaryArithm:
			if isAssignOp(n.Op) {
				if wd, ok := n.X.(*syntax.Word); ok && isVarName(wd.Lit()) {
					c.setVar(wd.Lit())
				}
			}
		case *syntax.UnaryArithm:
			if n.Op == syntax.Inc || n.Op == syntax.Dec {
				if wd, ok := n.X.(*syntax.Word); ok && isVarName(wd.Lit()) {
					c.setVar(wd.Lit())
				}
			}
		}
		return true
	})
}

func isAssignOp(op syntax.BinAritOperator) bool {
	switch op {
	case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn,
		syntax.RemAssgn, syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn, syntax.ShrAssgn:
		return true
	}
	return false
}

// value computes a word's value: quotes removed when it is static, its
// source text when it is not.
func (w *walker) value(wd *syntax.Word, c *Command, sc *scope) Word {
	var b strings.Builder
	out := Word{}
	for i, part := range wd.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v := p.Value
			if i == 0 && strings.HasPrefix(v, "~") {
				out.Dynamic = true // tilde expansion
			}
			if w.dialect == Zsh && i == 0 && strings.HasPrefix(v, "=") && len(v) > 1 {
				out.Dynamic = true // zsh =cmd expands to the command's path
			}
			if hasGlob(v) {
				out.Dynamic, out.Split = true, true
			}
			if w.dialect == Zsh {
				if j := strings.IndexByte(v, '('); j >= 0 && strings.ContainsAny(v[j:], "e+") {
					c.unknown("the word " + sc.text(wd) + " holds a zsh glob qualifier, which can run code")
				}
			}
			b.WriteString(unescape(v, ""))
		case *syntax.SglQuoted:
			if p.Dollar {
				b.WriteString(ansiC(p.Value))
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if lit, ok := q.(*syntax.Lit); ok {
					b.WriteString(unescape(lit.Value, "$`\"\\\n"))
				} else {
					out.Dynamic = true
				}
			}
		case *syntax.ProcSubst:
			out.Dynamic = true
		default: // ParamExp, CmdSubst, ArithmExp, ExtGlob, BraceExp
			out.Dynamic, out.Split = true, true
		}
	}
	if !out.Dynamic && braces(wd) {
		out.Dynamic, out.Split = true, true
	}
	if out.Dynamic {
		out.Value = sc.text(wd)
		lead := leadLiteral(wd)
		out.opt = out.Split || lead == "" || strings.HasPrefix(lead, "-")
		return out
	}
	out.Value = b.String()
	return out
}

// leadLiteral returns the static text at the start of a word, up to its
// first expansion: a dynamic word with a lead that does not start with
// "-" cannot be an option.
func leadLiteral(wd *syntax.Word) string {
	var b strings.Builder
	for _, part := range wd.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if hasGlob(p.Value) || strings.HasPrefix(p.Value, "~") {
				return b.String()
			}
			b.WriteString(unescape(p.Value, ""))
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					return b.String()
				}
				b.WriteString(unescape(lit.Value, "$`\"\\\n"))
			}
		default:
			return b.String()
		}
	}
	return b.String()
}

// braces reports whether wd holds a brace expansion ({a,b} or {1..3}).
func braces(wd *syntax.Word) bool {
	if !slices.ContainsFunc(wd.Parts, func(p syntax.WordPart) bool {
		lit, ok := p.(*syntax.Lit)
		return ok && strings.Contains(lit.Value, "{")
	}) {
		return false
	}
	cp := &syntax.Word{Parts: slices.Clone(wd.Parts)}
	syntax.SplitBraces(cp)
	return slices.ContainsFunc(cp.Parts, func(p syntax.WordPart) bool {
		_, ok := p.(*syntax.BraceExp)
		return ok
	})
}

// hasGlob reports whether an unquoted literal holds an unescaped *, ? or
// a [...] bracket expression.
func hasGlob(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '*', '?':
			return true
		case '[':
			if strings.IndexByte(s[i+1:], ']') >= 0 {
				return true
			}
		}
	}
	return false
}

// unescape removes backslashes: before any character when special is ""
// (an unquoted word), before the characters in special otherwise (double
// quotes, here-documents). A backslash before a newline removes both.
func unescape(s, special string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (special == "" || strings.IndexByte(special, s[i+1]) >= 0) {
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ansiC decodes the body of a $'...' string as bash does, up to a NUL.
func ansiC(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch != '\\' || i+1 >= len(s) {
			b.WriteByte(ch)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case 'c':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i] & 0x1f)
			} else {
				b.WriteString("\\c")
			}
		case 'x', 'u', 'U':
			limit := 2
			if e == 'u' {
				limit = 4
			} else if e == 'U' {
				limit = 8
			}
			n, j := 0, i+1
			for j < len(s) && j-i-1 < limit && isHex(s[j]) {
				n = n*16 + hexVal(s[j])
				j++
			}
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			i = j - 1
			if e == 'x' {
				b.WriteByte(byte(n))
			} else {
				b.WriteRune(rune(n))
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			n, j := 0, i
			for j < len(s) && j-i < 3 && s[j] >= '0' && s[j] <= '7' {
				n = n*8 + int(s[j]-'0')
				j++
			}
			i = j - 1
			b.WriteByte(byte(n))
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	out := b.String()
	if k := strings.IndexByte(out, 0); k >= 0 {
		out = out[:k]
	}
	return out
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	}
	return int(c-'A') + 10
}

// isVarName reports whether s is a shell variable name.
func isVarName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return true
}

// holdsSubst reports whether text holds what bash would run as a command
// substitution if it evaluated the text again.
func holdsSubst(s string) bool {
	return strings.Contains(s, "$(") || strings.Contains(s, "`")
}

// execVar reports whether assigning the variable changes which program or
// code later commands run.
func execVar(name string) bool {
	switch name {
	case "PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "BASH_ENV", "ENV", "PROMPT_COMMAND",
		"PS0", "PS1", "PS2", "PS3", "PS4", "SHELLOPTS", "BASHOPTS", "PYTHONPATH", "PYTHONSTARTUP",
		"PYTHONHOME", "NODE_OPTIONS", "NODE_PATH", "PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB",
		"GIT_SSH", "GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_EDITOR", "GIT_ASKPASS",
		"GIT_EXEC_PATH", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
		"GIT_TEMPLATE_DIR", "GIT_PROXY_COMMAND", "SSH_ASKPASS", "PAGER", "MANPAGER", "EDITOR", "VISUAL",
		"LESSOPEN", "LESSCLOSE", "BROWSER", "FPATH", "ZDOTDIR", "HISTFILE":
		return true
	}
	return strings.HasPrefix(name, "DYLD_") || strings.HasPrefix(name, "BASH_FUNC_") ||
		strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_")
}

// unknown marks c Unknown with a reason.
func (c *Command) unknown(detail string) {
	c.explain(Unknown, detail)
}

// explain adds class to c with the reason it has it; the first reason
// given for a class is kept, and Detail is the first reason of all.
func (c *Command) explain(class Class, detail string) {
	c.Class |= class
	for _, w := range c.why {
		if w.class == class {
			return
		}
	}
	c.why = append(c.why, classWhy{class, detail})
	if c.Detail == "" {
		c.Detail = detail
	}
}

// reason returns the recorded reason for class, or "".
func (c *Command) reason(class Class) string {
	for _, w := range c.why {
		if w.class == class {
			return w.detail
		}
	}
	return ""
}

// setVar records a variable set.
func (c *Command) setVar(name string) {
	c.nameRef(name, true)
}

// nameRef records a reference to a variable by name (read, export,
// unset, declare -n target). A name with an array subscript holding a
// command substitution runs it.
func (c *Command) nameRef(name string, set bool) {
	if i := strings.IndexByte(name, '['); i >= 0 {
		if holdsSubst(name[i:]) {
			c.unknown("the subscript of " + name + " holds a command substitution, which bash runs")
		}
		name = name[:i]
	}
	if i := strings.IndexByte(name, '='); i >= 0 {
		name = name[:i]
	}
	if !isVarName(name) {
		return
	}
	if set {
		c.EnvSets = append(c.EnvSets, name)
	} else {
		c.EnvReads = append(c.EnvReads, name)
	}
}
