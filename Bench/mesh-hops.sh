#!/usr/bin/env bash
# Where a store hop goes in a group call with real processes: `zonertc call FILE --peers N` (default 5)
# with every process's debug log (ZONERTC_LOG=debug,json) kept, then broken down from the daemon's and
# the members' lines (which share the monotonic clock, `mono`, in µs): each request's time in the
# daemon (waiting for a worker, in the store, waiting for the loop to write it), each push from the
# commit to the member's loop, each member's requests (queued behind others, the round trip, acting on
# the answer), and the whole hop from a save's commit to another member's next fetch and to its acting
# on what that fetch brought.
#
#   Bench/mesh-hops.sh [ROUNDS] [PEERS]            (defaults 3 and 5; builds a release zonertc first)
#   ZONERTC_BIN=PATH Bench/mesh-hops.sh [ROUNDS] [PEERS]
# With ZONERTC_BENCH_QUICK=1 (Bench/common.sh): one round of --peers 3.
set -euo pipefail
cd "$(dirname "$0")/.."
source Bench/common.sh
rounds="${1:-3}"
peers="${2:-5}"
if bench_quick; then rounds=1; peers=3; fi
bin=$(bench_zonertc)
bench_machine
file=Fixtures/vp8-320x240-60.ivf
work="$(mktemp -d /tmp/zonertc-mesh-hops.XXXXXX)"
trap 'rm -rf "$work"' EXIT
for round in $(seq 1 "$rounds"); do
    ZONERTC_LOG=debug,json "$bin" call "$file" --peers "$peers" --json --keep "$work/$round" >"$work/$round.json" \
        2>"$work/$round.call.err"
done
python3 - "$work" "$rounds" "$peers" <<'PY'
import collections, datetime, glob, json, os, statistics, sys
work, rounds, peers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

def lines(path):
    for line in open(path, errors="replace"):
        if line.startswith("{"):
            try:
                yield json.loads(line)
            except ValueError:
                pass

def quantiles(values):
    v = sorted(values)
    return f"p50 {statistics.median(v):6.2f}  p90 {v[int(0.9 * (len(v) - 1))]:6.2f}  max {v[-1]:6.2f}  (n={len(v)})"

rows = collections.defaultdict(list)
figures = []
for r in range(1, rounds + 1):
    report = json.load(open(f"{work}/{r}.json"))
    assert report["verdict"]["ok"], report["verdict"]["text"]
    figures.append((report["timeToAllPairsMs"], report["timeToAllPairsFromLastJoinMs"]))
    d = f"{work}/{r}"
    # The wall clock (report, log times) against the monotonic one (`mono`), from the daemon's lines.
    store = list(lines(f"{d}/store.err"))
    wall = lambda o: datetime.datetime.fromisoformat(o["ts"].replace("Z", "+00:00")).timestamp() * 1e6
    offset = statistics.median(wall(o) - int(o["mono"]) for o in store if "mono" in o)
    # Only what happened from a member's join until every member had a frame from every other: the hops
    # the figure is made of.
    until = max(m["startedAtMs"] + m["allPairsMs"] for m in report["members"]) * 1000 - offset
    joined = {m["me"]: m["startedAtMs"] * 1000 - offset for m in report["members"]}
    saves, fetches, written = [], collections.defaultdict(list), collections.defaultdict(dict)
    for o in store:
        msg = o.get("msg", "")
        if o.get("component") != "store-serve" or int(o.get("mono", 0)) > until:
            continue
        if msg.startswith("POST ") and "/database/" in msg:
            op = "/".join(msg.split()[1].split("/")[-2:])
            if op not in ("records/modify", "changes/zone"):
                continue
            mono, loop, ms, queued = int(o["mono"]), float(o["loopMs"]), float(o["ms"]), float(o["queuedMs"])
            for key, value in (("waiting for a worker", queued), ("in the store", ms), ("waiting for the loop", loop)):
                rows[f"daemon {op}: {key}"].append(value)
            handled = mono - loop * 1000
            if op == "records/modify":
                saves.append((handled, o["device"]))
            else:
                rows["daemon changes/zone: KB answered"].append(int(o["bytes"]) / 1024)
                fetches[o["device"]].append((handled - ms * 1000, mono))
        elif msg == "push written":
            rows["push: taken from the hub until the loop wrote it"].append(float(o["loopMs"]))
            written[o["device"]][o["id"]] = int(o["mono"])
    saves.sort()
    for device, ids in written.items():
        for mono in ids.values():
            before = [h for h, _ in saves if h <= mono]
            if before:
                rows["push: commit until written to the device's stream"].append((mono - before[-1]) / 1000)
    for path in sorted(glob.glob(f"{d}/*.err")):
        name = os.path.basename(path)[:-4]
        if name in ("store", "relay"):
            continue
        device = f"{name}-device"
        read, handled, answered = {}, {}, []
        for o in lines(path):
            msg, component = o.get("msg", ""), o.get("component")
            if int(o.get("mono", 0)) > until:
                continue
            if msg == "push read":
                read[o["id"]] = int(o["mono"])
            elif msg == "push handled":
                handled[o["id"]] = int(o["mono"])
            elif component == "peer" and msg in ("store modify", "store zone-changes"):
                kind = msg[6:]
                rows[f"member {kind}: queued behind other requests"].append(float(o["waitMs"]))
                rows[f"member {kind}: round trip"].append(float(o["ms"]))
                rows[f"member {kind}: acting on the answer"].append(float(o["actMs"]))
                if kind == "zone-changes":
                    answered.append(int(o["mono"]))
        for i, mono in read.items():
            if i in written.get(device, {}):
                rows["push: written until read by the member"].append((mono - written[device][i]) / 1000)
            if i in handled:
                rows["push: read until handled on the member's loop"].append((handled[i] - mono) / 1000)
        # A save's commit → this member's next fetch (started after it) → the member acting on its answer.
        mine = fetches.get(device, [])
        for committed, by in saves:
            if by == device or committed < joined.get(name, 0):
                continue
            nxt = next((k for k, f in enumerate(mine) if f[0] >= committed), None)
            if nxt is None:
                continue
            rows["hop: another's commit until this member's next fetch began"].append((mine[nxt][0] - committed) / 1000)
            if nxt < len(answered):
                rows["hop: another's commit until this member acted on it"].append((answered[nxt] - committed) / 1000)

print(f"--peers {peers}, {rounds} round(s): time to all pairs "
      + ", ".join(f"{a:.1f}" for a, _ in figures) + " ms; from the last join "
      + ", ".join(f"{b:.1f}" for _, b in figures) + " ms")
print("ms (KB where said), over every request, push and hop of every round:")
for key in sorted(rows, key=lambda k: (k.split(":")[0], k)):
    print(f"  {key:62} {quantiles(rows[key])}")
PY
