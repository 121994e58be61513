// This file defines the result of analysing a command line (Analysis,
// Command, Word, Path, Class, Kind), the parse error, and Analyze.

package shellpolicy

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Dialect is the shell language a command line is parsed as. The zero value
// is [Bash].
type Dialect uint8

const (
	// Bash parses the line as GNU Bash does; it is what Claude Code's Bash
	// tool runs, and a superset of POSIX sh for what matters here.
	Bash Dialect = iota
	// POSIX parses the line as a POSIX sh (dash) would.
	POSIX
	// Zsh parses the line as zsh does (glob qualifiers, "=cmd" and so on).
	Zsh
)

// String returns "bash", "posix" or "zsh".
func (d Dialect) String() string {
	switch d {
	case POSIX:
		return "posix"
	case Zsh:
		return "zsh"
	}
	return "bash"
}

func (d Dialect) lang() syntax.LangVariant {
	switch d {
	case POSIX:
		return syntax.LangPOSIX
	case Zsh:
		return syntax.LangZsh
	}
	return syntax.LangBash
}

// Class is a set of effects a command has, as a bit set: "curl -o f URL" is
// Network|FileWrite. The zero Class is a passthrough command: one this
// package knows nothing bad about (make, go, npm, ls, echo).
type Class uint16

const (
	// FileRead: cat, head, tail, less, more, bat, xxd, tac, nl, od,
	// hexdump, strings. Needs Read.
	FileRead Class = 1 << iota
	// ContentSearch: grep, egrep, fgrep, rg, ag, ack. Needs Grep.
	ContentSearch
	// FileSearch: find, fd, locate, mdfind. Needs Glob.
	FileSearch
	// FileModify: edits files in place: sed -i, perl -i, awk -i inplace,
	// patch, ed, ex, chmod, chown, chgrp, gzip and friends. Needs Edit.
	FileModify
	// FileWrite: creates or overwrites files: redirections, tee, cp, mv,
	// install, rsync, dd of=, ln, touch, mkdir, tar -x, curl -o, sort -o,
	// and inline code (python -c, node -e, awk programs that run commands).
	// Needs Write or Edit.
	FileWrite
	// Destructive: rm, rmdir, shred, truncate, unlink, wipefs, mkfs,
	// git clean, find -delete. Blocked unless an allowed command names it.
	Destructive
	// Network: curl, wget, nc, ssh, scp, sftp, rsync to a host, gh, git
	// clone/fetch/pull/push/ls-remote. Needs WebFetch.
	Network
	// GitWrite: git subcommands that change the repository or the work
	// tree (commit, push, reset, checkout, add, stash, ...), and any git
	// subcommand this package does not know. Blocked unless an allowed
	// command names it.
	GitWrite
	// GitRead: git log, status, diff, show, blame, branch (listing), ...
	// Needs Read.
	GitRead
	// Privileged: sudo, doas, su. Blocked unless an allowed command names
	// it; the command they run is analysed as well.
	Privileged
	// Unknown: what runs cannot be known before the line runs: a command
	// name that is an expansion ($CMD), eval or source of text not in the
	// line, a shell reading commands from a pipe, a function or alias
	// definition, an assignment to PATH or LD_PRELOAD, a string that does
	// not parse. Blocked unless [Policy.AllowUnknown] or an allowed command
	// names it.
	Unknown
)

var classNames = [...]string{
	"FileRead", "ContentSearch", "FileSearch", "FileModify", "FileWrite",
	"Destructive", "Network", "GitWrite", "GitRead", "Privileged", "Unknown",
}

// AllClasses lists every class bit in order.
var AllClasses = [...]Class{FileRead, ContentSearch, FileSearch, FileModify, FileWrite,
	Destructive, Network, GitWrite, GitRead, Privileged, Unknown}

