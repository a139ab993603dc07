// STUN attributes: the TLV of RFC 8489 §14, and the typed values of every attribute this module
// knows (RFC 8489 §14, RFC 8656 §18, RFC 8445 §7.1).
//
//      0                   1                   2                   3
//      0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//     |         Type                  |            Length             |
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//     |                         Value (variable)                ....
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// Length counts the value without padding; the value is padded to a multiple of 4 with bytes
// that "MUST be ignored by the receiver" (§14) — RFC 5769's samples pad with 0x20. The codec for
// each family lives in its own file; this one holds the enum and the dispatch.

import ZoneCore

/// One STUN attribute, decoded to a typed value.
///
/// Attributes this module does not know decode as `.unknown`, keeping their bytes, so a message
/// survives a decode–encode round trip and a server can list unknown comprehension-required
/// types in a 420 response.
public enum STUNAttribute: Hashable, Sendable {
    /// MAPPED-ADDRESS (RFC 8489 §14.1): the reflexive address, in the clear (RFC 3489 servers).
    case mappedAddress(Endpoint)
    /// XOR-MAPPED-ADDRESS (RFC 8489 §14.2): the reflexive address, XORed so NATs leave it alone.
    case xorMappedAddress(Endpoint)
    /// USERNAME (RFC 8489 §14.3): UTF-8, at most 512 bytes.
    case username(String)
    /// USERHASH (RFC 8489 §14.4): SHA-256(username ":" realm), 32 bytes.
    case userhash([UInt8])
    /// MESSAGE-INTEGRITY (RFC 8489 §14.5): HMAC-SHA1, 20 bytes, as received. The encoder
    /// computes this attribute; a value placed in a message's attribute list is not written.
    case messageIntegrity([UInt8])
    /// MESSAGE-INTEGRITY-SHA256 (RFC 8489 §14.6): HMAC-SHA256, 16–32 bytes, as received.
    /// Computed by the encoder like MESSAGE-INTEGRITY.
    case messageIntegritySHA256([UInt8])
    /// PASSWORD-ALGORITHM (RFC 8489 §14.12): the algorithm the client chose.
    case passwordAlgorithm(STUNPasswordAlgorithm)
    /// PASSWORD-ALGORITHMS (RFC 8489 §14.11): the algorithms the server offers.
    case passwordAlgorithms([STUNPasswordAlgorithm])
    /// FINGERPRINT (RFC 8489 §14.7): CRC-32 ⊕ 0x5354554E, as received. Computed by the encoder.
    case fingerprint(UInt32)
    /// ERROR-CODE (RFC 8489 §14.8).
    case errorCode(STUNErrorCode)
    /// UNKNOWN-ATTRIBUTES (RFC 8489 §14.13): the types a 420 response did not understand.
    case unknownAttributes([STUNAttributeType])
    /// REALM (RFC 8489 §14.9).
    case realm(String)
    /// NONCE (RFC 8489 §14.10).
    case nonce(String)
    /// SOFTWARE (RFC 8489 §14.14).
    case software(String)
    /// ALTERNATE-SERVER (RFC 8489 §14.15): where a 300 response sends the client.
    case alternateServer(Endpoint)
    /// PRIORITY (RFC 8445 §7.1.1): the priority a peer-reflexive candidate would get.
    case priority(UInt32)
    /// USE-CANDIDATE (RFC 8445 §7.1.2): the controlling agent nominates this pair.
    case useCandidate
    /// ICE-CONTROLLED (RFC 8445 §7.1.3): the sender thinks it is controlled; its tie-breaker.
    case iceControlled(tieBreaker: UInt64)
    /// ICE-CONTROLLING (RFC 8445 §7.1.3): the sender thinks it is controlling; its tie-breaker.
    case iceControlling(tieBreaker: UInt64)
    /// CHANNEL-NUMBER (RFC 8656 §18.1); the range 0x4000–0x4FFF is the server's to check.
    case channelNumber(UInt16)
    /// LIFETIME (RFC 8656 §18.2): seconds until the allocation expires.
    case lifetime(seconds: UInt32)
    /// XOR-PEER-ADDRESS (RFC 8656 §18.3); may appear more than once.
    case xorPeerAddress(Endpoint)
    /// DATA (RFC 8656 §18.4): the application payload of a Send or Data indication.
    case data([UInt8])
    /// XOR-RELAYED-ADDRESS (RFC 8656 §18.5): the allocated relayed transport address.
    case xorRelayedAddress(Endpoint)
    /// REQUESTED-ADDRESS-FAMILY (RFC 8656 §18.6).
    case requestedAddressFamily(AddressFamily)
    /// EVEN-PORT (RFC 8656 §18.7): ask for an even port; R asks to reserve the next one too.
    case evenPort(reserveNextPort: Bool)
    /// REQUESTED-TRANSPORT (RFC 8656 §18.8): an IP protocol number (17 for UDP).
    case requestedTransport(protocolNumber: UInt8)
    /// DONT-FRAGMENT (RFC 8656 §18.9).
    case dontFragment
    /// RESERVATION-TOKEN (RFC 8656 §18.10): names a port reserved by an earlier EVEN-PORT.
    case reservationToken(UInt64)
    /// Any other attribute, with its value bytes (padding excluded).
    case unknown(type: STUNAttributeType, value: [UInt8])

