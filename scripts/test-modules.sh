#!/usr/bin/env bash
# Runs `go test` (the arguments given) in every Go module of the repository,
# MODULE_JOBS modules at a time (default 2), each with GOWORK=off as its
# users build it. The modules with the longest suites start first, so that
# the others fill the gaps while those wait on their servers; each module's
# output is printed whole when it ends. MODULES (space-separated module
# directories) limits the run to those. Fails if any module fails; an
# interrupt stops every running module and prints what each had written.
set -uo pipefail
cd "$(dirname "$0")/.."
go="${GO:-go}"
jobs="${MODULE_JOBS:-2}"
if ! [[ "$jobs" =~ ^[1-9][0-9]*$ ]]; then
	echo "test-modules: MODULE_JOBS must be a positive integer, not '$jobs'" >&2
	exit 2
fi

modules=()
if [[ -n "${MODULES:-}" ]]; then
	read -r -a modules <<<"$MODULES"
else
	# Longest first (measured), then the rest in git's order.
	first=(. backends/mongodb backends/redis cmd/memvault)
	for m in "${first[@]}"; do
		[[ -f "$m/go.mod" ]] && modules+=("$m")
	done
	while IFS= read -r mod; do
		m="$(dirname "$mod")"
		[[ " ${first[*]} " == *" $m "* ]] || modules+=("$m")
	done < <(git ls-files '*go.mod' ':!:go.mod')
fi

# Before bash 5.1 (macOS ships 3.2) there is no `wait -n -p`: one module at a time.
if ((BASH_VERSINFO[0] < 5 || (BASH_VERSINFO[0] == 5 && BASH_VERSINFO[1] < 1))); then
	status=0
	for m in "${modules[@]}"; do
		echo "== module $m"
		(cd "$m" && GOWORK=off "$go" test "$@") || status=1
	done
	exit $status
fi

# Job control: each module's go test runs in a process group of its own,
# which an interrupt stops whole (its test binaries and their servers).
set -m
logs="$(mktemp -d)"
declare -A pid_module=()
failed=()

# interrupted stops the running modules, prints their output so far and exits.
interrupted() {
	trap - INT TERM
	local pid
	for pid in "${!pid_module[@]}"; do
		kill -TERM -- "-$pid" 2>/dev/null
	done
	wait
	for pid in "${!pid_module[@]}"; do
		local m="${pid_module[$pid]}"
		echo "== module $m (interrupted)"
		cat "$logs/${m//\//_}.log"
	done
	rm -rf "$logs"
	exit 130
}
trap interrupted INT TERM

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
	(cd "$m" && GOWORK=off exec "$go" test "$@") >"$logs/${m//\//_}.log" 2>&1 &
	pid_module[$!]="$m"
done
while [[ ${#pid_module[@]} -gt 0 ]]; do
	finish
done
rm -rf "$logs"
if [[ ${#failed[@]} -gt 0 ]]; then
	echo "test-modules: failed: ${failed[*]}" >&2
	exit 1
fi
echo "test-modules: ${#modules[@]} modules passed"
