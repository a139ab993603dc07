// The media figures of the side panel and of window.zonertcResult, read from RTCPeerConnection.getStats()
// (W3C webrtc-stats): frames decoded, bitrate, loss, RTT, the selected candidate pair.

export class MediaFigures {
    constructor(pc) {
        this.pc = pc;
        this.last = null;
        this.figures = { framesDecoded: 0, framesReceived: 0, framesDropped: 0, framesEncoded: 0, framesSent: 0,
            bitrateInKbps: 0, bitrateOutKbps: 0, packetsLost: 0, packetsReceived: 0, lossPercent: 0, rttMs: null,
            decoder: null, frameWidth: null, frameHeight: null, selectedPair: null, firstFrameMs: null };
    }

    async sample(nowMs) {
        const report = await this.pc.getStats();
        const f = this.figures;
        let bytesIn = 0, bytesOut = 0, pairID = null;
        const byID = new Map();
        report.forEach((s) => byID.set(s.id, s));
        report.forEach((s) => {
            if (s.type === "inbound-rtp" && s.kind === "video") {
                f.framesDecoded = s.framesDecoded ?? 0;
                f.framesReceived = s.framesReceived ?? 0;
                f.framesDropped = s.framesDropped ?? 0;
                f.packetsLost = s.packetsLost ?? 0;
                f.packetsReceived = s.packetsReceived ?? 0;
                f.frameWidth = s.frameWidth ?? null;
                f.frameHeight = s.frameHeight ?? null;
                f.decoder = s.decoderImplementation ?? null;
                bytesIn = s.bytesReceived ?? 0;
                if (f.framesDecoded > 0 && f.firstFrameMs === null) f.firstFrameMs = Math.round(nowMs);
            }
            if (s.type === "outbound-rtp" && s.kind === "video") {
                f.framesEncoded = s.framesEncoded ?? 0;
                f.framesSent = s.framesSent ?? 0;
                bytesOut = s.bytesSent ?? 0;
            }
            if (s.type === "transport" && s.selectedCandidatePairId) pairID = s.selectedCandidatePairId;
        });
        const total = f.packetsLost + f.packetsReceived;
        f.lossPercent = total > 0 ? Math.round((1000 * f.packetsLost) / total) / 10 : 0;
        const pair = pairID ? byID.get(pairID) : null;
        if (pair) {
            const local = byID.get(pair.localCandidateId), remote = byID.get(pair.remoteCandidateId);
            if (pair.currentRoundTripTime !== undefined) f.rttMs = Math.round(pair.currentRoundTripTime * 10000) / 10;
            f.selectedPair = { local: local ? `${local.candidateType} ${local.address}:${local.port}` : "?",
                remote: remote ? `${remote.candidateType} ${remote.address}:${remote.port}` : "?",
                state: pair.state };
        }
        if (this.last) {
            const seconds = (nowMs - this.last.at) / 1000;
            if (seconds > 0) {
                f.bitrateInKbps = Math.round((8 * (bytesIn - this.last.bytesIn)) / seconds / 1000);
                f.bitrateOutKbps = Math.round((8 * (bytesOut - this.last.bytesOut)) / seconds / 1000);
            }
        }
        this.last = { at: nowMs, bytesIn, bytesOut };
        return f;
    }
}
