// ChannelData (RFC 8656 §12.4–12.5): datagrams with and without padding, channel ranges, and the
// TCP stream decoder fed whole, a byte at a time and in random chunks.

import Testing
import ZoneCore
@testable import STUN
import TestSupport

@Suite("ChannelData")
struct ChannelDataTests {
    @Test func encodesAndDecodesDatagrams() throws {
        let message = ChannelData(channel: 0x4001, payload: [1, 2, 3, 4, 5])
        let padded = try message.encode(padded: true)
        let unpadded = try message.encode(padded: false)
        #expect(padded == [0x40, 0x01, 0x00, 0x05, 1, 2, 3, 4, 5, 0, 0, 0])
        #expect(unpadded == Array(padded[0..<9]))
        #expect(try ChannelData(decoding: padded) == message)
        #expect(try ChannelData(decoding: unpadded) == message)
        let empty = ChannelData(channel: 0x4FFF, payload: [])
        #expect(try ChannelData(decoding: try empty.encode()) == empty)
        #expect(try empty.encode() == [0x4F, 0xFF, 0, 0])
    }

    @Test(arguments: [0, 1, 3, 4, 5, 100, 1200])
    func everySplitOfADatagram(size: Int) throws {
        let payload = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let message = ChannelData(channel: 0x4ABC, payload: payload)
        // Unpadded: every prefix is truncated. (A padded datagram's prefixes that still hold all the
        // data are valid unpadded messages, so that property is checked on the unpadded form.)
        verifyDatagramDecoder(try message.encode(padded: false), expected: message) { (b) throws(STUNError) in
            try ChannelData(decoding: b)
        }
    }

    @Test func datagramErrors() {
        expectError(.truncated) { () throws(STUNError) in _ = try ChannelData(decoding: [0x40, 0x00, 0x00]) }
        expectError(.truncated) { () throws(STUNError) in _ = try ChannelData(decoding: [0x40, 0x00, 0x00, 0x02, 1]) }
        expectError(.invalidChannelNumber) { () throws(STUNError) in _ = try ChannelData(decoding: [0x3F, 0xFF, 0, 0]) }
        expectError(.invalidChannelNumber) { () throws(STUNError) in _ = try ChannelData(decoding: [0x50, 0x00, 0, 0]) }
        // Padding is 0 or exactly up to the next multiple of 4; anything else is not ChannelData.
        expectError(.trailingBytes) { () throws(STUNError) in _ = try ChannelData(decoding: [0x40, 0, 0, 1, 9, 0]) }
        expectError(.trailingBytes) { () throws(STUNError) in
            _ = try ChannelData(decoding: [0x40, 0, 0, 4, 1, 2, 3, 4, 0])
        }
        expectError(.invalidChannelNumber) { () throws(STUNError) in
            _ = try ChannelData(channel: 0x3FFF, payload: []).encode()
        }
        expectError(.valueTooLong) { () throws(STUNError) in
            _ = try ChannelData(channel: 0x4000, payload: [UInt8](repeating: 0, count: 0x10000)).encode()
        }
    }
}

