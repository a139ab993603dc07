// A media description (media section): RFC 8866 §5.14 (`m=`) and the lines that follow it up
// to the next `m=`; the JSEP meaning of its attributes, RFC 8829 §5.2–5.3.

/// One `m=` section and its lines.
///
/// The lines are kept in order, typed where this layer understands them, so that a parsed
/// section prints back with everything it had. The accessors read the attributes; for values a
/// session may also set at session level (ICE credentials, fingerprint, setup, direction) ask
/// `SessionDescription`, which falls back to the session level.
public struct MediaDescription: Hashable, Sendable {
    /// audio, video, application, ….
    public var kind: MediaKind
    /// The port; 9 (discard) in JSEP descriptions, 0 for a rejected section.
    public var port: UInt16
    /// The `/<number of ports>` after the port, if given.
    public var portCount: UInt16?
    /// The transport protocol: `UDP/TLS/RTP/SAVPF`, `RTP/AVPF`, `UDP/DTLS/SCTP`, ….
    public var transportProtocol: String
    /// The formats: RTP payload types as text for RTP protocols, or e.g. `webrtc-datachannel`.
    public var formats: [String]
    /// The section's `c=` line.
    public var connection: SDPConnection?
    /// The section's `b=` lines.
    public var bandwidths: [SDPBandwidth]
    /// `i=`, `k=` and lines of unknown types, in order.
    public var otherLines: [SDPLine]
    /// The `a=` lines, in order.
    public var attributes: [SDPAttribute]

    public init(
        kind: MediaKind, port: UInt16 = 9, portCount: UInt16? = nil, transportProtocol: String,
        formats: [String], connection: SDPConnection? = .placeholder, bandwidths: [SDPBandwidth] = [],
        otherLines: [SDPLine] = [], attributes: [SDPAttribute] = []
    ) {
        self.kind = kind
        self.port = port
        self.portCount = portCount
        self.transportProtocol = transportProtocol
        self.formats = formats
        self.connection = connection
        self.bandwidths = bandwidths
        self.otherLines = otherLines
        self.attributes = attributes
    }

    /// DTLS-SRTP with RTCP feedback, what WebRTC uses (RFC 8829 §5.1.2).
    public static let secureRTPProtocol = "UDP/TLS/RTP/SAVPF"
    /// Plain RTP with RTCP feedback (RFC 4585), for calls without DTLS.
    public static let plainRTPProtocol = "RTP/AVPF"

    /// True when the formats are RTP payload types (the protocol is an RTP profile: `RTP/AVP`,
    /// `RTP/AVPF`, `RTP/SAVP`, `UDP/TLS/RTP/SAVPF`, `TCP/DTLS/RTP/SAVPF`, …).
    public var isRTP: Bool {
        Self.isRTPProtocol(transportProtocol)
    }

    private static let rtpLetters = Array("RTP".utf8)

    static func isRTPProtocol(_ text: String) -> Bool {
        // Read from the string's bytes, ignoring ASCII case, without splitting (every `codecs` asks).
        // Matches a `/`-separated piece equal to RTP.
        var matched = 0  // letters of "RTP" matched so far in this piece; -1 once it cannot match
        for byte in text.utf8 {
            if byte == UInt8(ascii: "/") {
                if matched == 3 { return true }
                matched = 0
            } else if matched >= 0, matched < 3, byte & 0xDF == Self.rtpLetters[matched] {
                matched += 1
            } else {
                matched = -1
            }
        }
        return matched == 3
    }

    /// True when the section was rejected: port 0 without `a=bundle-only` (RFC 8843 §6).
    public var isRejected: Bool {
        port == 0 && !attributes.contains(.other(name: "bundle-only", value: nil))
    }

    /// The payload types of the `m=` line (RTP sections; non-numeric formats are left out).
    public var payloadTypes: [UInt8] {
        formats.compactMap { SDPGrammar.decimal($0, as: UInt8.self) }
    }

