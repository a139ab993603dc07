// ChannelData messages: RFC 8656 §12.4 (and RFC 5766 §11.4, the classic form coturn speaks).
//
//      0                   1                   2                   3
//      0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//     |         Channel Number        |            Length             |
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//     /                       Application Data                        /
//     +-------------------------------+
//
// Channel numbers are 0x4000–0x4FFF (RFC 8656 §12; the first byte 64–79 is how RFC 7983 tells
// ChannelData from STUN, DTLS and RTP). Length counts the application data without padding. Over
// TCP the message is padded to a multiple of 4 (§12.5, see ChannelDataStreamDecoder); over UDP
// padding is optional, so a datagram may hold the data alone or the data and its padding.

import ZoneCore

/// A TURN ChannelData message: application data for the peer bound to a channel.
public struct ChannelData: Hashable, Sendable {
    /// The channel numbers a client may bind (RFC 8656 §12).
    public static let channelRange: ClosedRange<UInt16> = 0x4000...0x4FFF
    /// The header size: channel number and length.
    public static let headerSize = 4

    /// The channel number, 0x4000–0x4FFF.
    public var channel: UInt16
    /// The application data.
    public var payload: [UInt8]

    public init(channel: UInt16, payload: [UInt8]) {
        self.channel = channel
        self.payload = payload
    }

    /// Decodes a ChannelData message from a UDP datagram: the header and data, optionally
    /// followed by the padding to a multiple of 4 and nothing else.
    ///
    /// - Throws: `truncated` when the datagram is shorter than 4 + length (RFC 8656 §12.5 says to
    ///   discard it), `invalidChannelNumber`, or `trailingBytes`.
    public init(decoding datagram: UnsafeRawBufferPointer) throws(STUNError) {
        guard datagram.count >= ChannelData.headerSize else {
            throw STUNError(.truncated, "\(datagram.count) bytes is shorter than the 4-byte ChannelData header")
        }
        let channel = datagram.stunUInt16(at: 0)
        guard ChannelData.channelRange.contains(channel) else {
            throw STUNError(.invalidChannelNumber, "channel 0x\(Hex.string(channel, digits: 4)) is outside 0x4000–0x4fff")
        }
        let length = Int(datagram.stunUInt16(at: 2))
        guard datagram.count >= ChannelData.headerSize + length else {
            throw STUNError(.truncated, "ChannelData claims \(length) bytes of data, \(datagram.count - 4) present")
        }
        let extra = datagram.count - ChannelData.headerSize - length
        guard extra == 0 || extra == ChannelData.paddingLength(length) else {
            throw STUNError(.trailingBytes, "\(extra) bytes after \(length) bytes of ChannelData are not its padding")
        }
        self.channel = channel
        payload = Array(datagram[ChannelData.headerSize..<(ChannelData.headerSize + length)])
    }

    /// Decodes a ChannelData message from a UDP datagram (see `init(decoding:)`).
    public init(decoding datagram: [UInt8]) throws(STUNError) {
        self = try withRawBytes(datagram) { (raw) throws(STUNError) in try ChannelData(decoding: raw) }
    }

    /// The message on the wire.
    ///
    /// - Parameter padded: pad to a multiple of 4 — required over TCP, optional over UDP.
    /// - Throws: `invalidChannelNumber`, or `valueTooLong` for more than 65535 bytes of data.
    public func encode(padded: Bool = true) throws(STUNError) -> [UInt8] {
        guard ChannelData.channelRange.contains(channel) else {
            throw STUNError(.invalidChannelNumber, "channel 0x\(Hex.string(channel, digits: 4)) is outside 0x4000–0x4fff")
        }
        guard payload.count <= 0xFFFF else {
            throw STUNError(.valueTooLong, "ChannelData of \(payload.count) bytes exceeds the 16-bit length field")
        }
        let padding = padded ? ChannelData.paddingLength(payload.count) : 0
        return STUNWriter.bytes(capacity: ChannelData.headerSize + payload.count + padding) { w in
            w.u16(channel)
            w.u16(UInt16(payload.count))
            w.append(payload)
            w.zeros(padding)
        }
    }

    /// The padding after `length` bytes of data to reach a multiple of 4.
    static func paddingLength(_ length: Int) -> Int { (4 - length & 3) & 3 }
}