@Suite("ChannelData stream decoder")
struct ChannelDataStreamDecoderTests {
    /// A TURN-over-TCP stream: STUN messages and ChannelData messages back to back.
    static func stream() throws -> (bytes: [UInt8], frames: [ChannelDataStreamDecoder.Frame]) {
        var random = SeededRandom(seed: 99)
        var bytes: [UInt8] = []
        var frames: [ChannelDataStreamDecoder.Frame] = []
        for i in 0..<40 {
            if i % 3 == 0 {
                let m = STUNMessage(method: .send, messageClass: .indication, transactionID: .random(using: &random),
                                    attributes: [.data((0..<(i * 5)).map { UInt8(truncatingIfNeeded: $0) })])
                let encoded = try m.encode(fingerprint: true)
                bytes += encoded
                frames.append(.stunMessage(encoded))
            } else {
                let payload = (0..<(i * 3 + i % 4)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                let c = ChannelData(channel: 0x4000 + UInt16(i), payload: payload)
                bytes += try c.encode(padded: true)
                frames.append(.channelData(c))
            }
        }
        return (bytes, frames)
    }

    static func drain(_ chunks: [ArraySlice<UInt8>]) throws(STUNError) -> [ChannelDataStreamDecoder.Frame] {
        var decoder = ChannelDataStreamDecoder()
        var frames: [ChannelDataStreamDecoder.Frame] = []
        for chunk in chunks {
            decoder.append(chunk)
            while case .frame(let f) = try decoder.parseStep() { frames.append(f) }
        }
        #expect(decoder.bufferedByteCount == 0)
        return frames
    }

    @Test func reassemblesAcrossEverySplit() throws {
        let (bytes, expected) = try Self.stream()
        #expect(try Self.drain(InputSplit.whole.pieces(bytes)) == expected)
        #expect(InputSplit.mismatches(bytes, seed: 0xC0FFEE, randomRuns: 32, maxPiece: 40) {
            try? Self.drain($0)
        } == [])
        // And every STUN frame decodes.
        for case .stunMessage(let m) in expected { _ = try STUNMessage(decoding: m) }
    }

    @Test func needsMoreOnPartialInput() throws {
        var decoder = ChannelDataStreamDecoder()
        #expect(try decoder.parseStep() == .needMore)
        decoder.append([0x40, 0x00, 0x00])
        #expect(try decoder.parseStep() == .needMore)
        decoder.append([0x05, 1, 2, 3, 4, 5, 0])
        #expect(try decoder.parseStep() == .needMore)  // two padding bytes still missing
        decoder.append([0])
        #expect(try decoder.parseStep() == .needMore)
        decoder.append([0])
        #expect(try decoder.parseStep() == .frame(.channelData(ChannelData(channel: 0x4000, payload: [1, 2, 3, 4, 5]))))
        #expect(try decoder.parseStep() == .needMore)
    }

    @Test func failsAndStaysFailed() {
        var decoder = ChannelDataStreamDecoder()
        decoder.append([0x80, 0, 0, 0])
        expectError(.unexpectedStreamContent) { () throws(STUNError) in _ = try decoder.parseStep() }
        decoder.append([0x40, 0, 0, 0])
        expectError(.unexpectedStreamContent) { () throws(STUNError) in _ = try decoder.parseStep() }

        var channel = ChannelDataStreamDecoder()
        channel.append([0x50, 0, 0, 0])
        expectError(.invalidChannelNumber) { () throws(STUNError) in _ = try channel.parseStep() }

        var stun = ChannelDataStreamDecoder()
        stun.append([0x00, 0x01, 0x00, 0x03])
        expectError(.lengthNotMultipleOfFour) { () throws(STUNError) in _ = try stun.parseStep() }
    }
}

@Suite("Demultiplexing")
struct DemuxTests {
    @Test func firstByteRanges() {
        // RFC 7983 §7.
        for b in 0...255 {
            let expected: MultiplexedPacketKind = switch b {
            case 0...3: .stun
            case 16...19: .zrtp
            case 20...63: .dtls
            case 64...79: .turnChannel
            case 128...191: .rtpOrRTCP
            default: .unknown
            }
            #expect(PacketDemultiplexer.classify(firstByte: UInt8(b)) == expected)
        }
        #expect(PacketDemultiplexer.classify([]) == .unknown)
        [UInt8]().withUnsafeBytes { #expect(PacketDemultiplexer.classify($0) == .unknown) }
    }

    @Test func realPacketsClassify() throws {
        #expect(PacketDemultiplexer.classify(RFC5769.request) == .stun)
        #expect(PacketDemultiplexer.classify(try ChannelData(channel: 0x4FFF, payload: [1]).encode()) == .turnChannel)
        #expect(PacketDemultiplexer.classify([0x16, 0xFE, 0xFD]) == .dtls)  // DTLS 1.2 handshake
        let rtp: [UInt8] = [0x80, 0x60, 0, 1]  // V=2, PT 96
        let rtpMarker: [UInt8] = [0x80, 0xE0, 0, 1]  // marker bit set, PT 96: 224, still RTP
        let sr: [UInt8] = [0x80, 200, 0, 6]  // RTCP sender report
        let rtpfb: [UInt8] = [0x81, 205, 0, 3]
        #expect(PacketDemultiplexer.classify(rtp) == .rtpOrRTCP)
        #expect(!PacketDemultiplexer.isRTCP(rtp) && !PacketDemultiplexer.isRTCP(rtpMarker))
        #expect(PacketDemultiplexer.isRTCP(sr) && PacketDemultiplexer.isRTCP(rtpfb))
        #expect(PacketDemultiplexer.isRTCP(secondByte: 192) && PacketDemultiplexer.isRTCP(secondByte: 223))
        #expect(!PacketDemultiplexer.isRTCP(secondByte: 191) && !PacketDemultiplexer.isRTCP(secondByte: 224))
        #expect(!PacketDemultiplexer.isRTCP([0x80]))
    }
}
