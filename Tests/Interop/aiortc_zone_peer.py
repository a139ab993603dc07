#!/usr/bin/env python3
"""aiortc as one side of a ZoneRTC call: signals through our store daemon's HTTP API with our
records (docs/SIGNALING.md §1-3: SignalSession, SignalEnvelope, SignalIceChunk) and runs
aiortc's RTCPeerConnection with one video transceiver.

Driven by Tests/CLITests/AiortcSignalingTests.swift and AiortcCallTests.swift, and timed by
Bench/aiortc-call.py. One JSON object per line on stdout, each also with "atMs" (wall clock, ms):

  {"type": "ready", "scope": "private"|"shared", "zone": ROOM}   the room is set up
  {"type": "offer-saved", "epoch": E}                             we offered (lower user ID)
  {"type": "offer-applied", "epoch": E}                           we took the remote offer
  {"type": "answer-saved", "epoch": E}                            and answered it
  {"type": "answer-applied", "epoch": E, "codec": MIME, "payloadType": PT, "rtx": PT|null,
   "rtcp": [...]}                                                 the remote answer is set
  {"type": "connection", "state": S}                              aiortc's connectionState changes
  {"type": "frame", "index": I, "width": W, "height": H, "md5": HEX}
                                                                  a frame aiortc decoded (--frames)
  {"type": "done"}
  {"type": "error", "message": TEXT}                              and exit status 1

The lower user ID makes the offer (§1). The offerer starts epoch E = now in ms, saves
SS_<key> (callEpoch E) and SE_<key>_E_offer in one atomic request, then waits for
SE_<key>_E_answer; the answerer waits for the session's epoch and its offer, then saves its
answer. aiortc does not trickle: its candidates are in its SDP, and one SignalIceChunk
(batch-v1, eoc true) repeats them. The remote's chunks of the epoch are added as they come.
Records are learned by polling `changes/zone` with the sync token (every 20 ms, bounded by
--timeout).

With --signaling-only the helper ends once both descriptions are set. Otherwise it waits for
connectionState "connected" (which needs DTLS-SRTP on the ZoneRTC side) and, with --play FILE,
sends the file with aiortc's MediaPlayer; with --record FILE, records what arrives with
MediaRecorder; with --frames N, reports each frame aiortc decodes (MD5 of its YUV 4:2:0 planes,
packed as ffmpeg's rawvideo is, so `ffmpeg -i FILE -f framemd5 -` gives the same digests) and
ends once N have come; --duration bounds how long media runs.

Stock aiortc 1.16's jitter buffer hands a frame to the decoder only when a packet of the next
frame arrives, so the last frame of a stream is never decoded: a receiver of an N-frame file
gets N-1 frames (the tests expect that; this helper does not patch aiortc).

Loopback only: RTCConfiguration(iceServers=[]) and aioice's host addresses limited to
127.0.0.1 (aioice leaves loopback out otherwise).

Usage: aiortc_zone_peer.py --store http://127.0.0.1:PORT --room room_xxxxxxxx --me ID --remote ID
       [--owner] [--token T] [--codec vp8|h264] [--direction sendrecv|sendonly|recvonly]
       [--signaling-only] [--play FILE] [--record FILE] [--frames N] [--duration S]
       [--timeout S] [--misbehave wrong-fingerprint|silent-dtls]

--misbehave makes aiortc a bad remote for the process-level failure tests: `wrong-fingerprint`
signals a sha-256 fingerprint that is not its certificate's (it still offers its real
certificate in the handshake); `silent-dtls` never starts its DTLS transport (ICE completes, no
DTLS datagram is sent or answered).
"""
import argparse
import asyncio
import hashlib
import json
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid

import aioice.ice

aioice.ice.get_host_addresses = lambda *args, **kwargs: ["127.0.0.1"]

from aiortc import RTCConfiguration, RTCPeerConnection, RTCRtpSender, RTCSessionDescription  # noqa: E402
from aiortc.sdp import candidate_from_sdp  # noqa: E402

