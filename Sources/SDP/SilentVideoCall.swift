// The descriptions of our silent video call: one video section, no audio (RFC 8829 §5.2.1 for
// the offer, §5.3.1 for the answer; RFC 3264 §6 for what an answer may say; RFC 8843 for
// BUNDLE; RFC 8842 §5 for the DTLS roles).

/// What one side of a silent video call says about itself.
public struct SilentVideoConfiguration: Hashable, Sendable {
    /// DTLS-SRTP parameters: with them the section is `UDP/TLS/RTP/SAVPF` and carries
    /// `a=fingerprint` and `a=setup`; without them it is plain `RTP/AVPF`.
    public struct DTLS: Hashable, Sendable {
        /// The fingerprint of our certificate.
        public var fingerprint: DTLSFingerprint
        /// The role we take when we answer an actpass offer: active (JSEP's advice) or passive.
        public var answerRole: DTLSSetupRole

        public init(fingerprint: DTLSFingerprint, answerRole: DTLSSetupRole = .active) {
            self.fingerprint = fingerprint
            self.answerRole = answerRole
        }
    }

    /// `o=` session id: random, 63 bits, constant for the call (RFC 8829 §5.2.1).
    public var sessionID: UInt64
    /// `o=` session version: raise it for each new description of the same session.
    public var sessionVersion: UInt64
    /// Our ICE credentials for this call epoch.
    public var iceCredentials: ICECredentials
    /// Candidates known when the description is made (the rest are trickled).
    public var candidates: [ICECandidate]
    /// True when gathering is complete, so `a=end-of-candidates` goes in.
    public var endOfCandidates: Bool
    /// True to advertise `a=ice-options:trickle`.
    public var trickle: Bool
    /// Whether we want to send, receive, both or neither.
    public var direction: MediaDirection
    /// The codecs we support, in order of preference, with the payload types we offer them at.
    public var codecs: [RTPCodec]
    /// DTLS-SRTP parameters, or nil for plain RTP.
    public var dtls: DTLS?
    /// The mid of our video section when we offer.
    public var mid: String
    /// Further attributes of our video section, after the codecs (e.g. `a=x-zonertc-format:…`,
    /// which tells a receiver the container and time base of the file being sent).
    public var extraAttributes: [SDPAttribute] = []
    /// The dialect of our descriptions: today's lines (`.zonertc`, the default) or the
    /// browsers' (`.webRTC`: RTX, rtcp-rsize, msid and ssrc lines).
    public var dialect: SDPDialect = .zonertc
    /// Who the stream we send is (SSRCs, CNAME, msid), announced in the browsers' dialect when
    /// our section sends; nil announces none.
    public var source: VideoSourceIdentity?
    /// `b=` lines of our video section (RFC 8866 §5.8), e.g. `AS` in kilobits per second.
    public var bandwidths: [SDPBandwidth] = []

    public init(
        sessionID: UInt64, sessionVersion: UInt64 = 2, iceCredentials: ICECredentials,
        candidates: [ICECandidate] = [], endOfCandidates: Bool = false, trickle: Bool = true,
        direction: MediaDirection = .sendReceive, codecs: [RTPCodec] = [.vp8(), .h264()], dtls: DTLS?,
        mid: String = "0"
    ) {
        self.sessionID = sessionID
        self.sessionVersion = sessionVersion
        self.iceCredentials = iceCredentials
        self.candidates = candidates
        self.endOfCandidates = endOfCandidates
        self.trickle = trickle
        self.direction = direction
        self.codecs = codecs
        self.dtls = dtls
        self.mid = mid
    }

    /// The `m=` protocol these parameters call for.
    public var transportProtocol: String {
        dtls == nil ? MediaDescription.plainRTPProtocol : MediaDescription.secureRTPProtocol
    }

    /// The media security these parameters describe.
    public var security: MediaSecurity {
        dtls == nil ? .none : .dtlsSRTP
    }

    /// The codecs our offers list: ours, and in the browsers' dialect each with its RTX format.
    public var offeredCodecs: [RTPCodec] {
        dialect == .webRTC ? codecs.withRetransmission() : codecs
    }

    /// The ICE, DTLS and direction attributes of our video section, in Chrome's order, in an array
    /// with room for `more` lines after them: the section's other lines are appended to it.
    func transportAttributes(mid: String, setup: DTLSSetupRole?, direction: MediaDirection,
                             reserving more: Int) -> [SDPAttribute] {
        var attributes: [SDPAttribute] = []
        attributes.reserveCapacity(8 + more)
        attributes.append(.iceUsernameFragment(iceCredentials.usernameFragment))
        attributes.append(.icePassword(iceCredentials.password))
        if trickle { attributes.append(.iceOptions(["trickle"])) }
        if let dtls, let setup {
            attributes.append(.fingerprint(dtls.fingerprint))
            attributes.append(.setup(setup))
        }
        attributes.append(.mid(mid))
        attributes.append(.direction(direction))
        attributes.append(.rtcpMux)
        return attributes
    }

