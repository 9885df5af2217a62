#!/usr/bin/env bash
# install-deps.sh: install what memvault's tests need on a Debian machine.
#
#   - PostgreSQL ${PG_MAJOR} (server, contrib, server headers) from the distribution;
#   - pgvector, built from Debian's own "pgvector" source package, fetched with
#     `apt-get source` from a release that carries it (default: trixie) through a
#     private apt configuration, so the machine's apt setup is left untouched;
#   - SoftHSM2 and a C compiler, for the PKCS#11 key provider's tests (cgo);
#   - a check that Go is installed (it is not installed by this script).
#
# Idempotent: when everything is present it only checks and exits. Runs as root,
# or through sudo when not root. Tunables (environment):
#   PG_MAJOR        PostgreSQL major version (default 15)
#   PGVECTOR_SUITE  Debian release to take the pgvector source from (default trixie)
#   DEBIAN_MIRROR   mirror URI (default: the one the machine is configured with)
set -euo pipefail

PG_MAJOR="${PG_MAJOR:-15}"
PGVECTOR_SUITE="${PGVECTOR_SUITE:-trixie}"
PG_CONFIG="/usr/lib/postgresql/${PG_MAJOR}/bin/pg_config"
VECTOR_CONTROL="/usr/share/postgresql/${PG_MAJOR}/extension/vector.control"

log() { printf 'install-deps: %s\n' "$*"; }
die() { printf 'install-deps: error: %s\n' "$*" >&2; exit 1; }

SUDO=()
if [[ "$(id -u)" -ne 0 ]]; then
	command -v sudo >/dev/null 2>&1 || die "not root and sudo is not available"
	SUDO=(sudo)
fi

export DEBIAN_FRONTEND=noninteractive

# installed PKG... succeeds when every package is installed.
installed() {
	local p
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || return 1
	done
}

