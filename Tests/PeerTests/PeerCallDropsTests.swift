// What reaches a call's edge and is not for it is dropped and counted, never silently: the counts
// are what `zonertc peer` prints as its `dropped` line and `drops` object.
import Foundation
@testable import Peer
import Testing
import ZoneCore

@Suite struct PeerCallDropsTests {
    /// A Binding request whose header announces 8 bytes of attributes it does not carry: it looks
    /// like STUN (RFC 8489 §5) and does not decode.
    static let truncatedBinding: [UInt8] = [0x00, 0x01, 0x00, 0x08, 0x21, 0x12, 0xA4, 0x42]
        + [UInt8](repeating: 7, count: 12)
    /// An RTP header (version 2, payload type 96).
    static let rtp: [UInt8] = [0x80, 0x60, 0x00, 0x01, 0, 0, 0, 1, 0, 0, 0, 9] + [UInt8](repeating: 0, count: 20)

    @Test func datagramsAtTheEdgeAreCountedByWhere() async throws {
        let h = try await MemoryCallHarness(strategy: .push)
        let aHost = Endpoint(address: .loopbackV4, port: 41000)
        let bHost = Endpoint(address: .loopbackV4, port: 42000)
        let stranger = Endpoint(address: .v4(0xC633_6407), port: 9)  // 198.51.100.7

        // Before the call starts there is no transport to take anything.
        await h.feed(h.a, .datagram(Self.rtp, from: bHost, to: aHost))
        #expect(PeerCallSnapshot(h.a.call).drops.withoutTransport == 1)

        await h.feed(h.a, .start)
        await h.feed(h.b, .start)
        let connected = await h.run(for: .seconds(30)) {
            h.a.call.selectedPair != nil && h.b.call.selectedPair != nil
        }
        try #require(connected, "\(h.a.course) \(h.b.course)")
        let before = PeerCallSnapshot(h.a.call).drops

        await h.feed(h.a, .datagram(Self.truncatedBinding, from: bHost, to: aHost))
        await h.feed(h.a, .datagram(Self.truncatedBinding, from: bHost, to: aHost))
        // Media from an address that is no remote candidate could be anyone's (RFC 8445 §7.3).
        await h.feed(h.a, .datagram(Self.rtp, from: stranger, to: aHost))
        var drops = PeerCallSnapshot(h.a.call).drops
        #expect(drops.malformedSTUN == before.malformedSTUN + 2)
        #expect(drops.unknownSource == before.unknownSource + 1)
        #expect(drops.withoutTransport == 1)
        #expect(drops.total == before.total + 3)

        // Once the call is closed, its transports are gone: what still arrives has no taker.
        await h.feed(h.a, .hangUp)
        await h.feed(h.b, .hangUp)
        let closed = await h.run(for: .seconds(30)) { h.a.call.isClosed && h.b.call.isClosed }
        try #require(closed, "A \(h.a.call.phase)")
        await h.feed(h.a, .datagram(Self.rtp, from: bHost, to: aHost))
        drops = PeerCallSnapshot(h.a.call).drops
        #expect(drops.withoutTransport == 2)
        // The drained transports' counts are kept.
        #expect(drops.malformedSTUN == before.malformedSTUN + 2 && drops.unknownSource == before.unknownSource + 1)
    }

    /// Media the call hands over before a pair is selected is not sent in the clear: it is dropped
    /// and counted, and (with DTLS) so is a datagram that comes before the remote's description set
    /// DTLS up. The count is the summary's `beforeProtection`, in its text and its JSON.
    @Test func dropsBeforeProtectionAreCountedAndReported() throws {
        let now = Instant.milliseconds(1)
        var plain = MediaProtection(security: .none)
        plain.handle(.send(Self.rtp), now: now)
        plain.handle(.send(Self.rtp), now: now)
        #expect(plain.drops == MediaProtection.Drops(unsecuredSends: 2, receivedBeforeSetup: 0))
        #expect(plain.pollOutput() == nil, "nothing was sent unprotected")
        var unprotected = plain.drops.unsecuredSends
        #if WebRTC
        var secure = MediaProtection(security: try MediaProtectionMode(named: "dtls-srtp"))
        secure.handle(.received([22, 0xFE, 0xFD] + [UInt8](repeating: 0, count: 10)), now: now)
        #expect(secure.drops.receivedBeforeSetup == 1)
        unprotected += secure.drops.receivedBeforeSetup
        #endif
        var drops = CallDrops(transports: ICETransport.Drops(), unsent: 0, withoutTransport: 0,
                              unprotected: unprotected)
        drops.socketRefused = 1
        #expect(drops.total == unprotected + 1)
        #expect(drops.text == "\(unprotected) before protection, 1 refused by the socket")
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(drops)) as? [String: Int]
        #expect(json?["beforeProtection"] == unprotected && json?["socketRefused"] == 1)
    }
}
