#!/usr/bin/env bash
# records/modify and changes/zone over HTTP, this tree's daemon against an older build's, alternated
# in one run on one machine: on the journal (`--data`, fsync batch) and on PostgreSQL (`--postgres`,
# a throwaway cluster: initdb into a temporary directory, a Unix socket, no TCP).
#
#   Bench/modify-compare.sh --old BINARY [--new BINARY] [--rounds R] [--seconds S] [--no-postgres]
#
# ZONERTC_AGAINST_BIN=PATH stands for --old, ZONERTC_BIN for --new; ZONERTC_BENCH_QUICK=1 makes it a
# smoke run of one round of 1 s measurements (Bench/common.sh).
#
# Each round runs, for each build and backend, a fresh daemon and wrk (a separate program) on loopback:
#   saves    16 connections, each request creates one new record           (Bench/wrk/saves.lua)
#   merges   16 connections, each request forceUpdates one of 32 records   (Bench/wrk/updates.lua)
#   feed     1 connection, each request fetches a 100-record zone's feed   (Bench/wrk/changes.lua)
# and prints requests/s and the daemon's CPU µs per request (saves, merges), the feed's p50/p99
# latency; then the median of each over the rounds. BINARY is a `zonertc` built with
# `--traits PostgreSQL` (an older commit's: build it in a worktree of that commit). --new defaults to
# this tree's release build, built first.
set -euo pipefail
cd "$(dirname "$0")/.."
source Bench/common.sh
old="${ZONERTC_AGAINST_BIN:-}"
new=""
rounds=3
seconds=5
postgres=1
while [ $# -gt 0 ]; do
    case "$1" in
        --old) old="$2"; shift 2 ;;
        --new) new="$2"; shift 2 ;;
        --rounds) rounds="$2"; shift 2 ;;
        --seconds) seconds="$2"; shift 2 ;;
        --no-postgres) postgres=0; shift ;;
        *) echo "usage: $0 --old BINARY [--new BINARY] [--rounds R] [--seconds S] [--no-postgres]" >&2; exit 2 ;;
    esac
done
if bench_quick; then rounds=1; seconds=1; fi
[ -n "$old" ] && [ -x "$old" ] || { echo "modify-compare: --old must name a zonertc binary" >&2; exit 2; }
case "$rounds$seconds" in *[!0-9]*) echo "modify-compare: --rounds and --seconds take whole numbers" >&2; exit 2 ;; esac
command -v wrk >/dev/null || { echo "modify-compare: wrk is not installed (apt-get install wrk)" >&2; exit 1; }
[ -n "$new" ] || new="$(bench_zonertc PostgreSQL)"

tmp="$(mktemp -d /tmp/zonertc-modify-XXXXXX)"
daemon=""
server=""
cleanup() {
    [ -n "$daemon" ] && { kill "$daemon" 2>/dev/null; wait "$daemon" 2>/dev/null || true; }
    [ -n "$server" ] && { kill -INT "$server" 2>/dev/null; wait "$server" 2>/dev/null || true; }
    rm -rf "$tmp"
}
trap cleanup EXIT

bindir=""
if [ "$postgres" = 1 ]; then
    bench_postgres "$tmp"
    server=$bench_postgres_pid
    bindir=$bench_postgres_bin
fi

