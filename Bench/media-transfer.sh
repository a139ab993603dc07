#!/usr/bin/env bash
# The media pipeline on loopback, in release:
#   1. the ceiling: iperf3 UDP, 1200-byte datagrams, unlimited rate, 5 s;
#   2. unpaced: a 720p VP8 IVF through `zonertc media send --pace max` → `zonertc media receive`,
#      goodput = frame bytes delivered / (last frame − first packet) at the receiver, checksums
#      compared with the sender's;
#   3. paced: a 720p VP8 IVF at 2.5 Mbit/s through `--pace realtime`, per-frame latency from the
#      sender's clock (RTCP sender reports map each RTP timestamp to the sender's wall time; both
#      processes read the same clock) to the frame leaving the receiver's jitter buffer.
# The input files are made with ffmpeg into /tmp (kept for the next run, never committed).
#
#   Bench/media-transfer.sh [RUNS]       (needs ffmpeg and iperf3: apt-get install ffmpeg iperf3)
#   ZONERTC_BIN=PATH Bench/media-transfer.sh [RUNS]   (a release zonertc built already; no build)
# With ZONERTC_BENCH_QUICK=1 (Bench/common.sh): one run of 10-frame files, iperf3 for 1 s.
set -euo pipefail
cd "$(dirname "$0")/.."
source Bench/common.sh
runs="${1:-3}"
frames=300
iperf_seconds=5
if bench_quick; then runs=1; frames=10; iperf_seconds=1; fi
for tool in ffmpeg iperf3 python3; do
    command -v "$tool" >/dev/null || { echo "media-transfer: $tool is not installed" >&2; exit 1; }
done
bin=$(bench_zonertc WebRTC,PostgreSQL)
bench_machine
work="$(mktemp -d /tmp/zonertc-media-bench.XXXXXX)"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

suffix=""
[ "$frames" = 300 ] || suffix="-$frames"
unpaced=/tmp/zonertc-bench-720p-vp8-noisy$suffix.ivf
paced=/tmp/zonertc-bench-720p-vp8-2500k$suffix.ivf
if [ ! -s "$unpaced" ]; then
    echo "making $unpaced ($frames frames of 720p VP8 with noise, about 0.7 MB each)…" >&2
    ffmpeg -hide_banner -loglevel error -f lavfi -i "testsrc2=size=1280x720:rate=30,noise=alls=30:allf=t" \
        -frames:v "$frames" -c:v libvpx -b:v 200M -minrate 200M -maxrate 200M -bufsize 20M -deadline realtime \
        -cpu-used 8 -g 30 -lag-in-frames 0 -auto-alt-ref 0 -y "$unpaced"
fi
if [ ! -s "$paced" ]; then
    echo "making $paced ($frames frames of 720p VP8 at 2.5 Mbit/s)…" >&2
    ffmpeg -hide_banner -loglevel error -f lavfi -i "testsrc2=size=1280x720:rate=30" -frames:v "$frames" \
        -c:v libvpx -b:v 2500k -deadline realtime -cpu-used 8 -g 30 -lag-in-frames 0 -auto-alt-ref 0 -y "$paced"
fi

field() { python3 -c "import json,sys; d=json.load(open('$1')); print(eval('d' + sys.argv[1]))" "$2"; }

echo "== iperf3 -u on loopback (the ceiling, ${iperf_seconds} s)"
iperf3 -s -1 -B 127.0.0.1 -p 5301 >/dev/null 2>&1 &
pids+=($!)
sleep 0.5
iperf3 -c 127.0.0.1 -p 5301 -u -b 0 -l 1200 -t "$iperf_seconds" -J >"$work/iperf.json"
python3 - "$work/iperf.json" <<'PY'
import json, sys
end = json.load(open(sys.argv[1]))["end"]
s = end["sum"]
receiver = end.get("sum_received", s)
print("iperf3: sent %.2f Gbit/s, received %.2f Gbit/s, lost %.1f %% (%d of %d datagrams)" % (
    s["bits_per_second"] / 1e9, receiver["bits_per_second"] / 1e9, s.get("lost_percent", 0),
    s.get("lost_packets", 0), s.get("packets", 0)))
PY

# One transfer: FILE PACE PORT LATENCY; leaves both JSON summaries in $work.
transfer() {
    local file="$1" pace="$2" port="$3" latency="$4"
    "$bin" media send "$file" --to "127.0.0.1:$port" --pace "$pace" --seed "$port" --sdp-out "$work/s.sdp" \
        --sdp-only
    "$bin" media receive --sdp "$work/s.sdp" --record "$work/out.ivf" --timeout 10s --latency "$latency" --json \
        >"$work/recv.json" 2>"$work/recv.err" &
    local receiver=$!
    pids+=("$receiver")
    for _ in $(seq 100); do grep -q listening "$work/recv.err" && break; sleep 0.05; done
    "$bin" media send "$file" --to "127.0.0.1:$port" --pace "$pace" --seed "$port" --json >"$work/send.json" \
        2>/dev/null
    wait "$receiver"
    if [ "$(field "$work/send.json" '["checksum"]')" = "$(field "$work/recv.json" '["checksum"]')" ]; then
        echo "identical" >"$work/verdict"
    else
        echo "NOT identical ($(field "$work/recv.json" '["lost"]') packets lost for good)" >"$work/verdict"
    fi
}

echo "== unpaced: zonertc media send --pace max → zonertc media receive ($(du -m "$unpaced" | cut -f1) MB)"
for run in $(seq "$runs"); do
    # A bulk transfer can wait for repairs: a 1 s jitter buffer rides out this process being descheduled.
    transfer "$unpaced" max $((41000 + 2 * run)) 1s
    python3 - "$work/send.json" "$work/recv.json" "$(cat "$work/verdict")" <<'PY'
import json, sys
s, r = (json.load(open(p)) for p in sys.argv[1:3])
print("goodput %.2f Gbit/s at the receiver (%d frames, %d packets in %.0f ms; sender %.2f Gbit/s); "
      "repaired %d packets with %d NACKs; %s" % (
    r["goodputMbps"] / 1000, r["frames"], r["packets"], r["durationMs"], s["goodputMbps"] / 1000,
    r["recovered"], r["nacksSent"], sys.argv[3]))
PY
done

echo "== paced: zonertc media send --pace realtime, 720p VP8 at 2.5 Mbit/s, $frames frames"
transfer "$paced" realtime 41100 200ms
python3 - "$work/recv.json" "$(cat "$work/verdict")" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
l = r["latency"]
print("per-frame latency sender → receiver: p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms over %d frames; %s"
      % (l["p50Ms"], l["p90Ms"], l["p99Ms"], l["maxMs"], l["count"], sys.argv[2]))
PY
bench_machine
