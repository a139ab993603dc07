// STUN message classes: RFC 8489 §5 ("request, success response, failure response, or
// indication"), carried as the two bits C1 C0 of the message type.

/// Whether a message asks, answers or just tells.
public enum STUNMessageClass: UInt8, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// A request, which expects a response (C1 C0 = 0b00).
    case request = 0b00
    /// An indication, which expects none (0b01).
    case indication = 0b01
    /// A success response (0b10).
    case successResponse = 0b10
    /// An error response, with ERROR-CODE (0b11).
    case errorResponse = 0b11

    public var description: String {
        switch self {
        case .request: "request"
        case .indication: "indication"
        case .successResponse: "success response"
        case .errorResponse: "error response"
        }
    }
}