CONTAINER = "/database/1/iCloud.zonertc/development"
MAX_NAME = 255


def emit(message):
    """One JSON line, stamped with the wall clock (atMs) so two processes' lines can be timed."""
    message = dict(message, atMs=round(time.time() * 1000, 3))
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def log(text):
    """Diagnostics (the descriptions) on stderr, which the tests show when they fail."""
    sys.stderr.write(text.rstrip("\n") + "\n")
    sys.stderr.flush()


def now_ms():
    return int(time.time() * 1000)


class StoreError(Exception):
    pass


class Store:
    """The store daemon's JSON API over HTTP/1.1 (docs/STORE.md "The store over HTTP, by hand")."""

    def __init__(self, url, token, scope):
        self.url = url.rstrip("/")
        self.token = token
        self.scope = scope

    def post(self, path, body, scope=None):
        url = "%s%s/%s/%s" % (self.url, CONTAINER, scope or self.scope, path)
        request = urllib.request.Request(
            url, data=json.dumps(body).encode(), method="POST",
            headers={"Authorization": "Bearer " + self.token, "Content-Type": "application/json",
                     "X-Device-ID": "aiortc"})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as error:
            raise StoreError("%s: HTTP %d %s" % (path, error.code, error.read()[:300].decode("utf-8", "replace")))

    @staticmethod
    def register(url, name):
        request = urllib.request.Request(url.rstrip("/") + "/auth/register", method="POST",
                                         data=json.dumps({"userName": name}).encode())
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())["token"]


def misbehave(args, sdp):
    """The description as saved: with --misbehave wrong-fingerprint, every sha-256 fingerprint
    has its bytes reversed (still well formed, no longer the certificate's)."""
    if args.misbehave != "wrong-fingerprint":
        return sdp
    lines = []
    for line in sdp.split("\r\n"):
        if line.startswith("a=fingerprint:sha-256 "):
            digest = line.split(" ", 1)[1].split(":")
            line = "a=fingerprint:sha-256 " + ":".join(reversed(digest))
        lines.append(line)
    return "\r\n".join(lines)


def field(value, kind="STRING"):
    return {"value": value, "type": kind}


def fit(build, part):
    """A record name of at most 255 characters: the key part compacted if needed (spec §2)."""
    name = build(part)
    if len(name.encode()) <= MAX_NAME:
        return name
    return build("h" + hashlib.sha256(part.encode()).digest()[:16].hex())


class PushHints:
    """The store's push stream (docs/PROTOCOL.md 1.4) read on a thread of its own: every
    notification sets `event`, a hint to fetch. Hints may be late or lost, so waits on it are
    bounded and fetch anyway (as the hybrid strategy does)."""

    def __init__(self, store, loop):
        self.event = asyncio.Event()
        self.ready = threading.Event()
        self.loop = loop
        self.request = urllib.request.Request(
            "%s%s/push" % (store.url, CONTAINER),
            headers={"Authorization": "Bearer " + store.token, "X-Device-ID": "aiortc"})
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        try:
            # Keepalives come every 15 s, so a 30 s silence means the stream is gone.
            with urllib.request.urlopen(self.request, timeout=30) as response:
                for raw in response:
                    line = raw.decode("utf-8", "replace").strip()
                    if line == ": ready":
                        self.ready.set()
                    elif line == "event: notification":
                        self.loop.call_soon_threadsafe(self.event.set)
        except Exception as error:  # the waits fall back to fetching on their bound
            log("push stream ended: %s" % error)
        finally:
            self.ready.set()


