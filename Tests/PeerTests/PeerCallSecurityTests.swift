#if WebRTC
// DTLS-SRTP inside the call machine (trait `WebRTC`): two PeerCalls in memory negotiate
// `UDP/TLS/RTP/SAVPF` with their fingerprints, handshake on the selected pair and carry the file
// as SRTP — frames identical, no frame's bytes on the wire in the clear; a peer that requires
// DTLS and one that refuses it both fail, saying why, and no media flows.
import Foundation
import Media
import Peer
import Testing
import ZoneCore

@Suite struct PeerCallSecurityTests {
    @Test func aFileArrivesIdenticalOverDTLSSRTPAndNeverInTheClear() async throws {
        let path = PeerCallMediaTests.fixtures.appendingPathComponent("vp8-320x240-60.ivf").path
        let (format, frames) = try VideoFileSource.read(path: path)
        let send = CallMediaConfiguration(send: .init(format: format, frames: frames), pace: .max)
        let dtls = try MediaProtectionMode(named: "dtls-srtp")
        let h = try await MemoryCallHarness(strategy: .push, media: (send, CallMediaConfiguration(receive: true)),
                                            security: (dtls, dtls))
        await h.feed(h.a, .start)
        await h.feed(h.b, .start)
        let done = await h.run(for: .seconds(60)) { h.a.finished && h.b.finished }
        #expect(done)
        #expect(h.b.frames.count == frames.count)
        #expect(h.a.call.media.stats.sentDigest == h.b.call.media.stats.receivedDigest)
        let secured = try #require(h.a.call.milestones.mediaSecured)
        #expect(secured >= (h.a.call.milestones.iceConnected ?? secured))
        #expect(h.b.call.milestones.mediaSecured != nil)
        // A 32-byte piece of every frame: none may appear in any datagram.
        let pieces = frames.filter { $0.bytes.count >= 64 }.map { Array($0.bytes[16..<48]) }
        #expect(pieces.count > 50)
        let leaked = pieces.filter { piece in h.carried.contains { $0.count >= 32 && contains($0, piece) } }
        #expect(leaked.isEmpty)
        // The handshake was on the wire (DTLS records, RFC 7983 first bytes 20–63).
        #expect(h.carried.contains { $0.first == 22 })
    }

    /// The answerer sees the disagreement in the offer and fails at once, saying which side wants
    /// what (the offerer, answered by nobody, is left to its connect timeout).
    @Test(arguments: [true, false])
    func anOfferTheAnswererCannotSecureFailsTheAnswererWithTheReason(offererRequiresDTLS: Bool) async throws {
        let dtls = try MediaProtectionMode(named: "dtls-srtp")
        let h = try await MemoryCallHarness(strategy: .push,
                                            security: offererRequiresDTLS ? (dtls, .none) : (.none, dtls))
        await h.feed(h.a, .start)
        await h.feed(h.b, .start)
        let ended = await h.run(for: .seconds(30)) { h.b.call.hasHungUp }
        #expect(ended)
        guard case .failed(let why) = h.b.call.ending else {
            Issue.record("the answerer ended \(String(describing: h.b.call.ending))")
            return
        }
        if offererRequiresDTLS {
            #expect(why.contains("the remote requires DTLS-SRTP") && why.contains("--media-security none"))
        } else {
            #expect(why.contains("no a=fingerprint") && why.contains("--media-security dtls-srtp"))
        }
        #expect(h.a.call.milestones.mediaSecured == nil && h.b.call.milestones.mediaSecured == nil)
        #expect(h.a.call.selectedPair == nil)
    }

    private func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        for start in 0...(haystack.count - needle.count)
        where haystack[start] == needle[0] && haystack[start..<start + needle.count].elementsEqual(needle) {
            return true
        }
        return false
    }
}
#endif