    /// The lines of a section after its transport attributes: `codecs`' lines, our extra attributes,
    /// `source` (see `sourceAttributes`) and the candidate lines, appended to `attributes` in that order.
    func appendMediaAttributes(codecs: [RTPCodec], source: [SDPAttribute], to attributes: inout [SDPAttribute]) {
        for codec in codecs { MediaDescription.appendAttributes(describing: codec, to: &attributes) }
        attributes += extraAttributes
        attributes += source
        for candidate in candidates { attributes.append(.candidate(candidate)) }
        if endOfCandidates { attributes.append(.endOfCandidates) }
    }

    /// How many lines `appendMediaAttributes` writes, and one for `a=rtcp-rsize`: the room to reserve.
    func mediaAttributeCount(codecs: [RTPCodec], source: [SDPAttribute]) -> Int {
        codecs.reduce(0) { $0 + MediaDescription.attributeCount(describing: $1) } + extraAttributes.count
            + source.count + candidates.count + (endOfCandidates ? 1 : 0) + 1
    }

    /// In the browsers' dialect, `a=msid` and the `a=ssrc` lines of the stream we send, when
    /// `direction` sends (RFC 8829 §5.2.1); nothing otherwise.
    func sourceAttributes(direction: MediaDirection, retransmission: Bool) -> [SDPAttribute] {
        guard dialect == .webRTC, direction.sends, let source else { return [] }
        return source.attributes(retransmission: retransmission)
    }
}

extension SessionDescription {
    /// The offer of a silent video call: one bundled `m=video 9 <protocol> <pts>` section with
    /// `c=IN IP4 0.0.0.0`, our ICE credentials and candidates, rtcp-mux, our codecs with their
    /// feedback and parameters, and with DTLS on, our fingerprint and `a=setup:actpass`.
    ///
    /// In the browsers' dialect (`config.dialect == .webRTC`) also `a=rtcp-rsize`, an RTX format
    /// after each codec, and when we send, `a=msid`, `a=ssrc-group:FID` and `a=ssrc` lines.
    public static func silentVideoOffer(_ config: SilentVideoConfiguration) -> SessionDescription {
        let codecs = config.offeredCodecs
        let source = config.sourceAttributes(direction: config.direction, retransmission: codecs != config.codecs)
        var attributes = config.transportAttributes(
            mid: config.mid, setup: config.dtls == nil ? nil : .activePassive, direction: config.direction,
            reserving: config.mediaAttributeCount(codecs: codecs, source: source))
        if config.dialect == .webRTC { attributes.append(.rtcpReducedSize) }
        config.appendMediaAttributes(codecs: codecs, source: source, to: &attributes)
        let video = MediaDescription(
            kind: .video, transportProtocol: config.transportProtocol,
            formats: codecs.map { String($0.payloadType) }, bandwidths: config.bandwidths, attributes: attributes)
        return SessionDescription(
            type: .offer, origin: SDPOrigin(sessionID: config.sessionID, sessionVersion: config.sessionVersion),
            attributes: [.group(semantics: "BUNDLE", identifiers: [config.mid])], media: [video])
    }

    /// Our answer to `offer`: its first usable video section is accepted, every other section
    /// rejected (port 0, as RFC 3264 §6 requires one answer section per offer section).
    ///
    /// In the accepted section: the offered codecs we support, at the offer's payload types and
    /// in the offer's order, each with the feedback both sides list; the direction we want,
    /// narrowed to what the offer allows; our DTLS role (active for an actpass offer unless
    /// `dtls.answerRole` says passive); the offer's mid, and a BUNDLE group if the offer
    /// bundled it. Throws when no video section can be accepted.
    public static func answer(
        to offer: SessionDescription, _ config: SilentVideoConfiguration
    ) throws(SDPNegotiationError) -> SessionDescription {
        guard offer.type == .offer else {
            throw SDPNegotiationError(kind: .notAnOffer, detail: "the description is an \(offer.type), not an offer")
        }
        var accepted: (index: Int, section: MediaDescription)?
        var firstProblem: SDPNegotiationError?
        for (index, section) in offer.media.enumerated() where section.kind == .video && !section.isRejected {
            do {
                accepted = (index, try acceptVideo(section, of: offer, config))
                break
            } catch {
                firstProblem = firstProblem ?? error
            }
        }
        guard let accepted else {
            throw firstProblem ?? SDPNegotiationError(kind: .noVideoSection, detail: "the offer has no video section")
        }

        let media = offer.media.enumerated().map { index, section in
            index == accepted.index ? accepted.section : rejected(section)
        }
        var attributes: [SDPAttribute] = []
        if let mid = accepted.section.mid, let bundle = offer.bundleGroup, bundle.contains(mid) {
            attributes.append(.group(semantics: "BUNDLE", identifiers: [mid]))
        }
        return SessionDescription(
            type: .answer, origin: SDPOrigin(sessionID: config.sessionID, sessionVersion: config.sessionVersion),
            attributes: attributes, media: media)
    }

