#!/usr/bin/env bash
# Group calls in real processes, in release: `zonertc call FILE --peers 5` (a store daemon and five
# `zonertc peer`s in one room's mesh, 20 directed streams checked frame-identical) against
# `--peers 2` (today's call of two), alternating, in the same run. The figure compared is the time to
# all pairs: for --peers 5, how long after joining the slowest member had a frame from every other;
# for --peers 2, the receiver's first frame after its start. Issue 28's goal: the first ≤ 2× the second.
#
#   Bench/mesh-call.sh [ROUNDS]                 (default 5; builds a release zonertc first)
#   ZONERTC_BIN=PATH Bench/mesh-call.sh [ROUNDS]
# With ZONERTC_BENCH_QUICK=1 (Bench/common.sh): one round of --peers 3 against --peers 2.
set -euo pipefail
cd "$(dirname "$0")/.."
source Bench/common.sh
rounds="${1:-5}"
peers=5
if bench_quick; then rounds=1; peers=3; fi
bin=$(bench_zonertc)
bench_machine
file=Fixtures/vp8-320x240-60.ivf
work="$(mktemp -d /tmp/zonertc-mesh-bench.XXXXXX)"
trap 'rm -rf "$work"' EXIT
for round in $(seq 1 "$rounds"); do
    "$bin" call "$file" --json >"$work/two-$round.json"
    "$bin" call "$file" --peers "$peers" --json >"$work/mesh-$round.json"
done
python3 - "$work" "$rounds" "$peers" <<'PY'
import json, sys, statistics
work, rounds, peers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
two, mesh, streams = [], [], []
for r in range(1, rounds + 1):
    t = json.load(open(f"{work}/two-{r}.json"))
    m = json.load(open(f"{work}/mesh-{r}.json"))
    assert t["verdict"]["ok"], t["verdict"]["text"]
    assert m["verdict"]["ok"], m["verdict"]["text"]
    two.append(t["bob"]["firstFrameMs"])
    mesh.append(m["timeToAllPairsMs"])
    streams.append(sum(1 for s in m["streams"] if s["identical"]))
p2, pn = statistics.median(two), statistics.median(mesh)
print(f"--peers 2: first frame median {p2:.1f} ms (rounds: {', '.join(f'{v:.1f}' for v in two)})")
print(f"--peers {peers}: time to all pairs median {pn:.1f} ms (rounds: {', '.join(f'{v:.1f}' for v in mesh)}); "
      f"{min(streams)} of {peers * (peers - 1)} directed streams identical in every round")
print(f"ratio {pn / p2:.2f}× (goal ≤ 2×)")
PY
