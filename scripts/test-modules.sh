#!/usr/bin/env bash
# Runs `go test` (the arguments given) in every Go module of the repository,
# MODULE_JOBS modules at a time (default 2), each with GOWORK=off as its
# users build it. The modules with the longest suites start first, so that
# the others fill the gaps while those wait on their servers; each module's
# output is printed whole when it ends. Fails if any module fails.
set -uo pipefail
cd "$(dirname "$0")/.."
jobs="${MODULE_JOBS:-2}"
if ! [[ "$jobs" =~ ^[1-9][0-9]*$ ]]; then
	echo "test-modules: MODULE_JOBS must be a positive integer, not '$jobs'" >&2
	exit 2
fi
# Longest first (measured), then the rest in git's order.
first=(. backends/mongodb backends/redis cmd/memvault)
modules=()
for m in "${first[@]}"; do
	[[ -f "$m/go.mod" ]] && modules+=("$m")
done
while IFS= read -r mod; do
	m="$(dirname "$mod")"
	[[ " ${first[*]} " == *" $m "* ]] || modules+=("$m")
done < <(git ls-files '*go.mod' ':!:go.mod')

logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
declare -A pid_module=()
failed=()

# finish waits for one running module, prints its output and records a failure.
finish() {
	local pid status
	wait -n -p pid "${!pid_module[@]}"
	status=$?
	local m="${pid_module[$pid]}"
	unset 'pid_module[$pid]'
	echo "== module $m (exit $status)"
	cat "$logs/${m//\//_}.log"
	if [[ $status -ne 0 ]]; then
		failed+=("$m")
	fi
}

for m in "${modules[@]}"; do
	while [[ ${#pid_module[@]} -ge $jobs ]]; do
		finish
	done
	(cd "$m" && GOWORK=off "${GO:-go}" test "$@") >"$logs/${m//\//_}.log" 2>&1 &
	pid_module[$!]="$m"
done
while [[ ${#pid_module[@]} -gt 0 ]]; do
	finish
done
if [[ ${#failed[@]} -gt 0 ]]; then
	echo "test-modules: failed: ${failed[*]}" >&2
	exit 1
fi
echo "test-modules: ${#modules[@]} modules passed"
