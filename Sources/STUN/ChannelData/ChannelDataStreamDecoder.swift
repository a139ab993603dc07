// Framing TURN over TCP: RFC 8656 §12.5 (and RFC 5766 §11.5), with RFC 8489 §6.2.2 for STUN.
//
// On a TCP connection to a TURN server, STUN messages and ChannelData messages follow each other
// with nothing in between. The first two bits tell them apart (0b00 STUN, 0b01 ChannelData);
// the length field in bytes 2–3 gives the size: 20 + length for STUN, 4 + length rounded up to
// a multiple of 4 for ChannelData ("over TCP ... the ChannelData message MUST be padded").
//
// The decoder is a pure parser in the swift-nio style: `append` bytes as they arrive, then call
// `parseStep()` until it says `needMore`. Whatever the split of the bytes into reads, the frames
// come out the same. A byte that starts neither kind of message ends the stream: every later
// call throws the same error, and the caller closes the connection.

import ZoneCore

/// Splits a TURN-over-TCP byte stream into STUN messages and ChannelData messages.
public struct ChannelDataStreamDecoder: Sendable {
    /// One message found in the stream.
    public enum Frame: Hashable, Sendable {
        /// A ChannelData message.
        case channelData(ChannelData)
        /// A STUN message's bytes, framed but not decoded (decode with `STUNMessage(decoding:)`).
        case stunMessage([UInt8])
    }

    /// The outcome of one parse step.
    public enum Step: Hashable, Sendable {
        /// The buffered bytes do not hold a whole message yet.
        case needMore
        /// A whole message, removed from the buffer.
        case frame(Frame)
    }

    /// What the parser knows about the next message.
    private enum State: Sendable {
        /// Waiting for the 4 bytes that say what comes and how long it is.
        case waitingForHeader
        /// A STUN message of `size` bytes (header included) starts at the read index.
        case waitingForSTUN(size: Int)
        /// A ChannelData message on `channel` with `length` bytes of data (plus padding) starts
        /// at the read index.
        case waitingForChannelData(channel: UInt16, length: Int)
        /// The stream held something else; the error repeats.
        case failed(STUNError)
    }

    private var state = State.waitingForHeader
    private var buffer: [UInt8] = []
    private var readIndex = 0

    public init() {}

    /// The bytes received but not yet returned in a frame.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// Adds bytes read from the connection.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        // Drop consumed bytes once they outweigh the rest, so the buffer stays about one
        // message long without moving bytes on every frame.
        if readIndex > 0 && readIndex >= buffer.count - readIndex {
            buffer.removeFirst(readIndex)
            readIndex = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Returns the next whole message, or `needMore`.
    ///
    /// - Throws: `invalidChannelNumber` for a ChannelData header outside 0x4000–0x4FFF,
    ///   `lengthNotMultipleOfFour` for a STUN length, `unexpectedStreamContent` for a first byte
    ///   that starts neither; the decoder then stays failed.
    public mutating func parseStep() throws(STUNError) -> Step {
        while true {
            let available = buffer.count - readIndex
            switch state {
            case .failed(let error):
                throw error
            case .waitingForHeader:
                guard available >= 4 else { return .needMore }
                let first = buffer[readIndex]
                let field = UInt16(buffer[readIndex + 2]) << 8 | UInt16(buffer[readIndex + 3])
                switch first >> 6 {
                case 0b00:
                    guard field & 3 == 0 else {
                        return try fail(.lengthNotMultipleOfFour, "STUN message length \(field) is not a multiple of 4")
                    }
                    state = .waitingForSTUN(size: STUNMessageHeader.size + Int(field))
                case 0b01:
                    let channel = UInt16(first) << 8 | UInt16(buffer[readIndex + 1])
                    guard ChannelData.channelRange.contains(channel) else {
                        return try fail(.invalidChannelNumber,
                                        "channel 0x\(Hex.string(channel, digits: 4)) is outside 0x4000–0x4fff")
                    }
                    state = .waitingForChannelData(channel: channel, length: Int(field))
                default:
                    return try fail(.unexpectedStreamContent,
                                    "byte 0x\(Hex.string(first, digits: 2)) starts neither STUN nor ChannelData")
                }
            case .waitingForSTUN(let size):
                guard available >= size else { return .needMore }
                let message = Array(buffer[readIndex..<(readIndex + size)])
                consume(size)
                return .frame(.stunMessage(message))
            case .waitingForChannelData(let channel, let length):
                let size = ChannelData.headerSize + length + ChannelData.paddingLength(length)
                guard available >= size else { return .needMore }
                let start = readIndex + ChannelData.headerSize
                let payload = Array(buffer[start..<(start + length)])
                consume(size)
                return .frame(.channelData(ChannelData(channel: channel, payload: payload)))
            }
        }
    }

    private mutating func consume(_ count: Int) {
        readIndex += count
        state = .waitingForHeader
        if readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            readIndex = 0
        }
    }

    private mutating func fail(_ kind: STUNError.Kind, _ message: String) throws(STUNError) -> Step {
        let error = STUNError(kind, message)
        state = .failed(error)
        throw error
    }
}
