// Package shellpolicy decides whether a shell command line may run in a
// workflow state. It is the one shell policy of chartgate: the hook that
// gates an agent host's Bash tool and the gateway that gates upstream MCP
// tools running commands both use it.
//
// A line is parsed with a real shell parser, mvdan.cc/sh/v3/syntax (the
// parser behind shfmt), never with regular expressions, and every simple
// command in it is classified and decided on its own. The line is allowed
// only when every one of them is:
//
//	p := shellpolicy.Policy{
//		AllowedCommands: []string{"pytest*", "go test *"},
//		AllowedTools:    []string{"Bash", "Read", "Grep"},
//		BlockedEnv:      []string{"AWS_*"},
//	}
//	d := p.Check("pytest; rm -rf /")
//	// d.Allowed == false
//	// d.Reason == `Command "rm -rf /" is not one of the allowed commands (pytest*, go test *).`
//
// [Analyze] gives the analysis alone: the simple commands with their words,
// [Class], the files they write ([Command.Writes], which a hook matches
// against interrupt file patterns), the variables they read and set, and
// where each is nested ([Command.Origin]).
//
// # What is analysed
//
// The walk covers lists (;, &&, ||, &, newlines), pipelines (| and |&),
// subshells, { } blocks, if, while, until, for, select, case, function
// bodies, [[ ]] and (( )), $(...) and backquotes, <(...) and >(...),
// everything inside ${...} and $((...)), here-documents and here-strings,
// assignments (also before a command and in declare, export, local,
// readonly) and every redirection.
//
// Commands that run other commands are followed:
//
//   - strings run by a shell are parsed again and analysed as nested
//     commands: bash/sh/zsh/dash/ksh -c, a shell fed a here-document or
//     here-string, eval of static text, trap actions, watch, su -c, sg,
//     flock -c, script -c, rsync -e, mapfile -C, git submodule foreach (up
//     to 16 levels deep; deeper, or not parsing, is Unknown);
//   - commands given as arguments are nested entries: xargs (with its
//     input as one dynamic word), find -exec/-execdir/-ok/-okdir, fd -x,
//     sudo, doas, chroot, pkexec, and the package runners uv run, uvx,
//     poetry run, pipenv run, pdm run, hatch run, conda/mamba run, bundle
//     exec, npx, bunx, npm/pnpm/yarn exec and dlx, pipx run, direnv exec,
//     mise exec, asdf/rbenv/pyenv exec, dotenv;
//   - transparent prefixes are removed from the front of the words (and
//     kept in [Command.Prefix]): env (whose NAME=VALUE are variables set),
//     nice, timeout, nohup, setsid, command, builtin, exec, stdbuf, ionice,
//     time, strace, ltrace, taskset, chrt, numactl, unshare, valgrind,
//     firejail, xvfb-run, proxychains, torsocks, fakeroot, eatmydata,
//     catchsegv, ssh-agent, sshpass, caffeinate, unbuffer, busybox, and
//     zsh's repeat, noglob and nocorrect. "timeout 60 pytest" is the simple
//     command "pytest".
//
// A line that does not parse is refused with the parser's message and
// position ([ParseError]).
//
// # Cost and deadline
//
// Time and memory are linear in the length of the line. A line whose
// brackets ((, {, $(, ${ outside single quotes) and compound commands
// (if, case, and the do ... done of loops) nest more than 64 levels deep
// is refused before it is parsed ([ParseError.TooDeep]), and
// constructs the walk enters (subshells, blocks, if, loops, function
// bodies, substitutions, strings parsed again, commands run by others)
// nested more than 64 levels deep are refused in every state.
// [Policy.CheckContext] and [AnalyzeContext] stop at the context's
// deadline: the line is refused, with a *[LimitError] in Decision.Err.
//
// # Words
//
// A word is static when the parser's text fixes its value: quotes and
// backslashes are removed ('a b', "a b", a\ b; \rm, r""m and $'\x72m' are
// all rm). It is dynamic ([Word.Dynamic]) when it holds a parameter
// expansion, a command or process substitution, arithmetic, a glob, a
// brace expansion or a leading tilde; its value is then its source text.
// A dynamic command name ($CMD, "$(echo rm)", {rm,-rf,x}) makes the command
// [Unknown]. A dynamic argument that may be an option (one that may split
// into several words, or that does not start with static text other than
// "-") gives the commands whose effect depends on their options (sed, awk,
// perl, find, git, tar, curl, the interpreters, the shells, xargs) their
// worst case: "sed $FLAGS f" may be sed -i.
//
// # Classes
//
// Each entry has a [Class], a set of effects, and [Requirements] say which
// tools a class needs ([DefaultRequirements] is Statewright's table):
//
//	FileRead       cat head tail less more bat xxd tac nl od strings ...  needs Read
//	ContentSearch  grep egrep fgrep rg ag ack                             needs Grep
//	FileSearch     find fd locate mdfind                                  needs Glob
//	FileModify     sed -i, perl -i, ruby -i, awk -i inplace, patch, ed,   needs Edit
//	               ex/vim, chmod chown chgrp, gzip and friends; gofmt
//	               and goimports -w, go fmt/fix, rustfmt, cargo fmt/fix,
//	               prettier --write, eslint --fix, black, isort, ruff
//	               format and --fix, clang-format -i, terraform fmt
//	FileWrite      redirections, tee cp mv install ln rsync dd of= touch  needs Write or Edit
//	               mkdir tar -c/-x unzip zip sort -o uniq split, curl -o,
//	               wget; inline code: python -c, node -e, ruby/perl -e,
//	               php -r, an interpreter reading its program from a pipe
//	               or a here-document, awk programs that write or run
//	               commands, sed scripts with w or e, make -f - or --eval;
//	               go build -o, go test's profiles, go mod tidy/edit/
//	               init/vendor, go get, go work, cargo add/update,
//	               sqlite3 FILE (not -readonly), npm/pnpm/yarn/bun
//	               install, ci, add, update (also Network)
//	Network        curl wget nc ssh scp sftp socat gh, rsync to a host,   needs WebFetch
//	               git clone/fetch/pull/push/ls-remote, /dev/tcp
//	GitRead        git log status diff show blame grep, branch and tag    needs Read
//	               listings, config reads, stash list, ...
//	Destructive    rm rmdir unlink shred truncate wipefs mkfs ..., git     blocked
//	               clean, find -delete, writing to a disk device
//	GitWrite       commit push reset checkout switch restore add rm mv    blocked
//	               stash merge rebase cherry-pick revert am apply, branch
//	               and tag changes, config changes, and any git subcommand
//	               not known (aliases, extensions)
//	Privileged     sudo doas su runuser chroot pkexec sg                  blocked
//	Unknown        what cannot be known before the line runs: a dynamic   blocked
//	               command name; eval of dynamic text; source and .; a
//	               shell reading commands from a pipe; a function or alias
//	               definition, hash -p, enable; an assignment to PATH,
//	               LD_PRELOAD, BASH_ENV, PROMPT_COMMAND, GIT_SSH_COMMAND,
//	               PAGER and other variables that choose what runs; git
//	               -c; options that run a program (tar --to-command, ssh
//	               -o ProxyCommand, nc -e, man -P, rg --pre, go test
//	               -exec, go run -exec, -toolexec, go vet -vettool: the
//	               program is analysed as a nested command too); go
//	               generate, go tool, go env -w; sqlite3 SQL with .shell,
//	               .system, .output, ATTACH, or read from an input not in
//	               the line; zsh glob
//	               qualifiers; ${x@P}; text holding a command substitution
//	               stored in a variable (bash runs it if the variable is
//	               used in arithmetic)
//
// Anything else is a passthrough (Class 0: make, go, npm, ls, echo) and
// needs no tool. Whether the shell tool itself (Bash, or the gateway's
// allowed_commands_tool) may be called at all is the caller's decision,
// taken before Check.
//
// # Protected paths
//
// [Policy.Protect] lists what no command may touch, in every state:
// AllowedCommands, AllowedTools and AllowUnknown do not change it, and
// the refusal says "refused in every state". A [Protection] holds path
// patterns (relative to its Project, to Home with "~/", or absolute; "*",
// "?" and "[...]" within an element; a trailing "/**" for a folder and
// everything in it), secrets (patterns too), program names, and the
// folders that resolve the line's paths (Dir for relative paths and
// $PWD, Home for ~ and $HOME). Paths are compared without regard to
// case, as a case-insensitive file system would. An entry is refused
// when:
//
//   - it runs a protected program: by name or any path ending in /name
//     (".exe" aside), through every command that runs another (env,
//     xargs, find -exec, sudo, npx and the runners, sh -c, eval, trap,
//     $(...)), as the program named by go test -exec, -toolexec, go vet
//     -vettool; "go run", "go build" or "go install" of a package whose
//     path ends in /name ("go run ." in such a folder too); an Unknown
//     entry, or inline code, whose words mention the name; a command name
//     only known when the line runs, when the line mentions the name; a
//     word only known when the line runs that mentions the name
//     ("$(which chartgate)"); cp, mv, ln, install, rsync and the like of
//     a path ending in /name (a copy under another name);
//   - it writes a protected path, a folder that holds one (below the
//     folder its pattern is relative to: .claude for
//     .claude/settings.json, but not the project itself for .mcp.json),
//     or an ancestor of one: redirections and every write the analysis
//     records (cp, mv and its sources, install, rsync, tee, sed -i,
//     sqlite3 FILE, the formatters, ...); a copy into a folder writes
//     the folder (cp x .claude/); a command that writes files it does not
//     name (tar -x, unzip, curl -O, git stash, cargo fmt, gofmt -w .)
//     writes its folder (tar -C, unzip -d, or the current one, which is
//     the project: refused);
//   - it writes a path only known when the line runs, while there are
//     protected paths: any expansion but $HOME, $PWD and ~, a command
//     substitution, a relative path after a cd to a folder not known, a
//     glob that starts with a dot and may match "..", ~ and $HOME in a
//     line that assigns HOME, $PWD in one that assigns PWD. Globs and braces
//     with no other expansion are resolved: .c?aude/x and {.claude,x}/x
//     count as .claude/x. A dynamic write target is refused even when it
//     is harmless ("> $OUT"): write to a static path instead;
//   - it makes a symbolic link whose target (relative to the current
//     folder, and to the link's folder) is, holds or is in a protected
//     path ("ln -s .claude c", "ln -s / r");
//   - it names a secret at all, reading included: a word resolving to
//     the secret (or to a glob or folder that holds it below its base),
//     or any word or inline code holding a secret file's name
//     ("state.db" for .chartgate/state.db*);
//   - it runs inline code (python -c, node -e, awk, perl -e, sqlite3
//     SQL, a here-document fed to an interpreter) that writes or is
//     Unknown and that names an element of a protected path beginning
//     with a dot, or a protected file's name (".chartgate",
//     "settings.json").
//
// This is what "direct access to the store" means here: a command that
// names the store file. A program that finds it by itself (grep -r in
// the project, a script) is not seen, nor one that finds chartgate's
// binary by itself (find / -name ... -exec cp); see Limits.
//
// Protection.Resolve, when set, resolves symbolic links that exist on
// disk, so that a write through a link made earlier is refused too.
//
// # Deciding a line
//
// [Policy.Check] refuses a line that does not parse, and otherwise decides
// every entry of its analysis ([Policy.Decide]); the line is allowed when
// all are. An entry is refused when:
//
//  1. [Policy.AllowedCommands] is not empty, the entry is a simple command
//     (a name with arguments, builtins such as cd and export included,
//     nested ones included; not a bare assignment, [[ ]], (( )) or a
//     control structure), and no pattern matches it;
//  2. it reads or sets a variable of [Policy.BlockedEnv], or reads
//     variables that cannot be named in advance while some are blocked;
//  3. one of its classes needs tools and none of them is in
//     [Policy.AllowedTools] (nil means every tool is allowed);
//  4. one of its classes is blocked and no allowed command names it
//     (below), unless the class is Unknown and [Policy.AllowUnknown] is set.
//
// [Decision.Reason] names the first refused entry, its text and where it is
// nested, why, and what is allowed; [Decision.Commands] has the verdict on
// every entry.
//
// # Allowed-command patterns
//
// There is one rule, [MatchCommand], the same in the hook and in the
// gateway, applied to the words of one simple command (after the
// transparent prefixes). A pattern without "*" is a prefix of words:
// "pytest" matches "pytest" and "pytest -x tests/", not "pytester". A
// pattern with "*" must match the whole command, its words joined with
// single spaces, "*" matching any run of characters, spaces and slashes
// included. A trailing " *" also matches no arguments: "go test *" matches
// "go test" and "go test ./...". "pytest*" matches "pytest -x" and
// "pytest-watch". A star matches anything: "rm -rf build/*" matches "rm
// -rf build/../../x".
//
// A pattern names a command when it matches it with literal characters
// (not stars) over the words that make it blocked: the command name of rm
// or sudo, "git" and the subcommand of git push, "find" and "-delete" of
// find -delete. "git push origin *" names "git push origin main"; "git *"
// matches "git push --force" but does not name it, so it stays blocked;
// "*" names nothing.
//
// # Written paths
//
// [Command.Writes] lists the files an entry creates, changes or removes:
// redirection targets (not 2>&1, >&2, >&- or /dev/null, /dev/stdout,
// /dev/stderr, /dev/tty, /dev/fd/N), tee's files, the destination of cp,
// install, ln and rsync (and mv's sources), sed -i, perl -i and awk -i
// files, dd of=, touch, mkdir, chmod, patch's file, tar -c's archive, curl
// -o, sed w and awk print > "file", and the files rm and its kind remove.
// Paths are cleaned and joined to the directory of an earlier static cd in
// the same line ("cd src && touch a" writes src/a); relative paths stay
// relative to where the line starts. A path only known when the line runs
// is Dynamic, with its source text ("$OUT", "*.log", or a relative path
// after "cd $DIR"); a command that certainly writes files it does not name
// (tar -x, unzip, curl -O, wget, patch < diff, find -delete) has a
// Dynamic path "". Inline code (python -c) may write anything; its class
// says so, but Writes does not list what it cannot see. [Analysis.Writes]
// lists the paths of the whole line once each.
//
// # Setting variables
//
// [WithEnv] rewrites a line to run with variables set (a state's
// env_overrides, which the hook applies where the agent host lets a hook
// rewrite a tool's input): a first line "export NAME='value' ...", then
// the line as it was. Every part of the line sees the variables, and its
// exit status is its own. Values are single-quoted, so every byte but NUL
// stays literal; names must be shell identifiers ([CheckEnv]). Decide the
// line the agent wrote, then rewrite it: the export is chartgate's, not
// the agent's.
//
// # Compared with Statewright
//
// Rule by rule, against Statewright's gateway and Claude Code hook:
//
//   - allowed_commands: Statewright's gateway matches a prefix of the whole
//     line, characters not words, so "pytest; rm -rf /" and "pytester"
//     pass "pytest", and its hook uses shell case globs, another rule.
//     Here: one rule, a prefix of words for an entry without "*", applied
//     to every simple command, nested ones included. Better.
//   - Splitting: Statewright splits on && || | ; outside quotes. Here the
//     parser also sees newlines, &, subshells, $(...), backquotes, <(...),
//     here-documents, bash -c strings, eval, xargs and find -exec. Better.
//   - Classes when allowed_commands is set: Statewright skips its
//     classifier; here the classes still apply, so an allowed command still
//     needs the tools for what it does ("cp *" needs Write). Stricter.
//   - FileRead, ContentSearch, FileSearch, GitRead, Network: the same
//     requirements, with more commands known (bash's /dev/tcp is Network).
//   - FileModify and FileWrite: the same commands and requirements, plus
//     every redirection the parser sees (>|, &>, &>>, <>, >& file, exec 3>
//     f), code read by an interpreter from a pipe or a here-document, awk
//     programs that write or run commands, sed w and e. 2>&1 and > /dev/null
//     are not writes, as in Statewright. dd without of= writes nothing and
//     is a passthrough (Statewright counts any dd).
//   - Destructive and GitWrite: always blocked, as in Statewright, except
//     that an allowed command that names the command literally allows it
//     ("git push origin *", "rm -rf build*"): the workflow's author asked
//     for it. Unknown git subcommands (aliases) count as GitWrite, and git
//     pull is GitWrite as well as Network.
//   - blocked_env: Statewright's hook looks for references in the text.
//     Here every expansion the parser sees counts, nested and in arithmetic,
//     as do printenv, env, set, export -p, declare -p, /proc/*/environ,
//     assignments, export, unset, read, and a blocked name in inline code
//     (python -c, node -e, awk); entries may be patterns ("AWS_*"). Better.
//   - Privileged and Unknown are new. Passthrough needs no tool, as in
//     Statewright.
//
// # Limits
//
//   - A passthrough command's own effects are not seen: build tools, test
//     runners, package managers' scripts and scripts (make, go test, npm
//     install's install scripts, bash script.sh, python script.py) may
//     write files, reach the network or run anything the user can,
//     chartgate and its store included: the protection sees only what the
//     line says. Only OS isolation (a sandbox, another user, file
//     permissions) stops a program from doing what the user may. A
//     state that must not write should list its allowed commands.
//   - A state that allows Write or Edit allows inline code, and so in
//     effect any program; the same is true of Statewright.
//   - Only the line is seen. A program reading its own environment reads
//     blocked variables unseen: the runner should also remove them from the
//     environment. State kept by a persistent shell between calls is not
//     tracked, which is why function and alias definitions and assignments
//     to PATH and the like are Unknown.
//   - Commands run elsewhere (ssh host cmd, docker exec, kubectl exec) are
//     classed by the local command only.
//   - An Unknown entry may hide commands the analysis cannot find (the
//     command run by "xargs $OPTS ..."): with AllowUnknown, such lines are
//     allowed without that part being decided.
//   - The default dialect is Bash; set [Policy.Dialect] to [Zsh] when the
//     shell is zsh (its glob qualifiers and =cmd expansions differ). Where
//     the parser and bash differ on the nesting of backquotes within double
//     quotes, the analysis finds more commands, not fewer.
//
// # Concurrency
//
// [Analyze] has no shared state, and a [Policy] is a plain value: both are
// safe for concurrent use as long as nobody modifies the policy.
package shellpolicy