    /// `a=mid`.
    public var mid: String? {
        attributes.lazy.compactMap { if case .mid(let mid) = $0 { mid } else { nil } }.first
    }

    /// The section's own direction attribute, if any (see `SessionDescription.direction(of:)`).
    public var explicitDirection: MediaDirection? {
        attributes.lazy.compactMap { if case .direction(let direction) = $0 { direction } else { nil } }.first
    }

    /// The section's own `a=ice-ufrag`, if any.
    public var iceUsernameFragment: String? {
        attributes.lazy.compactMap { if case .iceUsernameFragment(let text) = $0 { text } else { nil } }.first
    }

    /// The section's own `a=ice-pwd`, if any.
    public var icePassword: String? {
        attributes.lazy.compactMap { if case .icePassword(let text) = $0 { text } else { nil } }.first
    }

    /// The section's own `a=ice-options`, if any.
    public var iceOptions: [String] {
        attributes.flatMap { attribute -> [String] in
            if case .iceOptions(let options) = attribute { return options }
            return []
        }
    }

    /// The `a=candidate` lines, in order.
    public var candidates: [ICECandidate] {
        attributes.compactMap { if case .candidate(let candidate) = $0 { candidate } else { nil } }
    }

    /// True when the section has `a=end-of-candidates`.
    public var hasEndOfCandidates: Bool {
        attributes.contains(flag: .endOfCandidates)
    }

    /// True when the section has `a=rtcp-mux`.
    public var isRTCPMultiplexed: Bool {
        attributes.contains(flag: .rtcpMux)
    }

    /// The section's own `a=setup`, if any.
    public var explicitSetupRole: DTLSSetupRole? {
        attributes.lazy.compactMap { if case .setup(let role) = $0 { role } else { nil } }.first
    }

    /// The section's own `a=fingerprint` lines.
    public var explicitFingerprints: [DTLSFingerprint] {
        attributes.compactMap { if case .fingerprint(let fingerprint) = $0 { fingerprint } else { nil } }
    }

    /// The codecs of an RTP section, in `m=` line order (the sender's preference): each payload
    /// type with its `a=rtpmap` (or RFC 3551 static assignment), `a=fmtp` and the `a=rtcp-fb`
    /// lines for it or for `*`. Payload types with neither rtpmap nor static assignment are left
    /// out; so is everything when the section is not RTP.
    public var codecs: [RTPCodec] {
        guard isRTP else { return [] }
        // One pass noting where the codec lines are, then searched in order: a section lists a
        // handful of payload types, too few to be worth hashing. The notes are plain numbers (line
        // indices), in one array with room for every attribute.
        var lines: [CodecLine] = []
        lines.reserveCapacity(attributes.count)
        for index in attributes.indices {
            switch attributes[index] {
            case .rtpMap(let payloadType, _, _, _):
                lines.append(CodecLine(kind: .rtpMap, payloadType: payloadType, index: index))
            case .formatParameters(let format, _):
                // An fmtp belongs to a payload type when its format is that type's decimal text
                // exactly (`096` names none): read once here, not printed for each codec to compare.
                if let payloadType = Self.payloadType(writtenAs: format) {
                    lines.append(CodecLine(kind: .formatParameters, payloadType: payloadType, index: index))
                }
            case .rtcpFeedback(let payloadType, _):
                lines.append(CodecLine(kind: .feedback, payloadType: payloadType, index: index))
            default:
                break
            }
        }
        var codecs: [RTPCodec] = []
        codecs.reserveCapacity(formats.count)
        // A payload type listed twice counts once. The codecs made so far tell which were seen: one
        // left out (no rtpmap, no static type) would be left out again.
        for format in formats {
            guard let payloadType = SDPGrammar.decimal(format, as: UInt8.self),
                !codecs.contains(where: { $0.payloadType == payloadType }),
                let codec = codec(payloadType, lines: lines)
            else { continue }
            codecs.append(codec)
        }
        return codecs
    }