api=/database/1/iCloud.zonertc/development/private
# Runs one daemon of BINARY on BACKEND (journal|postgres) and prints "saves merges p50 p99".
measure() {
    local binary="$1" backend="$2" run="$3" store
    if [ "$backend" = postgres ]; then
        "$bindir/psql" -X -q -h "$tmp" -U postgres -d postgres -c "CREATE DATABASE $run" >/dev/null
        store=(--postgres "postgresql:///$run?host=$tmp&user=postgres")
    else
        store=(--data "$tmp/$run" --fsync batch)
    fi
    "$binary" store serve --listen 127.0.0.1:0 "${store[@]}" >"$tmp/$run.out" 2>/dev/null &
    daemon=$!
    for _ in $(seq 100); do grep -qs listening "$tmp/$run.out" && break; sleep 0.1; done
    local addr token
    addr="$(grep -o '127\.0\.0\.1:[0-9]*' "$tmp/$run.out")"
    token="$(curl -s -X POST "http://$addr/auth/register" -d '{"userName":"bench"}' \
        | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')"
    post() { curl -s -X POST "http://$addr$api/$1" -H "Authorization: Bearer $token" -d "$2" >/dev/null; }
    post zones/modify '{"operations":[{"operationType":"create","zone":{"zoneID":{"zoneName":"room_wrk"}}},
                                       {"operationType":"create","zone":{"zoneID":{"zoneName":"room_feed"}}}]}'
    post records/modify "$(python3 -c 'import json; print(json.dumps({"zoneID": {"zoneName": "room_feed"},
        "operations": [{"operationType": "create", "record": {"recordName": "F%d" % i, "recordType": "SignalIceChunk",
        "fields": {"seq": {"value": i, "type": "INT64"},
                   "candidate": {"value": "candidate:1 1 udp 1 127.0.0.1 5 typ host", "type": "STRING"}}}}
        for i in range(100)]}))')"
    # Requests/s, and the daemon's CPU (user + system, /proc/PID/stat) per request in µs: the CPU
    # figure holds still on a machine others load, the rate does not.
    load() {
        local before after out
        before="$(awk '{print $14 + $15}' "/proc/$daemon/stat")"
        out="$(ZONERTC_TOKEN="$token" wrk -t 2 -c 16 -d "${seconds}s" -s "Bench/wrk/$1" "http://$addr")"
        after="$(awk '{print $14 + $15}' "/proc/$daemon/stat")"
        echo "$out" | awk -v ticks=$((after - before)) -v hz="$(getconf CLK_TCK)" \
            '/requests in/ {n = $1} /Requests\/sec/ {r = int($2)} END {printf "%d %.0f", r, ticks * 1e6 / hz / n}'
    }
    local saves merges feed
    saves="$(load saves.lua)"
    merges="$(load updates.lua)"
    feed="$(ZONERTC_TOKEN="$token" wrk -t 1 -c 1 -d "${seconds}s" --latency -s Bench/wrk/changes.lua "http://$addr" \
        | awk '$1 == "50%" {p50 = $2} $1 == "99%" {p99 = $2} END {print p50, p99}')"
    kill "$daemon"; wait "$daemon" 2>/dev/null || true; daemon=""
    echo "$saves $merges $feed"
}

backends=(journal)
[ "$postgres" = 1 ] && backends+=(postgres)
bench_machine
echo "$rounds rounds of ${seconds} s per measurement; old: $old, new: $new"
printf '%-4s %-8s %-5s %8s %8s %9s %9s %10s %10s\n' round backend build "saves/s" "µs/save" "merges/s" "µs/merge" \
    "feed p50" "feed p99"
results="$tmp/results"
for round in $(seq "$rounds"); do
    for backend in "${backends[@]}"; do
        for build in old new; do
            binary="$old"; [ "$build" = new ] && binary="$new"
            measure "$binary" "$backend" "r${round}_${backend}_$build" >"$tmp/measured"
            read -r saves save_cpu merges merge_cpu p50 p99 <"$tmp/measured"
            printf '%-4s %-8s %-5s %8s %8s %9s %9s %10s %10s\n' "$round" "$backend" "$build" "$saves" "$save_cpu" \
                "$merges" "$merge_cpu" "$p50" "$p99"
            echo "$backend $build $saves $save_cpu $merges $merge_cpu $p50 $p99" >>"$results"
        done
    done
done
echo "medians over $rounds rounds:"
python3 - "$results" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
def ms(text):  # wrk prints 812.00us, 1.23ms, 2.00s
    for unit, scale in (("us", 1e-3), ("ms", 1.0), ("s", 1e3)):
        if text.endswith(unit): return float(text[: -len(unit)]) * scale
    return float(text)
def change(o, n): return f"{(n / o - 1) * 100:+.1f} %"
for backend in dict.fromkeys(r[0] for r in rows):
    med = {}
    for build in ("old", "new"):
        sel = [r for r in rows if r[0] == backend and r[1] == build]
        med[build] = [statistics.median(float(r[i]) for r in sel) for i in range(2, 6)] + \
                     [statistics.median(ms(r[i]) for r in sel) for i in (6, 7)]
    o, n = med["old"], med["new"]
    print(f"{backend:8} saves/s {o[0]:.0f} -> {n[0]:.0f} ({change(o[0], n[0])}), µs/save {o[1]:.0f} -> {n[1]:.0f} "
          f"({change(o[1], n[1])}); merges/s {o[2]:.0f} -> {n[2]:.0f} ({change(o[2], n[2])}), "
          f"µs/merge {o[3]:.0f} -> {n[3]:.0f} ({change(o[3], n[3])}); "
          f"feed p50 {o[4]:.3f} -> {n[4]:.3f} ms, p99 {o[5]:.3f} -> {n[5]:.3f} ms")
PY
