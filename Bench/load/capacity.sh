#!/usr/bin/env bash
# Capacity figures of `zonertc store serve` with `zonertc bench load`, the CPU model printed beside
# them: N idle push streams and a burst of N saves (one per device, each to its own user's zone) on
# one daemon in memory and one on its journal; then the same on two daemons sharing a throwaway
# PostgreSQL cluster (as Bench/postgres.sh makes it).
#
#   Bench/load/capacity.sh [DEVICES]      (default 10000; needs postgresql and libpq-dev)
set -euo pipefail
cd "$(dirname "$0")/../.."
. Bench/common.sh
n="${1:-10000}"
if bench_quick; then n=20; fi
bench_machine
echo "devices: $n"
bin="$(bench_zonertc PostgreSQL)"
work="$(mktemp -d /tmp/zonertc-capacity-XXXXXX)"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

echo "== one daemon, in memory"
"$bin" bench load --devices "$n" --hold 5s

echo "== one daemon, journal (fsync batch)"
"$bin" store serve --data "$work/journal" --listen 127.0.0.1:0 --max-connections $((n + 2048)) \
    --max-connections-per-address 100000 --summary-interval 0 >"$work/journal.out" 2>"$work/journal.err" &
pids+=($!)
for _ in $(seq 100); do grep -qs "listening on" "$work/journal.out" && break; sleep 0.1; done
url="$(grep -o 'http://[0-9.:]*' "$work/journal.out" | head -1)"
"$bin" bench load --devices "$n" --hold 5s --url "$url" --pid "${pids[0]}"

bindir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
if [ -x "$bindir/initdb" ]; then
    echo "== two daemons on PostgreSQL"
    as_owner=()
    if [ "$(id -u)" = 0 ]; then
        chown postgres: "$work"
        as_owner=(setpriv --reuid=postgres --regid=postgres --init-groups --)
    fi
    "${as_owner[@]}" "$bindir/initdb" -D "$work/pg" -A trust -U postgres >/dev/null
    "${as_owner[@]}" "$bindir/postgres" -D "$work/pg" -k "$work" -c listen_addresses= -c max_connections=200 \
        >"$work/pg.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 100); do grep -qs "ready to accept connections" "$work/pg.log" && break; sleep 0.1; done
    "$bin" bench load --devices "$n" --hold 5s --daemons 2 --postgres "postgresql:///postgres?host=$work&user=postgres"
else
    echo "== two daemons on PostgreSQL: skipped (PostgreSQL is not installed)"
fi
