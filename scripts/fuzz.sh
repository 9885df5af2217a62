#!/usr/bin/env bash
# Runs every Go fuzz target in the module for a short time each
# (FUZZTIME, default 5s). A panic or failure in any target fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-5s}"
status=0
while IFS= read -r file; do
  pkg="./$(dirname "$file")"
  for target in $(grep -oE '^func (Fuzz[A-Za-z0-9_]+)\(f \*testing\.F\)' "$file" | sed -E 's/^func (Fuzz[A-Za-z0-9_]+).*/\1/'); do
    echo "fuzz: $pkg $target ($fuzztime)"
    if ! go test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -fuzzminimizetime 2s >/tmp/memvault-fuzz.log 2>&1; then
      cat /tmp/memvault-fuzz.log
      status=1
    fi
  done
done < <(git ls-files '*_test.go' | xargs grep -l '^func Fuzz' 2>/dev/null | sort)
exit $status
