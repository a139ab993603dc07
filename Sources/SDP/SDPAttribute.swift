// Attribute lines, `a=<name>[:<value>]`, RFC 8866 §5.13 and §6. The attributes a WebRTC
// session needs are typed: ICE (RFC 8839 §5), mid and group (RFC 5888 §4–5, RFC 8843 for
// BUNDLE), rtpmap and fmtp (RFC 8866 §6.6, §6.15), rtcp-fb (RFC 4585 §4.2), rtcp-mux
// (RFC 5761 §5.1.1), rtcp-rsize (RFC 5506 §5), directions (RFC 8866 §6.7), setup (RFC 4145 §4)
// and fingerprint (RFC 8122 §5). Every other attribute is kept as text, in order.

/// One `a=` line of a session or media section.
///
/// Typed cases are produced only for the attribute names they stand for; `.other` holds every
/// other attribute (extmap, ssrc, msid, rid, simulcast, sctp-port, …) so that a description
/// prints back with all its lines. Build typed cases rather than `.other` for the names above:
/// `.other(name: "mid", …)` prints fine but parses back as `.mid`.
public enum SDPAttribute: Hashable, Sendable, CustomStringConvertible {
    /// `a=candidate:…`, media level.
    case candidate(ICECandidate)
    /// `a=end-of-candidates` (RFC 8840 §8.2): no more candidates will come for this section.
    case endOfCandidates
    /// `a=ice-ufrag:…`.
    case iceUsernameFragment(String)
    /// `a=ice-pwd:…`.
    case icePassword(String)
    /// `a=ice-options:trickle …`.
    case iceOptions([String])
    /// `a=ice-lite`, session level.
    case iceLite
    /// `a=mid:…`, the media section's identification tag.
    case mid(String)
    /// `a=group:<semantics> <mid> …`, session level (`BUNDLE`, `LS`, …).
    case group(semantics: String, identifiers: [String])
    /// `a=rtpmap:<pt> <name>/<clock rate>[/<channels>]`.
    case rtpMap(payloadType: UInt8, encodingName: String, clockRate: UInt32, channels: UInt16?)
    /// `a=fmtp:<format> <parameters>`.
    case formatParameters(format: String, parameters: FormatParameters)
    /// `a=rtcp-fb:<pt or *> <feedback>`; a nil payload type stands for `*` (all formats).
    case rtcpFeedback(payloadType: UInt8?, feedback: RTCPFeedback)
    /// `a=rtcp-mux`: RTP and RTCP share one port.
    case rtcpMux
    /// `a=rtcp-rsize`: reduced-size RTCP is welcome.
    case rtcpReducedSize
    /// `a=sendrecv`, `a=sendonly`, `a=recvonly` or `a=inactive`.
    case direction(MediaDirection)
    /// `a=setup:…`, the DTLS role.
    case setup(DTLSSetupRole)
    /// `a=fingerprint:<hash> <digest>`.
    case fingerprint(DTLSFingerprint)
    /// Any other attribute, kept as written; `value` is nil when there was no `:`.
    case other(name: String, value: String?)

    /// The attribute name (the part before `:`).
    public var name: String {
        switch self {
        case .candidate: "candidate"
        case .endOfCandidates: "end-of-candidates"
        case .iceUsernameFragment: "ice-ufrag"
        case .icePassword: "ice-pwd"
        case .iceOptions: "ice-options"
        case .iceLite: "ice-lite"
        case .mid: "mid"
        case .group: "group"
        case .rtpMap: "rtpmap"
        case .formatParameters: "fmtp"
        case .rtcpFeedback: "rtcp-fb"
        case .rtcpMux: "rtcp-mux"
        case .rtcpReducedSize: "rtcp-rsize"
        case .direction(let direction): direction.rawValue
        case .setup: "setup"
        case .fingerprint: "fingerprint"
        case .other(let name, _): name
        }
    }

    /// The attribute value (the part after `:`); nil for property attributes.
    public var value: String? {
        switch self {
        case .candidate(let candidate): candidate.attributeValue
        case .endOfCandidates, .iceLite, .rtcpMux, .rtcpReducedSize, .direction: nil
        case .iceUsernameFragment(let text), .icePassword(let text), .mid(let text): text
        case .iceOptions(let options): options.joined(separator: " ")
        case .group(let semantics, let identifiers): Self.groupValue(semantics, identifiers)
        case .rtpMap(let payloadType, let encodingName, let clockRate, let channels):
            "\(payloadType) \(encodingName)/\(clockRate)" + (channels.map { "/\($0)" } ?? "")
        case .formatParameters(let format, let parameters): "\(format) \(parameters.text)"
        case .rtcpFeedback(let payloadType, let feedback): "\(payloadType.map(String.init) ?? "*") \(feedback)"
        case .setup(let role): role.rawValue
        case .fingerprint(let fingerprint): fingerprint.description
        case .other(_, let value): value
        }
    }

