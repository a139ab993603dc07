#!/usr/bin/env bash
# Asset round trips through `zonertc store serve` (a release build), as a CloudKit web client makes
# them: `assets/upload` for an upload URL, the POST of the file's bytes to it, `records/modify` saving
# the receipt as an ASSETID field, and a GET of the downloadURL the answer carries (checked byte for
# byte). For 64 KB and 4 MB files, on the journal (`--data`) and on PostgreSQL (a throwaway cluster,
# Bench/common.sh, when it is installed). Prints MB/s of the upload and the download, and p50/p99 of
# each step and of the whole round trip, one connection, one file at a time.
#
#   Bench/assets.sh [ROUNDS]      (default 40 a size; needs python3, PostgreSQL optional)
set -euo pipefail
cd "$(dirname "$0")/.."
source Bench/common.sh
rounds="${1:-40}"
if bench_quick; then rounds=3; fi
postgres=0
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then postgres=1; fi
bin=$(bench_zonertc "$([ $postgres = 1 ] && echo PostgreSQL)")
bench_machine
work="$(mktemp -d /tmp/zonertc-assetbench-XXXXXX)"
chmod 755 "$work"
daemon=""
bench_postgres_pid=""
trap '[ -z "$daemon" ] || { kill "$daemon"; wait "$daemon"; } 2>/dev/null
      [ -z "$bench_postgres_pid" ] || { kill -INT "$bench_postgres_pid"; wait "$bench_postgres_pid"; } 2>/dev/null
      rm -rf "$work"' EXIT

# measure LABEL SERVE-OPTIONS…: one daemon with those options, every size measured against it.
measure() {
    local label="$1"; shift
    "$bin" store serve --listen 127.0.0.1:0 "$@" >"$work/serve.out" 2>"$work/serve.err" &
    daemon=$!
    for _ in $(seq 100); do grep -q listening "$work/serve.out" && break; sleep 0.1; done
    local addr
    addr="$(grep -o '127\.0\.0\.1:[0-9]*' "$work/serve.out" | head -1)"
    [ -n "$addr" ] || { echo "assets: the daemon did not start:" >&2; cat "$work/serve.err" >&2; exit 1; }
    python3 - "$addr" "$rounds" "$label" <<'PY'
import http.client, json, os, statistics, sys, time
addr, rounds, label = sys.argv[1], int(sys.argv[2]), sys.argv[3]
host, port = addr.split(":")
conn = http.client.HTTPConnection(host, int(port), timeout=60)
def call(method, path, body=None, headers=None):
    conn.request(method, path, body=body, headers=headers or {})
    r = conn.getresponse()
    data = r.read()
    if r.status != 200:
        sys.exit(f"assets: {method} {path.split('?')[0]}: {r.status} {data[:200]!r}")
    return data
token = json.loads(call("POST", "/auth/register", json.dumps({"userName": "assetbench"})))["token"]
auth = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
base = "/database/1/iCloud.zonertc/development/private/"
zone = {"zoneName": "assets"}
call("POST", base + "zones/modify", json.dumps({"operations": [{"operationType": "create", "zone": {"zoneID": zone}}]}),
     auth)
def path(url):
    return url[url.index("/", len("http://")):] if url.startswith("http://") else url
def pct(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))] * 1000
for size in (64 * 1024, 4 * 1024 * 1024):
    file = os.urandom(size)
    steps = {"ask": [], "upload": [], "save": [], "download": [], "round trip": []}
    for i in range(rounds):
        name = f"r{size}-{i}"
        t0 = time.perf_counter()
        asked = json.loads(call("POST", base + "assets/upload", json.dumps(
            {"zoneID": zone, "tokens": [{"recordName": name, "recordType": "Blob", "fieldName": "file"}]}), auth))
        t1 = time.perf_counter()
        single = json.loads(call("POST", path(asked["tokens"][0]["url"]), file,
                                 {"Content-Type": "application/octet-stream"}))["singleFile"]
        t2 = time.perf_counter()
        saved = json.loads(call("POST", base + "records/modify", json.dumps({"zoneID": zone, "operations": [
            {"operationType": "create", "record": {"recordName": name, "recordType": "Blob",
                                                   "fields": {"file": {"value": single, "type": "ASSETID"}}}}]}),
                                auth))
        t3 = time.perf_counter()
        url = saved["records"][0]["fields"]["file"]["value"]["downloadURL"]
        got = call("GET", path(url))
        t4 = time.perf_counter()
        if got != file:
            sys.exit(f"assets: the downloadURL of {name} served other bytes")
        for key, value in zip(steps, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t4 - t0)):
            steps[key].append(value)
    mb = size / 1e6
    kb = f"{size // 1024} KB" if size < 1 << 20 else f"{size >> 20} MB"
    print(f"assets {label} {kb}: {rounds} round trips; upload {mb / statistics.median(steps['upload']):.1f} MB/s, "
          f"download {mb / statistics.median(steps['download']):.1f} MB/s (medians)")
    for key, values in steps.items():
        print(f"  {key:<10} p50 {pct(values, 50):8.2f} ms   p99 {pct(values, 99):8.2f} ms")
PY
    kill "$daemon"; wait "$daemon" 2>/dev/null || true
    daemon=""
}

measure journal --data "$work/journal"
if [ $postgres = 1 ]; then
    bench_postgres "$work"
    measure postgres --postgres "$bench_postgres_url"
else
    echo "assets: PostgreSQL is not installed: the journal only" >&2
fi
bench_machine
