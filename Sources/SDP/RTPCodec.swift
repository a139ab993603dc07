// An RTP codec as a media section describes it: the payload type on the m= line, its
// `a=rtpmap` (RFC 8866 §6.6), `a=fmtp` (§6.15) and `a=rtcp-fb` (RFC 4585 §4.2) lines, and the
// static payload types of RFC 3551 §6. H.264 parameters: RFC 6184 §8.1.

/// A codec offered or accepted in a media section.
public struct RTPCodec: Hashable, Sendable, CustomStringConvertible {
    /// The RTP payload type, 0–127 (96–127 for dynamic types).
    public var payloadType: UInt8
    /// The encoding name, e.g. `VP8`, `H264`, `opus` (case-insensitive when compared).
    public var name: String
    /// The RTP clock rate in Hz (90000 for video).
    public var clockRate: UInt32
    /// The channel count of an audio codec, when `a=rtpmap` gives one.
    public var channels: UInt16?
    /// The `a=fmtp` parameters, read once from the description that listed the codec.
    public var formatParameters: FormatParameters?
    /// The feedback types listed for this payload type or for `*`.
    public var feedback: [RTCPFeedback]

    public init(
        payloadType: UInt8, name: String, clockRate: UInt32, channels: UInt16? = nil,
        formatParameters: FormatParameters? = nil, feedback: [RTCPFeedback] = []
    ) {
        self.payloadType = payloadType
        self.name = name
        self.clockRate = clockRate
        self.channels = channels
        self.formatParameters = formatParameters
        self.feedback = feedback
    }

    /// The feedback a silent video call asks for: FIR, NACK and PLI.
    public static let videoFeedback: [RTCPFeedback] = [.fullIntraRequest, .nack, .pictureLossIndication]

    /// VP8 (RFC 7741) at 90 kHz.
    public static func vp8(payloadType: UInt8 = 96) -> RTPCodec {
        RTPCodec(payloadType: payloadType, name: "VP8", clockRate: 90_000, feedback: videoFeedback)
    }

    /// H.264 (RFC 6184) at 90 kHz in non-interleaved mode (packetization-mode=1), by default
    /// Constrained Baseline level 3.1 (`42e01f`), the profile every WebRTC stack supports.
    public static func h264(payloadType: UInt8 = 97, profileLevelID: String = "42e01f") -> RTPCodec {
        RTPCodec(
            payloadType: payloadType, name: "H264", clockRate: 90_000,
            formatParameters: FormatParameters(
                "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=\(profileLevelID)"),
            feedback: videoFeedback)
    }

    /// The value of one `a=fmtp` parameter (see `FormatParameters.value(of:)`); nil when absent.
    public func formatParameter(_ key: String) -> String? {
        formatParameters?.value(of: key)
    }

    /// Codec names and parameter names compare without ASCII case (RFC 4855 §3, RFC 8866 §5.14).
    static func equalIgnoringASCIICase(_ a: UInt8, _ b: UInt8) -> Bool {
        SDPGrammar.lowercased(a) == SDPGrammar.lowercased(b)
    }

    /// Whether the codec is named `name` (a lowercase name), in any ASCII case.
    func isNamed(_ name: String) -> Bool {
        Self.sameIgnoringASCIICase(self.name, name)
    }

    /// Whether `a` and `b` are the same name in any ASCII case. Lengths first: they tell most
    /// codec names apart (`VP8`, `H264`, `rtx`) without comparing a letter. Then the strings' own
    /// bytes (every codec of an answer is named several times).
    private static func sameIgnoringASCIICase(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        let same = a.utf8.withContiguousStorageIfAvailable { a in
            b.utf8.withContiguousStorageIfAvailable { b in
                for index in a.indices where SDPGrammar.lowercased(a[index]) != SDPGrammar.lowercased(b[index]) {
                    return false
                }
                return true
            }
        }
        return (same ?? nil) ?? a.utf8.elementsEqual(b.utf8, by: equalIgnoringASCIICase)
    }

    /// True when an offer of `self` and an answer of `other` describe the same format, so the
    /// answerer may accept it: same name (any case), clock rate and channel count, and for
    /// H.264 the same packetization mode and the same profile by RFC 6184 Table 5 (§8.2.2: the
    /// level may differ; `42e01f` and `42c01f` are both Constrained Baseline, `42001f` is
    /// Baseline); for VP9 the same profile-id. A profile-level-id that is not six hex digits
    /// or names no known profile matches nothing.
    public func isCompatible(with other: RTPCodec) -> Bool {
        guard sharesEncoding(with: other) else { return false }
        if isNamed("h264") {
            return Self.sameH264Format(H264FormatParameters(self), H264FormatParameters(other))
        }
        if isNamed("vp9") {
            return sameVP9Profile(as: other)
        }
        return true
    }

