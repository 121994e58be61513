// This file defines a state's shell policy (Policy, Requirements), its
// decision on a command line (Decision, Verdict) and the sentences that
// explain a refusal.

package shellpolicy

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
)

// Requirements says which tools allow each class of command: a command of
// a class is allowed when one of the class's tools is in
// [Policy.AllowedTools]. A class that is absent needs nothing; a class
// present with no tools is blocked, and only an allowed command that names
// the command (or, for [Unknown], [Policy.AllowUnknown]) allows it.
type Requirements map[Class][]string

// DefaultRequirements returns Statewright's table, a new map each time:
//
//	FileRead       Read
//	ContentSearch  Grep
//	FileSearch     Glob
//	FileModify     Edit
//	FileWrite      Write or Edit
//	Network        WebFetch
//	GitRead        Read
//	Destructive    blocked
//	GitWrite       blocked
//	Privileged     blocked
//	Unknown        blocked
func DefaultRequirements() Requirements {
	return Requirements{
		FileRead:      {"Read"},
		ContentSearch: {"Grep"},
		FileSearch:    {"Glob"},
		FileModify:    {"Edit"},
		FileWrite:     {"Write", "Edit"},
		Network:       {"WebFetch"},
		GitRead:       {"Read"},
		Destructive:   nil,
		GitWrite:      nil,
		Privileged:    nil,
		Unknown:       nil,
	}
}

// defaultRequirements is the table Decide uses when Policy.Requires is nil;
// it is never modified.
var defaultRequirements = DefaultRequirements()

// A Policy is the shell policy of one workflow state, built from its
// allowed_commands, allowed_tools and blocked_env. The zero Policy allows
// every command whose classes need tools (all tools being allowed) and
// blocks destructive, git-writing, privileged and unknown commands. A
// Policy is a plain value, safe for concurrent use while nobody modifies
// it.
type Policy struct {
	// AllowedCommands are patterns ([MatchCommand]); when there are any,
	// every simple command of a line must match one. Empty means any
	// command, subject to its classes.
	AllowedCommands []string
	// AllowedTools are the tools the state allows ("Read", "Edit", ...),
	// which decide the classes a command may have ([Requirements]). Nil
	// means every tool, as Statewright's omitted allowed_tools; an empty,
	// non-nil list means none.
	AllowedTools []string
	// BlockedEnv lists variables that commands may neither read nor set:
	// names, or patterns where "*" matches any run ("AWS_*").
	BlockedEnv []string
	// AllowUnknown allows [Unknown] commands (dynamic command names, eval
	// of dynamic text, source, ...). It should stay false.
	AllowUnknown bool
	// Requires replaces [DefaultRequirements] when not nil.
	Requires Requirements
	// Dialect is the shell that runs the commands.
	Dialect Dialect
	// Protect, when not nil, lists the paths and programs no command may
	// touch, in every state (see "Protected paths" in the package
	// documentation).
	Protect *Protection
}

// A Decision is a policy's verdict on a command line.
type Decision struct {
	// Allowed reports that every entry of the analysis is allowed.
	Allowed bool
	// Reason explains a refusal in a sentence for the agent, naming the
	// first entry refused and what is allowed; "" when allowed.
	Reason string
	// Analysis is the analysis decided on; nil when the line did not
	// parse.
	Analysis *Analysis
	// Commands holds the verdict on each entry of Analysis.Commands, in the
	// same order.
	Commands []Verdict
	// Err is the *ParseError of a line that did not parse.
	Err error
}

// A Verdict is the decision on one entry of an analysis.
type Verdict struct {
	// Command is the entry.
	Command *Command
	// Allowed reports the entry allowed.
	Allowed bool
	// Reason explains a refusal; "" when allowed.
	Reason string
	// Pattern is the allowed-command pattern the entry matched, if any.
	Pattern string
	// Unlisted reports that the entry was refused for matching none of
	// the policy's allowed commands (it is a simple command, and the
	// policy lists some).
	Unlisted bool
	// Class is the class whose requirement ([Policy.Requires]) refused
	// the entry; 0 when the entry is allowed or was refused for another
	// reason.
	Class Class
}

