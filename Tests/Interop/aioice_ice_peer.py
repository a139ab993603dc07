#!/usr/bin/env python3
"""An aioice ICE agent driven by ZoneRTC's interop test (Tests/InteropTests/AioiceInteropTests.swift).

One JSON object per line on stdin and stdout:

  out {"type": "local", "ufrag": U, "pwd": P, "candidates": [C, ...]}
  in  {"type": "remote", "ufrag": U, "pwd": P, "candidates": [C, ...]}
        C = {"foundation", "priority", "host", "port", "type"} (component 1, UDP)
  out {"type": "connected", "ms": M}   M: from the remote description to connect() returning
  out {"type": "received", "data": TEXT} for each of the first --messages datagrams received; each
        is echoed back as "echo:" + TEXT, and "hello from aioice" is sent once after connecting
  in  {"type": "close"}                (or end of input)
  out {"type": "done"}
  out {"type": "error", "message": TEXT} and exit status 1 on failure

Usage: aioice_ice_peer.py --role controlling|controlled [--messages N] [--timeout SECONDS]
"""
import argparse
import asyncio
import json
import sys
import time

import aioice
import aioice.ice


def loopback_only(*args, **kwargs):
    # aioice leaves 127.0.0.1 out of its host candidates; the test runs on loopback only.
    return ["127.0.0.1"]


aioice.ice.get_host_addresses = loopback_only


def emit(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


async def read_message(loop):
    line = await loop.run_in_executor(None, sys.stdin.readline)
    return json.loads(line) if line.strip() else None


async def run(args):
    loop = asyncio.get_running_loop()
    connection = aioice.Connection(ice_controlling=args.role == "controlling", components=1)
    try:
        await connection.gather_candidates()
        emit({
            "type": "local",
            "ufrag": connection.local_username,
            "pwd": connection.local_password,
            "candidates": [
                {"foundation": c.foundation, "priority": c.priority, "host": c.host, "port": c.port,
                 "type": c.type}
                for c in connection.local_candidates
            ],
        })
        remote = await asyncio.wait_for(read_message(loop), args.timeout)
        if not remote or remote.get("type") != "remote":
            raise RuntimeError("expected the remote description, got %r" % (remote,))
        start = time.perf_counter()
        connection.remote_username = remote["ufrag"]
        connection.remote_password = remote["pwd"]
        for c in remote["candidates"]:
            await connection.add_remote_candidate(aioice.Candidate(
                foundation=c["foundation"], component=1, transport="udp", priority=c["priority"],
                host=c["host"], port=c["port"], type=c["type"]))
        await connection.add_remote_candidate(None)
        await asyncio.wait_for(connection.connect(), args.timeout)
        emit({"type": "connected", "ms": (time.perf_counter() - start) * 1000})

        await connection.send(b"hello from aioice")
        for _ in range(args.messages):
            data = await asyncio.wait_for(connection.recv(), args.timeout)
            emit({"type": "received", "data": data.decode("utf-8", "replace")})
            await connection.send(b"echo:" + data)

        closing = await asyncio.wait_for(read_message(loop), args.timeout)
        if closing and closing.get("type") != "close":
            raise RuntimeError("expected close, got %r" % (closing,))
        emit({"type": "done"})
    finally:
        await connection.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--role", choices=["controlling", "controlled"], required=True)
    parser.add_argument("--messages", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=20.0)
    args = parser.parse_args()
    try:
        asyncio.run(run(args))
    except Exception as error:  # reported to the test, which prints it
        emit({"type": "error", "message": "%s: %s" % (type(error).__name__, error)})
        sys.exit(1)


if __name__ == "__main__":
    main()
