#!/usr/bin/env bash
# Group calls in real processes, in release: `zonertc call FILE --peers 5` (a store daemon and five
# `zonertc peer`s in one room's mesh, 20 directed streams checked frame-identical) against
# `--peers 2 --mesh` (a group call of two, the same driver and the same measure), alternating, in the
# same run. The figure compared is the time to all pairs: how long after its own join the slowest
# member had a frame from every other. Issue 28's goal: the --peers 5 figure ≤ 2× the --peers 2 one.
# Printed beside it: the same end measured from the last member's join (without the spread of the
# members' process start-up).
# Since 2026-11-28 22:40 `zonertc call --peers N` joins its members together (`zonertc peer --join-at stdin`,
# once all are prepared), so the two figures nearly meet.
# Also printed: the call of two's first frame (`zonertc call FILE`, bob's first frame after his start),
# which is a different measure (the later of two processes, whose partner's offer is usually waiting),
# and the median timeline of the --peers 5 calls (ms after the first member was started).
#
# Also printed (builds that report it): the CPU the processes spent in the window, from the joins to all
# pairs — the members' summed, and the store daemon's. With 2 cores the window cannot be shorter than half
# their sum, whatever else is done: this is what says whether a figure is bound by the CPU.
#
#   Bench/mesh-call.sh [--against BINARY]... [ROUNDS]   (default 5; builds a release zonertc first)
#   ZONERTC_BIN=PATH Bench/mesh-call.sh [--against BINARY]... [ROUNDS]
# --against BINARY (repeatable) runs every round with BINARY too, right after the build measured
# (alternating, in the same run), and prints its figures below: the comparison with an earlier build
# under the same load. BINARY may be a script that sets an environment switch and execs a zonertc.
# With ZONERTC_BENCH_QUICK=1 (Bench/common.sh): one round of --peers 3 against --peers 2.
set -euo pipefail
cd "$(dirname "$0")/.."
source Bench/common.sh
against=()
while [ "${1:-}" = --against ]; do against+=("$2"); shift 2; done
rounds="${1:-5}"
peers=5
if bench_quick; then rounds=1; peers=3; fi
bin=$(bench_zonertc)
bins=("$bin")
bins+=("${against[@]}")
bench_machine
file=Fixtures/vp8-320x240-60.ivf
work="$(mktemp -d /tmp/zonertc-mesh-bench.XXXXXX)"
trap 'rm -rf "$work"' EXIT
for round in $(seq 1 "$rounds"); do
    for b in "${!bins[@]}"; do
        mkdir -p "$work/$b"
        "${bins[$b]}" call "$file" --json >"$work/$b/one-$round.json"
        "${bins[$b]}" call "$file" --peers 2 --mesh --json >"$work/$b/two-$round.json"
        "${bins[$b]}" call "$file" --peers "$peers" --json >"$work/$b/mesh-$round.json"
    done
done
echo "load average after the runs: $(cut -d' ' -f1-3 /proc/loadavg)"
for b in "${!bins[@]}"; do
echo "== ${bins[$b]}"
python3 - "$work/$b" "$rounds" "$peers" <<'PY'
import json, os, sys, statistics
work, rounds, peers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
one, two, mesh, streams, timelines = [], [], [], [], []
two_last, mesh_last = [], []
cpu = {"two": [], "mesh": [], "two_store": [], "mesh_store": []}
for r in range(1, rounds + 1):
    o = json.load(open(f"{work}/one-{r}.json"))
    t = json.load(open(f"{work}/two-{r}.json"))
    m = json.load(open(f"{work}/mesh-{r}.json"))
    for key, run in (("two", t), ("mesh", m)):
        c = run.get("cpuToAllPairs")
        if c:
            cpu[key].append(c["membersMs"])
            if c.get("storeMs") is not None: cpu[key + "_store"].append(c["storeMs"])
    for run in (o, t, m):
        assert run["verdict"]["ok"], run["verdict"]["text"]
    one.append(o["bob"]["firstFrameMs"])
    two.append(t["timeToAllPairsMs"])
    mesh.append(m["timeToAllPairsMs"])
    two_last.append(t["timeToAllPairsFromLastJoinMs"])
    mesh_last.append(m["timeToAllPairsFromLastJoinMs"])
    streams.append(sum(1 for s in m["streams"] if s["identical"]))
    timelines.append(m.get("breakdown", []))
fmt = lambda values: ", ".join(f"{v:.1f}" for v in values)
p1, p2, pn = statistics.median(one), statistics.median(two), statistics.median(mesh)
print(f"call of two (zonertc call FILE): bob's first frame median {p1:.1f} ms (rounds: {fmt(one)})")
print(f"--peers 2 --mesh: time to all pairs median {p2:.1f} ms (rounds: {fmt(two)})")
print(f"--peers {peers}: time to all pairs median {pn:.1f} ms (rounds: {fmt(mesh)}); "
      f"{min(streams)} of {peers * (peers - 1)} directed streams identical in every round")
print(f"ratio {pn / p2:.2f}× (goal ≤ 2×)")
l2, ln = statistics.median(two_last), statistics.median(mesh_last)
print(f"from the last member's join (without the start-up spread): --peers 2 --mesh {l2:.1f} ms "
      f"(rounds: {fmt(two_last)}), --peers {peers} {ln:.1f} ms (rounds: {fmt(mesh_last)}); ratio {ln / l2:.2f}×")
keys = ["spawned", "launched", "storeOpened", "roomReady", "mediaRead", "socketsBound", "securityReady", "joined",
        "lastLegStarted", "lastSignaled", "lastConnected", "lastFirstFrame"]
if cpu["two"] and cpu["mesh"]:
    cores = os.cpu_count() or 1
    med = lambda v: statistics.median(v) if v else float("nan")
    print(f"CPU from the joins to all pairs, median: --peers 2 --mesh members {med(cpu['two']):.1f} ms + store "
          f"{med(cpu['two_store']):.1f} ms; --peers {peers} members {med(cpu['mesh']):.1f} ms (rounds: {fmt(cpu['mesh'])}) "
          f"+ store {med(cpu['mesh_store']):.1f} ms; on {cores} cores the --peers {peers} window is at least "
          f"{(med(cpu['mesh']) + med(cpu['mesh_store'])) / cores:.1f} ms")
print(f"--peers {peers} timeline, median over rounds, ms after the first member was started:")
print("  member  " + " ".join(f"{k:>14}" for k in keys))
for i in range(peers):
    rows = [t[i] for t in timelines if len(t) > i]
    cells = []
    for k in keys:
        values = [row[k] for row in rows if row.get(k) is not None]
        cells.append(f"{statistics.median(values):14.1f}" if values else f"{'–':>14}")
    name = rows[0]["member"] if rows else str(i)
    print(f"  {name:7} " + " ".join(cells))
PY
done
