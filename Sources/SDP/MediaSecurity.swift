// How a call's media is protected, and with it the SDP dialect our descriptions speak: plain
// RTP/AVPF between zonertc peers (RFC 4585), or DTLS-SRTP in the browsers' dialect
// (RFC 8827 §6.5: WebRTC media is always SRTP keyed by DTLS; RFC 8829 §5.1.2: UDP/TLS/RTP/SAVPF).

/// The media security of a call: what `--media-security` selects.
public enum MediaSecurity: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// Plain RTP: `RTP/AVPF`, today's profile for two zonertc peers.
    case none
    /// DTLS-SRTP: `UDP/TLS/RTP/SAVPF`, what browsers and aiortc require.
    case dtlsSRTP = "dtls-srtp"

    /// The `m=` protocol of our video section.
    public var transportProtocol: String {
        switch self {
        case .none: MediaDescription.plainRTPProtocol
        case .dtlsSRTP: MediaDescription.secureRTPProtocol
        }
    }

    /// The dialect our descriptions use with this security: the browsers' with DTLS-SRTP (no
    /// browser takes anything else), ours without.
    public var dialect: SDPDialect {
        switch self {
        case .none: .zonertc
        case .dtlsSRTP: .webRTC
        }
    }

    /// The security a remote section's protocol asks for: SAVP or SAVPF (RFC 3711, RFC 5124)
    /// mean SRTP, which in WebRTC is always keyed by DTLS; nil when the section is not RTP.
    public init?(transportProtocol: String) {
        guard MediaDescription.isRTPProtocol(transportProtocol) else { return nil }
        self = Self.namesSRTP(transportProtocol) ? .dtlsSRTP : .none
    }

    /// Whether a protocol contains `SAVP` in any ASCII case, read from the string's own bytes
    /// (every answer asks).
    static func namesSRTP(_ transportProtocol: String) -> Bool {
        let found = transportProtocol.utf8.withContiguousStorageIfAvailable(containsSAVP)
        return found ?? containsSAVP(Array(transportProtocol.utf8))
    }

    /// Whether `bytes` contain `savp` in any ASCII case.
    private static func containsSAVP(_ bytes: some RandomAccessCollection<UInt8>) -> Bool {
        let wanted: (UInt8, UInt8, UInt8, UInt8) = (UInt8(ascii: "s"), UInt8(ascii: "a"), UInt8(ascii: "v"),
                                                    UInt8(ascii: "p"))
        var window: (UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0)  // the last four bytes read, lowercased
        for byte in bytes {
            window = (window.1, window.2, window.3, SDPGrammar.lowercased(byte))
            if window == wanted { return true }
        }
        return false
    }

    public var description: String { rawValue }
}

/// Which lines our video section carries beyond what every description has (ICE, mid,
/// direction, rtcp-mux, codecs with their feedback and parameters).
public enum SDPDialect: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// Today's lines between two zonertc peers, unchanged: retransmissions reuse the original
    /// SSRC and payload type, the sender's file format travels in `a=x-zonertc-format`.
    case zonertc
    /// The browsers' dialect (RFC 8829 §5.2.1): an RTX codec for each codec with its `apt`
    /// (RFC 4588 §8.6), `a=rtcp-rsize` (RFC 5506 §5), and for a stream we send `a=msid`
    /// (RFC 8830 §2), `a=ssrc` lines (RFC 5576 §4.1) and `a=ssrc-group:FID` (RFC 5576 §4.2,
    /// RFC 4588 §8.7).
    case webRTC = "webrtc"

    public var description: String { rawValue }
}