// String returns the class names joined with "|", or "Passthrough" for the
// zero Class.
func (c Class) String() string {
	if c == 0 {
		return "Passthrough"
	}
	var b strings.Builder
	for i, name := range classNames {
		if c&(1<<i) != 0 {
			if b.Len() > 0 {
				b.WriteByte('|')
			}
			b.WriteString(name)
		}
	}
	if rest := c &^ (1<<len(classNames) - 1); rest != 0 {
		if b.Len() > 0 {
			b.WriteByte('|')
		}
		fmt.Fprintf(&b, "Class(%#x)", uint16(rest))
	}
	return b.String()
}

// ParseClass returns the Class named by s ("FileWrite", "Passthrough";
// several names may be joined with "|").
func ParseClass(s string) (Class, error) {
	var c Class
	for _, part := range strings.Split(s, "|") {
		found := part == "Passthrough"
		for i, name := range classNames {
			if part == name {
				c |= 1 << i
				found = true
			}
		}
		if !found {
			return 0, fmt.Errorf("shellpolicy: unknown class %q", part)
		}
	}
	return c, nil
}

// MarshalText implements encoding.TextMarshaler with [Class.String].
func (c Class) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler with [ParseClass].
func (c *Class) UnmarshalText(b []byte) error {
	v, err := ParseClass(string(b))
	*c = v
	return err
}

// Kind says what sort of entry a [Command] is. Only [Simple] commands are
// matched against [Policy.AllowedCommands]; the others exist so that their
// effects (writes, environment variables, unknown code) are decided too.
type Kind uint8

const (
	// Simple is a command name with its arguments ("go test ./...", "cd
	// src", "export X=1"), including one run by another command (xargs,
	// find -exec, sudo, bash -c).
	Simple Kind = iota
	// Assignment is a line of variable assignments alone ("X=1 Y=$Z").
	Assignment
	// Redirection is a redirection that belongs to no simple command: of a
	// compound command ("{ a; b; } > f", "for ...; done > f") or alone
	// ("> f").
	Redirection
	// Expression is the words of a control structure: the tests of [[ ]]
	// and (( )), the list of a for loop, the word of a case.
	Expression
	// Function is a function definition; its body is analysed as well.
	Function
)

var kindNames = [...]string{"simple", "assignment", "redirection", "expression", "function"}

// String returns "simple", "assignment", "redirection", "expression" or
// "function".
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// A Word is one argument of a simple command.
type Word struct {
	// Value is the word after quote removal ("a b" for 'a b', rm for \rm)
	// when the word is static, and its source text ("$X", "*.go",
	// "$(date)") when it is not.
	Value string
	// Dynamic reports that the word is only known when the line runs: it
	// holds a parameter expansion, a command or process substitution, an
	// arithmetic expansion, a glob, a brace expansion or a leading tilde.
	Dynamic bool
	// Split reports that the word may become zero or several words when
	// the line runs (an unquoted expansion, a glob, a brace expansion), so
	// that it may also stand for options.
	Split bool

	// opt reports that a dynamic word may be an option: it may split, or
	// it does not start with static text other than "-".
	opt bool
}

// mayBeOption reports whether w is an option or may become one when the
// line runs ("-i", "$FLAGS", "$X" but not "https://$HOST/x" quoted).
func (w Word) mayBeOption() bool {
	if w.Dynamic {
		return w.opt
	}
	return strings.HasPrefix(w.Value, "-") && w.Value != "-"
}

// A Path is a file a command writes.
type Path struct {
	// Path is the file as written, made lexically clean and joined to the
	// directory of an earlier static "cd" of the same line ("cd src &&
	// echo > a" writes "src/a"). Relative paths stay relative to the
	// directory the line starts in. When Dynamic is set, Path is the source
	// text of the word ("$OUT", "*.txt"), or "" for files the command
	// certainly writes but that cannot be named (tar -x, patch < diff,
	// curl -O, find -delete).
	Path string
	// Dynamic reports that the path is only known when the line runs,
	// including a relative path after a "cd" to a directory not known.
	Dynamic bool
}

// A Position is a line and column (both counted from 1, columns in bytes)
// in the text a command was parsed from: the line itself, or the string
// given to bash -c, eval or trap (see [Command.Origin]).
type Position struct {
	Line, Col int
}

