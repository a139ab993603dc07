// The attribute layout of a STUN message: RFC 8489 §5 (length), §14 (TLVs, padding), §14.5–14.7
// (what may follow MESSAGE-INTEGRITY, MESSAGE-INTEGRITY-SHA256 and FINGERPRINT).
//
// One pass over the attribute headers checks the framing and records where the integrity
// attributes are, without decoding or allocating anything: enough to verify a message before
// paying for its decode, and the first step of every decode.
//
// Ordering rules applied (§14.5, §14.6, §14.7):
// - after MESSAGE-INTEGRITY only MESSAGE-INTEGRITY-SHA256 and FINGERPRINT count; any other
//   attribute there is skipped ("agents MUST ignore all other attributes that follow");
// - after MESSAGE-INTEGRITY-SHA256 only FINGERPRINT counts;
// - FINGERPRINT must be last: anything after it is an error, since FINGERPRINT exists to tell
//   STUN apart from other traffic and a message that breaks its rule is not to be trusted.

/// Where the attributes of a STUN message are.
public struct STUNMessageLayout: Hashable, Sendable {
    /// The message header.
    public var header: STUNMessageHeader
    /// Offset of the MESSAGE-INTEGRITY attribute (its TLV header) that counts, if any.
    public var messageIntegrityOffset: Int?
    /// Offset of the MESSAGE-INTEGRITY-SHA256 attribute that counts, if any.
    public var messageIntegritySHA256Offset: Int?
    /// Offset of the FINGERPRINT attribute, if any (always the last attribute).
    public var fingerprintOffset: Int?
    /// How many attributes count (a decoder returns this many).
    public var attributeCount: Int
    /// How many attributes are skipped because they follow MESSAGE-INTEGRITY(-SHA256).
    public var ignoredAttributeCount: Int

    /// Scans the datagram `bytes`, which must hold exactly one message: a shorter input is
    /// `truncated`, a longer one has `trailingBytes`.
    public init(scanning bytes: UnsafeRawBufferPointer) throws(STUNError) {
        header = try STUNMessageHeader(parsing: bytes)
        let total = header.messageSize
        guard bytes.count >= total else {
            throw STUNError(.truncated, "message of \(total) bytes, only \(bytes.count) present")
        }
        guard bytes.count == total else {
            throw STUNError(.trailingBytes, "\(bytes.count - total) bytes after the \(total)-byte message")
        }
        var integrity: Int?
        var integritySHA256: Int?
        var fingerprint: Int?
        var counted = 0
        var ignored = 0
        try STUNMessageLayout.forEachAttribute(in: bytes, end: total) { (offset, type, value) throws(STUNError) in
            if fingerprint != nil {
                throw STUNError(.fingerprintNotLast, "\(type) at offset \(offset) follows FINGERPRINT")
            }
            // The lengths of the attributes recorded here are checked now, because verification
            // reads their values straight from the bytes.
            if type == .fingerprint {
                try STUNMessageLayout.expect(value.count == 4, type, value.count, "4")
                fingerprint = offset
            } else if integritySHA256 != nil {
                ignored += 1
                return
            } else if type == .messageIntegritySHA256 {
                let length = value.count
                try STUNMessageLayout.expect(length >= 16 && length <= 32 && length & 3 == 0, type, length,
                                             "16–32 and a multiple of 4")
                integritySHA256 = offset
            } else if integrity != nil {
                ignored += 1
                return
            } else if type == .messageIntegrity {
                try STUNMessageLayout.expect(value.count == 20, type, value.count, "20")
                integrity = offset
            }
            counted += 1
        }
        messageIntegrityOffset = integrity
        messageIntegritySHA256Offset = integritySHA256
        fingerprintOffset = fingerprint
        attributeCount = counted
        ignoredAttributeCount = ignored
    }

    private static func expect(
        _ condition: Bool, _ type: STUNAttributeType, _ length: Int, _ allowed: String
    ) throws(STUNError) {
        guard condition else {
            throw STUNError(.invalidAttributeLength, "\(type) is \(length) bytes; it must be \(allowed)")
        }
    }

    /// Scans the datagram `bytes` (see `init(scanning:)`).
    public init(scanning bytes: [UInt8]) throws(STUNError) {
        self = try withRawBytes(bytes) { (raw) throws(STUNError) in try STUNMessageLayout(scanning: raw) }
    }

    /// True when the attribute at `offset` counts (is not skipped by the ordering rules).
    func counts(offset: Int) -> Bool {
        let cut = min(messageIntegrityOffset ?? Int.max, messageIntegritySHA256Offset ?? Int.max)
        return offset <= cut || offset == messageIntegritySHA256Offset || offset == fingerprintOffset
    }

    /// Calls `body` with the offset, type and value range of every attribute between the header
    /// and `end`, checking that each one, padding included, fits.
    @inline(__always)
    static func forEachAttribute(
        in bytes: UnsafeRawBufferPointer, end: Int,
        _ body: (Int, STUNAttributeType, Range<Int>) throws(STUNError) -> Void
    ) throws(STUNError) {
        var offset = STUNMessageHeader.size
        while offset < end {
            // `end - offset` is a positive multiple of 4, so the 4-byte TLV header fits.
            guard end - offset >= 4 else {
                throw STUNError(.attributeOverrun, "attribute header at offset \(offset) runs past the message")
            }
            let type = STUNAttributeType(rawValue: bytes.stunUInt16(at: offset))
            let length = Int(bytes.stunUInt16(at: offset + 2))
            let valueStart = offset + 4
            let next = valueStart + (length + 3) & ~3
            guard next <= end else {
                throw STUNError(.attributeOverrun,
                                "\(type) at offset \(offset) has length \(length), past the message end at \(end)")
            }
            try body(offset, type, valueStart..<(valueStart + length))
            offset = next
        }
    }
}