    /// Our answer section for an offered video section, or why we cannot accept it.
    private static func acceptVideo(
        _ offered: MediaDescription, of offer: SessionDescription, _ config: SilentVideoConfiguration
    ) throws(SDPNegotiationError) -> MediaDescription {
        let offeredSecure = MediaSecurity.namesSRTP(offered.transportProtocol)
        guard offered.isRTP, offeredSecure == (config.dtls != nil) else {
            throw SDPNegotiationError(
                kind: .transportMismatch,
                detail: "the video section uses \(offered.transportProtocol), we use \(config.transportProtocol)")
        }
        guard offer.iceCredentials(for: offered) != nil else {
            throw SDPNegotiationError(
                kind: .missingICECredentials, detail: "the video section has no ice-ufrag/ice-pwd")
        }
        var setup: DTLSSetupRole?
        if let dtls = config.dtls {
            guard !offer.fingerprints(for: offered).isEmpty else {
                throw SDPNegotiationError(kind: .missingFingerprint, detail: "the video section has no a=fingerprint")
            }
            // RFC 4145 §4.1: no a=setup means active, so we would be passive.
            let offeredRole = offer.setupRole(for: offered) ?? .active
            guard let role = offeredRole.answerRole(preferring: dtls.answerRole) else {
                throw SDPNegotiationError(kind: .invalidSetupRole, detail: "the offer's a=setup is \(offeredRole)")
            }
            setup = role
        }

        let offeredCodecs = offered.codecs
        var codecs: [RTPCodec] = []
        for theirs in offeredCodecs where !theirs.isRetransmission {
            // Our first compatible codec answers it (`isCompatible`, then `answering`, in one step).
            var answered: RTPCodec?
            for ours in config.codecs where !ours.isRetransmission {
                answered = ours.answer(to: theirs)
                if answered != nil { break }
            }
            guard let answered else { continue }
            codecs.append(answered)
            // RFC 4588 §8.6: the offer's RTX format for this codec, at the offer's payload type.
            if config.dialect == .webRTC, let rtx = offeredCodecs.first(where: {
                $0.associatedPayloadType == theirs.payloadType && $0.clockRate == theirs.clockRate
            }) {
                codecs.append(.retransmission(payloadType: rtx.payloadType, associatedPayloadType: theirs.payloadType,
                                              clockRate: rtx.clockRate))
            }
        }
        guard !codecs.isEmpty else {
            let names = offeredCodecs.map(\.name).joined(separator: ", ")
            throw SDPNegotiationError(kind: .noCommonCodec, detail: "the video section offers only \(names)")
        }

        let mid = offered.mid ?? config.mid
        let direction = config.direction.answering(offer.direction(for: offered))
        let source = config.sourceAttributes(
            direction: direction, retransmission: codecs.contains { $0.isRetransmission })
        var attributes = config.transportAttributes(
            mid: mid, setup: setup, direction: direction,
            reserving: config.mediaAttributeCount(codecs: codecs, source: source))
        if offered.mid == nil { attributes.removeAll { $0 == .mid(mid) } }
        if !offered.isRTCPMultiplexed { attributes.removeAll { $0 == .rtcpMux } }
        if config.dialect == .webRTC && offered.allowsReducedSizeRTCP { attributes.append(.rtcpReducedSize) }
        config.appendMediaAttributes(codecs: codecs, source: source, to: &attributes)
        return MediaDescription(
            kind: .video, transportProtocol: config.transportProtocol,
            formats: codecs.map { String($0.payloadType) }, bandwidths: config.bandwidths, attributes: attributes)
    }

    /// The answer to a section we do not take: same media and protocol, port 0, the offered
    /// formats, and the mid so the offerer can match it (RFC 8829 §5.3.1).
    private static func rejected(_ offered: MediaDescription) -> MediaDescription {
        MediaDescription(
            kind: offered.kind, port: 0, transportProtocol: offered.transportProtocol, formats: offered.formats,
            attributes: offered.mid.map { [.mid($0)] } ?? [])
    }
}
