#if WebRTC
import DTLS
import Testing
import ZoneCore

// DTLS, SRTP and STUN on one 5-tuple: the RFC 7983 split, no media before the keys, media both
// ways after.

@Suite struct SecureMediaTransportTests {
    /// Two transports passing every transmitted datagram to each other; returns what each delivered.
    static func exchange(_ a: SecureMediaTransport, _ b: SecureMediaTransport, now: Instant)
        -> (a: [SecureMediaTransport.Output], b: [SecureMediaTransport.Output]) {
        var delivered: ([SecureMediaTransport.Output], [SecureMediaTransport.Output]) = ([], [])
        var moved = true
        while moved {
            moved = false
            while let output = a.pollOutput() {
                moved = true
                if case .transmit(let datagram) = output { b.handle(.received(datagram), now: now) } else { delivered.0.append(output) }
            }
            while let output = b.pollOutput() {
                moved = true
                if case .transmit(let datagram) = output { a.handle(.received(datagram), now: now) } else { delivered.1.append(output) }
            }
        }
        return delivered
    }

    static func pair() throws -> (client: SecureMediaTransport, server: SecureMediaTransport) {
        let client = try SecureMediaTransport(configuration: DTLSTransportConfiguration(
            role: .client, certificate: DTLSPair.clientCertificate, remoteFingerprint: DTLSPair.serverCertificate.fingerprint))
        let server = try SecureMediaTransport(configuration: DTLSTransportConfiguration(
            role: .server, certificate: DTLSPair.serverCertificate, remoteFingerprint: DTLSPair.clientCertificate.fingerprint))
        return (client, server)
    }

    @Test func mediaFlowsOnlyAfterTheHandshakeAndStunPassesThrough() throws {
        let (client, server) = try SecureMediaTransportTests.pair()
        let now = Instant.seconds(1_000)
        let rtp = SRTPSessionTests.rtp(sequence: 1)
        // Before the keys: media is refused going out and dropped coming in.
        client.handle(.sendRTP(rtp), now: now)
        server.handle(.received(rtp), now: now)
        #expect(client.counters.refusedBeforeKeys == 1 && server.counters.droppedBeforeKeys == 1)
        #expect(client.pollOutput() == nil && server.pollOutput() == nil)
        // STUN (first byte 0–3) goes to ICE whatever the DTLS state; ChannelData (64–79) is dropped.
        let binding: [UInt8] = [0, 1, 0, 0, 0x21, 0x12, 0xA4, 0x42] + Array(repeating: 7, count: 12)
        server.handle(.received(binding), now: now)
        #expect(server.pollOutput() == .stun(binding))
        server.handle(.received([0x40, 0, 0, 4, 1, 2, 3, 4]), now: now)
        #expect(server.counters.droppedUnknownKind == 1)

        server.handle(.start, now: now)
        client.handle(.start, now: now)
        let events = SecureMediaTransportTests.exchange(client, server, now: now)
        #expect(events.a == [.connected(.aeadAES128GCM)] && events.b == [.connected(.aeadAES128GCM)])

        client.handle(.sendRTP(rtp), now: now)
        client.handle(.sendRTCP(SRTPSessionTests.receiverReport), now: now)
        server.handle(.sendRTCP(SRTPSessionTests.receiverReport), now: now)
        let media = SecureMediaTransportTests.exchange(client, server, now: now)
        #expect(media.b == [.rtp(rtp), .rtcp(SRTPSessionTests.receiverReport)])
        #expect(media.a == [.rtcp(SRTPSessionTests.receiverReport)])
        // Plain RTP after the keys is not authentic: dropped and counted by SRTP.
        server.handle(.received(SRTPSessionTests.rtp(sequence: 2)), now: now)
        #expect(server.pollOutput() == nil)
        #expect(server.srtp?.counters.authenticationFailures == 1)
    }

    @Test func aFailedHandshakeCarriesNoMedia() throws {
        let stranger = try DTLSCertificate(commonName: "stranger", validity: .seconds(3_600))
        let client = try SecureMediaTransport(configuration: DTLSTransportConfiguration(
            role: .client, certificate: DTLSPair.clientCertificate, remoteFingerprint: stranger.fingerprint))
        let (_, server) = try SecureMediaTransportTests.pair()
        let now = Instant.seconds(1_000)
        server.handle(.start, now: now)
        client.handle(.start, now: now)
        let events = SecureMediaTransportTests.exchange(client, server, now: now)
        #expect(events.a.count == 1 && events.b.count == 1)
        guard case .failed(.fingerprintMismatch) = events.a.first else {
            Issue.record("client: \(events.a)")
            return
        }
        client.handle(.sendRTP(SRTPSessionTests.rtp(sequence: 1)), now: now)
        #expect(client.pollOutput() == nil && client.counters.refusedBeforeKeys == 1)
        #expect(client.srtp == nil && server.srtp == nil)
    }
}
#endif
