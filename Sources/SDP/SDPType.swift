// The type of a session description, RFC 8829 §4.1.8 (JSEP) / W3C RTCSdpType.

/// What role a description plays in an offer/answer exchange. The SDP text does not say;
/// the signaling envelope that carries it does (`envelopeType`).
public enum SDPType: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// An offer (RFC 3264 §5).
    case offer
    /// A provisional answer: an answer that may still change.
    case provisionalAnswer = "pranswer"
    /// A final answer (RFC 3264 §6).
    case answer

    public var description: String { rawValue }
}
