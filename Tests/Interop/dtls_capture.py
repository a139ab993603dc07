#!/usr/bin/env python3
"""A DTLS-SRTP call's loopback traffic, captured by tshark: none of the frames' bytes on the wire,
and tshark decodes the DTLS handshake (issue 14).

Runs `zonertc call FIXTURE --json` with --media-security dtls-srtp while `tshark -i lo -f udp -w`
captures, reads the two peers' host ports from the call's summaries, and keeps only the packets
between those ports (other programs on the machine may use loopback UDP at the same time). Then:

  1. no window of WINDOW consecutive bytes of any frame of the IVF fixture is in any UDP payload;
  2. tshark, decoding those ports as DTLS, shows the handshake messages (ClientHello through
     CertificateVerify; Finished is encrypted) and the use_srtp profiles;
  3. the same run with --media-security none is the control: there the frames' bytes ARE found
     (at least 90 % of them: dumpcap, stopped by SIGINT, may miss the call's last datagrams), so
     check 1 can fail.

Prints what it found and exits 0 when all three hold, 1 otherwise. Needs root (or dumpcap's
capabilities) to capture on lo. Every wait is bounded; tshark is stopped by its PID.

Usage: dtls_capture.py ZONERTC FIXTURE.ivf [--window N]
"""
import argparse
import json
import os
import signal
import struct
import subprocess
import sys
import tempfile
import time

WINDOW = 32


def ivf_frames(path):
    """The frames of an IVF file (32-byte header, then 12-byte frame headers)."""
    data = open(path, "rb").read()
    if data[:4] != b"DKIF":
        raise SystemExit("%s is not IVF" % path)
    header = struct.unpack_from("<H", data, 6)[0]
    frames, offset = [], header
    while offset + 12 <= len(data):
        size = struct.unpack_from("<I", data, offset)[0]
        frames.append(data[offset + 12:offset + 12 + size])
        offset += 12 + size
    return frames


def capture_call(zonertc, fixture, security, directory):
    """Runs one call under tshark; returns (pcap path, the peers' ports, the call's verdict)."""
    pcap = os.path.join(directory, "call-%s.pcap" % security)
    tshark = subprocess.Popen(["tshark", "-i", "lo", "-f", "udp", "-w", pcap],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        # tshark says "Capturing on 'Loopback: lo'" once the capture runs: wait for it (bounded).
        line = b""
        deadline = time.monotonic() + 20
        while b"Capturing on" not in line:
            if time.monotonic() > deadline or tshark.poll() is not None:
                raise SystemExit("tshark did not start capturing: %s" % line.decode(errors="replace"))
            line += tshark.stderr.readline()
        call = subprocess.run([zonertc, "call", fixture, "--media-security", security, "--json"],
                              capture_output=True, timeout=60)
    finally:
        os.kill(tshark.pid, signal.SIGINT)
        try:
            tshark.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.kill(tshark.pid, signal.SIGKILL)
            tshark.wait()
    result = json.loads(call.stdout.decode().strip().splitlines()[-1])
    ports = [int(result[who]["localCandidate"].rsplit(":", 1)[1]) for who in ("alice", "bob")]
    return pcap, ports, result["verdict"]


def tshark_fields(pcap, ports, fields, decode_as=None):
    display = "udp.port==%d && udp.port==%d" % tuple(ports)
    command = ["tshark", "-r", pcap, "-Y", display, "-T", "fields"]
    for field in fields:
        command += ["-e", field]
    for port in (decode_as or []):
        command += ["-d", "udp.port==%d,dtls" % port]
    out = subprocess.run(command, capture_output=True, timeout=60, check=True).stdout.decode()
    return [line.split("\t") for line in out.splitlines()]


def frame_bytes_found(frames, payloads, window):
    """The indices of the frames that have some `window`-byte run of theirs in a payload."""
    wire = b"\x00".join(payloads)
    found = []
    for index, frame in enumerate(frames):
        for start in range(0, max(len(frame) - window, 0) + 1, 4):
            if frame[start:start + window] in wire:
                found.append(index)
                break
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("zonertc")
    parser.add_argument("fixture")
    parser.add_argument("--window", type=int, default=WINDOW)
    args = parser.parse_args()
    frames = [f for f in ivf_frames(args.fixture) if len(f) >= args.window]
    ok = True
    with tempfile.TemporaryDirectory() as directory:
        for security in ("dtls-srtp", "none"):
            pcap, ports, verdict = capture_call(args.zonertc, args.fixture, security, directory)
            rows = tshark_fields(pcap, ports, ["udp.payload"])
            payloads = [bytes.fromhex(row[0].replace(":", "")) for row in rows if row and row[0]]
            found_at = frame_bytes_found(frames, payloads, args.window)
            found = len(found_at)
            print("%s: call %s; %d datagrams between ports %d and %d, %d bytes; frames whose bytes "
                  "are on the wire: %d of %d" % (security, "ok" if verdict["ok"] else "FAILED", len(payloads),
                                                 ports[0], ports[1], sum(map(len, payloads)), found, len(frames)))
            ok = ok and verdict["ok"]
            if 0 < found < len(frames):
                print("%s: frames not found: %s" % (security, sorted(set(range(len(frames))) - set(found_at))))
            if security == "none":
                # The control: plain RTP carries them. Stopped by SIGINT, dumpcap may not write the
                # call's last few datagrams (the last 3 frames here), so 90 % is asked.
                ok = ok and found * 10 >= len(frames) * 9
                continue
            ok = ok and found == 0
            handshake = tshark_fields(pcap, ports, ["dtls.handshake.type", "dtls.record.content_type"],
                                      decode_as=ports)
            types = [row[0] for row in handshake if row and row[0]]
            content = [t for row in handshake if len(row) > 1 for t in row[1].split(",") if t]
            print("dtls-srtp: record content types (20 ChangeCipherSpec, 22 Handshake, 23 data): %s" % " ".join(
                "%s×%d" % (t, content.count(t)) for t in sorted(set(content))))
            names = {"1": "ClientHello", "2": "ServerHello", "4": "NewSessionTicket", "11": "Certificate",
                     "12": "ServerKeyExchange", "13": "CertificateRequest", "14": "ServerHelloDone",
                     "15": "CertificateVerify", "16": "ClientKeyExchange", "20": "Finished"}
            flights = ["+".join(names.get(t, t) for t in entry.split(",")) for entry in types]
            print("dtls-srtp: tshark decodes %d handshake records: %s" % (len(flights), "; ".join(flights)))
            srtp = tshark_fields(pcap, ports, ["dtls.use_srtp.protection_profile"], decode_as=ports)
            profiles = sorted({row[0] for row in srtp if row and row[0]})
            print("dtls-srtp: use_srtp protection profiles offered/chosen: %s" % ", ".join(profiles))
            everything = " ".join(flights)
            # Finished is encrypted (after ChangeCipherSpec), so tshark shows it without a type.
            for needed in ("ClientHello", "ServerHello", "Certificate", "ClientKeyExchange", "CertificateVerify"):
                ok = ok and needed in everything
    print("PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
