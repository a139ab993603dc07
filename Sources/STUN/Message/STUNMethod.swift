// STUN methods: RFC 8489 §5 and §18.2 (Binding), RFC 8656 §17 and §18.1 (the TURN methods).
//
// A method is a 12-bit number. Unknown methods decode fine (a server answers them with 400), so
// this is a struct over the raw value rather than a closed enum.

import ZoneCore

/// A STUN method: the 12-bit operation a message performs (Binding, Allocate, …).
public struct STUNMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The method number, 0x000–0xFFF.
    public let rawValue: UInt16

    /// A method from its number; nil when it does not fit in 12 bits.
    public init?(rawValue: UInt16) {
        guard rawValue <= 0xFFF else { return nil }
        self.rawValue = rawValue
    }

    private init(_ value: UInt16) { rawValue = value }

    /// Binding (RFC 8489): learn one's server-reflexive address; ICE connectivity checks.
    public static let binding = STUNMethod(0x001)
    /// Allocate (RFC 8656 §7): create a relayed transport address.
    public static let allocate = STUNMethod(0x003)
    /// Refresh (RFC 8656 §8): extend or delete an allocation.
    public static let refresh = STUNMethod(0x004)
    /// Send (RFC 8656 §11): an indication carrying data to a peer.
    public static let send = STUNMethod(0x006)
    /// Data (RFC 8656 §11): an indication carrying data from a peer.
    public static let data = STUNMethod(0x007)
    /// CreatePermission (RFC 8656 §9): let a peer's address through the relay.
    public static let createPermission = STUNMethod(0x008)
    /// ChannelBind (RFC 8656 §12): bind a channel number to a peer.
    public static let channelBind = STUNMethod(0x009)

    public var description: String {
        switch rawValue {
        case 0x001: "Binding"
        case 0x003: "Allocate"
        case 0x004: "Refresh"
        case 0x006: "Send"
        case 0x007: "Data"
        case 0x008: "CreatePermission"
        case 0x009: "ChannelBind"
        default: "method 0x" + Hex.string(rawValue, digits: 3)
        }
    }
}