    /// Where `codecs` found a codec line: its kind, the payload type it is for (nil: `*`) and its
    /// index in `attributes`.
    private struct CodecLine {
        enum Kind { case rtpMap, formatParameters, feedback }
        var kind: Kind
        var payloadType: UInt8?
        var index: Int
    }

    /// The codec at `payloadType` from the noted `lines`: the first rtpmap (or the static type) and
    /// the first fmtp count, and every rtcp-fb for it or `*`, in order. Nil without rtpmap or
    /// static type.
    private func codec(_ payloadType: UInt8, lines: [CodecLine]) -> RTPCodec? {
        var map: Int?, parameters: Int?, feedbackCount = 0
        for line in lines {
            switch line.kind {
            case .rtpMap: if map == nil, line.payloadType == payloadType { map = line.index }
            case .formatParameters: if parameters == nil, line.payloadType == payloadType { parameters = line.index }
            case .feedback: if line.payloadType == nil || line.payloadType == payloadType { feedbackCount += 1 }
            }
        }
        var codec: RTPCodec
        if let map, case .rtpMap(_, let name, let clockRate, let channels) = attributes[map] {
            codec = RTPCodec(payloadType: payloadType, name: name, clockRate: clockRate, channels: channels)
        } else if let known = RTPCodec.staticType(payloadType) {
            codec = RTPCodec(payloadType: payloadType, name: known.name, clockRate: known.clockRate)
        } else {
            return nil
        }
        if let parameters, case .formatParameters(_, let text) = attributes[parameters] {
            codec.formatParameters = text
        }
        if feedbackCount > 0 {
            codec.feedback.reserveCapacity(feedbackCount)
            for line in lines where line.kind == .feedback {
                guard line.payloadType == nil || line.payloadType == payloadType,
                    case .rtcpFeedback(_, let item) = attributes[line.index]
                else { continue }
                codec.feedback.append(item)
            }
        }
        return codec
    }

    /// The payload type whose decimal text is exactly `format` (what `String(payloadType)`
    /// prints: no sign, no leading zero), or nil.
    static func payloadType(writtenAs format: String) -> UInt8? {
        guard let value = SDPGrammar.decimal(format, as: UInt8.self),
            format.utf8.count == (value >= 100 ? 3 : value >= 10 ? 2 : 1)
        else { return nil }
        return value
    }

    /// The codec at `payloadType`, if the section lists it (see `codecs`).
    public func codec(payloadType: UInt8) -> RTPCodec? {
        codecs.first { $0.payloadType == payloadType }
    }

    /// The attributes that describe `codec`: its rtpmap, its fmtp if it has parameters, and one
    /// rtcp-fb per feedback type, in the order Chrome writes them.
    public static func attributes(describing codec: RTPCodec) -> [SDPAttribute] {
        var lines: [SDPAttribute] = []
        lines.reserveCapacity(attributeCount(describing: codec))
        appendAttributes(describing: codec, to: &lines)
        return lines
    }

    /// Appends `attributes(describing: codec)` to `lines`: a section's lines are written into one
    /// array, not gathered from an array per codec.
    static func appendAttributes(describing codec: RTPCodec, to lines: inout [SDPAttribute]) {
        lines.append(.rtpMap(payloadType: codec.payloadType, encodingName: codec.name, clockRate: codec.clockRate,
                             channels: codec.channels))
        for feedback in codec.feedback {
            lines.append(.rtcpFeedback(payloadType: codec.payloadType, feedback: feedback))
        }
        if let parameters = codec.formatParameters {
            lines.append(.formatParameters(format: String(codec.payloadType), parameters: parameters))
        }
    }

    /// How many lines `appendAttributes(describing:to:)` writes for `codec` (to reserve room).
    static func attributeCount(describing codec: RTPCodec) -> Int {
        1 + codec.feedback.count + (codec.formatParameters == nil ? 0 : 1)
    }
}
