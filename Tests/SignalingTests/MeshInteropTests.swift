// A peer running a call of two (`CallSignaling`, `zonertc peer --remote`) and a group-call member
// converge (docs/PROTOCOL.md §11.6): the call-of-two peer with the lower user ID offers and its offer
// starts a leg; with the higher ID it waits, and the member calls it on its fresh `RoomMember` record.
import RecordStore
import Testing
import ZoneCore

@testable import Signaling

@Suite("Mesh and calls of two")
struct MeshInteropTests {
    private func converged(_ lab: MeshLab, _ pair: PairMember, _ member: MeshMember) -> Bool {
        guard let epoch = pair.ice.connectedEpoch, member.ice[pair.userID]?.connectedEpoch == epoch else {
            return false
        }
        return pair.signaling.negotiator.state == .connected(epoch)
            && member.state(toward: pair.userID) == .connected(epoch)
    }

    @Test func aCallOfTwoPeerThatOffersIsAnswered() throws {
        let lab = try MeshLab()
        let member = try lab.add("_m1")
        let pair = try lab.addPair("_a1", calling: member.userID)
        lab.join([member])
        lab.step()
        lab.send(pair, .start)
        #expect(lab.run(for: .seconds(20)) { converged(lab, pair, member) })
        let start = try #require(member.startedLegs.first)
        #expect(start.leg.remote == pair.userID && !start.makesFirstOffer && start.memberSession == nil)
        #expect(member.room.counters.callersAnswered == 1)
        #expect(pair.signaling.negotiator.counters.epochsStarted == 1)
        #expect(member.room.negotiator(of: pair.userID)?.counters.epochsStarted == 0)
    }

    @Test func aCallOfTwoPeerThatWaitsIsCalled() throws {
        let lab = try MeshLab()
        let member = try lab.add("_m1")
        let pair = try lab.addPair("_z1", calling: member.userID)
        lab.send(pair, .start)
        lab.step()
        let joined = lab.now
        lab.join([member])
        #expect(lab.run(for: .seconds(20)) { converged(lab, pair, member) })
        let start = try #require(member.startedLegs.first)
        #expect(start.leg.remote == pair.userID && start.makesFirstOffer && start.memberSession == nil)
        #expect(member.room.counters.pairPeersCalled == 1)
        #expect(pair.signaling.negotiator.counters.epochsStarted == 0)
        // The grace, then one more fetch.
        let called = try #require(member.room.negotiator(of: pair.userID)?.activeEpoch)
        #expect(called >= CallEpoch(milliseconds: (joined + MeshLab.standard.pairPeerGrace).millisecondsSinceEpoch))
        #expect(called < CallEpoch(milliseconds: (joined + .seconds(4)).millisecondsSinceEpoch))
    }

    /// A member set up in the room but not in the call says so in its `RoomMember` record: nobody
    /// calls it as a call-of-two peer.
    @Test func aGroupCallClientNotInTheCallIsNotCalled() throws {
        let lab = try MeshLab()
        let member = try lab.add("_m1")
        _ = try lab.setUp("_z1", groupCalls: true)
        lab.join([member])
        lab.run(for: .seconds(10))
        #expect(member.startedLegs.isEmpty)
        #expect(member.room.counters.pairPeersCalled == 0)
    }
}
