#!/usr/bin/env bash
# ICE connect time over loopback UDP: ZoneRTC's agent and aioice's, in the same run.
# Needs: python3 with aioice (`python3 -m pip install aioice`). Usage: Bench/ice-connect/compare.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
source Bench/common.sh
connects=50
if bench_quick; then connects=3; fi
bench=$(bench_zonertc_bench)
bench_machine
"$bench" ice-udp
python3 Bench/ice-connect/aioice_connect.py --connects "$connects"
bench_machine
