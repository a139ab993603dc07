// The identity of the video stream we send, as the browsers' dialect announces it: its SSRC and
// its RTX SSRC (RFC 5576 §4.1, with the FID group of §4.2 and RFC 4588 §8.7), its CNAME
// (RFC 7022 §4.1) and its MediaStream and track ids (RFC 8830 §2).
import ZoneCore

/// Who our outgoing video stream is, for `a=ssrc`, `a=ssrc-group:FID` and `a=msid`.
public struct VideoSourceIdentity: Hashable, Sendable {
    /// The SSRC of the original packets.
    public var ssrc: UInt32
    /// The SSRC of retransmissions (RTX), distinct from `ssrc`.
    public var retransmissionSSRC: UInt32
    /// The RTCP CNAME, the same for every stream of this endpoint.
    public var cname: String
    /// The MediaStream id (`msid-id`, 1–64 token characters).
    public var streamID: String
    /// The track id (`msid-appdata`, 1–64 token characters).
    public var trackID: String

    public init(ssrc: UInt32, retransmissionSSRC: UInt32, cname: String, streamID: String, trackID: String) {
        precondition(ssrc != retransmissionSSRC, "RTX needs an SSRC of its own (RFC 4588 §4)")
        self.ssrc = ssrc
        self.retransmissionSSRC = retransmissionSSRC
        self.cname = cname
        self.streamID = streamID
        self.trackID = trackID
    }

    /// A fresh identity from `random`: two distinct non-zero SSRCs, a 16-character CNAME
    /// (RFC 7022 §4.1 asks for at least 96 random bits: 16 × 6) and 32-hex-digit ids.
    public static func random(using random: inout SeededRandom) -> VideoSourceIdentity {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        func ssrc() -> UInt32 { max(1, UInt32(truncatingIfNeeded: random.next())) }
        let first = ssrc()
        var second = ssrc()
        while second == first { second = ssrc() }
        let cname = String(decoding: (0..<16).map { _ in alphabet[Int(random.next() & 63)] }, as: UTF8.self)
        let streamID = random.hex128()
        return VideoSourceIdentity(
            ssrc: first, retransmissionSSRC: second, cname: cname, streamID: streamID, trackID: random.hex128())
    }

    /// `a=msid`, `a=ssrc-group:FID` (when RTX is on) and the `a=ssrc` lines, in Chrome's order.
    func attributes(retransmission: Bool) -> [SDPAttribute] {
        let msid = "\(streamID) \(trackID)"
        var lines: [SDPAttribute] = [.other(name: "msid", value: msid)]
        let sources = retransmission ? [ssrc, retransmissionSSRC] : [ssrc]
        if retransmission {
            lines.append(.other(name: "ssrc-group", value: "FID \(ssrc) \(retransmissionSSRC)"))
        }
        for source in sources {
            lines.append(.other(name: "ssrc", value: "\(source) cname:\(cname)"))
            lines.append(.other(name: "ssrc", value: "\(source) msid:\(msid)"))
        }
        return lines
    }
}
