// TURN attributes: RFC 8656 §18 (and RFC 5766 §14, the classic form coturn speaks, which has the
// same encodings): CHANNEL-NUMBER (§18.1), LIFETIME (§18.2), DATA (§18.4),
// REQUESTED-ADDRESS-FAMILY (§18.6), EVEN-PORT (§18.7), REQUESTED-TRANSPORT (§18.8),
// DONT-FRAGMENT (§18.9), RESERVATION-TOKEN (§18.10). XOR-PEER-ADDRESS and XOR-RELAYED-ADDRESS
// share the address codec (AddressAttributes.swift).
//
//   CHANNEL-NUMBER:           | Channel Number (16) | RFFU = 0 (16) |
//   LIFETIME:                 | Lifetime, seconds (32)              |
//   REQUESTED-ADDRESS-FAMILY: | Family (8) | Reserved (24)          |
//   EVEN-PORT:                | R | RFFU (7) |                        (1 byte, padded)
//   REQUESTED-TRANSPORT:      | Protocol (8) | RFFU (24)            |
//   RESERVATION-TOKEN:        | Token (64)                          |
//
// Reserved bits are ignored on receipt. Channel-number ranges and transports are policy, checked
// by the TURN server (which answers 400 or 442), so they decode as the raw numbers.

extension STUNAttribute {
    static func decodeTURNFamily(
        type: STUNAttributeType, value: UnsafeRawBufferPointer
    ) throws(STUNError) -> STUNAttribute {
        switch type {
        case .channelNumber:
            try expectLength(value, type, 4)
            return .channelNumber(value.stunUInt16(at: 0))
        case .lifetime:
            try expectLength(value, type, 4)
            return .lifetime(seconds: value.stunUInt32(at: 0))
        case .data:
            return .data(Array(value))
        case .requestedAddressFamily:
            try expectLength(value, type, 4)
            return .requestedAddressFamily(try STUNAddressCodec.family(value[0], type: type))
        case .evenPort:
            try expectLength(value, type, 1)
            return .evenPort(reserveNextPort: value[0] & 0x80 != 0)
        case .requestedTransport:
            try expectLength(value, type, 4)
            return .requestedTransport(protocolNumber: value[0])
        case .dontFragment:
            try expectLength(value, type, 0)
            return .dontFragment
        default:  // .reservationToken
            try expectLength(value, type, 8)
            return .reservationToken(value.stunUInt64(at: 0))
        }
    }
}
