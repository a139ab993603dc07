#!/usr/bin/env bash
# Capacity figures of `zonertc store serve` with `zonertc bench load`, in one run, the machine printed
# beside them: N idle push streams and a burst of N saves (one per device, each to its own user's zone)
# on one daemon in memory and on one on its journal (the anchor of the next); the same burst on two
# daemons sharing a throwaway PostgreSQL cluster (bench_postgres, Bench/common.sh); then CALLS
# concurrent calls' signaling on one daemon, after lone calls that give the single-call figure. Between
# them, overload: saves at about twice one daemon's capacity, then at a quarter of that rate.
#
#   Bench/load/capacity.sh [DEVICES [CALLS]]      (defaults 10000 and 1000; needs postgresql and libpq-dev
#                                                  for the PostgreSQL figure, else it is skipped)
set -euo pipefail
cd "$(dirname "$0")/../.."
. Bench/common.sh
n="${1:-10000}"
calls="${2:-1000}"
hold=5s; call_hold=20s; lone=20
# About twice what one daemon took in the burst on a quiet machine (6,500 saves/s), for 20 s.
overload_rate=12000; overload_for=20s; recover_for=10s
if bench_quick; then
    n=20; calls=4; hold=1s; call_hold=1s; lone=2; overload_rate=200; overload_for=2s; recover_for=2s
fi
bench_machine
echo "devices: $n, calls: $calls"
bin="$(bench_zonertc PostgreSQL)"
work="$(mktemp -d /tmp/zonertc-capacity-XXXXXX)"
bench_postgres_pid=""
trap '[ -z "$bench_postgres_pid" ] || { kill -INT "$bench_postgres_pid"; wait "$bench_postgres_pid"; } 2>/dev/null
      rm -rf "$work"' EXIT

echo "== one daemon, in memory"
"$bin" bench load --devices "$n" --hold "$hold"
echo "== one daemon, journal (fsync batch): the anchor of the two daemons below"
"$bin" bench load --devices "$n" --hold "$hold" --journal
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    echo "== two daemons on PostgreSQL"
    bench_postgres "$work"
    "$bin" bench load --devices "$n" --hold "$hold" --daemons 2 --postgres "$bench_postgres_url"
else
    echo "== two daemons on PostgreSQL: skipped (PostgreSQL is not installed)"
fi
echo "== overload: saves at twice the capacity, shed past 256 requests in flight; then a quarter of that rate"
"$bin" bench load --devices "$n" --hold "$hold" --bursts 0 --rate "$overload_rate" --duration "$overload_for" \
    --request-connections 1024 --max-requests-in-flight 256 --recover "$recover_for"
echo "== calls on one daemon in memory (lan push)"
"$bin" bench load --devices 0 --calls "$calls" --call-hold "$call_hold" --lone-calls "$lone"
bench_machine