func (p Position) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Col) }

// A Command is one entry of an [Analysis]: a simple command, or another
// construct with effects (see [Kind]).
type Command struct {
	// Kind says what the entry is.
	Kind Kind
	// Words are the command name and its arguments, after the transparent
	// prefixes (env, nice, timeout, nohup, command, builtin, exec, stdbuf,
	// ionice, setsid, time, strace, busybox) have been moved to Prefix.
	// Only declarations and let have words among the other kinds: none.
	Words []Word
	// Prefix holds the words of the transparent prefixes removed from the
	// front of Words ("timeout 60", "env -u X").
	Prefix []Word
	// Text is the source text of the whole construct, redirections
	// included, or the words joined by spaces for a command that another
	// one runs (xargs rm, find -exec).
	Text string
	// Pos is where Text starts in the text it was parsed from.
	Pos Position
	// Origin is the chain of constructs the command is nested in, outermost
	// first: "$(...)", "`...`", "<(...)", ">(...)", "bash -c", "eval",
	// "trap", "bash <<EOF", "xargs", "find -exec", "sudo", "function f".
	// Empty for a command of the line itself.
	Origin []string
	// Class is the set of effects of the command.
	Class Class
	// Detail explains the class in words when the command name alone does
	// not ("sed -i edits files in place", "the command name $X is only
	// known when the line runs"); the first such reason.
	Detail string
	// Writes lists the files the command creates, changes or removes:
	// redirection targets, tee arguments, cp/mv/install destinations,
	// sed -i files, dd of=, touch, rm arguments, ... Inline code (python
	// -c) may write files too; those are not listed, the class says so.
	Writes []Path
	// EnvReads lists the environment variables the command reads through
	// expansions ($X, ${X:-y}, $((X+1))) or prints (printenv X). "*" stands
	// for all of them (env, printenv, set, export -p, an indirect ${!X}).
	EnvReads []string
	// EnvSets lists the variables the command sets, exports or unsets.
	EnvSets []string

	// keys are the indexes in Words of the words that make the command
	// blocked (the name of rm, the "push" of git push, the -delete of
	// find): an allowed-command pattern names the command when its literal
	// text matches all of them.
	keys []int
	// code holds the inline programs the command runs (python -c, awk),
	// in which blocked variable names are looked for.
	code []string
	// why holds the reason of each class that has one, for Detail and
	// the reasons of decisions.
	why []classWhy
	// refuse, when set, is why the entry is refused in every state,
	// whatever the policy allows.
	refuse string
	// touches are the paths the command writes, with the folder they are
	// relative to, for the protected paths (protect.go); links are the
	// targets of the symbolic links it makes; seen are all its words.
	touches, links, seen []touch
}

// touch is a word naming a path, and the folder of the line (an earlier
// static cd) it is relative to.
type touch struct {
	w          Word
	dir        string
	dirUnknown bool
	// unnamed: the command writes files it does not name in the folder w.
	unnamed bool
}

type classWhy struct {
	class  Class
	detail string
}

// Name returns the command name (the first word's value), or "" when the
// command has no words.
func (c *Command) Name() string {
	if len(c.Words) == 0 {
		return ""
	}
	return c.Words[0].Value
}

// Values returns the values of Words, the strings [MatchCommand] matches.
func (c *Command) Values() []string {
	out := make([]string, len(c.Words))
	for i, w := range c.Words {
		out[i] = w.Value
	}
	return out
}

// An Analysis is what a command line does, one entry per simple command or
// other construct with effects, in the order they appear in the text
// (nested commands come right after the command whose words hold them).
type Analysis struct {
	// Source is the analysed command line.
	Source string
	// Dialect is the language it was parsed as.
	Dialect Dialect
	// Commands are the entries.
	Commands []Command
}

