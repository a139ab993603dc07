#!/usr/bin/env python3
"""aioice's TURN client against a TURN server, for ZoneRTC's interop tests.

Usage: aioice_turn_client.py HOST PORT USERNAME PASSWORD [COUNT]

Starts a UDP echo on 127.0.0.1, allocates through the TURN server with
aioice.turn.create_turn_endpoint (Allocate with the 401 retry, then ChannelBind and
ChannelData as aioice decides), sends COUNT datagrams to the echo and waits for each to come
back. Prints one JSON object on stdout and exits 0 when every datagram came back intact from the
echo, 1 otherwise (2 when aioice is missing). Every wait is bounded.
"""
import asyncio
import json
import sys

try:
    import aioice.turn
except ImportError as error:  # the Swift test tells "missing" from "failed" by the exit code
    print(json.dumps({"error": f"aioice is not installed: {error}"}))
    sys.exit(2)


class Echo(asyncio.DatagramProtocol):
    """Sends every datagram back to where it came from, remembering the sources."""

    def __init__(self):
        self.sources = set()

    def connection_made(self, transport):
        self.transport = transport

    def datagram_received(self, data, addr):
        self.sources.add(f"{addr[0]}:{addr[1]}")
        self.transport.sendto(data, addr)


class Receiver(asyncio.DatagramProtocol):
    """What comes back through the relay, in a queue."""

    def __init__(self):
        self.queue = asyncio.Queue()
        self.closed = asyncio.Event()

    def datagram_received(self, data, addr):
        self.queue.put_nowait((data, addr))

    def connection_lost(self, exc):
        # aioice calls this once the allocation is deleted (Refresh with LIFETIME 0).
        self.closed.set()


async def main(host, port, username, password, count):
    loop = asyncio.get_running_loop()
    echo_transport, echo = await loop.create_datagram_endpoint(Echo, local_addr=("127.0.0.1", 0))
    echo_addr = echo_transport.get_extra_info("sockname")
    result = {"echo": f"{echo_addr[0]}:{echo_addr[1]}", "sent": 0, "received": 0, "intact": 0}
    transport, receiver = await asyncio.wait_for(
        aioice.turn.create_turn_endpoint(Receiver, server_addr=(host, port), username=username,
                                         password=password, lifetime=600),
        timeout=10)
    relayed = transport.get_extra_info("sockname")
    mapped = transport.get_extra_info("related_address")
    result["relayed"] = f"{relayed[0]}:{relayed[1]}"
    result["mapped"] = f"{mapped[0]}:{mapped[1]}"
    try:
        for i in range(count):
            payload = f"aioice datagram {i} ".encode() * (1 + i % 20)
            transport.sendto(payload, echo_addr)
            result["sent"] += 1
            try:
                data, addr = await asyncio.wait_for(receiver.queue.get(), timeout=3)
            except asyncio.TimeoutError:
                result["timeout_at"] = i
                break
            result["received"] += 1
            if data == payload and addr == echo_addr:
                result["intact"] += 1
    finally:
        transport.close()
        # Wait until aioice has deleted the allocation (Refresh with LIFETIME 0), bounded.
        try:
            await asyncio.wait_for(receiver.closed.wait(), timeout=5)
        except asyncio.TimeoutError:
            result["allocation_not_deleted"] = True
        echo_transport.close()
    result["echo_saw"] = sorted(echo.sources)
    return result


if __name__ == "__main__":
    if len(sys.argv) < 5:
        print(__doc__, file=sys.stderr)
        sys.exit(64)
    count = int(sys.argv[5]) if len(sys.argv) > 5 else 20
    try:
        outcome = asyncio.run(asyncio.wait_for(
            main(sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], count), timeout=60))
    except Exception as error:  # an allocation refused, a timeout: report it, exit 1
        print(json.dumps({"error": f"{type(error).__name__}: {error}"}))
        sys.exit(1)
    print(json.dumps(outcome))
    ok = outcome["intact"] == count and outcome["echo_saw"] == [outcome["relayed"]]
    sys.exit(0 if ok else 1)
