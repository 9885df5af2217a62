#!/usr/bin/env bash
# install-citus.sh: build and install Citus (distributed PostgreSQL) for
# memvault's Citus tests (go test -run Citus ./checkpointer/... ./store/...).
#
# Citus is not part of memvault and is not shipped with it: it is built from
# a source tarball the caller provides, because Debian carries no Citus
# package. MEMVAULT_CITUS_SRC names a directory holding
#
#   citus-<version>-notests.tar.gz   the Citus source
#   *.patch                          patches applied in name order (patch -p1)
#
# (.ci/run points it at the vendored copy beside this repository). Without
# it, or when the directory does not exist, the script says so and installs
# nothing: the Citus tests then skip, or fail when MEMVAULT_REQUIRE_CITUS=1.
#
# Installs into PostgreSQL ${PG_MAJOR}'s lib and extension directories; the
# library does nothing until a cluster preloads it (the tests' own clusters).
# Idempotent: a rerun with the same version installed only checks. Runs as
# root, or through sudo when not root.
set -euo pipefail

PG_MAJOR="${PG_MAJOR:-15}"
PG_CONFIG="/usr/lib/postgresql/${PG_MAJOR}/bin/pg_config"
SRC="${MEMVAULT_CITUS_SRC:-}"

log() { printf 'install-citus: %s\n' "$*"; }
die() { printf 'install-citus: error: %s\n' "$*" >&2; exit 1; }

SUDO=()
if [[ "$(id -u)" -ne 0 ]]; then
	command -v sudo >/dev/null 2>&1 || die "not root and sudo is not available"
	SUDO=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive

if [[ -z "$SRC" || ! -d "$SRC" ]]; then
	if [[ -x "$PG_CONFIG" && -f "$("$PG_CONFIG" --pkglibdir)/citus.so" ]]; then
		log "citus already installed for PostgreSQL ${PG_MAJOR} (MEMVAULT_CITUS_SRC not set: not checked against a source)"
	else
		log "MEMVAULT_CITUS_SRC is not set or not a directory: Citus not installed (the Citus tests will skip)"
	fi
	exit 0
fi
tarball="$(find "$SRC" -maxdepth 1 -name 'citus-*.tar.gz' | sort | tail -n1)"
[[ -n "$tarball" ]] || die "no citus-*.tar.gz in $SRC"
version="$(basename "$tarball" | sed -E 's/^citus-([0-9][0-9.]*[0-9]).*/\1/')"
[[ -x "$PG_CONFIG" ]] || die "$PG_CONFIG is missing: install PostgreSQL ${PG_MAJOR} first (scripts/install-deps.sh)"

libdir="$("$PG_CONFIG" --pkglibdir)"
sharedir="$("$PG_CONFIG" --sharedir)"
stamp="$sharedir/extension/memvault-citus.version"
if [[ -f "$libdir/citus.so" && -f "$stamp" && "$(cat "$stamp")" == "$version" ]]; then
	log "citus $version already installed for PostgreSQL ${PG_MAJOR}"
	exit 0
fi

# Build dependencies, from Debian (found to be enough on Debian 12).
missing=()
for p in build-essential libcurl4-openssl-dev liblz4-dev libzstd-dev libkrb5-dev "postgresql-server-dev-${PG_MAJOR}"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
done
if [[ ${#missing[@]} -gt 0 ]]; then
	log "installing ${missing[*]}"
	"${SUDO[@]}" apt-get -o DPkg::Lock::Timeout=600 update -qq
	"${SUDO[@]}" apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

work="$(mktemp -d /tmp/memvault-citus.XXXXXX)"
trap 'rm -rf "$work"' EXIT
tar -xzf "$tarball" -C "$work"
dir="$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -n1)"
[[ -n "$dir" ]] || die "$tarball holds no source tree"
while IFS= read -r p; do
	log "applying $(basename "$p")"
	patch -s -p1 -d "$dir" <"$p"
done < <(find "$SRC" -maxdepth 1 -name '*.patch' | sort)

log "building citus $version for PostgreSQL ${PG_MAJOR} (about 3 minutes on 2 cores)"
(cd "$dir" && ./configure -q PG_CONFIG="$PG_CONFIG" >/dev/null)
make -s -C "$dir" -j"$(nproc)" with_llvm=no >/dev/null 2>&1 || {
	make -C "$dir" with_llvm=no 2>&1 | tail -n 30 >&2
	die "citus build failed"
}
"${SUDO[@]}" make -s -C "$dir" with_llvm=no install >/dev/null 2>&1
printf '%s\n' "$version" | "${SUDO[@]}" tee "$stamp" >/dev/null
log "citus $version installed ($libdir/citus.so)"
