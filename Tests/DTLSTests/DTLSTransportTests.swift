#if WebRTC
import DTLS
import Testing
import ZoneCore

// The DTLS machine back to back in memory on a manual clock: handshakes for both profiles, a lost
// flight, a wrong fingerprint, a peer that never answers.

@Suite struct DTLSTransportTests {
    @Test(arguments: SRTPProfile.allCases)
    func handshakeCompletesAndBothSidesExportTheSameKeys(profile: SRTPProfile) throws {
        let pair = try DTLSPair(profiles: [profile])
        pair.start()
        #expect(pair.bothConnected)
        #expect(pair.client.state == .connected(profile))
        #expect(pair.server.state == .connected(profile))
        let clientKeys = try #require(pair.clientKeys)
        let serverKeys = try #require(pair.serverKeys)
        #expect(clientKeys.exported == serverKeys.exported)
        #expect(clientKeys.exported.count == profile.keyingMaterialLength)
        #expect(clientKeys.localKeyAndSalt == serverKeys.remoteKeyAndSalt)
        #expect(clientKeys.remoteKeyAndSalt == serverKeys.localKeyAndSalt)
        #expect(clientKeys.localKeyAndSalt != clientKeys.remoteKeyAndSalt)
        #expect(pair.client.remoteFingerprint == DTLSPair.serverCertificate.fingerprint)
        #expect(pair.server.remoteFingerprint == DTLSPair.clientCertificate.fingerprint)
        // Nothing left to retransmit, no timer wanted, no datagram over the MTU.
        #expect(pair.client.nextDeadline == nil && pair.server.nextDeadline == nil)
        #expect((pair.clientSent + pair.serverSent).allSatisfy { $0.count <= 1_200 })
        #expect(pair.client.counters.timerRetransmissions == 0)
    }

    /// The goodbye of a leg (docs/PROTOCOL.md §11.4): closing sends close_notify, which the remote reports as
    /// `.closed` — three copies (the leg sends its goodbye three times) close it once, and a replayed or
    /// altered copy changes nothing.
    @Test func closingSendsCloseNotifyWhichTheRemoteReportsOnce() throws {
        let pair = try DTLSPair()
        pair.start()
        #expect(pair.bothConnected)
        var sent: [[UInt8]] = []
        pair.deliver = { fromClient, datagram in
            if fromClient { sent.append(datagram) }
            return false
        }
        pair.client.handle(.close, now: pair.now)
        pair.settle()
        #expect(pair.client.state == .closed)
        let closeNotify = try #require(sent.last)
        #expect(sent.count == 1 && closeNotify[0] == 21)  // one alert record (RFC 5246 §6.2.1 content type)
        var forged = closeNotify
        forged[forged.count - 1] ^= 0x55
        pair.server.handle(.datagram(forged), now: pair.now)
        #expect(pair.server.pollOutput() == nil)
        #expect(pair.server.state != .closed)
        for _ in 0..<3 { pair.server.handle(.datagram(closeNotify), now: pair.now) }
        #expect(pair.server.pollOutput() == .closed)
        #expect(pair.server.pollOutput() == nil)
        #expect(pair.server.state == .closed)
        // Closed, the client reads nothing more and sends nothing more.
        pair.client.handle(.close, now: pair.now)
        #expect(pair.client.pollOutput() == nil)
    }

    @Test func bothSidesAgreeOnOneProfileWhenTheyOfferTheTwoInDifferentOrders() throws {
        let pair = try DTLSPair(profiles: [.aes128CMSHA1_80, .aeadAES128GCM])
        pair.start()
        guard case .connected(let profile) = pair.client.state else {
            Issue.record("client state \(pair.client.state)")
            return
        }
        #expect(pair.server.state == .connected(profile))
        #expect(pair.clientKeys?.exported == pair.serverKeys?.exported)
    }

    @Test func aLostClientHelloIsSentAgainWhenItsTimerFires() throws {
        let pair = try DTLSPair()
        var dropped = 0
        pair.deliver = { fromClient, _ in
            if fromClient && dropped == 0 { dropped += 1; return false }
            return true
        }
        let started = pair.now
        pair.start()
        #expect(!pair.bothConnected)
        #expect(pair.clientSent.count == 1 && pair.serverSent.isEmpty)
        // The retransmission comes at the initial timeout of the client's configuration, not before.
        #expect(pair.client.nextDeadline == started + .milliseconds(100))
        pair.now = started + .milliseconds(99)
        pair.client.handle(.timer, now: pair.now)
        pair.settle()
        #expect(pair.clientSent.count == 1)
        #expect(pair.fireNextDeadline())
        #expect(pair.now == started + .milliseconds(100))
        #expect(pair.bothConnected)
        #expect(pair.client.counters.timerRetransmissions == 1)
        #expect(pair.clientSent[1] != pair.clientSent[0])  // a new record sequence number
    }

