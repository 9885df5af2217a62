#!/usr/bin/env bash
# release-check.sh VERSION — what `make release-check` runs before a tag is cut.
#
# Every module of the repository is built as its users will get it: from a
# copy of the committed tree (git archive HEAD), with the replace
# directives that point at sibling directories dropped and every
# requirement of a memvault module set to VERSION, each memvault module
# served at VERSION from a local module proxy (scripts/modzip.go) in front
# of the real one. It then runs `go install …/cmd/memvault@VERSION` and
# checks that the binary reports VERSION. A module that only builds
# through a replace, or a go.mod that `go install …@version` would refuse,
# fails the check. Nothing in the working tree changes.
#
# The release itself (README, "Releasing") tags the root module VERSION,
# then commits the nested go.mod files as this check rewrote them and tags
# each nested module <dir>/VERSION.
set -euo pipefail
version="${1:-${VERSION:-}}"
if [[ ! "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "usage: scripts/release-check.sh vX.Y.Z (or make release-check VERSION=vX.Y.Z)" >&2
  exit 2
fi
root="$(git rev-parse --show-toplevel)"
work="$(mktemp -d)"
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$work/src" "$work/proxy" "$work/gopath" "$work/bin"
git -C "$root" archive HEAD | tar -x -C "$work/src"
cd "$work/src"

# The memvault modules, the root first, each with its directory.
declare -A dir_of
mapfile -t mods < <(find . -name go.mod -not -path '*/node_modules/*' | sed 's|^\./||; s|/\?go.mod$||' | sort)
for d in "${mods[@]}"; do
  p="$(cd "./$d" && GOWORK=off go mod edit -json | sed -n 's/^\t\t"Path": "\(.*\)"$/\1/p' | head -1)"
  dir_of["$p"]="${d:-.}"
done

# memvault_requires DIR MODULE: the memvault modules DIR's go.mod requires.
memvault_requires() {
  (cd "$1" && GOWORK=off go mod edit -json) | grep -o '"Path": "github.com/memvault/memvault[^"]*"' |
    sed 's/"Path": "\(.*\)"/\1/' | grep -vx "$2" | sort -u || true
}

# Drop the replaces between memvault modules; require each other at VERSION.
for p in "${!dir_of[@]}"; do
  d="${dir_of[$p]}"
  [ "$d" = "." ] && continue
  args=()
  while read -r r; do
    [ -n "$r" ] && args+=("-dropreplace=$r")
  done < <(sed -nE 's/^(replace)?[[:space:]]*(github\.com\/memvault\/memvault[^[:space:]]*)[[:space:]].*=>.*/\2/p' "$d/go.mod")
  while read -r r; do
    [ -n "$r" ] && args+=("-require=$r@$version")
  done < <(memvault_requires "$d" "$p")
  [ "${#args[@]}" -gt 0 ] && (cd "$d" && GOWORK=off go mod edit "${args[@]}")
  if grep -q '=>' "$d/go.mod"; then
    echo "release-check: $d/go.mod keeps a replace directive, which \`go install …@$version\` refuses:" >&2
    grep -n '=>' "$d/go.mod" >&2
    exit 1
  fi
done

# Third-party modules come from the usual module cache when it has them
# (read only, as a file proxy), else from the configured proxy.
cache="$(go env GOMODCACHE)/cache/download"
upstream="$(go env GOPROXY)"
export GOWORK=off GOFLAGS=-mod=mod GOPATH="$work/gopath" GOMODCACHE="$work/gopath/pkg/mod"
# GOSUMDB=off: the memvault modules at VERSION exist only here, and the
# third-party ones were verified when they entered the module cache (go.sum
# still checks every hash it lists).
export GOPROXY="file://$work/proxy,file://$cache,$upstream" GOSUMDB=off

# Publish a module once every memvault module it requires is published:
# tidy it (its go.sum gains the published modules), build it, zip it.
published=()
is_published() { local m; for m in "${published[@]}"; do [ "$m" = "$1" ] && return 0; done; return 1; }
remaining=("${!dir_of[@]}")
while [ "${#remaining[@]}" -gt 0 ]; do
  progress=0
  next=()
  for p in "${remaining[@]}"; do
    d="${dir_of[$p]}"
    ready=1
    while read -r r; do
      [ -n "$r" ] && ! is_published "$r" && ready=0
    done < <(memvault_requires "$d" "$p")
    if [ "$ready" = 0 ]; then
      next+=("$p")
      continue
    fi
    echo "release-check: $p ($d)"
    (cd "$d" && go mod tidy && go build ./... && go vet ./... >/dev/null)
    go run "$root/scripts/modzip.go" -out "$work/proxy" -version "$version" "$d"
    published+=("$p")
    progress=1
  done
  if [ "$progress" = 0 ]; then
    echo "release-check: a cycle among ${next[*]}" >&2
    exit 1
  fi
  remaining=("${next[@]}")
done

GOFLAGS= GOBIN="$work/bin" go install "github.com/memvault/memvault/cmd/memvault@$version"
got="$("$work/bin/memvault" --version)"
case "$got" in
  "memvault version $version "*) echo "release-check: go install …/cmd/memvault@$version: $got" ;;
  *) echo "release-check: the installed CLI says \"$got\", want version $version" >&2; exit 1 ;;
esac
echo "release-check: ${#published[@]} modules build at $version without replace directives"
