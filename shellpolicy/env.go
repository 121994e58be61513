// This file defines WithEnv, which rewrites a command line so that it runs
// with environment variables set (a state's env_overrides), and the checks
// of the variables' names and values.

package shellpolicy

import (
	"fmt"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// EnvError reports a variable [WithEnv] cannot set: a name that is not a
// shell identifier, or a value holding a NUL byte, which no environment
// can carry.
type EnvError struct {
	Name   string
	Reason string
}

func (e *EnvError) Error() string {
	return fmt.Sprintf("shellpolicy: environment variable %q: %s", e.Name, e.Reason)
}

// CheckEnv reports whether a variable can be set by [WithEnv]: its name a
// shell identifier (a letter or _, then letters, digits or _), its value
// free of NUL bytes. The error is an [*EnvError].
func CheckEnv(name, value string) error {
	if !syntax.ValidName(name) {
		return &EnvError{Name: name, Reason: "not a shell variable name (a letter or _, then letters, digits or _)"}
	}
	if strings.IndexByte(value, 0) >= 0 {
		return &EnvError{Name: name, Reason: "its value holds a NUL byte, which no environment variable can"}
	}
	return nil
}

// WithEnv returns line rewritten to run with the variables of env set and
// exported: a first line
//
//	export A='1' B='it'\''s'
//
// then line as it was, after a newline. The names come in sorted order,
// each value single-quoted, which keeps every byte of it literal in every
// POSIX shell, bash and zsh (syntax.Quote is not used: for POSIX sh it
// refuses values with a newline or a tab, which a variable may hold).
//
// The line runs in the same shell, after the export, so every part of it
// sees the variables (a pipeline, a list, a cd, a here-document, a
// subshell, the commands it starts) and its exit status is its own;
// the line may assign a variable again, which then wins from there on.
// An empty env returns line unchanged. A name or value [CheckEnv] refuses
// is an error, and nothing is rewritten.
func WithEnv(line string, env map[string]string) (string, error) {
	if len(env) == 0 {
		return line, nil
	}
	names := make([]string, 0, len(env))
	for k, v := range env {
		if err := CheckEnv(k, v); err != nil {
			return "", err
		}
		names = append(names, k)
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString("export")
	for _, k := range names {
		b.WriteByte(' ')
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(singleQuote(env[k]))
	}
	b.WriteByte('\n')
	b.WriteString(line)
	return b.String(), nil
}

// singleQuote quotes s for a POSIX shell: inside single quotes every byte
// is literal; a single quote of s ends the quotes, comes escaped, and
// starts them again:
//
//	it's  ->  'it'\''s'
func singleQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
