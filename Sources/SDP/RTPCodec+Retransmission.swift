// The RTP retransmission payload format in SDP, RFC 4588 §8.6: `a=rtpmap:<pt> rtx/<rate>` and
// `a=fmtp:<pt> apt=<original pt>[;rtx-time=<ms>]`, one RTX payload type per original one (§4:
// session multiplexing, an RTX stream on its own SSRC, paired by `a=ssrc-group:FID`).

extension RTPCodec {
    /// The encoding name of the retransmission format.
    public static let retransmissionName = "rtx"

    /// An RTX format at `payloadType` for the codec at `associatedPayloadType`, at that codec's
    /// clock rate (§8.6: the same as the original's).
    public static func retransmission(
        payloadType: UInt8, associatedPayloadType: UInt8, clockRate: UInt32 = 90_000
    ) -> RTPCodec {
        RTPCodec(
            payloadType: payloadType, name: retransmissionName, clockRate: clockRate,
            formatParameters: FormatParameters("apt=\(associatedPayloadType)"))
    }

    /// True for an RTX format (name compared without case).
    public var isRetransmission: Bool {
        isNamed(Self.retransmissionName)
    }

    /// The `apt` of an RTX format: the payload type it retransmits; nil when this is not RTX or
    /// `apt` is missing or not a payload type (0…127) — such an RTX format is ignored.
    public var associatedPayloadType: UInt8? {
        guard isRetransmission, let text = formatParameter("apt"),
            let value = SDPGrammar.decimal(Array(text.utf8)[...], as: UInt8.self), value <= 127
        else { return nil }
        return value
    }

    /// This codec with the `a=fmtp` parameter `key` set to `value` (added when absent), the
    /// other parameters kept as written.
    func settingFormatParameter(_ key: String, to value: String) -> RTPCodec {
        var codec = self
        codec.formatParameters = (formatParameters ?? FormatParameters("")).setting(key, to: value)
        return codec
    }
}

extension Array where Element == RTPCodec {
    /// These codecs each followed by an RTX format (RFC 4588 §8.6), as Chrome lists them: the
    /// RTX payload types are the lowest dynamic ones (96–127, then 35–63) that no codec uses.
    /// Codecs that already have an RTX format here keep it; RTX formats are not themselves
    /// given one. When the payload types run out, the remaining codecs go without RTX.
    public func withRetransmission() -> [RTPCodec] {
        let used = Set(map(\.payloadType))
        let covered = Set(compactMap(\.associatedPayloadType))
        let candidates = [UInt8](96...127) + [UInt8](35...63)
        var free = candidates.filter { !used.contains($0) }[...]
        var result: [RTPCodec] = []
        for codec in self {
            result.append(codec)
            guard !codec.isRetransmission, !covered.contains(codec.payloadType), let rtx = free.popFirst() else {
                continue
            }
            result.append(.retransmission(payloadType: rtx, associatedPayloadType: codec.payloadType,
                                          clockRate: codec.clockRate))
        }
        return result
    }
}
