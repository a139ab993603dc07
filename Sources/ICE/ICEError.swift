// Errors the ICE agent reports to its caller.

/// Why the agent refused a request from its caller.
public struct ICEError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, for a caller to switch on.
    public enum Kind: Hashable, Sendable {
        /// `send` with no selected pair yet.
        case noSelectedPair
        /// `send` after consent expired (RFC 7675 §5.1: the agent must stop sending).
        case consentExpired
        /// The agent is closed.
        case closed
        /// A password SASLprep refuses.
        case invalidCredentials
        /// Data that cannot go in a STUN message (for example a USERNAME over 512 bytes).
        case encoding
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
