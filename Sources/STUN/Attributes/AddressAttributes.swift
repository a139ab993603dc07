// Address attributes: MAPPED-ADDRESS (RFC 8489 §14.1), XOR-MAPPED-ADDRESS (§14.2),
// ALTERNATE-SERVER (§14.15), and TURN's XOR-PEER-ADDRESS and XOR-RELAYED-ADDRESS (RFC 8656 §18.3,
// §18.5), which share XOR-MAPPED-ADDRESS's format.
//
//      0                   1                   2                   3
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//     |0 0 0 0 0 0 0 0|    Family     |         (X-)Port              |
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//     |                 (X-)Address (32 bits or 128 bits)             |
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// The XOR forms mask the port with the cookie's top 16 bits and the address with the cookie
// (IPv4) or the cookie followed by the transaction ID (IPv6), because some NATs rewrite any
// 32-bit word that equals the address they translate.

import ZoneCore

/// Reads and writes the address value shared by the five address attributes.
enum STUNAddressCodec {
    /// The family byte: 0x01 for IPv4, 0x02 for IPv6 (§14.1).
    static func familyByte(_ family: AddressFamily) -> UInt8 {
        switch family {
        case .ipv4: 0x01
        case .ipv6: 0x02
        }
    }

    /// The family a family byte names, or `invalidAddressFamily`.
    static func family(_ byte: UInt8, type: STUNAttributeType) throws(STUNError) -> AddressFamily {
        switch byte {
        case 0x01: return .ipv4
        case 0x02: return .ipv6
        default:
            throw STUNError(.invalidAddressFamily, "\(type) has address family 0x\(Hex.string(byte, digits: 2))")
        }
    }

    /// The value length for `endpoint`: 8 for IPv4, 20 for IPv6.
    static func length(of endpoint: Endpoint) -> Int { 4 + endpoint.family.addressLength }

    /// Decodes an address value; `xor` is the transaction ID for the XOR forms, nil for the plain.
    static func decode(
        _ value: UnsafeRawBufferPointer, type: STUNAttributeType, xor: STUNTransactionID?
    ) throws(STUNError) -> Endpoint {
        guard value.count >= 4 else {
            throw STUNError(.invalidAttributeLength, "\(type) is \(value.count) bytes, shorter than 4")
        }
        // The first byte "MUST be set to 0 and MUST be ignored by receivers" (§14.1).
        let family = try family(value[1], type: type)
        guard value.count == 4 + family.addressLength else {
            throw STUNError(.invalidAttributeLength,
                            "\(type) is \(value.count) bytes; an \(family) address needs \(4 + family.addressLength)")
        }
        let cookie = STUNMessageHeader.magicCookie
        var port = value.stunUInt16(at: 2)
        if xor != nil { port ^= UInt16(truncatingIfNeeded: cookie >> 16) }
        switch family {
        case .ipv4:
            var address = value.stunUInt32(at: 4)
            if xor != nil { address ^= cookie }
            return Endpoint(address: .v4(address), port: port)
        case .ipv6:
            var address = UInt128(value.stunUInt64(at: 4)) << 64 | UInt128(value.stunUInt64(at: 12))
            if let id = xor { address ^= mask(id) }
            return Endpoint(address: .v6(IPv6Bits(address)), port: port)
        }
    }

    /// Writes an address value; `xor` as for `decode`.
    static func write(_ endpoint: Endpoint, xor: STUNTransactionID?, to w: inout STUNWriter) {
        let cookie = STUNMessageHeader.magicCookie
        w.u8(0)
        w.u8(familyByte(endpoint.family))
        w.u16(xor == nil ? endpoint.port : endpoint.port ^ UInt16(truncatingIfNeeded: cookie >> 16))
        switch endpoint.address {
        case .v4(let a):
            w.u32(xor == nil ? a : a ^ cookie)
        case .v6(let bits):
            var a = bits.value
            if let id = xor { a ^= mask(id) }
            w.u64(UInt64(truncatingIfNeeded: a >> 64))
            w.u64(UInt64(truncatingIfNeeded: a))
        }
    }

    /// The 128-bit IPv6 mask: the magic cookie followed by the transaction ID (§14.2).
    private static func mask(_ id: STUNTransactionID) -> UInt128 {
        UInt128(STUNMessageHeader.magicCookie) << 96 | UInt128(id.high) << 64 | UInt128(id.low)
    }
}
