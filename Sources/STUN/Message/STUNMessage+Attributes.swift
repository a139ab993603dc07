// Reading and adding attributes by meaning rather than by position: RFC 8489 §14 (attributes),
// §6.3.1 (unknown comprehension-required attributes → 420), RFC 8656 §18, RFC 8445 §7.1.
//
// RFC 8489 §14: "any attribute type MAY appear more than once", and receivers use the first
// occurrence unless an attribute says otherwise (XOR-PEER-ADDRESS may repeat). The getters below
// return the first occurrence; `xorPeerAddresses` returns them all.

import ZoneCore

extension STUNMessage {
    /// The first attribute for which `extract` returns a value.
    @inlinable
    public func first<T>(_ extract: (STUNAttribute) -> T?) -> T? {
        for attribute in attributes {
            if let value = extract(attribute) { return value }
        }
        return nil
    }

    /// True when an attribute of `type` is present.
    public func contains(_ type: STUNAttributeType) -> Bool {
        attributes.contains { $0.type == type }
    }

    /// The comprehension-required attributes (type < 0x8000) this module could not decode,
    /// without repeats, in order of appearance: what a server lists in UNKNOWN-ATTRIBUTES when it
    /// answers 420 (RFC 8489 §6.3.1). Attributes skipped after MESSAGE-INTEGRITY are not listed.
    public var unknownComprehensionRequiredAttributes: [STUNAttributeType] {
        var result: [STUNAttributeType] = []
        for case .unknown(let type, _) in attributes where type.isComprehensionRequired && !result.contains(type) {
            result.append(type)
        }
        return result
    }

    /// USERNAME.
    public var username: String? { first { if case .username(let v) = $0 { v } else { nil } } }
    /// USERHASH.
    public var userhash: [UInt8]? { first { if case .userhash(let v) = $0 { v } else { nil } } }
    /// REALM.
    public var realm: String? { first { if case .realm(let v) = $0 { v } else { nil } } }
    /// NONCE.
    public var nonce: String? { first { if case .nonce(let v) = $0 { v } else { nil } } }
    /// SOFTWARE.
    public var software: String? { first { if case .software(let v) = $0 { v } else { nil } } }
    /// ERROR-CODE.
    public var errorCode: STUNErrorCode? { first { if case .errorCode(let v) = $0 { v } else { nil } } }
    /// UNKNOWN-ATTRIBUTES.
    public var unknownAttributes: [STUNAttributeType]? {
        first { if case .unknownAttributes(let v) = $0 { v } else { nil } }
    }
    /// MAPPED-ADDRESS.
    public var mappedAddress: Endpoint? { first { if case .mappedAddress(let v) = $0 { v } else { nil } } }
    /// XOR-MAPPED-ADDRESS.
    public var xorMappedAddress: Endpoint? { first { if case .xorMappedAddress(let v) = $0 { v } else { nil } } }
    /// ALTERNATE-SERVER.
    public var alternateServer: Endpoint? { first { if case .alternateServer(let v) = $0 { v } else { nil } } }
    /// PASSWORD-ALGORITHM.
    public var passwordAlgorithm: STUNPasswordAlgorithm? {
        first { if case .passwordAlgorithm(let v) = $0 { v } else { nil } }
    }
    /// PASSWORD-ALGORITHMS.
    public var passwordAlgorithms: [STUNPasswordAlgorithm]? {
        first { if case .passwordAlgorithms(let v) = $0 { v } else { nil } }
    }
    /// PRIORITY.
    public var priority: UInt32? { first { if case .priority(let v) = $0 { v } else { nil } } }
    /// True when USE-CANDIDATE is present.
    public var useCandidate: Bool { contains(.useCandidate) }
    /// ICE-CONTROLLED's tie-breaker.
    public var iceControlled: UInt64? { first { if case .iceControlled(let v) = $0 { v } else { nil } } }
    /// ICE-CONTROLLING's tie-breaker.
    public var iceControlling: UInt64? { first { if case .iceControlling(let v) = $0 { v } else { nil } } }
    /// CHANNEL-NUMBER.
    public var channelNumber: UInt16? { first { if case .channelNumber(let v) = $0 { v } else { nil } } }
    /// LIFETIME in seconds.
    public var lifetime: UInt32? { first { if case .lifetime(let v) = $0 { v } else { nil } } }
    /// Every XOR-PEER-ADDRESS, in order (CreatePermission may carry several, RFC 8656 §9.1).
    public var xorPeerAddresses: [Endpoint] {
        attributes.compactMap { if case .xorPeerAddress(let v) = $0 { v } else { nil } }
    }
    /// DATA.
    public var data: [UInt8]? { first { if case .data(let v) = $0 { v } else { nil } } }
    /// XOR-RELAYED-ADDRESS (a dual-allocation response carries two; this is the first).
    public var xorRelayedAddress: Endpoint? {
        first { if case .xorRelayedAddress(let v) = $0 { v } else { nil } }
    }
    /// REQUESTED-ADDRESS-FAMILY.
    public var requestedAddressFamily: AddressFamily? {
        first { if case .requestedAddressFamily(let v) = $0 { v } else { nil } }
    }
    /// EVEN-PORT's R bit, when EVEN-PORT is present.
    public var evenPort: Bool? { first { if case .evenPort(let v) = $0 { v } else { nil } } }
    /// REQUESTED-TRANSPORT's protocol number.
    public var requestedTransport: UInt8? {
        first { if case .requestedTransport(let v) = $0 { v } else { nil } }
    }
    /// True when DONT-FRAGMENT is present.
    public var dontFragment: Bool { contains(.dontFragment) }
    /// RESERVATION-TOKEN.
    public var reservationToken: UInt64? { first { if case .reservationToken(let v) = $0 { v } else { nil } } }
    /// FINGERPRINT as received.
    public var fingerprint: UInt32? { first { if case .fingerprint(let v) = $0 { v } else { nil } } }
}
