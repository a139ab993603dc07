#if WebRTC
import DTLS
import Testing
import ZoneCore

// What a remote may throw at the DTLS port: garbage records, a flood of ClientHellos, packets that
// are not DTLS at all. None may crash the machine, wedge its handshake or make it amplify.

@Suite struct DTLSHostileInputTests {
    /// `count` seeded random datagrams whose first byte is in RFC 7983's DTLS range.
    static func garbage(_ count: Int, seed: UInt64) -> [[UInt8]] {
        var random = SeededRandom(seed: seed)
        return (0..<count).map { _ in
            let size = Int(random.next() % 300)
            var datagram = (0..<size).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            if !datagram.isEmpty { datagram[0] = 20 + UInt8(random.next() % 44) }
            // Half look like real DTLS 1.2 handshake records (type 22, version FE FD, epoch 0).
            if size >= 13 && random.next() % 2 == 0 {
                datagram[0] = 22
                datagram[1] = 0xFE
                datagram[2] = 0xFD
                datagram[3] = 0
                datagram[4] = 0
            }
            return datagram
        }
    }

    @Test func garbageBetweenEveryDatagramDoesNotStopTheHandshake() throws {
        let pair = try DTLSPair()
        var junk = DTLSHostileInputTests.garbage(2_000, seed: 1).makeIterator()
        pair.deliver = { fromClient, _ in
            let target = fromClient ? pair.server : pair.client
            for _ in 0..<20 { if let datagram = junk.next() { target.handle(.datagram(datagram), now: pair.now) } }
            return true
        }
        pair.start()
        // Garbage may cost a retransmission round, never the handshake.
        var firings = 0
        while !pair.bothConnected, firings < 20, pair.fireNextDeadline() { firings += 1 }
        #expect(pair.bothConnected)
        #expect(pair.clientKeys?.exported == pair.serverKeys?.exported)
    }

    @Test func garbageAfterTheHandshakeLeavesItConnected() throws {
        let pair = try DTLSPair()
        pair.start()
        #expect(pair.bothConnected)
        for datagram in DTLSHostileInputTests.garbage(5_000, seed: 2) {
            pair.server.handle(.datagram(datagram), now: pair.now)
            pair.client.handle(.datagram(datagram), now: pair.now)
        }
        pair.settle()
        #expect(pair.bothConnected)
        #expect(pair.clientEvents.count == 1 && pair.serverEvents.count == 1)
        #expect(pair.client.nextDeadline == nil && pair.server.nextDeadline == nil)
    }

    /// A protected record (epoch 1) of any type whose fragment is shorter than AES-GCM's nonce and
    /// tag: OpenSSL 3.0 ends the association on one (RFC 6347 §4.1.2.7 says discard it). Screened.
    @Test(arguments: [UInt8(20), 21, 22, 23])
    func shortProtectedRecordsLeaveItConnected(type: UInt8) throws {
        let pair = try DTLSPair()
        pair.start()
        #expect(pair.bothConnected)
        var short = 0
        for epoch: UInt8 in [1, 2] {
            for length in [0, 1, 8, 12, 23, 24, 40] {
                let record: [UInt8] = [type, 0xFE, 0xFD, 0, epoch, 0, 0, 0, 0, 0, 9, 0, UInt8(length)]
                    + [UInt8](repeating: 0xDE, count: length)
                // Alone, and behind a well-formed epoch-0 record in the same datagram.
                let behind: [UInt8] = [22, 0xFE, 0xFD, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0] + record
                for datagram in [record, behind] {
                    pair.server.handle(.datagram(datagram), now: pair.now)
                    pair.client.handle(.datagram(datagram), now: pair.now)
                }
                if length < 24 { short += 2 }
            }
        }
        pair.settle()
        #expect(pair.bothConnected)
        #expect(pair.server.counters.droppedShortRecords == short)
        #expect(pair.client.counters.droppedShortRecords == short)
    }

