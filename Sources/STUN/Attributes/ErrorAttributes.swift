// ERROR-CODE (RFC 8489 §14.8) and UNKNOWN-ATTRIBUTES (§14.13), with the error codes of RFC 8489
// §18.4 and RFC 8656 §19 and RFC 8445 §7.3.1.1 (487 Role Conflict).
//
//      0                   1                   2                   3
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//     |           Reserved, should be 0         |Class|     Number    |
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//     |      Reason Phrase (variable)                                ..
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// The code is Class × 100 + Number, with Class 3–6 and Number 0–99.

/// An ERROR-CODE value: a code 300–699 and a reason phrase for people.
public struct STUNErrorCode: Hashable, Sendable, CustomStringConvertible {
    /// The numeric code, 300–699.
    public var code: Int
    /// The reason phrase (UTF-8, fewer than 128 characters).
    public var reason: String

    /// An error code with its reason; the code's standard phrase when `reason` is nil.
    public init(code: Int, reason: String? = nil) {
        self.code = code
        self.reason = reason ?? STUNErrorCode.standardReason(code)
    }

    /// 300 Try Alternate (RFC 8489): use ALTERNATE-SERVER.
    public static let tryAlternate = 300
    /// 400 Bad Request (RFC 8489).
    public static let badRequest = 400
    /// 401 Unauthenticated (RFC 8489): missing or wrong credentials.
    public static let unauthenticated = 401
    /// 403 Forbidden (RFC 8656).
    public static let forbidden = 403
    /// 405 Mobility Forbidden (RFC 8656).
    public static let mobilityForbidden = 405
    /// 420 Unknown Attribute (RFC 8489): see UNKNOWN-ATTRIBUTES.
    public static let unknownAttribute = 420
    /// 437 Allocation Mismatch (RFC 8656).
    public static let allocationMismatch = 437
    /// 438 Stale Nonce (RFC 8489).
    public static let staleNonce = 438
    /// 440 Address Family not Supported (RFC 8656).
    public static let addressFamilyNotSupported = 440
    /// 441 Wrong Credentials (RFC 8656).
    public static let wrongCredentials = 441
    /// 442 Unsupported Transport Protocol (RFC 8656).
    public static let unsupportedTransportProtocol = 442
    /// 443 Peer Address Family Mismatch (RFC 8656).
    public static let peerAddressFamilyMismatch = 443
    /// 486 Allocation Quota Reached (RFC 8656).
    public static let allocationQuotaReached = 486
    /// 487 Role Conflict (RFC 8445).
    public static let roleConflict = 487
    /// 500 Server Error (RFC 8489).
    public static let serverError = 500
    /// 508 Insufficient Capacity (RFC 8656).
    public static let insufficientCapacity = 508

    /// The registry's phrase for `code`, or "Error" for codes it does not list.
    public static func standardReason(_ code: Int) -> String {
        switch code {
        case 300: "Try Alternate"
        case 400: "Bad Request"
        case 401: "Unauthenticated"
        case 403: "Forbidden"
        case 405: "Mobility Forbidden"
        case 420: "Unknown Attribute"
        case 437: "Allocation Mismatch"
        case 438: "Stale Nonce"
        case 440: "Address Family not Supported"
        case 441: "Wrong Credentials"
        case 442: "Unsupported Transport Protocol"
        case 443: "Peer Address Family Mismatch"
        case 486: "Allocation Quota Reached"
        case 487: "Role Conflict"
        case 500: "Server Error"
        case 508: "Insufficient Capacity"
        default: "Error"
        }
    }

    public var description: String { "\(code) \(reason)" }

    func encodedLength() throws(STUNError) -> Int {
        guard (300...699).contains(code) else {
            throw STUNError(.invalidErrorCode, "error code \(code) is outside 300–699")
        }
        return 4 + (try STUNTextCodec.checkedLength(reason, type: .errorCode))
    }

    func write(to w: inout STUNWriter) {
        w.u16(0)
        w.u8(UInt8(code / 100))
        w.u8(UInt8(code % 100))
        w.append(utf8: reason)
    }

    static func decode(_ value: UnsafeRawBufferPointer) throws(STUNError) -> STUNErrorCode {
        guard value.count >= 4 else {
            throw STUNError(.invalidAttributeLength, "ERROR-CODE is \(value.count) bytes, shorter than 4")
        }
        guard value.count - 4 <= STUNTextCodec.maxLength(of: .errorCode) else {
            throw STUNError(.valueTooLong, "ERROR-CODE reason phrase is \(value.count - 4) bytes")
        }
        let errorClass = Int(value[2] & 0x07)  // the 21 bits above it are reserved
        let number = Int(value[3])
        guard (3...6).contains(errorClass), number < 100 else {
            throw STUNError(.invalidErrorCode, "ERROR-CODE class \(errorClass) number \(number) is not a code 300–699")
        }
        let phrase = UnsafeRawBufferPointer(rebasing: value[4...])
        let reason = try STUNTextCodec.utf8(phrase, what: "ERROR-CODE reason phrase")
        return STUNErrorCode(code: errorClass * 100 + number, reason: reason)
    }

    static func decodeUnknownAttributes(_ value: UnsafeRawBufferPointer) throws(STUNError) -> [STUNAttributeType] {
        guard value.count & 1 == 0 else {
            throw STUNError(.invalidAttributeLength, "UNKNOWN-ATTRIBUTES has odd length \(value.count)")
        }
        return stride(from: 0, to: value.count, by: 2).map { STUNAttributeType(rawValue: value.stunUInt16(at: $0)) }
    }
}
