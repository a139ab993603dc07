// STUN attribute types: the registry of RFC 8489 §18.3, with the TURN attributes of RFC 8656 §18
// and the ICE attributes of RFC 8445 §16.1.
//
// Types 0x0000–0x7FFF are comprehension-required: a server that does not understand one must
// reject the request with 420 (Unknown Attribute) and list it in UNKNOWN-ATTRIBUTES (§6.3.1).
// Types 0x8000–0xFFFF are comprehension-optional and may be ignored.

import ZoneCore

/// A 16-bit STUN attribute type.
public struct STUNAttributeType: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The type number.
    public let rawValue: UInt16

    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// True for 0x0000–0x7FFF: an agent that does not understand it must not ignore it.
    public var isComprehensionRequired: Bool { rawValue < 0x8000 }

    public static func < (a: STUNAttributeType, b: STUNAttributeType) -> Bool { a.rawValue < b.rawValue }

    // RFC 8489 §18.3.1 (comprehension-required)
    /// MAPPED-ADDRESS (RFC 8489 §14.1).
    public static let mappedAddress = STUNAttributeType(rawValue: 0x0001)
    /// USERNAME (RFC 8489 §14.3).
    public static let username = STUNAttributeType(rawValue: 0x0006)
    /// MESSAGE-INTEGRITY (RFC 8489 §14.5).
    public static let messageIntegrity = STUNAttributeType(rawValue: 0x0008)
    /// ERROR-CODE (RFC 8489 §14.8).
    public static let errorCode = STUNAttributeType(rawValue: 0x0009)
    /// UNKNOWN-ATTRIBUTES (RFC 8489 §14.13).
    public static let unknownAttributes = STUNAttributeType(rawValue: 0x000A)
    /// REALM (RFC 8489 §14.9).
    public static let realm = STUNAttributeType(rawValue: 0x0014)
    /// NONCE (RFC 8489 §14.10).
    public static let nonce = STUNAttributeType(rawValue: 0x0015)
    /// MESSAGE-INTEGRITY-SHA256 (RFC 8489 §14.6).
    public static let messageIntegritySHA256 = STUNAttributeType(rawValue: 0x001C)
    /// PASSWORD-ALGORITHM (RFC 8489 §14.12).
    public static let passwordAlgorithm = STUNAttributeType(rawValue: 0x001D)
    /// USERHASH (RFC 8489 §14.4).
    public static let userhash = STUNAttributeType(rawValue: 0x001E)
    /// XOR-MAPPED-ADDRESS (RFC 8489 §14.2).
    public static let xorMappedAddress = STUNAttributeType(rawValue: 0x0020)

    // RFC 8656 §18 (TURN, comprehension-required)
    /// CHANNEL-NUMBER (RFC 8656 §18.1).
    public static let channelNumber = STUNAttributeType(rawValue: 0x000C)
    /// LIFETIME (RFC 8656 §18.2).
    public static let lifetime = STUNAttributeType(rawValue: 0x000D)
    /// XOR-PEER-ADDRESS (RFC 8656 §18.3).
    public static let xorPeerAddress = STUNAttributeType(rawValue: 0x0012)
    /// DATA (RFC 8656 §18.4).
    public static let data = STUNAttributeType(rawValue: 0x0013)
    /// XOR-RELAYED-ADDRESS (RFC 8656 §18.5).
    public static let xorRelayedAddress = STUNAttributeType(rawValue: 0x0016)
    /// REQUESTED-ADDRESS-FAMILY (RFC 8656 §18.6).
    public static let requestedAddressFamily = STUNAttributeType(rawValue: 0x0017)
    /// EVEN-PORT (RFC 8656 §18.7).
    public static let evenPort = STUNAttributeType(rawValue: 0x0018)
    /// REQUESTED-TRANSPORT (RFC 8656 §18.8).
    public static let requestedTransport = STUNAttributeType(rawValue: 0x0019)
    /// DONT-FRAGMENT (RFC 8656 §18.9).
    public static let dontFragment = STUNAttributeType(rawValue: 0x001A)
    /// RESERVATION-TOKEN (RFC 8656 §18.10).
    public static let reservationToken = STUNAttributeType(rawValue: 0x0022)

    // RFC 8445 §16.1 (ICE, comprehension-required)
    /// PRIORITY (RFC 8445 §7.1.1).
    public static let priority = STUNAttributeType(rawValue: 0x0024)
    /// USE-CANDIDATE (RFC 8445 §7.1.2).
    public static let useCandidate = STUNAttributeType(rawValue: 0x0025)

    // RFC 8489 §18.3.2 (comprehension-optional)
    /// PASSWORD-ALGORITHMS (RFC 8489 §14.11).
    public static let passwordAlgorithms = STUNAttributeType(rawValue: 0x8002)
    /// ALTERNATE-DOMAIN (RFC 8489 §14.16); decoded as an unknown attribute, kept raw.
    public static let alternateDomain = STUNAttributeType(rawValue: 0x8003)
    /// SOFTWARE (RFC 8489 §14.14).
    public static let software = STUNAttributeType(rawValue: 0x8022)
    /// ALTERNATE-SERVER (RFC 8489 §14.15).
    public static let alternateServer = STUNAttributeType(rawValue: 0x8023)
    /// FINGERPRINT (RFC 8489 §14.7).
    public static let fingerprint = STUNAttributeType(rawValue: 0x8028)

    // RFC 8445 §16.1 (ICE, comprehension-optional)
    /// ICE-CONTROLLED (RFC 8445 §7.1.3).
    public static let iceControlled = STUNAttributeType(rawValue: 0x8029)
    /// ICE-CONTROLLING (RFC 8445 §7.1.3).
    public static let iceControlling = STUNAttributeType(rawValue: 0x802A)

    public var description: String {
        switch rawValue {
        case 0x0001: "MAPPED-ADDRESS"
        case 0x0006: "USERNAME"
        case 0x0008: "MESSAGE-INTEGRITY"
        case 0x0009: "ERROR-CODE"
        case 0x000A: "UNKNOWN-ATTRIBUTES"
        case 0x000C: "CHANNEL-NUMBER"
        case 0x000D: "LIFETIME"
        case 0x0012: "XOR-PEER-ADDRESS"
        case 0x0013: "DATA"
        case 0x0014: "REALM"
        case 0x0015: "NONCE"
        case 0x0016: "XOR-RELAYED-ADDRESS"
        case 0x0017: "REQUESTED-ADDRESS-FAMILY"
        case 0x0018: "EVEN-PORT"
        case 0x0019: "REQUESTED-TRANSPORT"
        case 0x001A: "DONT-FRAGMENT"
        case 0x001C: "MESSAGE-INTEGRITY-SHA256"
        case 0x001D: "PASSWORD-ALGORITHM"
        case 0x001E: "USERHASH"
        case 0x0020: "XOR-MAPPED-ADDRESS"
        case 0x0022: "RESERVATION-TOKEN"
        case 0x0024: "PRIORITY"
        case 0x0025: "USE-CANDIDATE"
        case 0x8002: "PASSWORD-ALGORITHMS"
        case 0x8003: "ALTERNATE-DOMAIN"
        case 0x8022: "SOFTWARE"
        case 0x8023: "ALTERNATE-SERVER"
        case 0x8028: "FINGERPRINT"
        case 0x8029: "ICE-CONTROLLED"
        case 0x802A: "ICE-CONTROLLING"
        default: "attribute 0x" + Hex.string(rawValue, digits: 4)
        }
    }
}