    /// `<semantics> <id>…`: appended word by word (every description prints its BUNDLE group,
    /// usually as short as `BUNDLE 0`).
    private static func groupValue(_ semantics: String, _ identifiers: [String]) -> String {
        var value = semantics
        for identifier in identifiers {
            value += " "
            value += identifier
        }
        return value
    }

    /// The line without `a=`: `name` or `name:value`.
    public var description: String {
        value.map { "\(name):\($0)" } ?? name
    }

    /// Where an attribute may appear.
    enum Scope {
        case sessionOnly, mediaOnly, either
    }

    /// Attributes that mean nothing outside a media section, or nothing inside one; an attribute
    /// at the wrong level is an error rather than something to guess about.
    static func scope(of name: String) -> Scope {
        scopes[name] ?? .either
    }

    private static let scopes: [String: Scope] = {
        var scopes: [String: Scope] = [:]
        for name in [
            "candidate", "rtpmap", "fmtp", "rtcp-fb", "mid", "rtcp-mux", "rtcp-rsize", "rtcp", "ssrc", "ssrc-group",
            "msid", "rid", "simulcast", "sctp-port", "sctpmap", "max-message-size",
        ] {
            scopes[name] = .mediaOnly
        }
        for name in ["group", "ice-lite", "msid-semantic"] {
            scopes[name] = .sessionOnly
        }
        return scopes
    }()
}

// MARK: - Parsing

extension SDPAttribute {
    /// Reads the part of an `a=` line after `a=`; `line` is the whole line, quoted in candidate
    /// errors.
    static func parse(_ text: ArraySlice<UInt8>, line: String) throws(SDPLineFailure) -> SDPAttribute {
        let (nameBytes, value) = SDPGrammar.splitOnce(text, at: SDPGrammar.colon)
        guard SDPGrammar.isToken(nameBytes) else {
            throw SDPLineFailure(
                .invalidAttribute,
                nameBytes.isEmpty
                    ? "the attribute has no name" : "the attribute name \(quote(nameBytes)) is not a token")
        }
        let name = SDPGrammar.string(nameBytes)

        func flag(_ attribute: SDPAttribute) throws(SDPLineFailure) -> SDPAttribute {
            guard value == nil else { throw SDPLineFailure(.invalidAttribute, "a=\(name) takes no value") }
            return attribute
        }
        func required() throws(SDPLineFailure) -> ArraySlice<UInt8> {
            guard let value, !value.isEmpty else { throw SDPLineFailure(.invalidAttribute, "a=\(name) needs a value") }
            return value
        }

        guard let known = knownNames[name] else {
            return .other(name: name, value: value.map { SDPGrammar.string($0) })
        }
        switch known {
        case .candidate:
            let value = try required()
            do {
                return .candidate(try CandidateReader(input: line).read(value))
            } catch {
                throw SDPLineFailure(.invalidCandidate, "bad ICE candidate: " + error.problem, candidateError: error)
            }
        case .endOfCandidates: return try flag(.endOfCandidates)
        case .iceLite: return try flag(.iceLite)
        case .rtcpMux: return try flag(.rtcpMux)
        case .rtcpReducedSize: return try flag(.rtcpReducedSize)
        case .direction(let direction): return try flag(.direction(direction))
        case .iceUsernameFragment:
            let value = try required()
            guard ICECredentials.isICEString(value, lengths: 4...256) else {
                throw SDPLineFailure(.invalidAttribute, "ice-ufrag must be 4 to 256 letters, digits, '+' or '/'")
            }
            return .iceUsernameFragment(SDPGrammar.string(value))
        case .icePassword:
            let value = try required()
            guard ICECredentials.isICEString(value, lengths: 22...256) else {
                throw SDPLineFailure(.invalidAttribute, "ice-pwd must be 22 to 256 letters, digits, '+' or '/'")
            }
            return .icePassword(SDPGrammar.string(value))
        case .iceOptions:
            let options = SDPGrammar.fields(try required())
            guard !options.isEmpty, options.allSatisfy({ SDPGrammar.all($0, SDPGrammar.isICEChar) }) else {
                throw SDPLineFailure(
                    .invalidAttribute, "ice-options must be option tags of letters, digits, '+' or '/'")
            }
            return .iceOptions(options.map { SDPGrammar.string($0) })
        case .mid:
            let value = try required()
            guard SDPGrammar.isToken(value) else { throw SDPLineFailure(.invalidAttribute, "mid must be a token") }
            return .mid(SDPGrammar.string(value))
        case .group:
            let parts = SDPGrammar.fields(try required())
            guard let semantics = parts.first, parts.allSatisfy({ SDPGrammar.isToken($0) }) else {
                throw SDPLineFailure(.invalidAttribute, "group must be a semantics token followed by mid tokens")
            }
            return .group(
                semantics: SDPGrammar.string(semantics), identifiers: parts.dropFirst().map { SDPGrammar.string($0) })
        case .rtpMap: return try parseRTPMap(try required())
        case .formatParameters:
            let (format, parameters) = SDPGrammar.splitOnce(try required(), at: SDPGrammar.space)
            guard SDPGrammar.isToken(format), let parameters else {
                throw SDPLineFailure(.invalidAttribute, "fmtp must be a format, a space and parameters")
            }
            return .formatParameters(
                format: SDPGrammar.string(format), parameters: FormatParameters(SDPGrammar.string(parameters)))
        case .rtcpFeedback: return try parseFeedback(try required())
        case .setup:
            let value = try required()
            for role in DTLSSetupRole.allCases where SDPGrammar.equalsIgnoringCase(value, role.rawValue) {
                return .setup(role)
            }
            throw SDPLineFailure(.invalidAttribute, "setup must be active, passive, actpass or holdconn")
        case .fingerprint: return .fingerprint(try DTLSFingerprint.parse(try required()))
        }
    }

