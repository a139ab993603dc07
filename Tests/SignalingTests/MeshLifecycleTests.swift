// Members leaving, crashing, rejoining, being removed, and one too many (docs/PROTOCOL.md §11.4–11.5):
// only the legs with that member end, each with its reason; the other pairs start no epoch; what
// the members leave behind is collected.
import RecordStore
import Testing
import ZoneCore

@testable import Signaling

@Suite("Mesh lifecycle")
struct MeshLifecycleTests {
    static let users = MeshConvergenceTests.users

    /// A connected mesh of `count` members.
    private func mesh(_ count: Int, configuration: RoomSignalingConfiguration = MeshLab.standard) throws
        -> (MeshLab, [MeshMember]) {
        let lab = try MeshLab(configuration: configuration)
        let group = try Self.users.prefix(count).map { try lab.add($0) }
        lab.join(group)
        #expect(lab.run(for: .seconds(20)) { lab.meshConnected(group) })
        return (lab, group)
    }

    /// Every leg's epochs started, by (member, remote).
    private func epochs(_ group: [MeshMember]) -> [String: Int] {
        var all: [String: Int] = [:]
        for a in group {
            for b in group where a !== b {
                all["\(a.userID)>\(b.userID)"] = a.room.negotiator(of: b.userID)?.counters.epochsStarted
            }
        }
        return all
    }

    @Test func aMemberLeavingEndsOnlyItsLegsAndTakesItsRecords() throws {
        let (lab, group) = try mesh(3)
        let (a, b, c) = (group[0], group[1], group[2])
        let before = epochs([a, c])
        lab.send(b, .leave)
        #expect(b.leftReason == .requested)
        #expect(b.room.state == .left(.requested))
        #expect(lab.run(for: .seconds(5)) { [a, c].allSatisfy { $0.room.negotiator(of: b.userID) == nil } })
        #expect(a.endedLegs.map(\.reason) == [.remoteLeft])
        #expect(c.endedLegs.map(\.reason) == [.remoteLeft])
        #expect(a.ice[b.userID]?.closed == true)
        #expect(lab.connected(a, c))
        #expect(epochs([a, c]) == before)
        // B's presence, its envelopes and chunks, and the session records of its pairs are gone.
        for record in lab.callRecords {
            #expect(record.id.recordName != SignalRecordNames.callMember(b.userID))
            let owner = record.fields[SignalField.ownerUserId]?.stringValue
            #expect(owner != b.userID, "\(record.id.recordName)")
            let key = record.fields[SignalField.sessionKey]?.stringValue ?? ""
            #expect(!key.contains("#\(b.userID)"))
        }
    }

    @Test func afterEveryoneLeavesNoCallRecordRemains() throws {
        let (lab, group) = try mesh(4)
        #expect(!lab.callRecords.isEmpty)
        for member in group {
            lab.send(member, .leave)
            lab.step()
        }
        lab.run(for: .seconds(3))
        #expect(lab.callRecords.map(\.id.recordName) == [])
        for member in group { #expect(member.room.state == .left(.requested)) }
    }

    @Test func aCrashedMembersLegsEndOnceItsPresenceExpires() throws {
        let (lab, group) = try mesh(3)
        let (a, b, c) = (group[0], group[1], group[2])
        b.paused = true
        let crashed = lab.now
        // ICE consent expires 30 s after the crash (RFC 7675): the legs with B fail.
        lab.run(for: .seconds(30))
        for member in [a, c] {
            let epoch = try #require(member.room.negotiator(of: b.userID)?.activeEpoch)
            lab.send(member, .iceReports([(b.userID, .failed(epoch: epoch))]))
        }
        #expect(lab.run(for: .seconds(16)) { [a, c].allSatisfy { $0.room.negotiator(of: b.userID) == nil } })
        #expect(lab.now - crashed <= .seconds(46))
        #expect(a.endedLegs.map(\.reason) == [.remoteExpired])
        #expect(c.endedLegs.map(\.reason) == [.remoteExpired])
        #expect(lab.connected(a, c))
        // A later joiner never starts a leg with B.
        let d = try lab.add(Self.users[3])
        lab.join([d])
        #expect(lab.run(for: .seconds(20)) { lab.meshConnected([a, c, d]) })
        #expect(!d.startedLegs.contains { $0.leg.remote == b.userID })
        // Within two sweeps B's presence and its pairs' records are collected.
        lab.run(for: .seconds(130))
        #expect(!lab.callRecords.contains { $0.id.recordName == SignalRecordNames.callMember(b.userID) })
        #expect(!lab.callRecords.contains { ($0.fields[SignalField.sessionKey]?.stringValue ?? "").contains(b.userID) })
    }

    @Test func aSixthJoinerLeavesByItselfAndTheOthersAreUntouched() throws {
        let (lab, five) = try mesh(5)
        let before = epochs(five)
        lab.run(for: .seconds(1))
        let sixth = try lab.add("_u6")
        lab.join([sixth])
        #expect(sixth.leftReason == .roomFull(rank: 6, limit: 5))
        #expect(sixth.startedLegs.isEmpty)
        lab.run(for: .seconds(5))
        #expect(lab.meshConnected(five))
        #expect(epochs(five) == before)
        for member in five {
            #expect(!member.startedLegs.contains { $0.leg.remote == sixth.userID })
            #expect(member.room.counters.beyondLimit <= 1)
        }
        #expect(!lab.callRecords.contains { $0.id.recordName == SignalRecordNames.callMember(sixth.userID) })
    }

    @Test func aRejoinRestartsOnlyThatMembersPairs() throws {
        let (lab, group) = try mesh(3)
        let (a, b, c) = (group[0], group[1], group[2])
        let oldEpoch = try #require(a.room.negotiator(of: b.userID)?.activeEpoch)
        let acEpochs = epochs([a, c])
        lab.run(for: .seconds(1))
        let firstSessionLegs = b.startedLegs.count
        try lab.rejoin(b, seed: 99)
        #expect(lab.run(for: .seconds(20)) { lab.meshConnected(group) })
        #expect(a.endedLegs.map(\.reason) == [.remoteRejoined])
        #expect(c.endedLegs.map(\.reason) == [.remoteRejoined])
        let newEpoch = try #require(a.room.negotiator(of: b.userID)?.activeEpoch)
        #expect(newEpoch > oldEpoch)
        // The rejoiner is the later joiner of both its pairs: it offered.
        #expect(b.startedLegs.dropFirst(firstSessionLegs).map(\.makesFirstOffer) == [true, true])
        #expect(epochs([a, c]) == acEpochs)
        #expect(a.room.counters.rejoins == 1)
    }

    @Test func theOwnerRemovesAMember() throws {
        let lab = try MeshLab()
        let owner = try lab.add(lab.owner)
        let others = try Self.users.prefix(2).map { try lab.add($0) }
        let group = [owner] + others
        lab.join(group)
        #expect(lab.run(for: .seconds(20)) { lab.meshConnected(group) })
        // A participant cannot remove anyone.
        lab.send(others[0], .remove(userID: others[1].userID))
        lab.run(for: .seconds(2))
        #expect(lab.meshConnected(group))
        lab.send(owner, .remove(userID: others[1].userID))
        #expect(lab.run(for: .seconds(5)) { others[1].leftReason != nil })
        #expect(others[1].leftReason == .removed)
        #expect(lab.run(for: .seconds(5)) { owner.room.negotiator(of: others[1].userID) == nil })
        #expect(owner.endedLegs.map(\.reason) == [.remoteLeft])
        #expect(lab.connected(owner, others[0]))
    }
}
