// What other users write to hurt a group call (docs/PROTOCOL.md §11): presence records with hostile
// fields or written under another user's name, offers naming a user who did not write them, a member
// that never answers. Each is dropped or bounded, counted and reported; the other legs start no epoch.
import RecordStore
import Testing
import ZoneCore

@testable import SDP
@testable import Signaling

@Suite("Mesh hostile input")
struct MeshHostileTests {
    static let users = MeshConvergenceTests.users

    private func mesh(_ count: Int) throws -> (MeshLab, [MeshMember]) {
        let lab = try MeshLab()
        let group = try Self.users.prefix(count).map { try lab.add($0) }
        lab.join(group)
        #expect(lab.run(for: .seconds(20)) { lab.meshConnected(group) })
        return (lab, group)
    }

    private func epochs(_ group: [MeshMember]) -> [Int] {
        group.flatMap { a in group.compactMap { a.room.negotiator(of: $0.userID)?.counters.epochsStarted } }
    }

    private func presence(_ user: String, in lab: MeshLab, joinedAt: FieldValue? = nil, expiresAt: FieldValue? = nil,
                          session: String = String(repeating: "ab", count: 16), room: String? = nil,
                          name: String? = nil) -> Record {
        let ms = lab.now.millisecondsSinceEpoch
        var record = CallMember(roomID: room ?? lab.roomID.rawValue, userID: user, memberSession: session,
                                joinedAtMs: ms, expiresAtMs: ms + 45_000)
            .record(over: nil, in: lab.roomID.zoneID(owner: lab.owner))
        if let joinedAt { record.fields[SignalField.joinedAt] = joinedAt }
        if let expiresAt { record.fields[SignalField.expiresAt] = expiresAt }
        if let name { record.id = RecordID(recordName: name, zoneID: record.id.zoneID) }
        return record
    }

    /// The last problem `member` reported, as a record error.
    private func lastError(_ member: MeshMember) -> SignalRecordError? {
        guard case .record(let error)? = member.rejected.last else { return nil }
        return error
    }

    @Test func presenceRecordsWithHostileFieldsAreRefused() throws {
        let (lab, group) = try mesh(2)
        let a = group[0]
        let z = "_z0mbie"
        _ = try lab.setUp(z)
        let before = epochs(group)
        let ms = lab.now.millisecondsSinceEpoch
        let cases: [(Record, SignalRecordError.Kind, String?)] = [
            (presence(z, in: lab, joinedAt: .timestamp(0)), .invalidFieldValue, SignalField.joinedAt),
            (presence(z, in: lab, joinedAt: .timestamp(.min)), .invalidFieldValue, SignalField.joinedAt),
            (presence(z, in: lab, expiresAt: .timestamp(.max)), .invalidFieldValue, SignalField.expiresAt),
            (presence(z, in: lab, expiresAt: .timestamp(ms - 1_000_000)), .invalidFieldValue, SignalField.expiresAt),
            (presence(z, in: lab, joinedAt: .string("now")), .wrongFieldType, SignalField.joinedAt),
            (presence(z, in: lab, session: "not hex at all, not 32 of them"), .invalidFieldValue,
             SignalField.memberSession),
            (presence(z, in: lab, room: "room_other001"), .invalidFieldValue, SignalField.roomID),
            (presence(z, in: lab, name: SignalRecordNames.callMember("_someone")), .invalidFieldValue,
             SignalField.userId),
            (presence("bad user", in: lab, name: SignalRecordNames.callMember(z)), .invalidUserID, nil),
        ]
        for (index, (record, kind, field)) in cases.enumerated() {
            lab.write([record], as: z)
            lab.step()
            let error = try #require(lastError(a), "case \(index)")
            #expect(error.kind == kind && error.field == field, "case \(index): \(error)")
            #expect(a.room.counters.memberRecordsRefused == index + 1)
        }
        #expect(a.startedLegs.allSatisfy { $0.leg.remote != z })
        #expect(epochs(group) == before)
        #expect(lab.meshConnected(group))
    }

    /// Another participant writes a member's presence record: readers refuse that version (its writer
    /// is not its user) and keep the member; the member's next refresh writes over it.
    @Test func aPresenceRecordWrittenByAnotherUserIsRefused() throws {
        let (lab, group) = try mesh(3)
        let (a, b) = (group[0], group[1])
        let z = "_z0mbie"
        _ = try lab.setUp(z)
        let before = epochs(group)
        var forged = presence(b.userID, in: lab, session: String(repeating: "cd", count: 16))
        forged.fields[SignalField.expiresAt] = .timestamp(lab.now.millisecondsSinceEpoch + 1_000)
        lab.write([forged], as: z)
        lab.step()
        #expect(lastError(a)?.kind == .writtenByAnotherUser)
        #expect(a.room.counters.rejoins == 0)
        lab.run(for: .seconds(25))
        #expect(lab.meshConnected(group))
        #expect(epochs(group) == before)
        let record = try #require(lab.callRecords.first { $0.id.recordName == SignalRecordNames.callMember(b.userID) })
        #expect(record.modified?.userRecordName == b.userID)
        #expect(record.fields[SignalField.memberSession]?.stringValue == b.room.me.memberSession)
    }