    /// The attribute names this layer types: one dictionary lookup per line instead of a
    /// string comparison per name.
    private enum KnownName {
        case candidate, endOfCandidates, iceLite, rtcpMux, rtcpReducedSize
        case direction(MediaDirection)
        case iceUsernameFragment, icePassword, iceOptions, mid, group, rtpMap, formatParameters, rtcpFeedback
        case setup, fingerprint
    }

    private static let knownNames: [String: KnownName] = {
        var names: [String: KnownName] = [
            "candidate": .candidate, "end-of-candidates": .endOfCandidates, "ice-lite": .iceLite,
            "rtcp-mux": .rtcpMux, "rtcp-rsize": .rtcpReducedSize, "ice-ufrag": .iceUsernameFragment,
            "ice-pwd": .icePassword, "ice-options": .iceOptions, "mid": .mid, "group": .group, "rtpmap": .rtpMap,
            "fmtp": .formatParameters, "rtcp-fb": .rtcpFeedback, "setup": .setup, "fingerprint": .fingerprint,
        ]
        for direction in MediaDirection.allCases {
            names[direction.rawValue] = .direction(direction)
        }
        return names
    }()

    /// `<payload type> <encoding name>/<clock rate>[/<encoding parameters>]`.
    private static func parseRTPMap(_ value: ArraySlice<UInt8>) throws(SDPLineFailure) -> SDPAttribute {
        let parts = SDPGrammar.fields(value)
        guard parts.count == 2 else {
            throw SDPLineFailure(.invalidAttribute, "rtpmap must be a payload type, a space and <name>/<clock rate>")
        }
        let payloadType = try readPayloadType(parts[0], in: "rtpmap")
        let encoding = SDPGrammar.split(parts[1], on: SDPGrammar.slash, omittingEmpty: false)
        guard encoding.count == 2 || encoding.count == 3, SDPGrammar.isToken(encoding[0]) else {
            throw SDPLineFailure(.invalidAttribute, "rtpmap encoding must be <name>/<clock rate>[/<channels>]")
        }
        guard let clockRate = SDPGrammar.decimal(encoding[1], as: UInt32.self), clockRate > 0 else {
            throw SDPLineFailure(.invalidAttribute, "rtpmap clock rate \(quote(encoding[1])) is not a positive number")
        }
        var channels: UInt16?
        if encoding.count == 3 {
            guard let count = SDPGrammar.decimal(encoding[2], as: UInt16.self), count > 0 else {
                throw SDPLineFailure(
                    .invalidAttribute, "rtpmap channel count \(quote(encoding[2])) is not a positive number")
            }
            channels = count
        }
        return .rtpMap(
            payloadType: payloadType, encodingName: SDPGrammar.string(encoding[0]), clockRate: clockRate,
            channels: channels)
    }

    /// `<payload type or *> <type>[ <parameter>…]`; the parameter keeps its words joined by
    /// single spaces.
    private static func parseFeedback(_ value: ArraySlice<UInt8>) throws(SDPLineFailure) -> SDPAttribute {
        let parts = SDPGrammar.fields(value)
        guard parts.count >= 2, SDPGrammar.isToken(parts[1]) else {
            throw SDPLineFailure(
                .invalidAttribute, "rtcp-fb must be a payload type or '*', a space and a feedback type")
        }
        let payloadType =
            parts[0].count == 1 && parts[0].first == SDPGrammar.star
            ? nil : try readPayloadType(parts[0], in: "rtcp-fb")
        let parameter = parts.count > 2 ? parts[2...].map { SDPGrammar.string($0) }.joined(separator: " ") : nil
        return .rtcpFeedback(
            payloadType: payloadType, feedback: RTCPFeedback(type: SDPGrammar.string(parts[1]), parameter: parameter))
    }

    static func readPayloadType(_ token: ArraySlice<UInt8>, in context: String) throws(SDPLineFailure) -> UInt8 {
        guard let payloadType = SDPGrammar.decimal(token, as: UInt8.self), payloadType <= 127 else {
            throw SDPLineFailure(
                .invalidPayloadType, "\(context): \(quote(token)) is not an RTP payload type (0 to 127)")
        }
        return payloadType
    }
}