APT_UPDATED=0
# ensure_pkgs PKG... installs the missing ones, running apt-get update at most once.
ensure_pkgs() {
	local missing=() p
	for p in "$@"; do
		installed "$p" || missing+=("$p")
	done
	if [[ ${#missing[@]} -eq 0 ]]; then
		return 0
	fi
	if [[ $APT_UPDATED -eq 0 ]]; then
		log "apt-get update"
		"${SUDO[@]}" apt-get update -qq
		APT_UPDATED=1
	fi
	log "installing ${missing[*]}"
	"${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# debian_mirror prints the URI of the machine's main Debian archive (not security).
debian_mirror() {
	if [[ -n "${DEBIAN_MIRROR:-}" ]]; then
		printf '%s\n' "$DEBIAN_MIRROR"
		return
	fi
	local uri=""
	# deb822 files: take the URIs of a stanza whose URI is not a security archive.
	if compgen -G '/etc/apt/sources.list.d/*.sources' >/dev/null; then
		uri="$(awk 'tolower($1) == "uris:" { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' \
			/etc/apt/sources.list.d/*.sources)"
	fi
	# one-line format: "deb [options] URI suite components".
	if [[ -z "$uri" ]]; then
		uri="$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
			awk '$1 == "deb" || $1 == "deb-src" { for (i = 2; i <= NF; i++) { if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; continue }; if ($i !~ /security/) print $i; break } }' |
			head -n1)"
	fi
	printf '%s\n' "${uri:-http://deb.debian.org/debian}"
}

# build_pgvector fetches Debian's pgvector source from $PGVECTOR_SUITE with a
# private apt configuration and installs it into PostgreSQL $PG_MAJOR.
build_pgvector() {
	local mirror work
	mirror="$(debian_mirror)"
	work="$(mktemp -d /tmp/memvault-pgvector.XXXXXX)"
	# shellcheck disable=SC2064
	trap "rm -rf '$work'" EXIT

	mkdir -p "$work/etc/sources.list.d" "$work/lists/partial" "$work/cache/archives/partial" "$work/src"
	printf 'deb-src %s %s main\n' "$mirror" "$PGVECTOR_SUITE" >"$work/etc/sources.list"
	local apt_opts=(
		-o "Dir::Etc::SourceList=$work/etc/sources.list"
		-o "Dir::Etc::SourceParts=$work/etc/sources.list.d"
		-o "Dir::State::Lists=$work/lists"
		-o "Dir::Cache=$work/cache"
		-o "APT::Sandbox::User=$(id -un)" # the private dirs belong to us, not to _apt
	)

	log "fetching pgvector source from $mirror $PGVECTOR_SUITE (private apt config)"
	apt-get "${apt_opts[@]}" update -qq
	(cd "$work/src" && apt-get "${apt_opts[@]}" source -qq pgvector >/dev/null)

	local dir
	dir="$(find "$work/src" -mindepth 1 -maxdepth 1 -type d -name 'pgvector-*' | head -n1)"
	[[ -n "$dir" ]] || die "apt-get source pgvector produced no source tree"
	log "building $(basename "$dir") for PostgreSQL $PG_MAJOR"
	# OPTFLAGS="" as Debian's packaging does: no -march=native, so the result
	# does not depend on the build machine's CPU.
	make -s -C "$dir" PG_CONFIG="$PG_CONFIG" OPTFLAGS="" -j"$(nproc)" >/dev/null
	"${SUDO[@]}" make -s -C "$dir" PG_CONFIG="$PG_CONFIG" OPTFLAGS="" install >/dev/null

	rm -rf "$work"
	trap - EXIT
	[[ -f "$VECTOR_CONTROL" ]] || die "pgvector installed but $VECTOR_CONTROL is missing"
}

command -v dpkg-query >/dev/null 2>&1 || die "this script needs a Debian-based system (dpkg/apt)"

# The contrib modules ship inside postgresql-N (it provides postgresql-contrib-N).
ensure_pkgs "postgresql-${PG_MAJOR}" "postgresql-client-${PG_MAJOR}" "postgresql-server-dev-${PG_MAJOR}"
log "postgresql: $("$PG_CONFIG" --version)"

if [[ -f "$VECTOR_CONTROL" ]]; then
	log "pgvector: $(awk -F"'" '/default_version/ { print $2 }' "$VECTOR_CONTROL") already installed"
else
	ensure_pkgs build-essential dpkg-dev ca-certificates
	build_pgvector
	log "pgvector: $(awk -F"'" '/default_version/ { print $2 }' "$VECTOR_CONTROL") installed"
fi

# SoftHSM2 (a software PKCS#11 token) for the HSM key provider's tests
# (keyproviders/pkcs11), and a C compiler for its cgo.
ensure_pkgs softhsm2 gcc libc6-dev
log "softhsm2: $(softhsm2-util --version 2>/dev/null || echo installed)"

GO="$(command -v go 2>/dev/null || true)"
if [[ -z "$GO" && -x /usr/local/go/bin/go ]]; then
	GO=/usr/local/go/bin/go
fi
[[ -n "$GO" ]] || die "Go is not installed (see https://go.dev/doc/install); it is not installed by this script"
log "go: $("$GO" version | awk '{ print $3 }') ($GO)"

# ---------------------------------------------------------------------------
# staticcheck, which `make test` runs on every module: a pinned version from
# the Go module proxy, installed into $(go env GOPATH)/bin (on .ci/run's PATH).
# ---------------------------------------------------------------------------
STATICCHECK_VERSION="${STATICCHECK_VERSION:-v0.8.2}"
STATICCHECK="$("$GO" env GOPATH)/bin/staticcheck"
if [[ -x "$STATICCHECK" ]] && "$STATICCHECK" -version 2>/dev/null | grep -q "(${STATICCHECK_VERSION}\b\|${STATICCHECK_VERSION#v}"; then
	log "staticcheck: $("$STATICCHECK" -version) already installed"
else
	log "staticcheck: installing ${STATICCHECK_VERSION}"
	GOFLAGS= GOWORK=off "$GO" install "honnef.co/go/tools/cmd/staticcheck@${STATICCHECK_VERSION}"
fi

# ---------------------------------------------------------------------------
# npm packages of the JS interop tests: `npm ci` in DIR when node_modules is
# missing or older than package-lock.json. Needs Node.js >= 20 and npm, which
# this script does not install (a warning says so).
#   npm_ci DIR WHAT   (WHAT names the tests, for the messages)
# ---------------------------------------------------------------------------
npm_ci() {
	local dir="$1" what="$2"
	[[ -f "$dir/package-lock.json" ]] || return 0
	if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
		log "warning: node or npm not found: $what need Node.js >= 20 and npm"
	elif [[ "$(node -p 'process.versions.node.split(".")[0]')" -lt 20 ]]; then
		log "warning: node $(node --version) is too old for $what (Node.js >= 20)"
	elif [[ ! -f "$dir/node_modules/.package-lock.json" || "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]]; then
		log "${dir#"$ROOT"/}: npm ci ($what)"
		npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error
	else
		log "${dir#"$ROOT"/}: npm packages already installed"
	fi
}
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# JS LangGraph's PostgresSaver (go test ./interop/).
npm_ci "$ROOT/interop/js" "the JS interop tests (go test ./interop/)"

# ---------------------------------------------------------------------------
# Citus for the Citus tests (go test -run Citus ./...): built from the source
# MEMVAULT_CITUS_SRC names (.ci/run passes the vendored copy); without it,
# nothing is installed and those tests skip (see scripts/install-citus.sh).
# ---------------------------------------------------------------------------
bash "$(dirname "${BASH_SOURCE[0]}")/install-citus.sh"

# ---------------------------------------------------------------------------
# Chromium, for the inspector's browser tests (inspector/browser_test.go, driven
# headless through chromedp): Debian's own "chromium" package, nothing
# downloaded by a test tool, and a font (fonts-dejavu-core) so that pages and
# screenshots have text. Idempotent: ensure_pkgs installs only what is missing.
# ---------------------------------------------------------------------------
ensure_pkgs chromium fonts-dejavu-core
log "chromium: $(chromium --version 2>/dev/null | head -n1 || echo installed)"

# ---------------------------------------------------------------------------
# Python's msgpack, for the MongoDB saver's metadata test
# (backends/mongodb/mongosaver TestPythonMsgpackLeaves): the bytes memvault
# writes for metadata leaves are compared with what Python's msgpack packs
# (LangGraph's ormsgpack packs these types the same way).
# ---------------------------------------------------------------------------
ensure_pkgs python3 python3-msgpack

# ---------------------------------------------------------------------------
# Redis for backends/redis's tests (backends/redis/redistest finds both):
#   - Redis 7 (bookworm's own, 7.0.x: no vector sets, no hash-field expiry):
#     the redis-tools .deb (its redis-check-rdb is the server) fetched with `apt-get
#     download` and unpacked with `dpkg -x` into $REDIS7_PREFIX, so no system
#     service is installed, started or listening on 6379; its shared libraries
#     come from apt.
#   - Redis 8 (vector sets built in; no JSON or search modules) built from
#     Debian's "redis" source package of $REDIS8_SUITE (bookworm has none; the
#     trixie revision was 404 on the mirror) with the upstream Makefile into
#     $REDIS8_PREFIX. The build takes 7-10 minutes on a 2-core machine (28 with
#     the machine loaded by other builds).
# Idempotent: a rerun only checks the two `redis-server --version`s.
#   REDIS7_PREFIX  default /opt/memvault/redis7
#   REDIS8_PREFIX  default /opt/memvault/redis8
#   REDIS8_SUITE   default sid
# ---------------------------------------------------------------------------
REDIS7_PREFIX="${REDIS7_PREFIX:-/opt/memvault/redis7}"
REDIS8_PREFIX="${REDIS8_PREFIX:-/opt/memvault/redis8}"
REDIS8_SUITE="${REDIS8_SUITE:-sid}"

# redis_version BIN prints the server version (e.g. 8.0.6) or nothing.
redis_version() {
	[[ -x "$1" ]] || return 0
	"$1" --version 2>/dev/null | sed -n 's/.* v=\([0-9.]*\).*/\1/p'
}

install_redis7() {
	local work deb
	ensure_pkgs libatomic1 libjemalloc2 liblzf1 libssl3 libsystemd0
	work="$(mktemp -d /tmp/memvault-redis7.XXXXXX)"
	(cd "$work" && apt-get download -qq redis-tools >/dev/null 2>&1) || {
		"${SUDO[@]}" apt-get update -qq
		(cd "$work" && apt-get download -qq redis-tools >/dev/null)
	}
	deb="$(find "$work" -maxdepth 1 -name 'redis-tools_*.deb' | head -n1)"
	[[ -n "$deb" ]] || die "apt-get download redis-tools produced no .deb"
	dpkg -x "$deb" "$work/root"
	"${SUDO[@]}" mkdir -p "$REDIS7_PREFIX/bin"
	# Debian's redis-server package only adds the symlink redis-server ->
	# redis-check-rdb (and a service); the binary picks its role from its name.
	"${SUDO[@]}" cp "$work/root/usr/bin/redis-check-rdb" "$REDIS7_PREFIX/bin/redis-server"
	"${SUDO[@]}" cp -L "$work/root/usr/bin/redis-cli" "$REDIS7_PREFIX/bin/redis-cli"
	rm -rf "$work"
}

install_redis8() {
	local mirror work dir
	ensure_pkgs build-essential pkg-config dpkg-dev ca-certificates
	mirror="$(debian_mirror)"
	work="$(mktemp -d /tmp/memvault-redis8.XXXXXX)"
	# shellcheck disable=SC2064
	trap "rm -rf '$work'" EXIT
	mkdir -p "$work/etc/sources.list.d" "$work/lists/partial" "$work/cache/archives/partial" "$work/src"
	printf 'deb-src %s %s main\n' "$mirror" "$REDIS8_SUITE" >"$work/etc/sources.list"
	local apt_opts=(
		-o "Dir::Etc::SourceList=$work/etc/sources.list"
		-o "Dir::Etc::SourceParts=$work/etc/sources.list.d"
		-o "Dir::State::Lists=$work/lists"
		-o "Dir::Cache=$work/cache"
		-o "APT::Sandbox::User=$(id -un)"
	)
	log "redis8: fetching the redis source from $mirror $REDIS8_SUITE (private apt config)"
	apt-get "${apt_opts[@]}" update -qq
	(cd "$work/src" && apt-get "${apt_opts[@]}" source -qq redis >/dev/null)
	dir="$(find "$work/src" -mindepth 1 -maxdepth 1 -type d -name 'redis-*' | head -n1)"
	[[ -n "$dir" ]] || die "apt-get source redis produced no source tree"
	log "redis8: building $(basename "$dir") (7-10 minutes; upstream Makefile, bundled jemalloc)"
	# The build prints a line per file: kept in a log, shown when it fails.
	make -s -C "$dir" -j"$(nproc)" >"$work/build.log" 2>&1 || { tail -n 40 "$work/build.log" >&2; die "redis8: build failed"; }
	"${SUDO[@]}" make -s -C "$dir" PREFIX="$REDIS8_PREFIX" install >"$work/build.log" 2>&1 || { tail -n 40 "$work/build.log" >&2; die "redis8: make install failed"; }
	rm -rf "$work"
	trap - EXIT
}

if [[ "$(redis_version "$REDIS7_PREFIX/bin/redis-server")" == 7.* ]]; then
	log "redis7: $(redis_version "$REDIS7_PREFIX/bin/redis-server") already in $REDIS7_PREFIX"
else
	install_redis7
	[[ "$(redis_version "$REDIS7_PREFIX/bin/redis-server")" == 7.* ]] || die "redis7: $REDIS7_PREFIX/bin/redis-server is not Redis 7"
	log "redis7: $(redis_version "$REDIS7_PREFIX/bin/redis-server") installed in $REDIS7_PREFIX"
fi
if [[ "$(redis_version "$REDIS8_PREFIX/bin/redis-server")" == 8.* ]]; then
	log "redis8: $(redis_version "$REDIS8_PREFIX/bin/redis-server") already in $REDIS8_PREFIX"
else
	install_redis8
	[[ "$(redis_version "$REDIS8_PREFIX/bin/redis-server")" == 8.* ]] || die "redis8: $REDIS8_PREFIX/bin/redis-server is not Redis 8"
	log "redis8: $(redis_version "$REDIS8_PREFIX/bin/redis-server") installed in $REDIS8_PREFIX"
fi

# ---------------------------------------------------------------------------
# JS LangGraph's MongoDBSaver for the MongoDB interop test
# (cd backends/mongodb && go test ./mongosaver -run TestJSInterop).
# ---------------------------------------------------------------------------
npm_ci "$ROOT/backends/mongodb/mongosaver/testdata/js" "the MongoDB JS interop test"

log "done"