    /// Same name (any case), clock rate and channel count (absent is one, RFC 8866 §6.6).
    private func sharesEncoding(with other: RTPCodec) -> Bool {
        Self.sameIgnoringASCIICase(name, other.name) && clockRate == other.clockRate
            && (channels ?? 1) == (other.channels ?? 1)
    }

    /// The H.264 half of `isCompatible`, on parameters already read (it is symmetric).
    private static func sameH264Format(_ mine: H264FormatParameters, _ theirs: H264FormatParameters) -> Bool {
        guard let myProfile = mine.profileLevelID?.profile, let theirProfile = theirs.profileLevelID?.profile else {
            return false
        }
        return (mine.packetizationMode ?? "0") == (theirs.packetizationMode ?? "0") && myProfile == theirProfile
    }

    /// The VP9 half of `isCompatible`: the same profile-id, 0 when absent.
    private func sameVP9Profile(as other: RTPCodec) -> Bool {
        (formatParameter("profile-id") ?? "0") == (other.formatParameter("profile-id") ?? "0")
    }

    /// The H.264 profile-level-id (RFC 6184 §8.1, `42000a` when absent); nil when it is
    /// malformed.
    public var h264ProfileLevelID: H264ProfileLevelID? {
        guard let text = formatParameter("profile-level-id") else { return .absentDefault }
        return H264ProfileLevelID(text)
    }

    /// What an answerer whose codec is `self` writes for an offered compatible codec `theirs`
    /// (see `isCompatible`): our codec at the offer's payload type, with the feedback both
    /// list, and for H.264 the profile-level-id RFC 6184 §8.2.2 gives the answer (the level is
    /// ours when both allow level asymmetry, else the lower one).
    public func answering(_ theirs: RTPCodec) -> RTPCodec {
        guard isNamed("h264") else { return answering(theirs, h264: nil) }
        return answering(theirs, h264: (H264FormatParameters(self), H264FormatParameters(theirs)))
    }

    /// `answering(theirs)` when `theirs.isCompatible(with: self)`, else nil: one step for an
    /// answerer, which reads each side's H.264 parameters once for both questions.
    func answer(to theirs: RTPCodec) -> RTPCodec? {
        guard sharesEncoding(with: theirs) else { return nil }
        if isNamed("h264") {
            let ours = H264FormatParameters(self), offered = H264FormatParameters(theirs)
            guard Self.sameH264Format(offered, ours) else { return nil }
            return answering(theirs, h264: (ours, offered))
        }
        if isNamed("vp9"), !theirs.sameVP9Profile(as: self) { return nil }
        return answering(theirs, h264: nil)
    }

    /// `answering(theirs)` with, for H.264, both sides' parameters already read.
    private func answering(
        _ theirs: RTPCodec, h264: (ours: H264FormatParameters, offered: H264FormatParameters)?
    ) -> RTPCodec {
        var codec = self
        codec.payloadType = theirs.payloadType
        // Usually both list the same feedback: then ours is kept as it is.
        if !feedback.allSatisfy(theirs.feedback.contains) {
            codec.feedback = feedback.filter(theirs.feedback.contains)
        }
        guard let (ours, offeredParameters) = h264 else { return codec }
        if let mine = ours.profileLevelID, let offered = offeredParameters.profileLevelID {
            let asymmetry = ours.levelAsymmetryAllowed == "1" && offeredParameters.levelAsymmetryAllowed == "1"
            // Ours is rewritten when absent or naming another profile-level-id. Compared parsed, not
            // printed: a written value that parses is six hex digits, so it prints as written up to
            // case, and this is the comparison of the printed value with the lowercased text.
            if let answered = mine.answering(offered, levelAsymmetryAllowed: asymmetry),
                ours.profileLevelIDText == nil || answered != mine
            {
                codec = codec.settingFormatParameter("profile-level-id", to: answered.description)
            }
        }
        return codec
    }

    /// The static payload types of RFC 3551 §6 that WebRTC stacks list without `a=rtpmap`.
    static func staticType(_ payloadType: UInt8) -> (name: String, clockRate: UInt32)? {
        switch payloadType {
        case 0: ("PCMU", 8_000)
        case 3: ("GSM", 8_000)
        case 4: ("G723", 8_000)
        case 8: ("PCMA", 8_000)
        case 9: ("G722", 8_000)
        case 13: ("CN", 8_000)
        case 18: ("G729", 8_000)
        case 26: ("JPEG", 90_000)
        case 31: ("H261", 90_000)
        case 34: ("H263", 90_000)
        default: nil
        }
    }

    /// `<pt> <name>/<rate>[/<channels>]`, as after `a=rtpmap:`.
    public var description: String {
        var text = "\(payloadType) \(name)/\(clockRate)"
        if let channels { text += "/\(channels)" }
        return text
    }
}
