// Why an answer to an offer cannot be made: RFC 3264 §6 (offer/answer), RFC 8829 §5.3 (JSEP
// answers), RFC 8842 §5 (DTLS roles).

/// Why `SessionDescription.answer(to:_:)` could not answer an offer.
public struct SDPNegotiationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong, for code that reacts.
    public enum Kind: Hashable, Sendable {
        /// The description given as the offer is an answer.
        case notAnOffer
        /// The offer has no video section that is not rejected.
        case noVideoSection
        /// The video section uses DTLS-SRTP and we do not, or the other way round.
        case transportMismatch
        /// The video section offers no codec we support.
        case noCommonCodec
        /// The video section has no ICE ufrag or pwd (at media or session level).
        case missingICECredentials
        /// The offer uses DTLS but has no certificate fingerprint.
        case missingFingerprint
        /// The offer's `a=setup` leaves no role to take (holdconn).
        case invalidSetupRole
    }

    /// What was wrong.
    public var kind: Kind
    /// The problem in words.
    public var detail: String

    public init(kind: Kind, detail: String) {
        self.kind = kind
        self.detail = detail
    }

    public var description: String { "cannot answer the offer: \(detail)" }
}