// Check analyses cmd in p.Dialect and decides it. A line that does not
// parse is refused, with the parse error in Err and in the reason.
func (p *Policy) Check(cmd string) Decision {
	return p.CheckContext(context.Background(), cmd)
}

// CheckContext is [Policy.Check] under ctx: a line whose analysis is not
// done when ctx is (its deadline passed) is refused, with a *[LimitError]
// in Err and the reason saying so.
func (p *Policy) CheckContext(ctx context.Context, cmd string) Decision {
	a, err := AnalyzeContext(ctx, cmd, p.Dialect)
	if err != nil {
		msg := err.Error()
		var pe *ParseError
		var le *LimitError
		switch {
		case errors.As(err, &pe):
			msg = "The command cannot be parsed (" + pe.Pos.String() + ": " + pe.Msg + ")"
		case errors.As(err, &le):
			msg = "The command could not be checked in time (" + le.Msg + ": " + le.err.Error() + ")"
		}
		return Decision{Reason: msg + ", so it is not allowed.", Err: err}
	}
	return p.Decide(a)
}

// Decide decides an analysis: the line is allowed when every entry is.
func (p *Policy) Decide(a *Analysis) Decision {
	d := Decision{Allowed: true, Analysis: a, Commands: make([]Verdict, len(a.Commands))}
	req := p.Requires
	if req == nil {
		req = defaultRequirements
	}
	denied := 0
	prot := p.Protect.compile()
	if prot != nil {
		for i := range a.Commands {
			prot.homeSet = prot.homeSet || slices.Contains(a.Commands[i].EnvSets, "HOME")
			prot.pwdSet = prot.pwdSet || slices.Contains(a.Commands[i].EnvSets, "PWD")
		}
	}
	for i := range a.Commands {
		v := p.verdict(&a.Commands[i], req)
		if prot != nil && v.Allowed {
			if r := prot.reason(&a.Commands[i], a.Source); r != "" {
				v = Verdict{Command: &a.Commands[i], Reason: subject(&a.Commands[i]) + ": " + r + "; that is refused in every state."}
			}
		}
		d.Commands[i] = v
		if !v.Allowed {
			if denied == 0 {
				d.Reason = v.Reason
			}
			denied++
			d.Allowed = false
		}
	}
	switch {
	case denied == 2:
		d.Reason += " (1 other part of the line is refused too.)"
	case denied > 2:
		d.Reason += " (" + strconv.Itoa(denied-1) + " other parts of the line are refused too.)"
	}
	return d
}

// verdict decides one entry.
func (p *Policy) verdict(c *Command, req Requirements) Verdict {
	v := Verdict{Command: c, Allowed: true}
	deny := func(reason string) Verdict {
		v.Allowed, v.Reason = false, reason
		return v
	}
	if c.refuse != "" {
		return deny(subject(c) + ": " + c.refuse + "; that is refused in every state.")
	}
	words := c.Values()
	if c.Kind == Simple && len(p.AllowedCommands) > 0 {
		for _, pat := range p.AllowedCommands {
			if MatchCommand(pat, words) {
				v.Pattern = pat
				break
			}
		}
		if v.Pattern == "" {
			v.Unlisted = true
			return deny(subject(c) + " is not one of the allowed commands (" + strings.Join(p.AllowedCommands, ", ") + ").")
		}
	}
	if r := p.envReason(c); r != "" {
		return deny(r)
	}
	for _, class := range AllClasses {
		if c.Class&class == 0 {
			continue
		}
		tools, present := req[class]
		if !present {
			continue
		}
		if len(tools) == 0 {
			if class == Unknown && p.AllowUnknown || p.named(c, words) {
				continue
			}
			hint := " (only an allowed command naming it literally would allow it)"
			if class == Unknown {
				hint = " (only an allowed command naming it literally, or allowing unknown commands, would allow it)"
			}
			v.Class = class
			return deny(subject(c) + effect(c, class) + "; that is blocked in this state" + hint + ".")
		}
		if p.AllowedTools == nil || slices.ContainsFunc(tools, func(t string) bool { return slices.Contains(p.AllowedTools, t) }) {
			continue
		}
		allowed := "none"
		if len(p.AllowedTools) > 0 {
			allowed = strings.Join(p.AllowedTools, ", ")
		}
		v.Class = class
		return deny(subject(c) + effect(c, class) + "; that needs " + strings.Join(tools, " or ") +
			" in the allowed tools, which are: " + allowed + ".")
	}
	return v
}

