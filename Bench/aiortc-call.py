#!/usr/bin/env python3
"""aiortc ⇄ aiortc through our store daemon: the anchor beside `zonertc bench call`.

Each run starts `zonertc store serve --memory`, then two Tests/Interop/aiortc_zone_peer.py helpers
in one room: the owner (lower user ID, so the offer creator) plays FILE with aiortc's MediaPlayer,
the other receives (--frames 1). Times are on the wall clock, from the later of the two helpers'
"ready" lines (room set up, as `zonertc bench call` starts from the later call start after room
setup) to the receiver's connectionState "connected" (ICE and DTLS done) and its
first decoded frame. Prints p50 and max over the runs.

Usage: Bench/aiortc-call.py ZONERTC FILE [--runs N]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

HELPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Interop", "aiortc_zone_peer.py")


def events(text):
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def one_run(zonertc, path, index):
    daemon = subprocess.Popen([zonertc, "store", "serve", "--listen", "127.0.0.1:0", "--memory"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        line = daemon.stdout.readline().decode()
        endpoint = re.search(r"127\.0\.0\.1:\d+", line).group(0)
        room = "room_bench%03d" % index
        common = [sys.executable, HELPER, "--store", "http://" + endpoint, "--room", room, "--timeout", "20"]
        sender = subprocess.Popen(common + ["--me", "_a_send", "--remote", "_b_recv", "--owner",
                                            "--direction", "sendonly", "--play", path, "--duration", "3"],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        # The participant joins once the owner has shared the room (its "ready" line).
        sent_lines = []
        for raw in sender.stdout:
            sent_lines.append(raw.decode())
            if '"type": "ready"' in sent_lines[-1]:
                break
        receiver = subprocess.Popen(common + ["--me", "_b_recv", "--remote", "_a_send", "--direction", "recvonly",
                                              "--frames", "1", "--duration", "10"],
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        received = events(receiver.communicate(timeout=60)[0].decode())
        sent = events("".join(sent_lines) + sender.communicate(timeout=60)[0].decode())
    finally:
        daemon.terminate()
        try:
            daemon.wait(timeout=20)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()
    ready = max(e["atMs"] for e in sent + received if e["type"] == "ready")
    connected = next(e["atMs"] for e in received if e["type"] == "connection" and e["state"] == "connected")
    frame = next(e["atMs"] for e in received if e["type"] == "frame")
    return connected - ready, frame - ready


def print_machine():
    """The CPU, cores, date and load beside the figures (Bench/common.sh's bench_machine)."""
    common = os.path.join(os.path.dirname(os.path.abspath(__file__)), "common.sh")
    sys.stdout.flush()
    subprocess.run(["bash", "-c", 'source "$0"; bench_machine', common], check=False)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("zonertc")
    parser.add_argument("file")
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    connected, frames, failures = [], [], 0
    for index in range(args.runs):
        try:
            c, f = one_run(args.zonertc, args.file, index)
        except (StopIteration, subprocess.TimeoutExpired, ValueError, AttributeError) as error:
            failures += 1
            print("run %d failed: %r" % (index + 1, error), file=sys.stderr)
            continue
        connected.append(c)
        frames.append(f)
    if not frames:
        print("aiortc ⇄ aiortc: every run failed")
        sys.exit(1)
    print("aiortc ⇄ aiortc, %d runs (%d failed): connected (ICE + DTLS) p50 %.1f ms, max %.1f ms; "
          "first decoded frame p50 %.1f ms, max %.1f ms" % (
              args.runs, failures, statistics.median(connected), max(connected),
              statistics.median(frames), max(frames)))
    print_machine()


if __name__ == "__main__":
    main()
