import ICE
import Peer
import Testing
import ZoneCore

@Suite struct ICETransportTests {
    /// Two transports back to back in memory on a manual clock connect on host candidates.
    @Test func twoTransportsConnectBackToBack() throws {
        var now = Instant.zero
        let a = Endpoint(address: .loopbackV4, port: 40001)
        let b = Endpoint(address: .loopbackV4, port: 40002)
        var seed = SeededRandom(seed: 7)
        let ca = Credentials.random(using: &seed), cb = Credentials.random(using: &seed)
        var left = try ICETransport(configuration: .init(agent: AgentConfiguration(
            hostAddresses: [a], role: .controlling, credentials: ca, seed: 1)), now: now)
        var right = try ICETransport(configuration: .init(agent: AgentConfiguration(
            hostAddresses: [b], role: .controlled, credentials: cb, seed: 2)), now: now)
        try left.setRemoteCredentials(cb)
        try right.setRemoteCredentials(ca)
        var connected = [false, false]
        for _ in 0..<2000 where !(connected[0] && connected[1]) {
            var progressed = true
            while progressed {
                progressed = false
                while let out = left.pollOutput() {
                    progressed = true
                    switch out {
                    case .transmit(let bytes, let from, let to): right.handle(.datagram(bytes, from: from, to: to), now: now)
                    case .event(.localCandidate(let c)): right.addRemoteCandidate(.remote(kind: c.kind, address: c.address, priority: c.priority, foundation: c.foundation))
                    case .event(.selectedPair): connected[0] = true
                    case .event: break
                    }
                }
                while let out = right.pollOutput() {
                    progressed = true
                    switch out {
                    case .transmit(let bytes, let from, let to): left.handle(.datagram(bytes, from: from, to: to), now: now)
                    case .event(.localCandidate(let c)): left.addRemoteCandidate(.remote(kind: c.kind, address: c.address, priority: c.priority, foundation: c.foundation))
                    case .event(.selectedPair): connected[1] = true
                    case .event: break
                    }
                }
            }
            let next = [left.nextDeadline, right.nextDeadline].compactMap { $0 }.min() ?? now + .milliseconds(5)
            now = max(now, next)
            left.handle(.timer, now: now)
            right.handle(.timer, now: now)
        }
        #expect(connected == [true, true])
        #expect(left.selectedPair?.local.address == a)
    }
}
