#!/usr/bin/env python3
"""Chromium <-> Chromium calls through `zonertc store serve`, signaling with the call page (issue 15).

For each of N calls: a fresh daemon (--memory), two headless Chromium processes (real binary, own
profile) opening /call as alice (owner, offer creator) and bob with report=1; the reports are read from
/call/report once the daemon logs both. Prints, per call and as p50/p90, the times from navigation start
(the page's performance.now()) to ICE connected and to the first decoded frame, and the wall time of
the call. Every process is stopped by its PID; each call is bounded by --timeout.

With --remote zonertc or aiortc, a `zonertc peer` or Tests/Interop/aiortc_zone_peer.py (owner, sending
--fixture) calls one receiving page instead; it is started before Chromium is launched, so the page's
navigation start is the later of the two starts and its times are measured from both peers up.

    Bench/browser/browser-call.py [--calls 10] [--remote chromium|zonertc|aiortc] [--zonertc PATH] [--chromium PATH]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

FLAGS = ["--headless=new", "--no-sandbox", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--allow-loopback-in-peer-connection", "--use-fake-device-for-media-stream",
         "--use-fake-ui-for-media-stream", "--disable-background-timer-throttling",
         "--disable-renderer-backgrounding", "--mute-audio"]


def request(url, method="GET", body=None, token=None):
    headers = {"Authorization": "Bearer " + token} if token else {}
    req = urllib.request.Request(url, data=body, method=method, headers=headers)
    with urllib.request.urlopen(req, timeout=10) as response:
        return json.loads(response.read())


def start_peer(args, base, room, token, scratch):
    """The non-browser remote, owner and sender of the fixture: a `zonertc peer` or the aiortc helper."""
    if args.remote == "zonertc":
        folder = tempfile.mkdtemp(prefix="zonertc-bench-peer-")
        scratch.append(folder)
        with os.fdopen(os.open(os.path.join(folder, "token"), os.O_WRONLY | os.O_CREAT, 0o600), "w") as handle:
            handle.write(token)
        command = [args.zonertc, "peer", "--store", base, "--room", room, "--me", "alice", "--remote", "bob",
                   "--token-file", os.path.join(folder, "token"), "--owner", "--send", args.fixture,
                   "--connect-timeout", "30s", "--media-security", "dtls-srtp"]
    else:
        command = [sys.executable, args.aiortc, "--store", base, "--room", room, "--me", "alice", "--remote", "bob",
                   "--token", token, "--owner", "--direction", "sendonly", "--play", args.fixture,
                   "--timeout", str(args.timeout), "--duration", "6"]
    log = open(os.path.join(tempfile.gettempdir(), "zonertc-bench-%s.log" % args.remote), "w")
    return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)


def one_call(args, index):
    daemon = subprocess.Popen([args.zonertc, "store", "serve", "--memory", "--listen", "127.0.0.1:0"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    browsers, profiles = [], []
    try:
        line = daemon.stdout.readline()
        base = "http://" + line.split("http://")[1].split()[0]
        tokens = {u: request(base + "/auth/register", "POST", json.dumps({"userName": u}).encode())["token"]
                  for u in ("alice", "bob")}
        room = "room_bench%03d" % index
        start = time.monotonic()
        pages = (("alice", "bob", "&owner=1"), ("bob", "alice", ""))
        if args.remote != "chromium":
            # The peer is started before the page is launched, so the later of the two starts is the page's
            # navigation start and the page's navigation-relative times are measured from both peers up.
            browsers.append(start_peer(args, base, room, tokens["alice"], profiles))
            tokens = {"bob": tokens["bob"]}
            pages = (("bob", "alice", "&send=0"),)
        for me, remote, owner in pages:
            profile = tempfile.mkdtemp(prefix="zonertc-bench-chromium-")
            profiles.append(profile)
            url = "%s/call?room=%s&me=%s&remote=%s%s&report=1&frames=30&timeout=%d#token=%s" % (
                base, room, me, remote, owner, args.timeout, tokens[me])
            browsers.append(subprocess.Popen([args.chromium] + FLAGS + ["--user-data-dir=" + profile, url],
                                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        seen = 0
        deadline = time.monotonic() + args.timeout + 10
        while seen < len(pages) and time.monotonic() < deadline:
            line = daemon.stderr.readline()
            if not line:
                break
            seen += "call report" in line
        wall = time.monotonic() - start
        reports = {u: request("%s/call/report?room=%s&me=%s" % (base, room, u), token=tokens[u]) for u in tokens}
        return wall, reports
    finally:
        for process in browsers + [daemon]:
            process.terminate()
        for process in browsers + [daemon]:
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for profile in profiles:
            shutil.rmtree(profile, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--zonertc", default=".build/release/zonertc")
    parser.add_argument("--chromium", default="/usr/lib/chromium/chromium")
    parser.add_argument("--timeout", type=int, default=40)
    parser.add_argument("--remote", choices=["chromium", "zonertc", "aiortc"], default="chromium",
                        help="who calls the page: another Chromium page, a `zonertc peer` or the aiortc helper,"
                             " the last two sending --fixture to a receiving page")
    parser.add_argument("--fixture", default="Fixtures/vp8-320x240-60.ivf")
    parser.add_argument("--aiortc", default="Tests/Interop/aiortc_zone_peer.py")
    args = parser.parse_args()
    print("remote: %s" % args.remote, flush=True)
    rows = []
    for index in range(args.calls):
        wall, reports = one_call(args, index)
        ok = all(r.get("ok") for r in reports.values())
        connected = [r.get("navigationToConnectedMs") for r in reports.values()]
        first = [r.get("navigationToFirstFrameMs") for r in reports.values()]
        rows.append((ok, connected, first, wall))
        print("call %2d: %s  ICE connected %s ms, first frame %s ms after navigation (pages: %s); wall %.2f s"
              % (index + 1, "ok  " if ok else "FAIL", connected, first, ", ".join(reports), wall), flush=True)
        for user, report in sorted(reports.items()):
            print("         %s phases (ms since navigation): %s" % (user, report.get("phases")), flush=True)
    good = [r for r in rows if r[0]]
    if not good:
        sys.exit("no call succeeded")

    def pct(values, q):
        values = sorted(values)
        return values[min(len(values) - 1, int(q * len(values)))]
    for name, column in (("navigation -> ICE connected", 1), ("navigation -> first frame", 2)):
        values = [v for r in good for v in r[column] if v is not None]
        print("%-28s p50 %6.0f ms  p90 %6.0f ms  (n=%d)" % (name, statistics.median(values), pct(values, 0.9),
                                                            len(values)))
    print("%d of %d calls ok" % (len(good), len(rows)))
    common = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common.sh")
    sys.stdout.flush()
    subprocess.run(["bash", "-c", 'source "$0"; bench_machine', common], check=False)


if __name__ == "__main__":
    main()
