#!/usr/bin/env bash
# The PostgreSQL backend's figures beside the journal's, in one run: a throwaway cluster (initdb as
# the postgres user, a Unix socket in a temporary directory, no TCP; fsync and synchronous_commit
# on, as a durable deployment has them), then `zonertc-bench http` (one daemon on its journal) and
# `zonertc-bench postgres` (1, 2 and 4 daemons on the database; push latency across two).
#
#   Bench/postgres.sh [--json] [--daemons N[,N…]]      (needs postgresql and libpq-dev; Bench/common.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
source Bench/common.sh
bindir="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
[ -x "$bindir/initdb" ] || { echo "postgres.sh: PostgreSQL is not installed (apt-get install postgresql)" >&2
                             exit 1; }
bench=$(bench_zonertc_bench PostgreSQL)
bench_machine
dir="$(mktemp -d /tmp/zonertc-pgbench-XXXXXX)"
as_owner=()
if [ "$(id -u)" = 0 ]; then
    chown postgres: "$dir"
    as_owner=(setpriv --reuid=postgres --regid=postgres --init-groups --)
fi
"${as_owner[@]}" "$bindir/initdb" -D "$dir/data" -A trust -U postgres >/dev/null
"${as_owner[@]}" "$bindir/postgres" -D "$dir/data" -k "$dir" -c listen_addresses= -c max_connections=200 \
    >"$dir/log" 2>&1 &
server=$!
trap 'kill -INT $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 100); do grep -qs "ready to accept connections" "$dir/log" && break; sleep 0.1; done
"$bench" http postgres --postgres "postgresql:///postgres?host=$dir&user=postgres" "$@"
bench_machine
