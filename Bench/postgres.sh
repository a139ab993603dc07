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
bench=$(bench_zonertc_bench PostgreSQL)
bench_machine
dir="$(mktemp -d /tmp/zonertc-pgbench-XXXXXX)"
server=""
trap '[ -z "$server" ] || { kill -INT $server 2>/dev/null; wait $server 2>/dev/null; }; rm -rf "$dir"' EXIT
bench_postgres "$dir"
server=$bench_postgres_pid
"$bench" http postgres --postgres "$bench_postgres_url" "$@"
bench_machine
