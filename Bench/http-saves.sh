#!/usr/bin/env bash
# Durable saves/s over HTTP on loopback: `zonertc store serve --fsync batch` loaded by wrk (a
# separate program) with 16 connections, each request saving one new record; then checks that
# every acknowledged record is in the store.
#
#   Bench/http-saves.sh [SECONDS]       (needs wrk: apt-get install wrk; see Bench/common.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
source Bench/common.sh
seconds="${1:-5}"
if bench_quick; then seconds=1; fi
command -v wrk >/dev/null || { echo "http-saves: wrk is not installed (apt-get install wrk)" >&2; exit 1; }
bin=$(bench_zonertc)
bench_machine
data="$(mktemp -d)"
out="$(mktemp)"
"$bin" store serve --listen 127.0.0.1:0 --data "$data" --fsync batch >"$out" 2>/dev/null &
daemon=$!
trap 'kill $daemon 2>/dev/null; wait $daemon 2>/dev/null; rm -rf "$data" "$out"' EXIT
for _ in $(seq 50); do grep -q listening "$out" && break; sleep 0.1; done
addr="$(grep -o '127\.0\.0\.1:[0-9]*' "$out")"
token="$(curl -s -X POST "http://$addr/auth/register" -d '{"userName":"bench"}' \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')"
curl -s -X POST "http://$addr/database/1/iCloud.zonertc/development/private/zones/modify" \
  -H "Authorization: Bearer $token" \
  -d '{"operations":[{"operationType":"create","zone":{"zoneID":{"zoneName":"room_wrk"}}}]}' >/dev/null
ZONERTC_TOKEN="$token" wrk -t 2 -c 16 -d "${seconds}s" --latency -s Bench/wrk/saves.lua "http://$addr" \
  | tee /dev/stderr | grep -E "requests in" >/dev/null
records="$("$bin" store inspect --data "$data" --json \
  | python3 -c 'import json,sys; r=json.load(sys.stdin); print(sum(z["records"] for z in r["zones"]))')"
echo "http-saves: ${records} records in the store after the run"
bench_machine
