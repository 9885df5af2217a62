#!/usr/bin/env bash
# bench-mongo.sh: the README's MongoDB table in one run, on a server that is
# not the bottleneck.
#
# FerretDB's SQLite backend, which the tests run (nothing to set up), sends
# no filter but one on _id to SQLite: every other query and upsert decodes
# the whole collection in Go, 100+ ms per operation on the bench's
# collections, so every column measures FerretDB. Its PostgreSQL backend
# sends top-level equality filters to PostgreSQL. This script starts a
# throwaway PostgreSQL 15 cluster (fsync off, as the tests' SQLite runs
# synchronous=off: the client is measured, not durability), FerretDB
# v1.24.2 on it (backends/mongodb/mongotest/ferretsrv), builds the CLI and
# runs `memvault bench checkpointer` — the classic operations and the
# growing-messages workload — with LangGraph.js's MongoDBSaver as a column
# when backends/mongodb/mongosaver/testdata/js/node_modules and node are
# present. Everything is stopped and removed on exit.
#
#   scripts/bench-mongo.sh
#   CP_ARGS="--duration 4s --concurrency 8" scripts/bench-mongo.sh
#
# Tunables (environment): CP_ARGS (extra flags of the bench, e.g. --ops),
# NO_JS (set: no LangGraph.js column), PG_BIN (server binaries, default /usr/lib/postgresql/15/bin).
#
# What FerretDB v1 still does in Go on either backend: sorts (the latest
# checkpoint, list pages) and $in/$or filters are applied to every document
# of the thread, so reads of long threads cost the server in proportion to
# the thread, for every client alike.
set -euo pipefail
cd "$(dirname "$0")/.."

PG_BIN="${PG_BIN:-/usr/lib/postgresql/15/bin}"
CP_ARGS="${CP_ARGS:-}"

dir="$(mktemp -d /tmp/memvault-bench-mongo-XXXXXX)"
as_pg=()
if [[ "$(id -u)" -eq 0 ]]; then
	chown postgres "$dir"
	as_pg=(runuser -u postgres --)
fi
ferret_pid=""
stop() {
	if [[ -n "$ferret_pid" ]]; then
		kill "$ferret_pid" 2>/dev/null || true
		wait "$ferret_pid" 2>/dev/null || true
	fi
	if [[ -f "$dir/data/postmaster.pid" ]]; then
		"${as_pg[@]}" "$PG_BIN/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
	fi
	rm -rf "$dir"
}
trap stop EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port="$(free_port)"
"${as_pg[@]}" "$PG_BIN/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 --locale=C --no-sync >/dev/null
"${as_pg[@]}" "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/log" -w \
	-o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c shared_buffers=256MB" start >/dev/null
"$PG_BIN/psql" -q -h 127.0.0.1 -p "$port" -U postgres -c "CREATE DATABASE ferretdb" postgres

(cd backends/mongodb && go build -o "$dir/ferretsrv" ./mongotest/ferretsrv)
(cd cmd/memvault && go build -o "$dir/memvault" .)

# ferretsrv prints its URI, then runs until its standard input closes: a
# FIFO held open by this script.
mkfifo "$dir/ferret.in"
"$dir/ferretsrv" -postgresql-url "postgres://postgres@127.0.0.1:$port/ferretdb?sslmode=disable" \
	<"$dir/ferret.in" >"$dir/ferret.out" 2>"$dir/ferret.err" &
ferret_pid=$!
exec 3>"$dir/ferret.in"
uri=""
for _ in $(seq 600); do
	uri="$(head -n1 "$dir/ferret.out" 2>/dev/null || true)"
	[[ "$uri" == mongodb://* ]] && break
	sleep 0.1
done
if [[ "$uri" != mongodb://* ]]; then
	echo "bench-mongo: FerretDB did not start: $(cat "$dir/ferret.err")" >&2
	exit 1
fi
echo "bench-mongo: FerretDB v1.24.2 (PostgreSQL backend, fsync off) at $uri; load: $(uptime)"

jsdir=backends/mongodb/mongosaver/testdata/js
js=()
if [[ -n "${NO_JS:-}" ]]; then
	echo "bench-mongo: NO_JS set: no LangGraph.js column"
elif [[ -d "$jsdir/node_modules" ]] && command -v node >/dev/null 2>&1; then
	js=(--js "$jsdir")
else
	echo "bench-mongo: $jsdir/node_modules or node missing: no LangGraph.js column (npm ci there adds it)"
fi
# shellcheck disable=SC2086 # CP_ARGS holds several flags
"$dir/memvault" bench checkpointer --dsn "$uri" "${js[@]}" $CP_ARGS
echo "bench-mongo: load: $(uptime)"
