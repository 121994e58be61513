// This file defines the parsing of a command's options and operands, the
// common step of every entry of the command table.

package shellpolicy

import (
	"slices"
	"strings"
)

// optSpec says which options of a command take a value.
type optSpec struct {
	// short lists the one-letter options taking a value ("o" for -o FILE
	// and -oFILE).
	short string
	// long lists the long options taking a value, without "--" ("output"
	// for --output FILE and --output=FILE).
	long []string
	// firstOperandEnds: options stop at the first operand (POSIX order,
	// as for commands that run another command: xargs, sudo, env).
	firstOperandEnds bool
}

// opt is one option found in the arguments.
type opt struct {
	name  string // "-o", "--output"
	value Word   // its value, if it takes one
	valid bool   // the value is present
	idx   int    // index in the arguments of the option word
}

// parsedArgs is a command's arguments split into options and operands.
type parsedArgs struct {
	opts     []opt
	operands []int // indexes in the arguments
	// dynamic reports an argument, before "--", that may be any option
	// when the line runs.
	dynamic bool
	// rest is the index of the first argument after the options when
	// firstOperandEnds is set (len(args) when there is none).
	rest int
}

// parseArgs splits args by spec. Short options may be clustered ("-rf");
// "--" ends the options; "-" alone is an operand. A dynamic argument that
// may be an option sets dynamic and counts as an operand (or, with
// firstOperandEnds, ends the options).
func parseArgs(args []Word, spec optSpec) parsedArgs {
	var p parsedArgs
	p.rest = len(args)
	done := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if done || !a.mayBeOption() {
			if spec.firstOperandEnds && !done {
				p.rest = i
				return p
			}
			p.operands = append(p.operands, i)
			continue
		}
		if a.Dynamic {
			p.dynamic = true
			if spec.firstOperandEnds {
				p.rest = i
				return p
			}
			p.operands = append(p.operands, i)
			continue
		}
		v := a.Value
		if v == "--" {
			done = true
			if spec.firstOperandEnds {
				p.rest = i + 1
				return p
			}
			continue
		}
		if strings.HasPrefix(v, "--") {
			name, val, hasVal := strings.Cut(v[2:], "=")
			o := opt{name: "--" + name, idx: i}
			if hasVal {
				o.value, o.valid = Word{Value: val}, true
			} else if slices.Contains(spec.long, name) && i+1 < len(args) {
				i++
				o.value, o.valid = args[i], true
			}
			p.opts = append(p.opts, o)
			continue
		}
		for j := 1; j < len(v); j++ {
			o := opt{name: "-" + v[j:j+1], idx: i}
			if strings.IndexByte(spec.short, v[j]) >= 0 {
				if j+1 < len(v) {
					o.value, o.valid = Word{Value: v[j+1:]}, true
				} else if i+1 < len(args) {
					i++
					o.value, o.valid = args[i], true
				}
				p.opts = append(p.opts, o)
				break
			}
			p.opts = append(p.opts, o)
		}
	}
	return p
}

// has reports whether any of the named options is present.
func (p parsedArgs) has(names ...string) bool {
	for _, o := range p.opts {
		if slices.Contains(names, o.name) {
			return true
		}
	}
	return false
}

// values returns the values of the named options.
func (p parsedArgs) values(names ...string) []Word {
	var out []Word
	for _, o := range p.opts {
		if o.valid && slices.Contains(names, o.name) {
			out = append(out, o.value)
		}
	}
	return out
}

// words returns the operand words.
func (p parsedArgs) words(args []Word) []Word {
	out := make([]Word, len(p.operands))
	for i, j := range p.operands {
		out[i] = args[j]
	}
	return out
}
