#!/usr/bin/env bash
# Runs every Go fuzz target in the module for a short time each
# (FUZZTIME, default 5s). A panic or failure in any target fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-5s}"
status=0
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
while IFS= read -r file; do
  pkg="./$(dirname "$file")"
  for target in $(grep -oE '^func (Fuzz[A-Za-z0-9_]+)\(f \*testing\.F\)' "$file" | sed -E 's/^func (Fuzz[A-Za-z0-9_]+).*/\1/'); do
    echo "fuzz: $pkg $target ($fuzztime)"
    # Go's fuzzer sometimes ends a short run with "context deadline
    # exceeded" while shutting its workers down, with no failing input:
    # that run is repeated once. A real failure writes its input under
    # testdata/fuzz and fails the script.
    for attempt in 1 2; do
      if go test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -fuzzminimizetime 2s >"$log" 2>&1; then
        break
      fi
      if [ "$attempt" = 1 ] && grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input written' "$log"; then
        echo "fuzz: $target: fuzzer shutdown hiccup, running it again"
        continue
      fi
      cat "$log"
      status=1
      break
    done
  done
done < <(git ls-files '*_test.go' | xargs grep -l '^func Fuzz' 2>/dev/null | sort)
exit $status
