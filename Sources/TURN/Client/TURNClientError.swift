// What the TURN client refuses to do for its caller (RFC 8656 §11.1: data goes to peers only
// through an allocation, to peers of the relayed address's family, §18.4: DATA fits a message).

/// Why a `TURNClient` call could not be carried out.
public struct TURNClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, for code that reacts to it.
    public enum Kind: Hashable, Sendable {
        /// There is no allocation (yet, or any more): wait for `.allocated`.
        case notAllocated
        /// The peer's address family differs from the relayed address's (RFC 8656 §9.1: 443).
        case peerFamilyMismatch
        /// The payload does not fit a ChannelData message or a Send indication.
        case payloadTooLarge
    }

    /// What went wrong.
    public var kind: Kind
    /// The problem in words.
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { "TURN client: \(message)" }
}
