#!/usr/bin/env bash
# bench-pg.sh: the README's PostgreSQL tables in one run, on a cluster of its own.
#
# Starts a throwaway PostgreSQL cluster with production durability (fsync,
# synchronous_commit and full_page_writes on), builds the CLI, then runs
# `memvault bench checkpointer` and `memvault bench store` — with LangGraph.js's
# PostgresSaver and PostgresStore as a column when interop/js/node_modules and
# node are present — each printing the cluster's settings first. The cluster
# is stopped and removed on exit.
#
#   scripts/bench-pg.sh                       # the quick default shapes
#   CP_ARGS="--duration 8s" STORE_ARGS="--dims 1536 --items 100000" scripts/bench-pg.sh
#
# Tunables (environment): CP_ARGS, STORE_ARGS (extra flags of each bench;
# "skip" skips it), NO_JS (set: no LangGraph.js column, e.g. at 100 000 × 1536
# where each JS search scans the table), SHARED_BUFFERS (default 256MB), PG_BIN (server binaries,
# default /usr/lib/postgresql/15/bin).
set -euo pipefail
cd "$(dirname "$0")/.."

PG_BIN="${PG_BIN:-/usr/lib/postgresql/15/bin}"
SHARED_BUFFERS="${SHARED_BUFFERS:-256MB}"
CP_ARGS="${CP_ARGS:-}"
STORE_ARGS="${STORE_ARGS:-}"

dir="$(mktemp -d /tmp/memvault-bench-XXXXXX)"
as_pg=()
if [[ "$(id -u)" -eq 0 ]]; then
	chown postgres "$dir"
	as_pg=(runuser -u postgres --)
fi
stop() {
	if [[ -f "$dir/data/postmaster.pid" ]]; then
		"${as_pg[@]}" "$PG_BIN/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
	fi
	rm -rf "$dir"
}
trap stop EXIT

port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"${as_pg[@]}" "$PG_BIN/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 --locale=C >/dev/null
"${as_pg[@]}" "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/log" -w \
	-o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c shared_buffers=$SHARED_BUFFERS -c maintenance_work_mem=1GB" start >/dev/null
dsn="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
"$PG_BIN/psql" -q -h 127.0.0.1 -p "$port" -U postgres -c "CREATE EXTENSION IF NOT EXISTS vector" postgres

bin="$dir/memvault"
(cd cmd/memvault && go build -o "$bin" .)

js=()
if [[ -n "${NO_JS:-}" ]]; then
	echo "bench-pg: NO_JS set: no LangGraph.js column"
elif [[ -d interop/js/node_modules ]] && command -v node >/dev/null 2>&1; then
	js=(--js interop/js)
else
	echo "bench-pg: interop/js/node_modules or node missing: no LangGraph.js column (npm ci in interop/js adds it)"
fi
if [[ "$CP_ARGS" != skip ]]; then
	# shellcheck disable=SC2086 # CP_ARGS holds several flags
	"$bin" bench checkpointer --dsn "$dsn" "${js[@]}" $CP_ARGS
	echo
fi
if [[ "$STORE_ARGS" != skip ]]; then
	# shellcheck disable=SC2086
	"$bin" bench store --dsn "$dsn" "${js[@]}" $STORE_ARGS
fi
