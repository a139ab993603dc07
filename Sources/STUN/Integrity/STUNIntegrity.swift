// Checking MESSAGE-INTEGRITY (RFC 8489 §14.5, §9.1.4, §9.2.4), MESSAGE-INTEGRITY-SHA256 (§14.6)
// and FINGERPRINT (§14.7) on received bytes.
//
// The MAC of an attribute covers the message up to that attribute, with the header's length field
// set as if the message ended right after it. When FINGERPRINT (or MESSAGE-INTEGRITY-SHA256)
// follows, the length on the wire is larger, so the covered prefix is copied to a stack buffer
// and its length field patched there.
// FINGERPRINT needs no patch, since it is always last (STUNMessageLayout enforces it).
//
// MACs are compared in constant time, so a forger learns nothing from how long a rejection took.

import ZoneCore

/// Integrity and fingerprint checks on the raw bytes of a received message.
public enum STUNIntegrity {
    /// Checks the message's integrity under `key`: MESSAGE-INTEGRITY-SHA256 when present
    /// (RFC 8489 §9.2.4: the stronger one is used), MESSAGE-INTEGRITY otherwise.
    ///
    /// - Returns: the algorithm that was checked.
    /// - Throws: `missingMessageIntegrity` when neither attribute is present,
    ///   `badMessageIntegrity` on a mismatch, or the framing errors of `STUNMessageLayout`.
    @discardableResult
    public static func verify(
        _ bytes: UnsafeRawBufferPointer, key: STUNIntegrityKey
    ) throws(STUNError) -> STUNIntegrityAlgorithms {
        try verify(bytes, layout: try STUNMessageLayout(scanning: bytes), key: key)
    }

    /// `verify(_:key:)` for an array.
    @discardableResult
    public static func verify(_ bytes: [UInt8], key: STUNIntegrityKey) throws(STUNError) -> STUNIntegrityAlgorithms {
        try withRawBytes(bytes) { (raw) throws(STUNError) in try verify(raw, key: key) }
    }

    /// `verify(_:layout:key:)` for an array.
    @discardableResult
    public static func verify(
        _ bytes: [UInt8], layout: STUNMessageLayout, key: STUNIntegrityKey
    ) throws(STUNError) -> STUNIntegrityAlgorithms {
        try withRawBytes(bytes) { (raw) throws(STUNError) in try verify(raw, layout: layout, key: key) }
    }

    /// `verify(_:key:)` with a layout already scanned from the same bytes (passing another
    /// message's layout is a programmer error and traps).
    @discardableResult
    public static func verify(
        _ bytes: UnsafeRawBufferPointer, layout: STUNMessageLayout, key: STUNIntegrityKey
    ) throws(STUNError) -> STUNIntegrityAlgorithms {
        precondition(bytes.count == layout.header.messageSize, "STUNIntegrity.verify: layout of other bytes")
        if let offset = layout.messageIntegritySHA256Offset {
            let length = Int(bytes.stunUInt16(at: offset + 2))
            let matches = macMatches(bytes, attributeOffset: offset, macLength: length, macSize: 32) { message, mac in
                key.hmacSHA256.authenticationCode(for: message, into: mac)
            }
            guard matches else {
                throw STUNError(.badMessageIntegrity, "MESSAGE-INTEGRITY-SHA256 does not match the key")
            }
            return .hmacSHA256
        }
        if let offset = layout.messageIntegrityOffset {
            let matches = macMatches(bytes, attributeOffset: offset, macLength: 20, macSize: 20) { message, mac in
                key.hmacSHA1.authenticationCode(for: message, into: mac)
            }
            guard matches else {
                throw STUNError(.badMessageIntegrity, "MESSAGE-INTEGRITY does not match the key")
            }
            return .hmacSHA1
        }
        throw STUNError(.missingMessageIntegrity, "the message has no MESSAGE-INTEGRITY attribute")
    }

    /// Checks FINGERPRINT, which must be present.
    ///
    /// - Throws: `badFingerprint` when it is absent or wrong, or the framing errors of
    ///   `STUNMessageLayout`.
    public static func verifyFingerprint(_ bytes: UnsafeRawBufferPointer) throws(STUNError) {
        try verifyFingerprint(bytes, layout: try STUNMessageLayout(scanning: bytes))
    }

    /// `verifyFingerprint(_:)` for an array.
    public static func verifyFingerprint(_ bytes: [UInt8]) throws(STUNError) {
        try withRawBytes(bytes) { (raw) throws(STUNError) in try verifyFingerprint(raw) }
    }

    /// `verifyFingerprint(_:)` with a layout already scanned from the same bytes.
    public static func verifyFingerprint(_ bytes: UnsafeRawBufferPointer, layout: STUNMessageLayout) throws(STUNError) {
        precondition(bytes.count == layout.header.messageSize, "STUNIntegrity.verifyFingerprint: layout of other bytes")
        guard let offset = layout.fingerprintOffset else {
            throw STUNError(.badFingerprint, "the message has no FINGERPRINT attribute")
        }
        // FINGERPRINT is last, so the header length already ends right after it.
        let crc = CRC32.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<offset]))
        let received = bytes.stunUInt32(at: offset + 4)
        guard received == crc ^ STUNAttribute.fingerprintXOR else {
            throw STUNError(.badFingerprint,
                            "FINGERPRINT is 0x\(Hex.string(received, digits: 8)), "
                                + "expected 0x\(Hex.string(crc ^ STUNAttribute.fingerprintXOR, digits: 8))")
        }
    }

    /// True when `bytes` is a well-framed STUN message whose FINGERPRINT is present and right:
    /// the test RFC 8489 §7 suggests for telling STUN from other protocols on one port.
    public static func hasValidFingerprint(_ bytes: UnsafeRawBufferPointer) -> Bool {
        (try? verifyFingerprint(bytes)) != nil
    }

    /// `hasValidFingerprint(_:)` for an array.
    public static func hasValidFingerprint(_ bytes: [UInt8]) -> Bool {
        (try? verifyFingerprint(bytes)) != nil
    }

    /// Computes the MAC of the message prefix before the attribute at `attributeOffset`, with the
    /// header length patched to end after that attribute, and compares its first `macLength`
    /// bytes with the attribute's value in constant time.
    @inline(__always)
    private static func macMatches(
        _ bytes: UnsafeRawBufferPointer, attributeOffset: Int, macLength: Int, macSize: Int,
        _ mac: (UnsafeRawBufferPointer, UnsafeMutableRawBufferPointer) -> Void
    ) -> Bool {
        let coveredLength = attributeOffset + 4 + ((macLength + 3) & ~3) - STUNMessageHeader.size
        return withUnsafeTemporaryAllocation(byteCount: attributeOffset + macSize, alignment: 8) { scratch in
            let prefix = UnsafeMutableRawBufferPointer(rebasing: scratch[0..<attributeOffset])
            prefix.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[0..<attributeOffset]))
            prefix[2] = UInt8(truncatingIfNeeded: coveredLength >> 8)
            prefix[3] = UInt8(truncatingIfNeeded: coveredLength)
            let computed = UnsafeMutableRawBufferPointer(rebasing: scratch[attributeOffset...])
            mac(UnsafeRawBufferPointer(prefix), computed)
            var difference: UInt8 = 0
            for i in 0..<macLength {
                difference |= computed[i] ^ bytes[attributeOffset + 4 + i]
            }
            return difference == 0
        }
    }
}
