#!/usr/bin/env python3
"""Writes the aiortc session descriptions in Fixtures/sdp/ (see Fixtures/README.md).

    python3 Fixtures/sdp/make-aiortc-sdp.py

Offline: aiortc gathers host candidates from the local interfaces only (no STUN server), so
the addresses in the files are this machine's. Offers come from createOffer +
setLocalDescription (so they carry candidates); answers from setRemoteDescription of our own
offer (zonertc-*.sdp, written by `SessionDescription.silentVideoOffer` in the browsers'
dialect; SDPFixtureTests checks those files still equal what the writer makes) + createAnswer +
setLocalDescription.
"""
import asyncio
import os

from aiortc import RTCConfiguration, RTCPeerConnection, RTCRtpSender, RTCSessionDescription

HERE = os.path.dirname(os.path.abspath(__file__))


def write(name, sdp):
    with open(os.path.join(HERE, name), "w", newline="") as f:
        f.write(sdp)
    print("wrote", name)


async def offer(name, build):
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    build(pc)
    await pc.setLocalDescription(await pc.createOffer())
    write(name, pc.localDescription.sdp)
    await pc.close()


async def answer(name, offer_name, direction):
    with open(os.path.join(HERE, offer_name), newline="") as f:
        remote = f.read()
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    await pc.setRemoteDescription(RTCSessionDescription(sdp=remote, type="offer"))
    for transceiver in pc.getTransceivers():
        transceiver.direction = direction
    await pc.setLocalDescription(await pc.createAnswer())
    write(name, pc.localDescription.sdp)
    await pc.close()


def video_only(direction):
    return lambda pc: pc.addTransceiver("video", direction=direction)


def audio_video_data(pc):
    pc.addTransceiver("audio", direction="sendrecv")
    pc.addTransceiver("video", direction="sendrecv")
    pc.createDataChannel("chat")


def h264_first(pc):
    transceiver = pc.addTransceiver("video", direction="sendrecv")
    codecs = RTCRtpSender.getCapabilities("video").codecs
    h264 = [c for c in codecs if c.mimeType == "video/H264"]
    rtx = [c for c in codecs if c.mimeType == "video/rtx"]
    transceiver.setCodecPreferences(h264 + rtx)


async def main():
    await offer("aiortc-offer-video-sendrecv.sdp", video_only("sendrecv"))
    await offer("aiortc-offer-video-recvonly.sdp", video_only("recvonly"))
    await offer("aiortc-offer-audio-video-data.sdp", audio_video_data)
    await offer("aiortc-offer-h264-only.sdp", h264_first)
    await answer("aiortc-answer-to-zonertc-vp8.sdp", "zonertc-offer-sendonly-vp8.sdp", "recvonly")
    await answer("aiortc-answer-to-zonertc-h264.sdp", "zonertc-offer-sendrecv-h264.sdp", "sendrecv")


asyncio.run(main())