class Signaling:
    def __init__(self, args, store, zone):
        self.args = args
        self.store = store
        self.zone = zone
        lo, hi = sorted([args.me, args.remote], key=lambda s: s.encode())
        self.session_key = "%s#%s#%s" % (args.room, lo, hi)
        self.offer_creator = args.me.encode() < args.remote.encode()
        self.sync_token = None
        self.records = {}
        self.push = None  # PushHints, once the room's subscription exists

    def session_name(self):
        return fit(lambda key: "SS_" + key, self.session_key)

    def envelope_name(self, epoch, kind):
        return fit(lambda key: "SE_%s_%d_%s" % (key, epoch, kind), self.session_key)

    def chunk_name(self, epoch, chunk_uuid):
        return fit(lambda key: "IC_%s_%d_%s_%s" % (key, epoch, self.args.me, chunk_uuid), self.session_key)

    def common(self, epoch):
        return {"sessionKey": field(self.session_key), "roomID": field(self.args.room),
                "callEpoch": field(epoch, "INT64")}

    def modify(self, operations, atomic=False):
        result = self.store.post("records/modify", {"zoneID": self.zone, "operations": operations,
                                                    "atomic": atomic})
        for record in result.get("records", []):
            if "serverErrorCode" in record:
                raise StoreError("saving %s: %s %s" % (record.get("recordName"), record["serverErrorCode"],
                                                       record.get("reason", "")))
        return result

    def fetch(self):
        """New and changed records of the zone since the last fetch."""
        body = {"zones": [{"zoneID": self.zone, **({"syncToken": self.sync_token} if self.sync_token else {})}]}
        result = self.store.post("changes/zone", body)
        for zone in result.get("zones", []):
            self.sync_token = zone.get("syncToken", self.sync_token)
            for record in zone.get("records", []):
                if not record.get("deleted"):
                    self.records[record["recordName"]] = record
        return self.records

    async def wait_for(self, predicate, what):
        """Fetches until `predicate` finds something: again on every push hint, and at least every
        second without one (a hint may be lost), until --timeout."""
        deadline = time.monotonic() + self.args.timeout
        while True:
            if self.push is not None:
                self.push.event.clear()  # before the fetch, so a hint during it is kept
            found = predicate(self.fetch())
            if found is not None:
                return found
            left = deadline - time.monotonic()
            if left <= 0:
                raise StoreError("no %s within %.0f s" % (what, self.args.timeout))
            hint = self.push.event if self.push is not None else asyncio.Event()
            try:
                await asyncio.wait_for(hint.wait(), timeout=min(left, 1.0))
            except asyncio.TimeoutError:
                pass

    def session_record(self):
        found = self.store.post("records/lookup", {"zoneID": self.zone,
                                                   "records": [{"recordName": self.session_name()}]})
        for record in found.get("records", []):
            if "serverErrorCode" not in record:
                return record
        return None

    def save_offer(self, epoch, sdp):
        fields = dict(self.common(epoch), userId=field(self.args.me), otherUserId=field(self.args.remote),
                      updatedAt=field(now_ms(), "TIMESTAMP"))
        base = self.session_record()
        session = {"recordName": self.session_name(), "recordType": "SignalSession", "fields": fields}
        if base is not None:
            session["recordChangeTag"] = base.get("recordChangeTag")
        self.modify([{"operationType": "update" if base else "create", "record": session},
                     {"operationType": "create", "record": self.envelope(epoch, "offer", sdp)}], atomic=True)

    def envelope(self, epoch, kind, sdp):
        sdp = misbehave(self.args, sdp)
        fields = dict(self.common(epoch), ownerUserId=field(self.args.me), envelopeType=field(kind),
                      payload=field(sdp), updatedAt=field(now_ms(), "TIMESTAMP"))
        return {"recordName": self.envelope_name(epoch, kind), "recordType": "SignalEnvelope", "fields": fields}

    def save_chunk(self, epoch, sdp):
        """Our candidates (all in the SDP: aiortc does not trickle) as one batch with eoc."""
        candidates = sorted({line[2:].strip() for line in sdp.splitlines() if line.startswith("a=candidate:")})
        ufrag = next(line.split(":", 1)[1].strip() for line in sdp.splitlines() if line.startswith("a=ice-ufrag:"))
        batch = json.dumps({"v": 1, "candidates": candidates, "eoc": True}, separators=(",", ":"))
        fields = dict(self.common(epoch), ownerUserId=field(self.args.me), candidateType=field("batch-v1"),
                      candidate=field(batch), chunkCreatedAt=field(now_ms(), "TIMESTAMP"), seq=field(0, "INT64"),
                      ufrag=field(ufrag))
        record = {"recordName": self.chunk_name(epoch, uuid.uuid4().hex), "recordType": "SignalIceChunk",
                  "fields": fields}
        self.modify([{"operationType": "create", "record": record}])

    def remote_candidates(self, epoch, seen):
        """Candidate lines of the remote's chunks of `epoch` not yet in `seen`, in seq order."""
        chunks = []
        for record in self.records.values():
            f = record.get("fields", {})
            if (record.get("recordType") == "SignalIceChunk" and f.get("callEpoch", {}).get("value") == epoch
                    and f.get("ownerUserId", {}).get("value") == self.args.remote):
                chunks.append((f.get("seq", {}).get("value", 0), record["recordName"], f))
        lines = []
        for _, name, f in sorted(chunks):
            if name in seen:
                continue
            seen.add(name)
            text = f.get("candidate", {}).get("value", "")
            if f.get("candidateType", {}).get("value") == "batch-v1":
                lines += json.loads(text).get("candidates", [])
            elif text:
                lines.append(text)
        return lines


