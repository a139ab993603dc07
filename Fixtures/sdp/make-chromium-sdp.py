#!/usr/bin/env python3
"""Writes the Chromium session descriptions in Fixtures/sdp/ (see Fixtures/README.md).

    python3 Fixtures/sdp/make-chromium-sdp.py

Each description comes from a page that headless Chromium loads and dumps
(`--headless=new --virtual-time-budget=15000 --dump-dom`; a run that dumps the page before the
script has finished, or before any candidate was gathered (virtual time runs the page's timers
ahead of the real network), is tried again, up to five times): its script builds an
RTCPeerConnection (no ICE servers), makes an offer, or takes one of our offers
(zonertc-*.sdp) and answers it, waits for candidate gathering (bounded), and writes
`localDescription.sdp` into the page. Chromium runs once per page, from
/usr/lib/chromium/chromium (the /usr/bin wrapper would not be the process we wait for),
with a throwaway profile; each run is bounded by a timeout.
"""
import html
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHROMIUM = "/usr/lib/chromium/chromium"

PAGE = """<!doctype html><html><body><pre id="sdp">pending</pre><script>
(async () => {
  const out = document.getElementById('sdp');
  try {
    const pc = new RTCPeerConnection({iceServers: []});
    %s
    await new Promise(done => {
      if (pc.iceGatheringState === 'complete') done();
      pc.onicegatheringstatechange = () => { if (pc.iceGatheringState === 'complete') done(); };
      setTimeout(done, 2000);
    });
    out.textContent = pc.localDescription.sdp;
  } catch (e) { out.textContent = 'error: ' + e; }
})();
</script></body></html>
"""

OFFER_AUDIO_VIDEO_DATA = """
    pc.addTransceiver('audio', {direction: 'sendrecv'});
    pc.addTransceiver('video', {direction: 'sendrecv'});
    pc.createDataChannel('chat');
    await pc.setLocalDescription(await pc.createOffer());
"""

OFFER_VIDEO_RECVONLY = """
    pc.addTransceiver('video', {direction: 'recvonly'});
    await pc.setLocalDescription(await pc.createOffer());
"""

ANSWER = """
    await pc.setRemoteDescription({type: 'offer', sdp: %s});
    pc.getTransceivers()[0].direction = %s;
    await pc.setLocalDescription(await pc.createAnswer());
"""


def dump(script, work):
    page = os.path.join(work, "page.html")
    with open(page, "w") as f:
        f.write(PAGE % script)
    for attempt in range(5):
        result = subprocess.run(
            [CHROMIUM, "--headless=new", "--no-sandbox", "--user-data-dir=" + os.path.join(work, "profile"),
             "--disable-background-networking", "--disable-component-update",
             "--allow-loopback-in-peer-connection", "--virtual-time-budget=15000", "--dump-dom", "file://" + page],
            capture_output=True, text=True, timeout=60)
        found = re.search(r'<pre id="sdp">(.*?)</pre>', result.stdout, re.S)
        sdp = html.unescape(found.group(1)) if found else ""
        if sdp != "pending" and "a=candidate:" in sdp:
            break
    if not sdp.startswith("v=0"):
        sys.exit("chromium gave no description: %r" % (sdp or result.stdout[:300]))
    # The DOM's text lost the CRs; browsers write CRLF.
    return "".join(line + "\r\n" for line in sdp.splitlines() if line)


def write(name, sdp):
    with open(os.path.join(HERE, name), "w", newline="") as f:
        f.write(sdp)
    print("wrote", name)


def answer(offer_name, direction):
    with open(os.path.join(HERE, offer_name), newline="") as f:
        return ANSWER % (json.dumps(f.read()), json.dumps(direction))


def main():
    with tempfile.TemporaryDirectory(prefix="zonertc-chromium-") as work:
        write("chromium-offer-audio-video-data.sdp", dump(OFFER_AUDIO_VIDEO_DATA, work))
        write("chromium-offer-video-recvonly.sdp", dump(OFFER_VIDEO_RECVONLY, work))
        write("chromium-answer-to-zonertc-vp8.sdp", dump(answer("zonertc-offer-sendonly-vp8.sdp", "recvonly"), work))
        write("chromium-answer-to-zonertc-h264.sdp",
              dump(answer("zonertc-offer-sendrecv-h264.sdp", "sendrecv"), work))


if __name__ == "__main__":
    main()