// named reports whether an allowed-command pattern names c (see names).
func (p *Policy) named(c *Command, words []string) bool {
	if c.Kind != Simple {
		return false
	}
	for _, pat := range p.AllowedCommands {
		if names(pat, words, c.keys) {
			return true
		}
	}
	return false
}

// envReason returns why c touches a blocked variable, or "".
func (p *Policy) envReason(c *Command) string {
	if len(p.BlockedEnv) == 0 {
		return ""
	}
	blocked := func(name string) bool {
		return slices.ContainsFunc(p.BlockedEnv, func(pat string) bool { return glob(pat, name) })
	}
	list := strings.Join(p.BlockedEnv, ", ")
	for _, name := range c.EnvReads {
		if name == "*" {
			return subject(c) + " reads variables that cannot be named before it runs (or all of them), and " + list + " may not be read in this state."
		}
		if blocked(name) {
			return subject(c) + " reads " + name + ", which may not be read in this state (blocked: " + list + ")."
		}
	}
	for _, name := range c.EnvSets {
		if blocked(name) {
			return subject(c) + " sets " + name + ", which may not be set in this state (blocked: " + list + ")."
		}
	}
	for _, code := range c.code {
		for _, pat := range p.BlockedEnv {
			if codeMentions(code, pat) {
				return subject(c) + " runs code that mentions " + pat + ", which may not be read in this state (blocked: " + list + ")."
			}
		}
	}
	return ""
}

// codeMentions reports whether program text holds an identifier matching
// the variable pattern.
func codeMentions(code, pat string) bool {
	isIdent := func(b byte) bool {
		return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
	}
	for i := 0; i < len(code); {
		if !isIdent(code[i]) {
			i++
			continue
		}
		j := i
		for j < len(code) && isIdent(code[j]) {
			j++
		}
		if glob(pat, code[i:j]) {
			return true
		}
		i = j
	}
	return false
}

// subject names c for a sentence: its text, quoted and shortened, and
// where it is nested.
func subject(c *Command) string {
	text := c.Text
	if text == "" {
		text = strings.Join(c.Values(), " ")
	}
	text = strings.Join(strings.Fields(text), " ")
	if r := []rune(text); len(r) > 80 {
		text = string(r[:77]) + "..."
	}
	s := "Command \"" + text + "\""
	switch c.Kind {
	case Assignment:
		s = "The assignment \"" + text + "\""
	case Redirection:
		s = "The redirection in \"" + text + "\""
	case Expression:
		s = "The expression \"" + text + "\""
	case Function:
		s = "The function definition \"" + text + "\""
	}
	if len(c.Origin) > 0 {
		s += " (run by " + strings.Join(c.Origin, " in ") + ")"
	}
	return s
}

// effect describes what class means for c, with the recorded reason when
// there is one.
func effect(c *Command, class Class) string {
	if r := c.reason(class); r != "" {
		return ": " + r
	}
	switch class {
	case FileRead:
		return " reads files"
	case ContentSearch:
		return " searches file contents"
	case FileSearch:
		return " searches for files"
	case FileModify:
		return " edits files in place"
	case FileWrite:
		if len(c.Writes) > 0 && c.Writes[0].Path != "" {
			return " writes " + c.Writes[0].Path
		}
		return " writes files"
	case Destructive:
		return " deletes files"
	case Network:
		return " reaches the network"
	case GitWrite:
		return " changes the git repository or the work tree"
	case GitRead:
		return " reads the git repository"
	case Privileged:
		return " runs a command as another user"
	}
	return " runs something that cannot be known before it runs"
}
