// What a remote's offer or answer says about the video stream, read from its first usable video
// section (RFC 8829 §5.7–5.8, applying a remote description): the codecs at its payload types,
// their RTX formats (RFC 4588 §8.6), the SSRCs it sends from (RFC 5576 §4, FID per RFC 4588
// §8.7), its DTLS fingerprint and role (RFC 8842 §5, RFC 5763 §5), its ICE credentials.
//
// Everything here was written by the remote: an RTX format whose apt names no codec of the
// section, an FID group whose RTX SSRC repeats the original, an answer claiming actpass, are
// refused or left out rather than trusted.

/// The remote's video section, read for the call.
public struct RemoteVideoDescription: Hashable, Sendable {
    /// The section's mid.
    public var mid: String?
    /// Plain RTP or DTLS-SRTP, by the section's protocol.
    public var security: MediaSecurity
    /// The direction, as the remote wrote it (its point of view).
    public var direction: MediaDirection
    /// The media codecs (RTX left out), in the remote's order of preference.
    public var codecs: [RTPCodec]
    /// For each codec payload type with an RTX format, that format's payload type.
    public var retransmissionPayloadTypes: [UInt8: UInt8]
    /// The SSRC the remote sends from, when it names one.
    public var ssrc: UInt32?
    /// The SSRC of the remote's retransmissions, when it names an FID group.
    public var retransmissionSSRC: UInt32?
    /// The CNAME of the remote's sources.
    public var cname: String?
    /// The certificate fingerprints the remote's DTLS certificate must match.
    public var fingerprints: [DTLSFingerprint]
    /// The remote's `a=setup`.
    public var setupRole: DTLSSetupRole?
    /// The remote's ICE credentials for the section.
    public var iceCredentials: ICECredentials?
    /// True when the remote accepts reduced-size RTCP (RFC 5506).
    public var reducedSizeRTCP: Bool

    /// Reads the first video section that is not rejected.
    ///
    /// Throws `noVideoSection` when there is none, `missingICECredentials` without ufrag/pwd,
    /// `missingFingerprint` for DTLS-SRTP without a fingerprint, `invalidSetupRole` for an
    /// answer that says actpass or holdconn (RFC 5763 §5: the answerer picks a side), and
    /// `noCommonCodec` when the section lists no usable codec.
    public init(_ description: SessionDescription) throws(SDPNegotiationError) {
        guard let section = description.media.first(where: { $0.kind == .video && !$0.isRejected && $0.isRTP })
        else {
            throw SDPNegotiationError(kind: .noVideoSection, detail: "the description has no usable video section")
        }
        mid = section.mid
        security = MediaSecurity(transportProtocol: section.transportProtocol) ?? .none
        direction = description.direction(for: section)
        let all = section.codecs
        codecs = all.filter { !$0.isRetransmission }
        guard !codecs.isEmpty else {
            throw SDPNegotiationError(kind: .noCommonCodec, detail: "the video section lists no codec")
        }
        let mediaTypes = Set(codecs.map(\.payloadType))
        var rtx: [UInt8: UInt8] = [:]
        for format in all {
            guard let apt = format.associatedPayloadType, mediaTypes.contains(apt), rtx[apt] == nil else { continue }
            rtx[apt] = format.payloadType
        }
        retransmissionPayloadTypes = rtx
        let sources = section.sendingSources
        ssrc = sources?.ssrc
        retransmissionSSRC = sources?.retransmissionSSRC
        cname = section.sourceAttributes.first { $0.ssrc == sources?.ssrc && $0.name == "cname" }?.value
        fingerprints = description.fingerprints(for: section)
        setupRole = description.setupRole(for: section)
        iceCredentials = description.iceCredentials(for: section)
        reducedSizeRTCP = section.allowsReducedSizeRTCP
        guard iceCredentials != nil else {
            throw SDPNegotiationError(
                kind: .missingICECredentials, detail: "the video section has no ice-ufrag/ice-pwd")
        }
        if security == .dtlsSRTP {
            guard !fingerprints.isEmpty else {
                throw SDPNegotiationError(kind: .missingFingerprint, detail: "the video section has no a=fingerprint")
            }
            if description.type != .offer, let role = setupRole, role != .active, role != .passive {
                throw SDPNegotiationError(
                    kind: .invalidSetupRole, detail: "an answer must say a=setup:active or passive, not \(role)")
            }
        }
    }

    /// The remote's codec for one of ours (the first compatible one, see
    /// `RTPCodec.isCompatible`): the payload type to send it at.
    public func codec(matching ours: RTPCodec) -> RTPCodec? {
        codecs.first { $0.isCompatible(with: ours) }
    }

    /// The RTX payload type paired with the codec at `payloadType`, if the remote listed one.
    public func retransmissionPayloadType(for payloadType: UInt8) -> UInt8? {
        retransmissionPayloadTypes[payloadType]
    }

    /// The DTLS role we take given the remote's answer: the other side of what it chose
    /// (RFC 5763 §5); with no `a=setup` in the answer the answerer is active (RFC 4145 §4.1),
    /// so we are passive. Nil for plain RTP.
    public var localRoleForAnswer: DTLSSetupRole? {
        guard security == .dtlsSRTP else { return nil }
        return (setupRole ?? .active) == .active ? .passive : .active
    }
}
