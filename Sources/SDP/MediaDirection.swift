// Media direction attributes, RFC 8866 §6.7 (sendrecv, sendonly, recvonly, inactive), and how
// an answer picks its direction, RFC 3264 §6.1.

/// Whether a media section sends, receives, both or neither, from the point of view of the
/// side that wrote the description.
public enum MediaDirection: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// `a=sendrecv`, the default when no direction attribute is present.
    case sendReceive = "sendrecv"
    /// `a=sendonly`.
    case sendOnly = "sendonly"
    /// `a=recvonly`.
    case receiveOnly = "recvonly"
    /// `a=inactive`.
    case inactive

    /// The direction with these two properties.
    public init(sends: Bool, receives: Bool) {
        switch (sends, receives) {
        case (true, true): self = .sendReceive
        case (true, false): self = .sendOnly
        case (false, true): self = .receiveOnly
        case (false, false): self = .inactive
        }
    }

    /// True for sendrecv and sendonly.
    public var sends: Bool { self == .sendReceive || self == .sendOnly }
    /// True for sendrecv and recvonly.
    public var receives: Bool { self == .sendReceive || self == .receiveOnly }

    /// The same stream seen from the other side: sendonly becomes recvonly and back.
    public var reversed: MediaDirection { MediaDirection(sends: receives, receives: sends) }

    /// The direction an answerer that wants `self` puts in its answer to an offer of `offered`
    /// (RFC 3264 §6.1): it may send only what the offerer receives, and receive only what the
    /// offerer sends.
    public func answering(_ offered: MediaDirection) -> MediaDirection {
        MediaDirection(sends: sends && offered.receives, receives: receives && offered.sends)
    }

    public var description: String { rawValue }
}
