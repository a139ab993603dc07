#!/usr/bin/env python3
"""ICE connect time of two aioice Connections on loopback, in one asyncio loop.

Measured like `zonertc-bench ice-udp`: from creating the agents (candidates gathered, then
exchanged directly, no signaling) to both `connect()` calls returning. Prints one line
(or JSON with --json). Usage: aioice_connect.py [--connects N] [--json]
"""
import argparse
import asyncio
import json
import statistics
import time

import aioice
import aioice.ice


def loopback_only(*args, **kwargs):
    # aioice leaves loopback out of its host candidates; the bench runs on loopback only.
    return ["127.0.0.1"]


aioice.ice.get_host_addresses = loopback_only


async def connect_once():
    start = time.perf_counter()
    a = aioice.Connection(ice_controlling=True)
    b = aioice.Connection(ice_controlling=False)
    await asyncio.gather(a.gather_candidates(), b.gather_candidates())
    for c in a.local_candidates:
        await b.add_remote_candidate(c)
    for c in b.local_candidates:
        await a.add_remote_candidate(c)
    await b.add_remote_candidate(None)
    await a.add_remote_candidate(None)
    a.remote_username, a.remote_password = b.local_username, b.local_password
    b.remote_username, b.remote_password = a.local_username, a.local_password
    await asyncio.gather(a.connect(), b.connect())
    elapsed = (time.perf_counter() - start) * 1000
    await asyncio.gather(a.close(), b.close())
    return elapsed


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--connects", type=int, default=50)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    samples = sorted([await connect_once() for _ in range(args.connects)])

    def pct(p):
        return samples[min(len(samples) - 1, int(p * len(samples)))]

    if args.json:
        print(json.dumps({"suite": "aioice", "connects": args.connects, "p50Ms": pct(0.5), "p90Ms": pct(0.9),
                          "p99Ms": pct(0.99), "version": aioice.__version__}))
    else:
        print("aioice %s: %d connects over loopback UDP, ICE connect p50 %.3f ms, p90 %.3f ms, p99 %.3f ms"
              % (aioice.__version__, args.connects, pct(0.5), pct(0.9), pct(0.99)))


asyncio.run(main())
