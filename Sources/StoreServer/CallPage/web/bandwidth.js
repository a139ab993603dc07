// Each leg's share of the uplink in a group call (docs/PROTOCOL.md §11.3): its descriptions carry
// `b=AS:<uplink kbps ÷ (members − 1)>` in the video section (RFC 4566 §5.8: after `c=`, before the
// attributes) — the budget the writer asks the other side to keep to. No I/O: unit-tested with node.

/** The leg's share in kbit/s of `uplinkKbps` among `members` (this page included), at least 1. */
export function legShareKbps(uplinkKbps, members) {
    return Math.max(1, Math.floor(uplinkKbps / Math.max(1, members - 1)));
}

/** `sdp` with `b=AS:<kbps>` in its video section (an existing `b=AS` there replaced). */
export function withBandwidth(sdp, kbps) {
    const eol = sdp.includes("\r\n") ? "\r\n" : "\n";
    const lines = sdp.split(/\r?\n/);
    const out = [];
    let inVideo = false, placed = false;
    for (const line of lines) {
        if (line.startsWith("m=")) {
            inVideo = line.startsWith("m=video ");
            out.push(line);
            continue;
        }
        if (inVideo && line.startsWith("b=AS:")) continue;
        if (inVideo && !placed && !/^[icb]=/.test(line)) {
            out.push(`b=AS:${kbps}`);
            placed = true;
        }
        out.push(line);
    }
    return out.join(eol);
}
