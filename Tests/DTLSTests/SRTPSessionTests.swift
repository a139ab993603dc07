#if WebRTC
import DTLS
import Testing
import ZoneCore

// SRTP and SRTCP keyed by a real handshake: what one side protects the other unprotects to the
// same bytes; a bad tag and a replay are dropped and counted.

@Suite struct SRTPSessionTests {
    /// Sessions for both ends of a fresh handshake with `profile`.
    static func sessions(_ profile: SRTPProfile) throws -> (client: SRTPSession, server: SRTPSession) {
        let pair = try DTLSPair(profiles: [profile])
        pair.start()
        let clientKeys = try #require(pair.clientKeys)
        let serverKeys = try #require(pair.serverKeys)
        return (try SRTPSession(keys: clientKeys), try SRTPSession(keys: serverKeys))
    }

    /// An RTP packet (RFC 3550 §5.1): version 2, payload type 96, `sequence`, then a payload.
    static func rtp(sequence: UInt16, size: Int = 1_200, seed: UInt64 = 7) -> [UInt8] {
        var random = SeededRandom(seed: seed &+ UInt64(sequence))
        var packet: [UInt8] = [0x80, 96, UInt8(sequence >> 8), UInt8(sequence & 0xff),
                               0, 0, 0x10, 0x00, 0xCA, 0xFE, 0xBA, 0xBE]
        while packet.count < size { packet.append(UInt8(truncatingIfNeeded: random.next())) }
        return packet
    }

    /// An RTCP receiver report with one report block (RFC 3550 §6.4.2), 32 bytes.
    static let receiverReport: [UInt8] = [0x81, 201, 0, 7, 0x11, 0x22, 0x33, 0x44,
                                          0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 0, 0, 0, 0, 9,
                                          0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]

    @Test(arguments: SRTPProfile.allCases)
    func rtpAndRTCPRoundTripBothWays(profile: SRTPProfile) throws {
        let (client, server) = try SRTPSessionTests.sessions(profile)
        for sequence in UInt16(1)...50 {
            let plain = SRTPSessionTests.rtp(sequence: sequence)
            var packet = plain
            #expect(client.protectRTP(&packet))
            #expect(packet.count == plain.count + (profile == .aeadAES128GCM ? 16 : 10))
            #expect(packet[12...].elementsEqual(plain[12...]) == false)  // the payload is encrypted
            #expect(server.unprotectRTP(&packet))
            #expect(packet == plain)
        }
        var report = SRTPSessionTests.receiverReport
        #expect(server.protectRTCP(&report))
        #expect(report.count > SRTPSessionTests.receiverReport.count)
        #expect(client.unprotectRTCP(&report))
        #expect(report == SRTPSessionTests.receiverReport)
        #expect(client.counters.rtpProtected == 50 && server.counters.rtpUnprotected == 50)
        #expect(server.counters.rtcpProtected == 1 && client.counters.rtcpUnprotected == 1)
        // A side cannot read its own packets: the two directions have different keys.
        var own = SRTPSessionTests.rtp(sequence: 60)
        #expect(client.protectRTP(&own))
        #expect(!client.unprotectRTP(&own))
        #expect(client.counters.authenticationFailures == 1)
    }

