// Integrity attributes: MESSAGE-INTEGRITY (RFC 8489 §14.5), MESSAGE-INTEGRITY-SHA256 (§14.6),
// FINGERPRINT (§14.7) and USERHASH (§14.4).
//
// Only the values are decoded here. Computing and checking them needs the message bytes around
// them: see `STUNMessageEncoder` and `STUNIntegrity`.

extension STUNAttribute {
    /// The FINGERPRINT value is the CRC-32 of the message XORed with this ("STUN", §14.7), so
    /// that a FINGERPRINT does not look like the CRC-32 of some other protocol's packet.
    public static let fingerprintXOR: UInt32 = 0x5354_554E

    static func decodeIntegrityFamily(
        type: STUNAttributeType, value: UnsafeRawBufferPointer
    ) throws(STUNError) -> STUNAttribute {
        switch type {
        case .userhash:
            try expectLength(value, type, 32)
            return .userhash(Array(value))
        case .messageIntegrity:
            try expectLength(value, type, 20)
            return .messageIntegrity(Array(value))
        case .messageIntegritySHA256:
            // §14.6: at least 16 bytes and at most 32, a multiple of 4 (truncation is allowed).
            guard value.count >= 16, value.count <= 32, value.count & 3 == 0 else {
                throw STUNError(.invalidAttributeLength,
                                "\(type) is \(value.count) bytes; it must be 16–32 and a multiple of 4")
            }
            return .messageIntegritySHA256(Array(value))
        default:  // .fingerprint
            try expectLength(value, type, 4)
            return .fingerprint(value.stunUInt32(at: 0))
        }
    }
}
