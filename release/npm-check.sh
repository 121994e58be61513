#!/usr/bin/env bash
# Checks chartgate's npm installation, the path of people who write no Go:
# builds chartgate for this machine's platform with the release program
# (internal/cmd/release; the full matrix is a release's, not CI's), packs
# the npm packages, installs the tarballs into a clean folder with npm
# install (offline: nothing comes from the registry, and the other
# platforms' optional packages are skipped as on any machine), then runs
# chartgate --version (from node_modules/.bin and through npx) and
# chartgate install claude-code there, and one
# hook by the command install wrote (npx's form): an Edit in the first
# state of a workflow is refused.
set -euo pipefail
cd "$(dirname "$0")/.."
version=0.0.0-ci
work="$(mktemp -d /tmp/chartgate-npm-check.XXXXXX)"
trap 'rm -rf "$work"' EXIT

go run ./internal/cmd/release -version "$version" -targets "$(go env GOOS)/$(go env GOARCH)" -out "$work/dist" -pack

app="$work/app"
mkdir -p "$app/.chartgate"
cd "$app"
echo '{"name": "app", "version": "1.0.0", "private": true}' > package.json
npm install --offline --no-audit --no-fund --loglevel=error "$work"/dist/npm/*.tgz

# node_modules/.bin/chartgate, as npm put it there, then through npx
# (whose own flags end at --).
for run in "node_modules/.bin/chartgate" "npx --no -- chartgate"; do
	got="$($run --version)"
	if [ "$got" != "chartgate $version" ]; then
		echo "$run --version printed \"$got\", want \"chartgate $version\"" >&2
		exit 1
	fi
	echo "$run --version: $got"
done

cat > .chartgate/workflow.json <<'JSON'
{"id": "coding", "initial": "plan",
 "states": {"plan": {"allowed_tools": ["Read"], "on": {"PLAN_READY": "implement"}},
            "implement": {"allowed_tools": ["Read", "Edit"], "on": {"DONE": "done"}},
            "done": {"type": "final"}}}
JSON
npx --no chartgate install claude-code >/dev/null
hook="$(node -e 'const s = require("./.claude/settings.json"); console.log(s.hooks.PreToolUse[0].hooks[0].command)')"
if [ "$hook" != "npx --no chartgate hook claude-code" ]; then
	echo "chartgate install from the npm package wrote the hook command \"$hook\", want npx's form" >&2
	exit 1
fi
answer="$(printf '%s' '{"session_id":"s1","cwd":"'"$app"'","hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"main.go"}}' | sh -c "$hook")"
case "$answer" in
*'"permissionDecision":"deny"'*'not available in the current workflow state'*) echo "hook by \"$hook\": the Edit in plan refused" ;;
*)
	echo "the hook by \"$hook\" did not refuse an Edit in plan; it answered: $answer" >&2
	exit 1
	;;
esac