    /// The IP protocol number for UDP, the only REQUESTED-TRANSPORT RFC 8656 defines.
    public static let transportUDP: UInt8 = 17

    /// The attribute's type on the wire.
    public var type: STUNAttributeType {
        switch self {
        case .mappedAddress: .mappedAddress
        case .xorMappedAddress: .xorMappedAddress
        case .username: .username
        case .userhash: .userhash
        case .messageIntegrity: .messageIntegrity
        case .messageIntegritySHA256: .messageIntegritySHA256
        case .passwordAlgorithm: .passwordAlgorithm
        case .passwordAlgorithms: .passwordAlgorithms
        case .fingerprint: .fingerprint
        case .errorCode: .errorCode
        case .unknownAttributes: .unknownAttributes
        case .realm: .realm
        case .nonce: .nonce
        case .software: .software
        case .alternateServer: .alternateServer
        case .priority: .priority
        case .useCandidate: .useCandidate
        case .iceControlled: .iceControlled
        case .iceControlling: .iceControlling
        case .channelNumber: .channelNumber
        case .lifetime: .lifetime
        case .xorPeerAddress: .xorPeerAddress
        case .data: .data
        case .xorRelayedAddress: .xorRelayedAddress
        case .requestedAddressFamily: .requestedAddressFamily
        case .evenPort: .evenPort
        case .requestedTransport: .requestedTransport
        case .dontFragment: .dontFragment
        case .reservationToken: .reservationToken
        case .unknown(let type, _): type
        }
    }

    /// True for the attributes the encoder computes itself (MESSAGE-INTEGRITY,
    /// MESSAGE-INTEGRITY-SHA256, FINGERPRINT) and so leaves out of an attribute list.
    public var isComputedByEncoder: Bool {
        switch self {
        case .messageIntegrity, .messageIntegritySHA256, .fingerprint: true
        default: false
        }
    }
}

// MARK: - Decoding

extension STUNAttribute {
    /// Decodes the value of an attribute of `type` (padding already removed). `transactionID`
    /// unmasks the XOR address attributes.
    static func decode(
        type: STUNAttributeType, value: UnsafeRawBufferPointer, transactionID: STUNTransactionID
    ) throws(STUNError) -> STUNAttribute {
        switch type {
        case .mappedAddress:
            return .mappedAddress(try STUNAddressCodec.decode(value, type: type, xor: nil))
        case .xorMappedAddress:
            return .xorMappedAddress(try STUNAddressCodec.decode(value, type: type, xor: transactionID))
        case .alternateServer:
            return .alternateServer(try STUNAddressCodec.decode(value, type: type, xor: nil))
        case .xorPeerAddress:
            return .xorPeerAddress(try STUNAddressCodec.decode(value, type: type, xor: transactionID))
        case .xorRelayedAddress:
            return .xorRelayedAddress(try STUNAddressCodec.decode(value, type: type, xor: transactionID))
        case .username:
            return .username(try STUNTextCodec.decode(value, type: type))
        case .realm:
            return .realm(try STUNTextCodec.decode(value, type: type))
        case .nonce:
            return .nonce(try STUNTextCodec.decode(value, type: type))
        case .software:
            return .software(try STUNTextCodec.decode(value, type: type))
        case .userhash, .messageIntegrity, .messageIntegritySHA256, .fingerprint:
            return try decodeIntegrityFamily(type: type, value: value)
        case .passwordAlgorithm:
            return .passwordAlgorithm(try STUNPasswordAlgorithm.decodeSingle(value))
        case .passwordAlgorithms:
            return .passwordAlgorithms(try STUNPasswordAlgorithm.decodeList(value))
        case .errorCode:
            return .errorCode(try STUNErrorCode.decode(value))
        case .unknownAttributes:
            return .unknownAttributes(try STUNErrorCode.decodeUnknownAttributes(value))
        case .priority, .useCandidate, .iceControlled, .iceControlling:
            return try decodeICEFamily(type: type, value: value)
        case .channelNumber, .lifetime, .data, .requestedAddressFamily, .evenPort, .requestedTransport,
            .dontFragment, .reservationToken:
            return try decodeTURNFamily(type: type, value: value)
        default:
            return .unknown(type: type, value: Array(value))
        }
    }