    /// An offer naming a user who did not write it: dropped unread, whether its pair has a leg or not.
    /// A user who never accepted the share cannot write at all.
    @Test func offersNamingAnotherWriterAreDropped() throws {
        let (lab, group) = try mesh(2)
        let (a, b) = (group[0], group[1])
        let z = "_z0mbie"
        _ = try lab.setUp(z)
        let before = epochs(group)
        let zone = lab.roomID.zoneID(owner: lab.owner)
        func offer(from owner: String, to user: String, epoch: Int64) throws -> Record {
            let key = try SessionKey(roomID: lab.roomID, users: owner, user)
            let description = SessionDescription.silentVideoOffer(SilentVideoConfiguration(
                sessionID: 1, iceCredentials: ICECredentials(usernameFragment: "zzzz",
                                                             password: String(repeating: "p", count: 22)),
                dtls: nil))
            return SignalEnvelope(sessionKey: key.rawValue, roomID: lab.roomID.rawValue,
                                  callEpoch: CallEpoch(milliseconds: epoch), ownerUserID: owner, envelopeType: .offer,
                                  description: description, updatedAtMs: epoch)
                .record(name: SignalRecordNames(sessionKey: key).envelope(epoch: CallEpoch(milliseconds: epoch),
                                                                          type: .offer), in: zone)
        }
        let epoch = lab.now.millisecondsSinceEpoch + 5
        // A user outside the share: the store refuses it.
        let outsider = lab.perform(StoreRequest(scope: .shared, .modifyRecords(ModifyRecordsRequest(
            saves: [try offer(from: "_mallory", to: a.userID, epoch: epoch)], savePolicy: .allKeys))), as: "_mallory")
        let saved: Bool = if case .modified(let result) = outsider { !result.savedRecords.isEmpty } else { false }
        #expect(!saved, "a user outside the share saved a record: \(outsider)")
        // Written by Z in the names of Mallory (no leg) and of B (a leg: a restart that never was).
        lab.write([try offer(from: "_mallory", to: a.userID, epoch: epoch),
                   try offer(from: b.userID, to: a.userID, epoch: epoch + 1)], as: z)
        lab.step()
        #expect(a.room.counters.forgedRecords == 2)
        #expect(a.rejected.suffix(2).allSatisfy {
            if case .record(let e) = $0 { e.kind == .writtenByAnotherUser } else { false }
        })
        #expect(a.startedLegs.allSatisfy { $0.leg.remote != "_mallory" })
        lab.run(for: .seconds(3))
        #expect(lab.meshConnected(group))
        #expect(epochs(group) == before)
        #expect(a.room.negotiator(of: b.userID)?.counters.remoteRestarts == 0)
    }

    /// A member whose presence is fresh but who never negotiates: the legs where it owes the offer fall
    /// back and offer after 8 s, every leg with it ends unanswered within the bound, and no leg with it
    /// starts again for that member session; the other pairs start no epoch.
    @Test func aMemberThatNeverAnswersIsBounded() throws {
        let (lab, group) = try mesh(3)
        let before = epochs(group)
        // "_u25" sorts between the members: joining last it is the later joiner of every pair.
        let z = "_u25"
        _ = try lab.setUp(z)
        var session = presence(z, in: lab)
        let joined = lab.now
        lab.write([session], as: z)
        var ended: [Duration] = []
        lab.run(for: .seconds(60)) {
            if lab.now - joined >= .seconds(15) * (ended.count + 1) {
                // It keeps its presence fresh, nothing more.
                session.fields[SignalField.expiresAt] = .timestamp(lab.now.millisecondsSinceEpoch + 45_000)
                lab.write([session], as: z)
                ended.append(lab.now - joined)
            }
            return false
        }
        for member in group {
            #expect(member.room.counters.fallbackOffers == 1, "\(member.userID)")
            #expect(member.endedLegs.map(\.leg.remote) == [z])
            guard case .unanswered(let after)? = member.endedLegs.first?.reason else {
                Issue.record("\(member.userID): \(member.endedLegs)")
                continue
            }
            #expect(after <= .seconds(41))
            #expect(member.startedLegs.filter { $0.leg.remote == z }.count == 1)
        }
        #expect(lab.meshConnected(group))
        #expect(epochs(group) == before)
    }

    /// The later joiner's offers never land: the member waiting for one offers itself after 8 s, and
    /// the pair connects on its epoch.
    @Test func theWaitingSideOffersWhenTheExpectedOfferNeverComes() throws {
        let lab = try MeshLab()
        let (early, late) = (try lab.add(Self.users[0]), try lab.add(Self.users[1]))
        lab.join([early])
        lab.step()
        late.failsOfferPublications = true
        let joined = lab.now
        lab.join([late])
        #expect(!lab.run(for: .seconds(7)) { lab.connected(early, late) })
        #expect(lab.run(for: .seconds(6)) { lab.connected(early, late) })
        #expect(lab.now - joined >= .seconds(8))
        #expect(early.room.counters.fallbackOffers == 1)
        #expect(early.room.negotiator(of: late.userID)?.counters.epochsStarted == 1)
        #expect(late.room.negotiator(of: early.userID)?.counters.saveFailures == 1)
    }
}
