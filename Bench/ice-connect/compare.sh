#!/usr/bin/env bash
# ICE connect time over loopback UDP: ZoneRTC's agent and aioice's, in the same run.
# Needs: python3 with aioice (`python3 -m pip install aioice`). Usage: Bench/ice-connect/compare.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
swift build -c release --product zonertc-bench >/dev/null
.build/release/zonertc-bench ice-udp
python3 Bench/ice-connect/aioice_connect.py --connects 50