    /// Throws `invalidAttributeLength` unless `value` is exactly `length` bytes.
    @inline(__always)
    static func expectLength(
        _ value: UnsafeRawBufferPointer, _ type: STUNAttributeType, _ length: Int
    ) throws(STUNError) {
        guard value.count == length else {
            throw STUNError(.invalidAttributeLength, "\(type) is \(value.count) bytes, not \(length)")
        }
    }
}

// MARK: - Encoding

extension STUNAttribute {
    /// The length of the value (without padding); throws when the value breaks its attribute's
    /// limits, so nothing invalid is ever written.
    ///
    /// Inlined into the encoder, its one caller, where the attribute is read from the message's
    /// buffer.
    @inline(__always)
    func encodedValueLength() throws(STUNError) -> Int {
        let length: Int
        switch self {
        case .mappedAddress(let e), .xorMappedAddress(let e), .alternateServer(let e),
            .xorPeerAddress(let e), .xorRelayedAddress(let e):
            length = STUNAddressCodec.length(of: e)
        case .username(let s), .realm(let s), .nonce(let s), .software(let s):
            length = try STUNTextCodec.checkedLength(s, type: type)
        case .userhash(let b):
            guard b.count == 32 else {
                throw STUNError(.invalidAttributeLength, "USERHASH must be 32 bytes, not \(b.count)")
            }
            length = 32
        case .messageIntegrity(let b), .messageIntegritySHA256(let b), .data(let b), .unknown(_, let b):
            length = b.count
        case .passwordAlgorithm(let a):
            length = try a.encodedLength(padded: false)
        case .passwordAlgorithms(let list):
            var total = 0
            for a in list { total += try a.encodedLength(padded: true) }
            length = total
        case .fingerprint, .priority, .channelNumber, .lifetime, .requestedAddressFamily, .requestedTransport:
            length = 4
        case .errorCode(let e):
            length = try e.encodedLength()
        case .unknownAttributes(let list):
            length = 2 * list.count
        case .useCandidate, .dontFragment:
            length = 0
        case .iceControlled, .iceControlling, .reservationToken:
            length = 8
        case .evenPort:
            length = 1
        }
        guard length <= 0xFFFF else {
            throw STUNError(.valueTooLong, "\(type) value of \(length) bytes exceeds the 16-bit length field")
        }
        return length
    }

    /// Writes the value (no header, no padding). `encodedValueLength()` must have succeeded.
    /// Inlined into the encoder, its one caller, for the same reason as `encodedValueLength()`.
    @inline(__always)
    func writeValue(to w: inout STUNWriter, transactionID: STUNTransactionID) {
        switch self {
        case .mappedAddress(let e), .alternateServer(let e):
            STUNAddressCodec.write(e, xor: nil, to: &w)
        case .xorMappedAddress(let e), .xorPeerAddress(let e), .xorRelayedAddress(let e):
            STUNAddressCodec.write(e, xor: transactionID, to: &w)
        case .username(let s), .realm(let s), .nonce(let s), .software(let s):
            w.append(utf8: s)
        case .userhash(let b), .messageIntegrity(let b), .messageIntegritySHA256(let b), .data(let b),
            .unknown(_, let b):
            w.append(b)
        case .passwordAlgorithm(let a):
            a.write(to: &w, padded: false)
        case .passwordAlgorithms(let list):
            for a in list { a.write(to: &w, padded: true) }
        case .fingerprint(let v), .priority(let v), .lifetime(let v):
            w.u32(v)
        case .errorCode(let e):
            e.write(to: &w)
        case .unknownAttributes(let list):
            for t in list { w.u16(t.rawValue) }
        case .useCandidate, .dontFragment:
            break
        case .iceControlled(let v), .iceControlling(let v), .reservationToken(let v):
            w.u64(v)
        case .channelNumber(let n):
            w.u16(n)
            w.u16(0)  // RFFU
        case .requestedAddressFamily(let f):
            w.u8(STUNAddressCodec.familyByte(f))
            w.u8(0); w.u16(0)  // reserved
        case .evenPort(let r):
            w.u8(r ? 0x80 : 0)
        case .requestedTransport(let p):
            w.u8(p)
            w.u8(0); w.u16(0)  // RFFU
        }
    }
}