    /// A packet with room for the trailer is protected in place, one without is copied once into a
    /// buffer of the full size: both give the same bytes, which unprotect to the packet; a refused
    /// packet is left as it was.
    @Test(arguments: SRTPProfile.allCases)
    func protectingWithAndWithoutSpareCapacityAgrees(profile: SRTPProfile) throws {
        let pair = try DTLSPair(profiles: [profile])
        pair.start()
        // Two senders with the same keys, so the same sequence number encrypts the same way.
        let inPlace = try SRTPSession(keys: try #require(pair.clientKeys))
        let copying = try SRTPSession(keys: try #require(pair.clientKeys))
        let receiver = try SRTPSession(keys: try #require(pair.serverKeys))
        for sequence in UInt16(1)...20 {
            let plain = SRTPSessionTests.rtp(sequence: sequence, size: 200 + Int(sequence) * 50)
            var roomy = plain
            roomy.reserveCapacity(plain.count + 64)
            var tight = [UInt8](unsafeUninitializedCapacity: plain.count) { buffer, count in
                count = buffer.initialize(fromContentsOf: plain)
            }
            #expect(inPlace.protectRTP(&roomy))
            #expect(copying.protectRTP(&tight))
            #expect(roomy == tight)
            #expect(roomy.count == plain.count + (profile == .aeadAES128GCM ? 16 : 10))
            #expect(receiver.unprotectRTP(&tight))
            #expect(tight == plain)
        }
        // libsrtp refuses a packet shorter than an RTP header: nothing is appended or lost.
        var short: [UInt8] = [0x80, 96, 0, 1]
        #expect(!copying.protectRTP(&short))
        #expect(short == [0x80, 96, 0, 1])
    }

    @Test(arguments: SRTPProfile.allCases)
    func aBadTagIsDroppedAndCounted(profile: SRTPProfile) throws {
        let (client, server) = try SRTPSessionTests.sessions(profile)
        var packet = SRTPSessionTests.rtp(sequence: 1)
        #expect(client.protectRTP(&packet))
        var forged = packet
        forged[forged.count - 1] ^= 0x01
        #expect(!server.unprotectRTP(&forged))
        var tampered = packet
        tampered[40] ^= 0x80
        #expect(!server.unprotectRTP(&tampered))
        #expect(server.counters.authenticationFailures == 2)
        #expect(server.counters.rtpUnprotected == 0)
        // The genuine packet still passes: a forgery does not poison the replay window.
        #expect(server.unprotectRTP(&packet))
        var report = SRTPSessionTests.receiverReport
        #expect(client.protectRTCP(&report))
        report[report.count - 1] ^= 0x01
        #expect(!server.unprotectRTCP(&report))
        #expect(server.counters.authenticationFailures == 3)
    }

    @Test(arguments: SRTPProfile.allCases)
    func aReplayIsDroppedAndCounted(profile: SRTPProfile) throws {
        let (client, server) = try SRTPSessionTests.sessions(profile)
        var first = SRTPSessionTests.rtp(sequence: 10)
        #expect(client.protectRTP(&first))
        let captured = first
        #expect(server.unprotectRTP(&first))
        var replay = captured
        #expect(!server.unprotectRTP(&replay))
        #expect(server.counters.replays == 1)
        var report = SRTPSessionTests.receiverReport
        #expect(client.protectRTCP(&report))
        let capturedReport = report
        #expect(server.unprotectRTCP(&report))
        var replayedReport = capturedReport
        #expect(!server.unprotectRTCP(&replayedReport))
        #expect(server.counters.replays == 2)
        // Far behind the window (1,024 packets) is dropped as too old.
        var packets: [[UInt8]] = []
        for sequence in UInt16(100)...1_300 {
            var packet = SRTPSessionTests.rtp(sequence: sequence, size: 40)
            #expect(client.protectRTP(&packet))
            packets.append(packet)
        }
        for index in packets.indices.dropFirst() { _ = server.unprotectRTP(&packets[index]) }
        #expect(!server.unprotectRTP(&packets[0]))
        #expect(server.counters.replays == 3)
    }

    @Test func garbageIsRefusedWithoutTrapping() throws {
        let (_, server) = try SRTPSessionTests.sessions(.aeadAES128GCM)
        var random = SeededRandom(seed: 42)
        for size in [0, 1, 7, 8, 11, 12, 13, 28, 100, 1_500] {
            var packet = (0..<size).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            if size > 0 { packet[0] = 0x80 }
            #expect(!server.unprotectRTP(&packet))
            var rtcp = packet
            #expect(!server.unprotectRTCP(&rtcp))
        }
        #expect(server.counters.rtpUnprotected == 0 && server.counters.rtcpUnprotected == 0)
    }
}
#endif
