#!/usr/bin/env bash
# The PostgreSQL backend's figures beside the journal's, in one run: a throwaway cluster
# (bench_postgres_cluster in Bench/common.sh), then `zonertc-bench http` (one daemon on its journal)
# and `zonertc-bench postgres` (1, 2 and 4 daemons on the database; push latency across two).
#
#   Bench/postgres.sh [--json] [--daemons N[,N…]]      (needs postgresql and libpq-dev; Bench/common.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
source Bench/common.sh
bench=$(bench_zonertc_bench PostgreSQL)
bench_machine
dir="$(mktemp -d /tmp/zonertc-pgbench-XXXXXX)"
trap 'bench_postgres_stop; rm -rf "$dir"' EXIT
bench_postgres_cluster "$dir"
"$bench" http postgres --postgres "$BENCH_POSTGRES_URL" "$@"
bench_machine
