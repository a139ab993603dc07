#if WebRTC
// The DTLS roles of a call whose first epoch was given up before its pair was selected: the epoch that
// connects decides them (RFC 8842 §5.2), whoever offered the epoch before it.

import SDP
import Testing
import ZoneCore
@testable import Peer

@Suite struct MediaProtectionRoleTests {
    @Test func anEpochSupersededBeforeItsPairLeavesTheRolesToTheEpochThatConnects() throws {
        let dtls = try MediaProtectionMode(named: "dtls-srtp")
        var random = SeededRandom(seed: 7)
        func side() -> SilentVideoConfiguration {
            SilentVideoConfiguration(sessionID: 1, iceCredentials: .random(using: &random), dtls: dtls.sdp)
        }
        // B offers epoch 1 and A answers it (A would be active: the client). Before either selects a pair, A
        // offers epoch 2 and B answers that (B active: the client), never having read A's first answer.
        let offer1 = SessionDescription.silentVideoOffer(side())
        let offer2 = SessionDescription.silentVideoOffer(side())
        let answer2 = try SessionDescription.answer(to: offer2, side())
        var a = MediaProtection(security: dtls), b = MediaProtection(security: dtls)
        let now = Instant.seconds(1)
        a.handle(.remoteDescription(offer1), now: now)
        a.handle(.remoteDescription(answer2), now: now)
        b.handle(.remoteDescription(offer2), now: now)
        a.handle(.pairSelected, now: now)
        b.handle(.pairSelected, now: now)
        // Two clients would each get the other's ClientHello and fail ("unexpected message").
        var secured = (a: false, b: false)
        /// Hands what `from` wants sent to `to`; true once `from` said it is secured.
        func deliver(from: inout MediaProtection, to: inout MediaProtection, _ name: String) -> Bool {
            var done = false
            while let output = from.pollOutput() {
                switch output {
                case .transmit(let bytes): to.handle(.received(bytes), now: now)
                case .secured: done = true
                case .failed(let why): Issue.record("\(name) failed: \(why)")
                case .media, .goodbye, .remoteClosed: break
                }
            }
            return done
        }
        for _ in 0..<20 where !(secured.a && secured.b) {
            if deliver(from: &a, to: &b, "A") { secured.a = true }
            if deliver(from: &b, to: &a, "B") { secured.b = true }
        }
        #expect(secured.a && secured.b && a.phase == .secured && b.phase == .secured)
    }
}
#endif
