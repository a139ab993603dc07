// Text attributes: USERNAME (RFC 8489 §14.3, RFC 5389 §15.3), REALM (§14.9), NONCE (§14.10) and
// SOFTWARE (§14.14).
//
// All four are UTF-8. RFC 5389, which coturn follows, bounds USERNAME at "less than 513 bytes";
// the others are "fewer than 128 characters (which can be as long as 763 bytes when decoding
// them)". Bytes that are not UTF-8 are rejected rather than replaced, so that what a key is
// computed from (username, realm) is exactly what was on the wire.

/// Reads and writes the UTF-8 text attributes, enforcing their length limits.
enum STUNTextCodec {
    /// The longest value, in bytes, `type` may carry.
    static func maxLength(of type: STUNAttributeType) -> Int {
        type == .username ? 512 : 763
    }

    static func decode(_ value: UnsafeRawBufferPointer, type: STUNAttributeType) throws(STUNError) -> String {
        guard value.count <= maxLength(of: type) else {
            throw STUNError(.valueTooLong, "\(type) is \(value.count) bytes; at most \(maxLength(of: type)) allowed")
        }
        return try utf8(value, what: "\(type)")
    }

    /// `value` as a string, or `invalidText` when it is not well-formed UTF-8.
    static func utf8(_ value: UnsafeRawBufferPointer, what: @autoclosure () -> String) throws(STUNError) -> String {
        let units = value.assumingMemoryBound(to: UInt8.self)
        // ASCII is valid UTF-8 as it is; checking for it first is cheaper than full validation.
        if units.allSatisfy({ $0 < 0x80 }) { return String(decoding: units, as: UTF8.self) }
        guard let text = String(validating: units, as: UTF8.self) else {
            throw STUNError(.invalidText, "\(what()) is not valid UTF-8")
        }
        return text
    }

    /// The UTF-8 length of `text`, or `valueTooLong` when `type` cannot carry it.
    static func checkedLength(_ text: String, type: STUNAttributeType) throws(STUNError) -> Int {
        let length = text.utf8.count
        guard length <= maxLength(of: type) else {
            throw STUNError(.valueTooLong, "\(type) of \(length) bytes; at most \(maxLength(of: type)) allowed")
        }
        return length
    }
}
