// Closing is drained: a call that hung up keeps feeding every transport it ever had — the current
// one and those an ICE restart retired — until their TURN deallocations (Refresh with LIFETIME 0,
// RFC 8656 §7.2) are answered or time out, and only then is it closed; a driver stops on that.
import ICE
import Peer
import STUN
import Signaling
import TURN
import Testing
import ZoneCore

@Suite struct PeerCallClosingTests {
    /// Consent checked every second, lost after 3 s (RFC 7675's 5 s / 30 s, scaled down).
    static let consent = ConsentConfiguration(interval: .seconds(1), jitter: 0.2, disconnectedAfter: .seconds(2),
                                              expiry: .seconds(3))

    /// Both peers relay through one TURN server whose link loses datagrams (seeded). The path is cut
    /// until both have moved to a new epoch by an ICE restart, so the first deallocation of each
    /// retired allocation is lost; the path comes back, the new epoch connects, both hang up. The
    /// driver stops when both calls are closed, and by then the server has answered a Refresh with
    /// LIFETIME 0 for every allocation — the retired ones included — and holds none.
    @Test func anICERestartThroughTURNUnderLossEndsWithEveryAllocationDeallocated() async throws {
        let h = try await MemoryCallHarness(
            strategy: .push, lifetime: CallLifetime(reconnectAttempts: 2, reconnectTimeout: .seconds(15)),
            consent: Self.consent, relayed: true, relayLoss: 0.1)
        await h.feed(h.a, .start)
        await h.feed(h.b, .start)
        func connectedOnOneEpoch() -> CallEpoch? {
            guard case .connected(let a) = h.a.call.signaling.negotiator.state,
                  case .connected(let b) = h.b.call.signaling.negotiator.state, a == b,
                  h.a.call.selectedPair != nil, h.b.call.selectedPair != nil else { return nil }
            return a
        }
        #expect(await h.run(for: .seconds(30)) { connectedOnOneEpoch() != nil }, "\(h.a.course) \(h.b.course)")
        let first = try #require(connectedOnOneEpoch())
        #expect(h.a.call.selectedPair?.local.kind == .relay)
        let firstRelays = Set(h.relayEvents.compactMap { event -> Endpoint? in
            if case .allocated(_, _, let relay, _) = event { relay } else { nil }
        })
        #expect(firstRelays.count == 2)

        // Cut: consent expires, A restarts ICE in a new epoch, B follows through the store; both
        // retire their first transport while nothing gets through.
        h.partitioned = true
        let moved = await h.run(for: .seconds(30)) {
            h.a.call.signaling.negotiator.activeEpoch != first
                && h.b.call.signaling.negotiator.activeEpoch == h.a.call.signaling.negotiator.activeEpoch
        }
        #expect(moved, "\(h.a.course) \(h.b.course)")
        _ = await h.run(for: .seconds(1)) { false }
        h.partitioned = false
        let second = await h.run(for: .seconds(30)) { connectedOnOneEpoch().map { $0 != first } ?? false }
        #expect(second, "\(h.a.course) \(h.b.course)")

        await h.feed(h.a, .hangUp)
        await h.feed(h.b, .hangUp)
        let closed = await h.run(for: .seconds(120)) { h.a.call.isClosed && h.b.call.isClosed }
        #expect(closed, "A \(h.a.call.phase), B \(h.b.call.phase)")
        // Closed means drained: nothing left to send or wait for.
        #expect(h.a.call.nextDeadline == nil && h.b.call.nextDeadline == nil)

        let relay = try #require(h.relay)
        let released = h.relayEvents.compactMap { event -> (Endpoint, String)? in
            if case .released(_, let endpoint, let reason) = event { (endpoint, reason) } else { nil }
        }
        for endpoint in firstRelays {
            #expect(released.contains { $0.0 == endpoint && $0.1.contains("lifetime 0") },
                    "the first epoch's allocation \(endpoint) was not deallocated: \(released)")
        }
        #expect(relay.activeAllocations == 0, "allocations left on the server: \(relay.activeAllocations)")
        #expect(released.count == 4 && released.allSatisfy { $0.1.contains("lifetime 0") }, "\(released)")
        // The cut lost the first deallocations of the retired allocations: they were sent again.
        let deallocations = h.carried.filter { bytes in
            guard let message = try? STUNMessage(decoding: bytes) else { return false }
            return message.method == .refresh && message.messageClass == .request && message.lifetime == 0
        }
        #expect(deallocations.count > 4, "\(deallocations.count) Refresh requests with LIFETIME 0")
    }
}
