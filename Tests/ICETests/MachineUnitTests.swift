// Small machines on their own: role conflicts (RFC 8445 §7.3.1.1, §7.2.5.1), retransmission
// (RFC 8489 §6.2.1), consent (RFC 7675), nomination strategy (RFC 8445 §8.1.1).

import STUN
import Testing
import ZoneCore
@testable import ICE

@Suite struct MachineUnitTests {
    @Test func roleConflictInRequests() {
        func r(_ role: Role, _ tieBreaker: UInt64, controlling: UInt64? = nil, controlled: UInt64? = nil)
            -> RoleConflictResolution {
            RoleConflictResolution.forRequest(role: role, tieBreaker: tieBreaker, remoteControlling: controlling,
                                              remoteControlled: controlled)
        }
        #expect(r(.controlling, 5, controlled: 9) == .none)
        #expect(r(.controlled, 5, controlling: 9) == .none)
        // Both controlling: the larger tie-breaker keeps the role.
        #expect(r(.controlling, 9, controlling: 5) == .respond487)
        #expect(r(.controlling, 9, controlling: 9) == .respond487)
        #expect(r(.controlling, 5, controlling: 9) == .switchRole)
        // Both controlled: the larger tie-breaker becomes controlling.
        #expect(r(.controlled, 9, controlled: 5) == .switchRole)
        #expect(r(.controlled, 5, controlled: 9) == .respond487)
    }

    @Test func roleAfter487() {
        let after = RoleConflictResolution.roleAfter487
        #expect(after(.controlling, .controlling) == .controlled)
        #expect(after(.controlled, .controlled) == .controlling)
        #expect(after(.controlling, .controlled) == nil)
    }

    @Test func retransmissionDoublesUpToTheCapThenTimesOut() {
        let start = Instant.seconds(100)
        var check = ConnectivityCheck(
            transactionID: STUNTransactionID(high: 1, low: 2), purpose: .consent, bytes: [], from: Harness.hostA,
            to: Harness.hostB, responseKey: nil, now: start,
            timing: STUNTransactionTiming(initialRTO: .milliseconds(100), maxRTO: .milliseconds(1600),
                                          maxRetransmits: 7))
        #expect(check.transaction.drainOutputs() == [.transmit([])])  // the first send
        var sends: [Duration] = []
        var now = start
        while let deadline = check.transaction.nextDeadline {
            now = deadline
            let outputs = check.transaction.outputs(after: .timer, now: now)
            if outputs == [.timedOut] { break }
            #expect(outputs == [.transmit([])])
            sends.append(now - start)
        }
        #expect(sends.map(\.milliseconds) == [100, 300, 700, 1500, 3100, 4700, 6300])
        #expect((now - start).milliseconds == 7900)
        #expect(check.transaction.phase == .timedOut)  // stays timed out
        var fresh = ConnectivityCheck(
            transactionID: STUNTransactionID(high: 1, low: 3), purpose: .consent, bytes: [], from: Harness.hostA,
            to: Harness.hostB, responseKey: nil, now: start, timing: AgentConfiguration.defaultCheckTiming)
        _ = fresh.transaction.drainOutputs()
        #expect(fresh.transaction.outputs(after: .timer, now: start + .milliseconds(99)) == [])
    }

    @Test func consentTimeline() {
        var random = SeededRandom(seed: 1)
        let start = Instant.seconds(1000)
        var consent = ConsentFreshness(configuration: ConsentConfiguration(), now: start, random: &random)
        // First check 4–6 s out (5 s ± 20 %).
        #expect(consent.nextCheck >= start + .seconds(4) && consent.nextCheck <= start + .seconds(6))
        #expect(!consent.checkDue(now: start + .seconds(3), random: &random))
        let due = consent.nextCheck
        #expect(consent.checkDue(now: due, random: &random))
        #expect(consent.nextCheck - due >= .seconds(4) && consent.nextCheck - due <= .seconds(6))
        #expect(consent.status(now: start + .milliseconds(9999)) == .fresh)
        #expect(consent.status(now: start + .seconds(10)) == .disconnected)
        #expect(consent.status(now: start + .seconds(30)) == .expired)
        consent.responded(now: start + .seconds(29))
        #expect(consent.status(now: start + .seconds(30)) == .fresh)
        #expect(consent.deadline(now: start + .seconds(30)) <= start + .seconds(39))
    }

    @Test func regularNominationWaitsForBetterPairsOrTheTimer() {
        let local = Candidate.host(Harness.hostA)
        var list = Checklist()
        list.add(local: local, remote: .remote(kind: .host, address: Harness.hostB, priority: 10, foundation: "lo"),
                 role: .controlling)
        list.add(local: local, remote: .remote(kind: .host, address: try! Endpoint(parsing: "10.0.0.3:1"),
                                               priority: 1_000_000, foundation: "hi"), role: .controlling)
        list[0].state = .succeeded
        list[0].valid = true
        let t0 = Instant.seconds(5)
        let strategy = Nomination.regular(wait: .milliseconds(100))
        #expect(strategy.pairToNominate(in: list, role: .controlling, firstValidAt: t0, now: t0) == nil)
        let later = t0 + .milliseconds(100)
        #expect(strategy.pairToNominate(in: list, role: .controlling, firstValidAt: t0, now: later) == 0)
        list[1].state = .failed
        #expect(strategy.pairToNominate(in: list, role: .controlling, firstValidAt: t0, now: t0) == 0)
        #expect(Nomination.aggressive.pairToNominate(in: list, role: .controlling, firstValidAt: t0, now: t0) == nil)
        #expect(Nomination.aggressive.nominatesEveryCheck && !strategy.nominatesEveryCheck)
    }
}
