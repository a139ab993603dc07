// The collision rules of the W3C WebRTC "perfect negotiation" example (WebRTC 1.0 §10.7,
// spec §4): `makingOffer`, `ignoreOffer`, `isSettingRemoteAnswerPending`; the impolite peer
// ignores a colliding offer, the polite peer rolls back and answers. Epochs come first: this
// decides only between descriptions of the same epoch.

/// The offer/answer state of one epoch and the perfect-negotiation flags.
public struct PerfectNegotiation: Hashable, Sendable {
    /// The JSEP signaling state (RFC 8829 §3.2), the part of it we use.
    public enum SignalingState: Hashable, Sendable {
        /// No offer outstanding.
        case stable
        /// Our offer is set, no answer yet.
        case haveLocalOffer
        /// Their offer is set, our answer not yet.
        case haveRemoteOffer
    }

    /// What to do with a remote description.
    public enum Verdict: Hashable, Sendable {
        /// Apply it.
        case apply
        /// Roll our offer back, then apply it (the polite peer in a collision).
        case rollbackAndApply
        /// Ignore it: a colliding offer reaching the impolite peer.
        case ignore
        /// An answer while no offer of ours is outstanding (`InvalidStateError` in WebRTC).
        case outOfState
    }

    /// Whether this peer yields in a collision.
    public let polite: Bool
    public private(set) var signalingState: SignalingState = .stable
    /// True from creating an offer until it is published (saved to the store).
    public private(set) var makingOffer = false
    /// True after the impolite peer ignored a colliding offer, until the next description.
    public private(set) var ignoreOffer = false
    /// True while a remote answer is being applied (an offer arriving then is not a collision).
    public private(set) var isSettingRemoteAnswerPending = false

    public init(polite: Bool) { self.polite = polite }

    /// We created and set a local offer.
    public mutating func localOfferCreated() {
        makingOffer = true
        signalingState = .haveLocalOffer
    }

    /// Our offer is in the store: it is no longer being made.
    public mutating func localOfferPublished() {
        makingOffer = false
    }

    /// Our offer is withdrawn (rollback, or its epoch abandoned).
    public mutating func rollback() {
        makingOffer = false
        signalingState = .stable
    }

    /// A remote description arrives: the example's `onmessage` decision.
    public mutating func receive(_ type: EnvelopeType) -> Verdict {
        let readyForOffer = !makingOffer && (signalingState == .stable || isSettingRemoteAnswerPending)
        let collision = type == .offer && !readyForOffer
        ignoreOffer = !polite && collision
        if ignoreOffer { return .ignore }
        if type == .answer && signalingState != .haveLocalOffer { return .outOfState }
        isSettingRemoteAnswerPending = type == .answer
        if collision {
            rollback()
            return .rollbackAndApply
        }
        return .apply
    }

    /// The remote description that `receive` let through is applied.
    public mutating func remoteDescriptionApplied(_ type: EnvelopeType) {
        isSettingRemoteAnswerPending = false
        signalingState = type == .offer ? .haveRemoteOffer : .stable
    }

    /// Our answer is set: back to stable.
    public mutating func localAnswerSet() {
        signalingState = .stable
    }

    /// A new epoch starts from a clean slate (the flags belong to one epoch).
    public mutating func reset() {
        signalingState = .stable
        makingOffer = false
        ignoreOffer = false
        isSettingRemoteAnswerPending = false
    }
}