// Writes returns every file written by the line, each path once, in the
// order first written.
func (a *Analysis) Writes() []Path {
	var out []Path
	seen := map[Path]bool{}
	for i := range a.Commands {
		for _, p := range a.Commands[i].Writes {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// ParseError is returned by [Analyze] for a line that is not valid shell.
type ParseError struct {
	// Pos is where the parser stopped.
	Pos Position
	// Msg is the parser's message, without the position.
	Msg string
	// Incomplete reports that the line ended too early (an unclosed quote
	// or if), rather than holding something invalid.
	Incomplete bool
	// TooDeep reports that the line nests brackets ((, {, $( and the
	// like) or compound commands (if, case, do) more than 64 levels
	// deep, which no line needs: it is refused before it is parsed, so
	// that the parser's cost (its stack grows with the nesting) stays
	// small.
	TooDeep bool
	err     error
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("shellpolicy: cannot parse the command: %s: %s", e.Pos, e.Msg)
}

// Unwrap returns the error of the mvdan.cc/sh/v3/syntax parser.
func (e *ParseError) Unwrap() error { return e.err }

// Analyze parses cmd as [Bash] and returns what it does.
func Analyze(cmd string) (*Analysis, error) {
	return AnalyzeDialect(cmd, Bash)
}

// AnalyzeDialect parses cmd as dialect d and returns what it does. A line
// that does not parse returns a *[ParseError]; any other text, however
// strange, returns an Analysis (whose commands may be [Unknown]).
func AnalyzeDialect(cmd string, d Dialect) (*Analysis, error) {
	return AnalyzeContext(context.Background(), cmd, d)
}

// AnalyzeContext is [AnalyzeDialect] under ctx: when ctx is done before
// the analysis is, it returns a *[LimitError] wrapping ctx's error. Time
// and memory are linear in the length of cmd.
func AnalyzeContext(ctx context.Context, cmd string, d Dialect) (*Analysis, error) {
	if err := ctx.Err(); err != nil {
		return nil, &LimitError{Msg: "the deadline passed before it was analysed", err: err}
	}
	f, err := parseContext(ctx, cmd, d)
	if err != nil {
		return nil, err
	}
	w := &walker{dialect: d, ctx: ctx}
	w.file(cmd, f, nil)
	if w.err != nil {
		return nil, &LimitError{Msg: "the deadline passed before it was analysed", err: w.err}
	}
	return &Analysis{Source: cmd, Dialect: d, Commands: w.cmds}, nil
}

// LimitError is returned by [AnalyzeContext] when the deadline passes
// before the analysis is done.
type LimitError struct {
	// Msg says which limit, in words.
	Msg string
	err error
}

func (e *LimitError) Error() string { return "shellpolicy: " + e.Msg }

// Unwrap returns the context's error.
func (e *LimitError) Unwrap() error { return e.err }

// parseContext is parse under ctx: with a deadline, the parser runs in its
// own goroutine and ctx's end returns at once (the parser, linear in the
// text, finishes on its own and its result is dropped).
func parseContext(ctx context.Context, src string, d Dialect) (*syntax.File, error) {
	if ctx.Done() == nil {
		return parse(src, d)
	}
	type result struct {
		f   *syntax.File
		err error
	}
	ch := make(chan result, 1)
	go func() {
		f, err := parse(src, d)
		ch <- result{f, err}
	}()
	select {
	case r := <-ch:
		return r.f, r.err
	case <-ctx.Done():
		return nil, &LimitError{Msg: "the deadline passed before it was parsed", err: ctx.Err()}
	}
}

// parse parses src as dialect d, turning the parser's errors into
// *ParseError.
func parse(src string, d Dialect) (*syntax.File, error) {
	if pos, ok := tooDeep(src, maxNesting); ok {
		return nil, &ParseError{Pos: pos, Msg: fmt.Sprintf("brackets nested more than %d levels deep", maxNesting), TooDeep: true}
	}
	f, err := syntax.NewParser(syntax.Variant(d.lang())).Parse(strings.NewReader(src), "")
	if err == nil {
		return f, nil
	}
	var pe syntax.ParseError
	var le syntax.LangError
	switch {
	case errors.As(err, &pe):
		return nil, &ParseError{Pos: position(pe.Pos), Msg: pe.Text, Incomplete: pe.Incomplete, err: err}
	case errors.As(err, &le):
		msg := strings.TrimPrefix(le.Error(), le.Pos.String()+": ")
		return nil, &ParseError{Pos: position(le.Pos), Msg: msg, err: err}
	}
	return nil, &ParseError{Pos: Position{1, 1}, Msg: err.Error(), err: err}
}

func position(p syntax.Pos) Position {
	return Position{Line: int(p.Line()), Col: int(p.Col())}
}

// maxNesting bounds how deeply constructs may nest: brackets in the text
// (tooDeep), and the constructs the walk enters (subshells, blocks,
// substitutions, bodies, strings parsed again). Deeper is refused.
const maxNesting = 64

// tooDeep reports whether src nests brackets or compound commands more
// than limit levels deep, and where the limit is passed, in one pass and
// constant memory beyond the limit. It counts (, {, $( and ${ outside
// single quotes and escapes (inside double quotes only $( and ${ open a
// level), and the keywords if, case and do in a command's place against
// fi, esac and done. Brackets of a here-document or a comment count too,
// which can only refuse more.
func tooDeep(src string, limit int) (Position, bool) {
	// stack holds, for each open level, whether it is a double-quoted
	// string ('"'), code ('(' for both ( and {) or a compound command
	// ('k'); code counts the levels that are not strings. A '"' is only pushed over code, so the stack holds
	// at most 2*limit+2 entries before the limit is passed.
	stack := make([]byte, 0, 16)
	code := 0
	line, col := 1, 0
	cmdPos := true // a command may start here
	for i := 0; i < len(src); i++ {
		ch := src[i]
		col++
		inDQ := len(stack) > 0 && stack[len(stack)-1] == '"'
		switch {
		case ch == '\n':
			line, col = line+1, 0
		case ch == '\\':
			i++
			col++
		case ch == '\'' && !inDQ:
			for i+1 < len(src) && src[i+1] != '\'' {
				i++
				col++
				if src[i] == '\n' {
					line, col = line+1, 0
				}
			}
			i++
			col++
		case ch == '"':
			if inDQ {
				stack = stack[:len(stack)-1]
			} else {
				stack = append(stack, '"')
			}
		case ch == '$' && i+1 < len(src) && (src[i+1] == '(' || src[i+1] == '{'):
			stack = append(stack, '(')
			code++
			i++
			col++
		case (ch == '(' || ch == '{') && !inDQ:
			stack = append(stack, '(')
			code++
		case (ch == ')' || ch == '}') && len(stack) > 0 && stack[len(stack)-1] == '(':
			stack = stack[:len(stack)-1]
			code--
		case !inDQ && ch >= 'a' && ch <= 'z' && (i == 0 || strings.IndexByte(" \t\n;&|(){}!", src[i-1]) >= 0):
			j := i
			for j < len(src) && src[j] >= 'a' && src[j] <= 'z' {
				j++
			}
			word := src[i:j]
			if j < len(src) && strings.IndexByte(" \t\n;&|()", src[j]) < 0 {
				word = "" // part of a longer word
			}
			switch {
			case cmdPos && (word == "if" || word == "case" || word == "do"):
				stack = append(stack, 'k')
				code++
			case cmdPos && (word == "fi" || word == "esac" || word == "done") && len(stack) > 0 && stack[len(stack)-1] == 'k':
				stack = stack[:len(stack)-1]
				code--
			}
			col += j - 1 - i
			i = j - 1
			switch word {
			case "then", "do", "else", "elif", "if", "while", "until", "time":
			default:
				cmdPos = false
			}
			if code > limit {
				return Position{Line: line, Col: max(col, 1)}, true
			}
			continue
		}
		switch ch {
		case ';', '&', '|', '(', ')', '{', '}', '\n', '!':
			cmdPos = true
		case ' ', '\t':
		default:
			cmdPos = false
		}
		if code > limit {
			return Position{Line: line, Col: max(col, 1)}, true
		}
	}
	return Position{}, false
}
