// RFC 8445 §6.1.2 (forming, pruning, ordering, initial states), §6.1.4.2 (next check),
// §7.2.5.3.3 (unfreezing), RFC 8838 §10 (trickled pairs).

import Testing
import ZoneCore
@testable import ICE

@Suite struct ChecklistTests {
    let hostA = Candidate.host(try! Endpoint(parsing: "10.0.0.1:5000"))
    let hostA6 = Candidate.host(try! Endpoint(parsing: "[fd00::1]:5000"))

    func remote(_ text: String, _ foundation: String, priority: UInt32 = 1000) -> Candidate {
        .remote(kind: .host, address: try! Endpoint(parsing: text), priority: priority, foundation: foundation)
    }

    @Test func pairsOnlyTheSameAddressFamily() {
        var list = Checklist()
        #expect(list.add(local: hostA6, remote: remote("10.0.0.2:1", "r"), role: .controlling) == nil)
        #expect(list.add(local: hostA, remote: remote("10.0.0.2:1", "r"), role: .controlling) == 0)
        #expect(list.pairs.count == 1)
    }

    @Test func serverReflexiveIsReplacedByItsBaseAndPruned() {
        var list = Checklist()
        let srflx = Candidate.serverReflexive(try! Endpoint(parsing: "203.0.113.5:6000"), base: hostA.address,
                                              server: try! Endpoint(parsing: "198.51.100.1:3478"))
        let r = remote("10.0.0.2:1", "r")
        #expect(list.add(local: hostA, remote: r, role: .controlling) != nil)
        #expect(list.add(local: srflx, remote: r, role: .controlling) == nil)  // redundant with the host pair
        #expect(list.pairs.count == 1 && list.pairs[0].local.kind == .host)
        var other = Checklist()
        #expect(other.add(local: srflx, remote: r, role: .controlling) == 0)
        #expect(other.pairs[0].local == hostA)  // the base stands in
    }

    @Test func initialStatesUnfreezeOnePairPerFoundation() {
        var list = Checklist()
        list.add(local: hostA, remote: remote("10.0.0.2:1", "same", priority: 10), role: .controlling)
        list.add(local: hostA, remote: remote("10.0.0.2:2", "same", priority: 20), role: .controlling)
        list.add(local: hostA, remote: remote("10.0.0.3:1", "other"), role: .controlling)
        #expect(list.pairs.map(\.state) == [.waiting, .frozen, .waiting])
        // Highest-priority waiting pair first, then the other waiting one; the frozen pair waits
        // while its foundation is in progress.
        let first = list.nextPairToCheck(role: .controlling)
        #expect(first == 2)
        list[2].state = .inProgress
        #expect(list.nextPairToCheck(role: .controlling) == 0)
        list[0].state = .inProgress
        #expect(list.nextPairToCheck(role: .controlling) == nil)
        #expect(!list.hasPendingChecks)
        // Success unfreezes the foundation (RFC 8445 §7.2.5.3.3).
        list[0].state = .succeeded
        list.unfreeze(foundationOf: list[0])
        #expect(list[1].state == .waiting)
    }

    @Test func frozenPairIsUnfrozenWhenItsFoundationFails() {
        var list = Checklist()
        list.add(local: hostA, remote: remote("10.0.0.2:1", "f"), role: .controlling)
        list.add(local: hostA, remote: remote("10.0.0.2:2", "f"), role: .controlling)
        #expect(list.nextPairToCheck(role: .controlling) == 0)
        list[0].state = .failed
        #expect(list.hasPendingChecks)
        #expect(list.nextPairToCheck(role: .controlling) == 1)
    }

    @Test func triggeredChecksComeFirstInOrder() {
        var list = Checklist()
        list.add(local: hostA, remote: remote("10.0.0.2:1", "a", priority: 1), role: .controlling)
        list.add(local: hostA, remote: remote("10.0.0.3:1", "b", priority: 2), role: .controlling)
        list.add(local: hostA, remote: remote("10.0.0.4:1", "c", priority: 3), role: .controlling)
        list.trigger(0)
        list.trigger(1)
        list.trigger(0)
        #expect(list.nextPairToCheck(role: .controlling) == 0)
        #expect(list.nextPairToCheck(role: .controlling) == 1)
        #expect(list.nextPairToCheck(role: .controlling) == 2)
    }

    @Test func orderedByDecreasingPriority() {
        var list = Checklist()
        list.add(local: hostA, remote: remote("10.0.0.2:1", "a", priority: 5), role: .controlling)
        list.add(local: hostA, remote: remote("10.0.0.3:1", "b", priority: 900_000), role: .controlling)
        list.add(local: hostA, remote: remote("10.0.0.4:1", "c", priority: 50), role: .controlling)
        #expect(list.ordered(role: .controlling).map(\.remote.foundation) == ["b", "c", "a"])
    }

    @Test func trickledPairOfASucceededFoundationStartsWaiting() {
        var list = Checklist()
        list.add(local: hostA, remote: remote("10.0.0.2:1", "f"), role: .controlling)
        list.add(local: hostA, remote: remote("10.0.0.2:3", "f"), role: .controlling)
        list[0].state = .succeeded
        list[1].state = .inProgress
        list.add(local: hostA, remote: remote("10.0.0.2:2", "f"), role: .controlling)
        #expect(list.pairs[2].state == .waiting)
    }
}