    /// A short protected record behind a header OpenSSL drops alone (a version it refuses), where
    /// it reads the next header: the datagram Fuzz/DTLSDemuxFuzz found ended both ends of a
    /// connected association before the screen followed OpenSSL's reading. Screened.
    @Test func shortRecordsBehindARefusedHeaderLeaveItConnected() throws {
        let pair = try DTLSPair()
        pair.start()
        #expect(pair.bothConnected)
        let found: [UInt8] = [0x17, 0x00, 0x19, 0xFD, 0x01, 0x08, 0x00, 0x19, 0x80, 0x21, 0xFD, 0x00, 0xFE,
                              0x01, 0xFE, 0xFD, 0x00, 0x01, 0x00, 0x00, 0xFE, 0x00, 0x00, 0x16, 0x00, 0x08,
                              0x00, 0x02, 0x00, 0x08, 0x00, 0xC9, 0x23, 0x01, 0x00, 0x00]
        let short: [UInt8] = [21, 0xFE, 0xFD, 0, 1, 0, 0, 0, 0, 0, 7, 0, 2, 1, 0]
        let behindDTLS10: [UInt8] = [22, 0xFE, 0xFF, 0, 0, 0, 0, 0, 0, 0, 8, 0, UInt8(short.count)] + short
        for datagram in [found, behindDTLS10] {
            pair.server.handle(.datagram(datagram), now: pair.now)
            pair.client.handle(.datagram(datagram), now: pair.now)
        }
        pair.settle()
        #expect(pair.bothConnected)
        #expect(pair.server.counters.droppedShortRecords == 2)
        #expect(pair.client.counters.droppedShortRecords == 2)
    }

    @Test func notDTLSIsDroppedUnreadAndCounted() throws {
        let pair = try DTLSPair()
        for datagram: [UInt8] in [[], [22], [0, 1, 0, 0], [128] + Array(repeating: 0, count: 40),
                                  Array(repeating: 22, count: 12), Array(repeating: 22, count: 20_000)] {
            pair.server.handle(.datagram(datagram), now: pair.now)
        }
        #expect(pair.server.counters.droppedInvalid == 6)
        #expect(pair.server.state == .idle)
        pair.start()
        #expect(pair.bothConnected)
    }

    @Test func aClientHelloFloodNeitherWedgesNorAmplifies() throws {
        // Capture a real ClientHello from a client that is never answered.
        let probe = try DTLSPair()
        probe.deliver = { _, _ in false }
        probe.start()
        let clientHello = try #require(probe.clientSent.first)

        let pair = try DTLSPair()
        let floodSize = 1_000
        for _ in 0..<floodSize { pair.server.handle(.datagram(clientHello), now: pair.now) }
        var server = pair.server  // a class: the same machine, drained through the protocol's helper
        let answeredFlood = server.drainOutputs().count
        // Copies of a hello already answered are not a reason to resend (RFC 6347 §4.2.4).
        #expect(answeredFlood >= 1 && answeredFlood <= 4)  // one flight (1 datagram here), not one per copy
        // The flood's handshake is not ours: the server is committed to the prober's hello, so the
        // real client fails cleanly at the bound instead of hanging, and so does the server.
        pair.start()
        var firings = 0
        while pair.fireNextDeadline(), firings < 50 { firings += 1 }
        #expect(firings < 50)
        #expect(pair.client.nextDeadline == nil && pair.server.nextDeadline == nil)
        for state in [pair.client.state, pair.server.state] {
            switch state {
            case .connected, .failed: break
            case .idle, .handshaking, .closed: Issue.record("left in \(state)")
            }
        }
        // A connected server ignores a flood of old-epoch ClientHellos entirely.
        let connected = try DTLSPair()
        connected.start()
        #expect(connected.bothConnected)
        for _ in 0..<floodSize { connected.server.handle(.datagram(clientHello), now: connected.now) }
        var connectedServer = connected.server
        #expect(connectedServer.drainOutputs().isEmpty)
        #expect(connected.bothConnected)
    }
}
#endif
