// Encoding a STUN message: RFC 8489 §5, §14 (TLVs padded to 4 bytes), §14.5–14.7 (computing
// MESSAGE-INTEGRITY, MESSAGE-INTEGRITY-SHA256 and FINGERPRINT).
//
// The integrity attributes cover the message "up to and including the attribute preceding" them,
// with the header's length field already counting the attribute being computed — but not what
// follows it (§14.5). So the encoder writes the attributes, sets the length as if the message
// ended after MESSAGE-INTEGRITY, computes the HMAC in place, appends it, and repeats for
// MESSAGE-INTEGRITY-SHA256 and FINGERPRINT. The output is allocated once, at its final size, and
// written in place (`STUNWriter`).

import ZoneCore

/// The integrity attributes to compute: MESSAGE-INTEGRITY (HMAC-SHA1), MESSAGE-INTEGRITY-SHA256,
/// or both (the SHA-1 one first, as RFC 8489 §14.6 orders them).
public struct STUNIntegrityAlgorithms: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// MESSAGE-INTEGRITY, HMAC-SHA1 (RFC 8489 §14.5); all that RFC 5389 peers such as coturn know.
    public static let hmacSHA1 = STUNIntegrityAlgorithms(rawValue: 1)
    /// MESSAGE-INTEGRITY-SHA256, HMAC-SHA256 (RFC 8489 §14.6), untruncated (32 bytes).
    public static let hmacSHA256 = STUNIntegrityAlgorithms(rawValue: 2)
}

extension STUNMessage {
    /// Encodes the message.
    ///
    /// - Parameters:
    ///   - key: when given, MESSAGE-INTEGRITY and/or MESSAGE-INTEGRITY-SHA256 are computed with it.
    ///   - integrity: which of the two to compute (default MESSAGE-INTEGRITY only).
    ///   - fingerprint: append FINGERPRINT (always last).
    ///   - padding: the byte that pads attribute values to 4 bytes. Receivers ignore it; it is a
    ///     parameter only so RFC 5769's samples, padded with 0x20, can be reproduced byte for byte.
    ///   - trailing: attributes written after `attributes`, exactly as if appended to them, without
    ///     copying the message to append them: a client's USERNAME, REALM and NONCE (RFC 8489
    ///     §9.2.3), a server's SOFTWARE (§14.14), kept in an array of their own and reused.
    /// - Throws: `STUNError` when a value breaks its attribute's limits or the message would not
    ///   fit the 16-bit length field.
    ///
    /// `.messageIntegrity`, `.messageIntegritySHA256` and `.fingerprint` in `attributes` are not
    /// written: they belong to the bytes they were computed over.
    public func encode(
        key: STUNIntegrityKey? = nil, integrity: STUNIntegrityAlgorithms = .hmacSHA1,
        fingerprint: Bool = false, padding: UInt8 = 0, appending trailing: [STUNAttribute] = []
    ) throws(STUNError) -> [UInt8] {
        var size = STUNMessageHeader.size
        size += try STUNMessage.encodedSize(of: attributes)
        size += try STUNMessage.encodedSize(of: trailing)
        let withSHA1 = key != nil && integrity.contains(.hmacSHA1)
        let withSHA256 = key != nil && integrity.contains(.hmacSHA256)
        if withSHA1 { size += 4 + 20 }
        if withSHA256 { size += 4 + 32 }
        if fingerprint { size += 4 + 4 }
        guard size - STUNMessageHeader.size <= 0xFFFC else {
            throw STUNError(.messageTooLong, "message of \(size) bytes does not fit the 16-bit length field")
        }

        return try STUNWriter.bytes(capacity: size) { (w) throws(STUNError) in
            w.u16(messageType.rawValue)
            w.u16(0)  // length, set before each computed attribute and at the end
            w.u32(STUNMessageHeader.magicCookie)
            w.u32(transactionID.high)
            w.u64(transactionID.low)
            STUNMessage.write(attributes, to: &w, transactionID: transactionID, padding: padding)
            STUNMessage.write(trailing, to: &w, transactionID: transactionID, padding: padding)
            if let key, withSHA1 {
                STUNMessage.appendMAC(to: &w, type: .messageIntegrity, macSize: 20) { message, mac in
                    key.hmacSHA1.authenticationCode(for: message, into: mac)
                }
            }
            if let key, withSHA256 {
                STUNMessage.appendMAC(to: &w, type: .messageIntegritySHA256, macSize: 32) { message, mac in
                    key.hmacSHA256.authenticationCode(for: message, into: mac)
                }
            }
            if fingerprint {
                w.set16(UInt16(w.count + 8 - STUNMessageHeader.size), at: 2)
                let crc = CRC32.checksum(w.written)
                w.u16(STUNAttributeType.fingerprint.rawValue)
                w.u16(4)
                w.u32(crc ^ STUNAttribute.fingerprintXOR)
            }
            w.set16(UInt16(w.count - STUNMessageHeader.size), at: 2)
        }
    }

    // The attribute lists are read through their buffers, once to size the message and once to
    // write it.

    /// The encoded size of the attributes of `list` that the encoder writes (§14: a 4-byte
    /// header and the value padded to 4 bytes each); throws when a value breaks its limits.
    @inline(__always)
    private static func encodedSize(of list: [STUNAttribute]) throws(STUNError) -> Int {
        try list.withUnsafeBufferPointer { (list) throws(STUNError) -> Int in
            var size = 0
            for i in list.indices where !list[i].isComputedByEncoder {
                size += 4 + (try list[i].encodedValueLength() + 3) & ~3
            }
            return size
        }
    }

    /// Appends the attributes of `list` that the encoder writes, in order.
    @inline(__always)
    private static func write(
        _ list: [STUNAttribute], to w: inout STUNWriter, transactionID: STUNTransactionID, padding: UInt8
    ) {
        list.withUnsafeBufferPointer { list in
            for i in list.indices where !list[i].isComputedByEncoder {
                write(list[i], to: &w, transactionID: transactionID, padding: padding)
            }
        }
    }

    /// Appends one attribute (RFC 8489 §14): type, length, value, padding. The sizing pass has
    /// computed every value's length and checked it against its attribute's limits; the length
    /// field is filled in from the bytes the value took, rather than computed a second time.
    @inline(__always)
    private static func write(
        _ attribute: STUNAttribute, to w: inout STUNWriter, transactionID: STUNTransactionID, padding: UInt8
    ) {
        let start = w.count
        w.u16(attribute.type.rawValue)
        w.u16(0)
        attribute.writeValue(to: &w, transactionID: transactionID)
        w.set16(UInt16(w.count - start - 4), at: start + 2)
        w.pad(with: padding)
    }

    /// Appends an attribute of `type` holding a `macSize`-byte MAC of everything written so far,
    /// computed with the header length counting that attribute (RFC 8489 §14.5, §14.6).
    @inline(__always)
    private static func appendMAC(
        to w: inout STUNWriter, type: STUNAttributeType, macSize: Int,
        _ mac: (UnsafeRawBufferPointer, UnsafeMutableRawBufferPointer) -> Void
    ) {
        let start = w.count
        w.set16(UInt16(start + 4 + macSize - STUNMessageHeader.size), at: 2)
        w.u16(type.rawValue)
        w.u16(UInt16(macSize))
        w.zeros(macSize)
        let buffer = w.writtenMutable
        mac(UnsafeRawBufferPointer(rebasing: buffer[0..<start]),
            UnsafeMutableRawBufferPointer(rebasing: buffer[(start + 4)..<(start + 4 + macSize)]))
    }
}