    @Test func aLostServerFlightIsResentAfterTheClientRetransmitsAndTimersDouble() throws {
        let pair = try DTLSPair()
        // Lose the server's first flight twice over: the client's timer fires at 100 ms, then 200 ms later.
        var serverFlights = 0
        pair.deliver = { fromClient, datagram in
            if !fromClient && datagram[0] == 22 && serverFlights < 2 {
                serverFlights += 1
                return serverFlights > 2
            }
            return true
        }
        let started = pair.now
        pair.start()
        var firings: [Instant] = []
        while !pair.bothConnected, firings.count < 10, pair.fireNextDeadline() { firings.append(pair.now) }
        #expect(pair.bothConnected)
        #expect(firings.first == started + .milliseconds(100))
        #expect(pair.client.counters.timerRetransmissions >= 1)
    }

    @Test func aWrongFingerprintFailsWithTheReasonAndNoKeys() throws {
        let stranger = try DTLSCertificate(commonName: "stranger", validity: .seconds(3_600))
        let pair = try DTLSPair(clientExpects: stranger.fingerprint)
        pair.start()
        let expected = DTLSFailure.fingerprintMismatch(expected: stranger.fingerprint,
                                                       actual: DTLSPair.serverCertificate.fingerprint)
        #expect(pair.client.state == .failed(expected))
        #expect(pair.clientEvents == [.failed(expected)])
        #expect("\(expected)".contains("is not the signaled sha-256"))
        // The server hears the alert and fails too; neither side exported keys.
        guard case .failed(let serverFailure) = pair.server.state else {
            Issue.record("server state \(pair.server.state)")
            return
        }
        #expect("\(serverFailure)".contains("certificate unknown"))
        #expect(pair.clientKeys == nil && pair.serverKeys == nil)
    }

    @Test func theServerChecksTheClientsFingerprintToo() throws {
        let stranger = try DTLSCertificate(commonName: "stranger", validity: .seconds(3_600))
        let pair = try DTLSPair(serverExpects: stranger.fingerprint)
        pair.start()
        #expect(pair.server.state == .failed(.fingerprintMismatch(expected: stranger.fingerprint,
                                                                    actual: DTLSPair.clientCertificate.fingerprint)))
        #expect(pair.clientKeys == nil && pair.serverKeys == nil)
        if case .connected = pair.client.state { Issue.record("the client connected to a server that refused it") }
    }

    @Test func associationsSharingACertificatesContextEachCheckTheirOwnFingerprint() throws {
        // Both pairs are made from the same two certificates, so from the same two shared SSL contexts.
        let first = try DTLSPair()
        first.start()
        #expect(first.bothConnected)
        let stranger = try DTLSCertificate(commonName: "stranger", validity: .seconds(3_600))
        let second = try DTLSPair(serverExpects: stranger.fingerprint)
        second.start()
        #expect(second.server.state == .failed(.fingerprintMismatch(expected: stranger.fingerprint,
                                                                      actual: DTLSPair.clientCertificate.fingerprint)))
        #expect(second.clientKeys == nil && second.serverKeys == nil)
        // And a third, as the first: the failure left nothing behind in the shared contexts.
        let third = try DTLSPair()
        third.start()
        #expect(third.bothConnected)
        #expect(third.clientKeys != nil && third.clientKeys?.exported == third.serverKeys?.exported)
    }

    @Test func aPeerThatNeverAnswersFailsAtTheHandshakeBound() throws {
        let pair = try DTLSPair()
        pair.deliver = { _, _ in false }
        let started = pair.now
        pair.start()
        var firings = 0
        while pair.fireNextDeadline() { firings += 1 }
        #expect(pair.client.state == .failed(.handshakeTimedOut(after: .seconds(10))))
        #expect(pair.now == started + .seconds(10))
        #expect(pair.clientEvents == [.failed(.handshakeTimedOut(after: .seconds(10)))])
        #expect("\(pair.clientEvents[0])".contains("no handshake within 10000"))
        // 100, 200, 400, 800, 1600 ms, then every 3 s (the cap) until 10 s: 7 resends.
        #expect(pair.client.counters.timerRetransmissions == 7)
        #expect(pair.clientSent.count == 8)
        #expect(firings < 20)
        // The server never heard anything; it gives up at the same bound.
        #expect(pair.server.state == .failed(.handshakeTimedOut(after: .seconds(10))))
        #expect(pair.client.nextDeadline == nil)
    }

    @Test func nothingHappensAfterTheEnd() throws {
        let pair = try DTLSPair()
        pair.deliver = { _, _ in false }
        pair.start()
        while pair.fireNextDeadline() {}
        let stale = pair.clientSent[0]
        pair.server.handle(.datagram(stale), now: pair.now)
        #expect(pair.server.pollOutput() == nil)
        #expect(pair.server.counters.droppedAfterEnd == 1)
    }
}
#endif
