// The STUN message header: RFC 8489 §5, Figure 2.
//
//      0                   1                   2                   3
//      0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//     |0 0|     STUN Message Type     |         Message Length        |
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//     |                         Magic Cookie                          |
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//     |                     Transaction ID (96 bits)                  |
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// The message length counts the attribute bytes after the 20-byte header, padding included, so
// it is always a multiple of 4.

import ZoneCore

/// The fixed 20-byte header that starts every STUN message.
public struct STUNMessageHeader: Hashable, Sendable {
    /// The header size in bytes.
    public static let size = 20
    /// The magic cookie, 0x2112A442 (RFC 8489 §5): tells STUN from RFC 3489 and other traffic.
    public static let magicCookie: UInt32 = 0x2112_A442

    /// Method and class.
    public var messageType: STUNMessageType
    /// The length of the attributes after the header, in bytes (a multiple of 4).
    public var length: Int
    /// The transaction ID.
    public var transactionID: STUNTransactionID

    public init(messageType: STUNMessageType, length: Int, transactionID: STUNTransactionID) {
        self.messageType = messageType
        self.length = length
        self.transactionID = transactionID
    }

    /// The header at the start of `bytes`, checked as RFC 8489 §6.3 asks: first two bits zero,
    /// magic cookie, length a multiple of 4. Bytes after the header are not looked at, so this
    /// also serves a server that must answer a message whose attributes did not decode.
    public init(parsing bytes: UnsafeRawBufferPointer) throws(STUNError) {
        guard bytes.count >= STUNMessageHeader.size else {
            throw STUNError(.truncated, "\(bytes.count) bytes is shorter than the 20-byte STUN header")
        }
        let rawType = bytes.stunUInt16(at: 0)
        guard rawType & 0xC000 == 0 else {
            throw STUNError(.notSTUN, "first two bits are not zero (first byte 0x\(Hex.string(bytes[0], digits: 2)))")
        }
        let cookie = bytes.stunUInt32(at: 4)
        guard cookie == STUNMessageHeader.magicCookie else {
            throw STUNError(.badMagicCookie, "magic cookie is 0x\(Hex.string(cookie, digits: 8)), not 0x2112a442")
        }
        let length = Int(bytes.stunUInt16(at: 2))
        guard length & 3 == 0 else {
            throw STUNError(.lengthNotMultipleOfFour, "message length \(length) is not a multiple of 4")
        }
        messageType = STUNMessageType(rawValue: rawType)
        self.length = length
        transactionID = STUNTransactionID(high: bytes.stunUInt32(at: 8), low: bytes.stunUInt64(at: 12))
    }

    /// The header at the start of `bytes`.
    public init(parsing bytes: [UInt8]) throws(STUNError) {
        self = try withRawBytes(bytes) { (raw) throws(STUNError) in try STUNMessageHeader(parsing: raw) }
    }

    /// The size of the whole message, header included.
    public var messageSize: Int { STUNMessageHeader.size + length }

    /// True when `bytes` starts with a plausible STUN header (zero top bits, magic cookie, length a
    /// multiple of 4): the cheap test a demultiplexer runs before decoding.
    public static func looksLikeSTUN(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= size && bytes[0] & 0xC0 == 0 && bytes.stunUInt32(at: 4) == magicCookie
            && bytes[3] & 3 == 0
    }
}

// Big-endian loads for the codecs. Callers check bounds first; these only read.
extension UnsafeRawBufferPointer {
    @inline(__always)
    func stunUInt16(at offset: Int) -> UInt16 {
        UInt16(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }

    @inline(__always)
    func stunUInt32(at offset: Int) -> UInt32 {
        UInt32(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    @inline(__always)
    func stunUInt64(at offset: Int) -> UInt64 {
        UInt64(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
}
