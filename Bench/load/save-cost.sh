#!/usr/bin/env bash
# What one save costs the store daemon in a burst: heap allocations (counted, Bench/load/alloc-count.c,
# so the figure does not move with the machine's load) and CPU time (from /proc, which does). The same
# `zonertc bench load` (this tree's) runs against a fresh daemon twice, with 1 burst and with 1 + EXTRA
# bursts of DEVICES saves; the difference over EXTRA x DEVICES saves leaves setup (users, zones,
# subscriptions, push streams) out: HTTP parse, API, store, notification and push event are what remain.
#
#   Bench/load/save-cost.sh [--old BINARY] [--rounds R] [DEVICES [EXTRA]]   (defaults: 3 rounds, 1000, 4)
#
# With --old, BINARY's daemon is measured too, alternating with this tree's in every round. Needs a C
# compiler (cc) for the allocation counter.
set -euo pipefail
cd "$(dirname "$0")/../.."
. Bench/common.sh
old=""; rounds=3
while [ $# -gt 0 ]; do
    case "$1" in
        --old) old="$2"; shift 2 ;;
        --rounds) rounds="$2"; shift 2 ;;
        -*) echo "usage: $0 [--old BINARY] [--rounds R] [DEVICES [EXTRA]]" >&2; exit 2 ;;
        *) break ;;
    esac
done
n="${1:-1000}"
extra="${2:-4}"
if bench_quick; then n=20; extra=1; rounds=1; fi
case "$n$extra$rounds" in *[!0-9]*) echo "save-cost: DEVICES, EXTRA and --rounds are whole numbers" >&2; exit 2 ;; esac
[ -z "$old" ] || [ -x "$old" ] || { echo "save-cost: --old must name a zonertc binary" >&2; exit 2; }
command -v cc >/dev/null || { echo "save-cost: a C compiler (cc) is needed for the allocation counter" >&2; exit 1; }
bench_machine
bin="$(bench_zonertc)"
work="$(mktemp -d /tmp/zonertc-save-cost-XXXXXX)"
daemon_pid=""
trap '[ -z "$daemon_pid" ] || kill "$daemon_pid" 2>/dev/null; rm -rf "$work" 2>/dev/null || true' EXIT
cc -O2 -shared -fPIC -o "$work/alloc-count.so" Bench/load/alloc-count.c -lpthread

# run DAEMON BURSTS: the daemon's allocations and CPU ticks after a bench of BURSTS bursts, into $work/result.
run() {
    local daemon="$1" bursts="$2" url="" count
    ZONERTC_ALLOC_COUNT_FILE="$work/count" LD_PRELOAD="$work/alloc-count.so" "$daemon" store serve --memory \
        --listen 127.0.0.1:0 --max-connections $((n + 2048)) --max-connections-per-address 100000 \
        >"$work/daemon.log" 2>&1 &
    daemon_pid=$!
    for _ in $(seq 300); do
        url=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$work/daemon.log" | head -1)
        [ -n "$url" ] && break
        sleep 0.1
    done
    [ -n "$url" ] || { echo "save-cost: the daemon did not start: $(cat "$work/daemon.log")" >&2; exit 1; }
    "$bin" bench load --url "$url" --pid "$daemon_pid" --devices "$n" --bursts "$bursts" --hold 0s \
        --request-connections 32 --no-verify >"$work/bench.txt" 2>&1 \
        || { echo "save-cost: the bench failed: $(cat "$work/bench.txt")" >&2; exit 1; }
    sleep 0.3  # the counter file is rewritten every 100 ms
    count=$(cat "$work/count")
    echo "$count $(awk '{print $14 + $15}' "/proc/$daemon_pid/stat")" >"$work/result"
    kill -TERM "$daemon_pid"
    wait "$daemon_pid" || true
    daemon_pid=""
}

# measure NAME DAEMON: one round's figures for one build.
measure() {
    local a b ticks a1 t1 a2 t2
    run "$2" 1
    read -r a1 t1 <"$work/result"
    run "$2" $((1 + extra))
    read -r a2 t2 <"$work/result"
    a=$(( (a2 - a1) / (extra * n) ))
    ticks=$(getconf CLK_TCK)
    b=$(awk -v t1="$t1" -v t2="$t2" -v hz="$ticks" -v s=$((extra * n)) 'BEGIN { printf "%.0f", (t2 - t1) / hz * 1e6 / s }')
    echo "$1: $a allocations and $b µs CPU per save (load $(cut -d' ' -f1 /proc/loadavg))"
}

echo "devices: $n, extra bursts: $extra, rounds: $rounds"
for r in $(seq "$rounds"); do
    echo "round $r"
    [ -z "$old" ] || measure "  old ($old)" "$old"
    measure "  this ($bin)" "$bin"
done
bench_machine