def video_codecs(name):
    """Our codec first, its RTX after it, then the rest: what aiortc offers."""
    codecs = RTCRtpSender.getCapabilities("video").codecs
    mime = "video/VP8" if name == "vp8" else "video/H264"
    first = [c for c in codecs if c.mimeType == mime]
    return first + [c for c in codecs if c not in first]


async def add_candidates(pc, lines, mid):
    for line in lines:
        candidate = candidate_from_sdp(line.split(":", 1)[1] if line.startswith("candidate:") else line)
        candidate.sdpMid = mid
        candidate.sdpMLineIndex = 0
        await pc.addIceCandidate(candidate)


def negotiated(pc):
    transceiver = pc.getTransceivers()[0]
    codecs = [c for c in transceiver._codecs if c.mimeType != "video/rtx"]
    rtx = [c for c in transceiver._codecs if c.mimeType == "video/rtx"]
    first = codecs[0] if codecs else None
    apt = [c.payloadType for c in rtx if first and c.parameters.get("apt") == first.payloadType]
    return {"codec": first.mimeType if first else None, "payloadType": first.payloadType if first else None,
            "rtx": apt[0] if apt else None,
            "rtcp": [str(f.type) + ((" " + f.parameter) if f.parameter else "")
                     for f in (first.rtcpFeedback if first else [])]}


async def set_up_room(args, store):
    """The room as RoomSetup makes it: the owner creates zone, Room, member, share, subscription;
    a participant accepts the share (the owner has made it) and saves its member."""
    zone = {"zoneName": args.room, "ownerRecordName": args.me if args.owner else args.remote}
    member = {"recordName": "RM_" + args.me, "recordType": "RoomMember",
              "fields": {"userId": field(args.me), "displayName": field(args.me)}}
    if args.owner:
        store.post("zones/modify", {"operations": [{"operationType": "create", "zone": {"zoneID": zone}}]})
        room = {"recordName": args.room, "recordType": "Room",
                "fields": {"roomID": field(args.room), "name": field("aiortc")}}
        store.post("records/modify", {"zoneID": zone, "operations": [
            {"operationType": "forceReplace", "record": room}, {"operationType": "forceReplace", "record": member}]})
        try:
            store.post("shares/create", {"zoneID": zone, "publicPermission": "readWrite"})
        except StoreError as error:
            if "ALREADY_EXISTS" not in str(error) and "alreadyExists" not in str(error):
                raise
    else:
        # Nothing tells a participant that a share appeared (it has no subscription before it joins),
        # so it is started once the owner is ready (its "ready" line, or `zonertc peer`'s "room … ready").
        try:
            store.post("shares/accept", {"zoneID": zone})
        except StoreError as error:
            raise StoreError("cannot accept the share of %s (start the participant once the owner is ready): %s"
                             % (args.room, error))
        store.post("records/modify", {"zoneID": zone, "operations": [
            {"operationType": "forceReplace", "record": member}]})
    subscription = {"subscriptionID": "zonertc-signal-" + store.scope, "subscriptionType": "database"}
    store.post("subscriptions/modify", {"operations": [{"operationType": "create", "subscription": subscription}]})
    return zone


async def run(args):
    token = args.token or Store.register(args.store, args.me)
    store = Store(args.store, token, "private" if args.owner else "shared")
    zone = await set_up_room(args, store)
    emit({"type": "ready", "scope": store.scope, "zone": args.room})
    signaling = Signaling(args, store, zone)
    signaling.push = PushHints(store, asyncio.get_running_loop())
    # Bounded: the thread sets `ready` on the stream's ": ready" line or when it fails.
    await asyncio.get_running_loop().run_in_executor(None, signaling.push.ready.wait, 10)

    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    connected = asyncio.Event()
    # Set when the played file ends or the connection closes or fails.
    media_ended = asyncio.Event()

    @pc.on("connectionstatechange")
    def on_state():
        emit({"type": "connection", "state": pc.connectionState})
        if pc.connectionState == "connected":
            connected.set()
        elif pc.connectionState in ("closed", "failed"):
            media_ended.set()

    frames_done = asyncio.Event()

    async def decode(track):
        """Each decoded frame's YUV digest, until the track ends or --frames have come."""
        from aiortc.mediastreams import MediaStreamError
        index = 0
        while True:
            try:
                frame = await track.recv()
            except MediaStreamError:
                break
            planes = frame.to_ndarray(format="yuv420p").tobytes()
            emit({"type": "frame", "index": index, "width": frame.width, "height": frame.height,
                  "md5": hashlib.md5(planes).hexdigest()})
            index += 1
            if index >= args.frames:
                frames_done.set()
        frames_done.set()

    if args.frames and not args.record:
        @pc.on("track")
        def on_decode_track(track):
            asyncio.ensure_future(decode(track))

    recorder = None
    if args.record:
        from aiortc.contrib.media import MediaRecorder
        recorder = MediaRecorder(args.record)

        @pc.on("track")
        def on_track(track):
            recorder.addTrack(track)

    try:
        seen = set()
        if signaling.offer_creator:
            transceiver = pc.addTransceiver("video", direction=args.direction)
            transceiver.setCodecPreferences(video_codecs(args.codec))
            if args.play:
                from aiortc.contrib.media import MediaPlayer
                played = MediaPlayer(args.play).video
                played.on("ended", media_ended.set)
                transceiver.sender.replaceTrack(played)
            await pc.setLocalDescription(await pc.createOffer())
            epoch = now_ms()
            signaling.save_offer(epoch, pc.localDescription.sdp)
            signaling.save_chunk(epoch, pc.localDescription.sdp)
            emit({"type": "offer-saved", "epoch": epoch})
            answer = await signaling.wait_for(
                lambda records: records.get(signaling.envelope_name(epoch, "answer")), "answer")
            log("our offer:\n" + pc.localDescription.sdp)
            log("their answer:\n" + answer["fields"]["payload"]["value"])
            await pc.setRemoteDescription(RTCSessionDescription(
                sdp=answer["fields"]["payload"]["value"], type="answer"))
            emit(dict({"type": "answer-applied", "epoch": epoch}, **negotiated(pc)))
        else:
            def offer_of_active_epoch(records):
                session = records.get(signaling.session_name())
                if session is None:
                    return None
                epoch = session["fields"]["callEpoch"]["value"]
                offer = records.get(signaling.envelope_name(epoch, "offer"))
                return (epoch, offer) if offer else None

            epoch, offer = await signaling.wait_for(offer_of_active_epoch, "offer")
            await pc.setRemoteDescription(RTCSessionDescription(
                sdp=offer["fields"]["payload"]["value"], type="offer"))
            emit({"type": "offer-applied", "epoch": epoch})
            transceiver = pc.getTransceivers()[0]
            transceiver.direction = args.direction
            transceiver.setCodecPreferences(video_codecs(args.codec))
            if args.play:
                from aiortc.contrib.media import MediaPlayer
                played = MediaPlayer(args.play).video
                played.on("ended", media_ended.set)
                transceiver.sender.replaceTrack(played)
            await pc.setLocalDescription(await pc.createAnswer())
            signaling.modify([{"operationType": "create",
                               "record": signaling.envelope(epoch, "answer", pc.localDescription.sdp)}])
            signaling.save_chunk(epoch, pc.localDescription.sdp)
            log("their offer:\n" + offer["fields"]["payload"]["value"])
            log("our answer:\n" + pc.localDescription.sdp)
            emit(dict({"type": "answer-saved", "epoch": epoch}, **negotiated(pc)))
        mid = pc.getTransceivers()[0].mid
        await add_candidates(pc, signaling.remote_candidates(epoch, seen), mid)

        if not args.signaling_only:
            deadline = time.monotonic() + args.timeout
            while not connected.is_set():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise StoreError("not connected within %.0f s (state %s)" % (args.timeout, pc.connectionState))
                if signaling.push is not None:
                    signaling.push.event.clear()  # before the fetch, so a hint during it is kept
                signaling.fetch()
                await add_candidates(pc, signaling.remote_candidates(epoch, seen), mid)
                # Until connected, or a push hint of new candidates, or a second (a hint may be lost).
                waits = [asyncio.ensure_future(connected.wait())]
                if signaling.push is not None:
                    waits.append(asyncio.ensure_future(signaling.push.event.wait()))
                _, pending = await asyncio.wait(waits, timeout=min(left, 1.0), return_when=asyncio.FIRST_COMPLETED)
                for waiting in pending:
                    waiting.cancel()
            if recorder:
                await recorder.start()
            # Until the media is done (the frames decoded, the played file ended, or the other peer gone),
            # at most --duration.
            done = frames_done if args.frames and not args.record else media_ended
            try:
                await asyncio.wait_for(done.wait(), args.duration)
            except asyncio.TimeoutError:
                pass
            if recorder:
                await recorder.stop()
        emit({"type": "done"})
    finally:
        await pc.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", required=True)
    parser.add_argument("--room", required=True)
    parser.add_argument("--me", required=True)
    parser.add_argument("--remote", required=True)
    parser.add_argument("--owner", action="store_true")
    parser.add_argument("--token")
    parser.add_argument("--codec", choices=["vp8", "h264"], default="vp8")
    parser.add_argument("--direction", choices=["sendrecv", "sendonly", "recvonly"], default="sendrecv")
    parser.add_argument("--signaling-only", action="store_true")
    parser.add_argument("--play")
    parser.add_argument("--record")
    parser.add_argument("--frames", type=int, default=0)
    parser.add_argument("--duration", type=float, default=3.0)
    parser.add_argument("--timeout", type=float, default=20.0)
    parser.add_argument("--misbehave", choices=["wrong-fingerprint", "silent-dtls"])
    parser.add_argument("--verbose", action="store_true", help="aiortc's debug log on stderr")
    args = parser.parse_args()
    if args.misbehave == "silent-dtls":
        from aiortc.rtcdtlstransport import RTCDtlsTransport

        async def never_start(self, remoteParameters):
            await asyncio.Event().wait()
        RTCDtlsTransport.start = never_start
    if args.verbose:
        import logging
        logging.basicConfig(level=logging.DEBUG)
    try:
        asyncio.run(asyncio.wait_for(run(args), args.timeout * 3 + args.duration))
    except Exception as error:  # every failure is reported the same way, with its reason
        emit({"type": "error", "message": "%s: %s" % (type(error).__name__, error)})
        sys.exit(1)


if __name__ == "__main__":
    main()
