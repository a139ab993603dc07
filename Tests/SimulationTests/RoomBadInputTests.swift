// Issue 28's bad input on the virtual clock (`RoomTrial`: every member runs the real `RoomCall`, legs and
// all): a presence record with hostile fields, a member that never answers, an offer from a user not in the
// share, an offer in another member's name, an offer from a participant who is not in the call, and a 6th
// member. Each has its outcome in the members' snapshots, nothing waits unbounded, and every member keeps
// its one leg with each other member.
import RecordStore
import SDP
import Signaling
import Testing
import ZoneCore

@testable import Simulation

@Suite("Room trials: bad input")
struct RoomBadInputTests {
    static let configuration = RoomTrialTests.configuration
    static let roomID = try! RoomID(CallTrial.roomName)

    static func presence(_ user: String, zone: ZoneID, now: Instant, joinedAt: Int64? = nil,
                         expiresAt: Int64? = nil) -> Record {
        let ms = now.millisecondsSinceEpoch
        return CallMember(roomID: roomID.rawValue, userID: user, memberSession: String(repeating: "ab", count: 16),
                          joinedAtMs: joinedAt ?? ms, expiresAtMs: expiresAt ?? ms + 45_000)
            .record(over: nil, in: zone)
    }

    /// `owner`'s offer to `to` (ICE credentials, no candidate): it claims presence and nothing more.
    static func offer(from owner: String, to: String, zone: ZoneID, now: Instant) -> Record {
        let key = try! SessionKey(roomID: roomID, users: owner, to)
        let epoch = CallEpoch(milliseconds: now.millisecondsSinceEpoch)
        let description = SessionDescription.silentVideoOffer(SilentVideoConfiguration(
            sessionID: 9, iceCredentials: ICECredentials(usernameFragment: "zzzz", password: String(repeating: "p", count: 22)),
            dtls: nil))
        return SignalEnvelope(sessionKey: key.rawValue, roomID: roomID.rawValue, callEpoch: epoch, ownerUserID: owner,
                              envelopeType: .offer, description: description, updatedAtMs: epoch.milliseconds)
            .record(name: SignalRecordNames(sessionKey: key).envelope(epoch: epoch, type: .offer), in: zone)
    }

    /// Every member has one leg with each other member, still up at the end.
    static func membersUntouched(_ outcome: RoomTrialOutcome, members: [String]) {
        for (i, room) in outcome.rooms.enumerated() {
            for other in members where other != members[i] {
                let legs = room.legs.filter { $0.id.remote == other }
                #expect(legs.count == 1 && legs[0].endReason == nil && legs[0].ending == nil,
                        "\(members[i])–\(other): \(legs.map(\.endReason))")
            }
        }
    }

    @Test("hostile presence refused, a silent member unanswered, an outsider's offer refused, a forged offer dropped, a non-member's offer answered and bounded")
    func badInputInAMeshOfThree() throws {
        let members = Array(RoomTrial.users.prefix(3))
        var trial = try RoomTrial(configuration: Self.configuration, members: 3, join: .simultaneous, index: 0, seed: 3,
                                  bystanders: ["_ma11ory", "_gh0st", "_trudy"])
        trial.holdFor = .seconds(100)
        trial.intrusions = [
            // Presence lasting 292 million years: beyond the TTL.
            .init(after: .seconds(1), user: "_ma11ory") { [Self.presence("_ma11ory", zone: $0, now: $1, expiresAt: .max)] },
            // A member that keeps its presence fresh and never signals.
            .init(after: .seconds(1), user: "_gh0st") { [Self.presence("_gh0st", zone: $0, now: $1)] },
            .init(after: .seconds(31), user: "_gh0st") { [Self.presence("_gh0st", zone: $0, now: $1,
                                                                         joinedAt: $1.millisecondsSinceEpoch - 30_000)] },
            .init(after: .seconds(61), user: "_gh0st") { [Self.presence("_gh0st", zone: $0, now: $1,
                                                                         joinedAt: $1.millisecondsSinceEpoch - 60_000)] },
            // Not in the share: the store refuses it.
            .init(after: .seconds(2), user: "_eve") { [Self.offer(from: "_eve", to: members[0], zone: $0, now: $1)] },
            // A participant who is not in the call: an offer in the silent member's name, and one of its own.
            .init(after: .seconds(2), user: "_trudy") {
                [Self.offer(from: "_gh0st", to: members[1], zone: $0, now: $1),
                 Self.offer(from: "_trudy", to: members[0], zone: $0, now: $1)]
            },
        ]
        let outcome = trial.run()
        #expect(outcome.allPairs != nil)
        let eve = try #require(trial.intrusionOutcomes[4])
        let eveSaved: Bool = if case .modified(let result) = eve { !result.savedRecords.isEmpty } else { false }
        #expect(!eveSaved, "\(eve)")
        for (i, room) in outcome.rooms.enumerated() {
            let me = members[i]
            #expect(room.counters.memberRecordsRefused >= 1, "\(me)")
            #expect(!room.legs.contains { ["_ma11ory", "_eve"].contains($0.id.remote) }, "\(me)")
            let ghost = room.legs.filter { $0.id.remote == "_gh0st" }
            #expect(ghost.count == 1, "\(me): \(ghost.map(\.endReason))")
            guard case .unanswered(let after)? = ghost.first?.endReason else {
                Issue.record("\(me): the silent member's leg \(ghost.map(\.endReason))")
                continue
            }
            #expect(after <= .seconds(41), "\(me)")
        }
        // The forged offer reached the member it was addressed to: dropped unread.
        #expect(outcome.rooms[1].counters.forgedRecords >= 1)
        // Trudy's own offer: answered (counted), and her leg, which never connects, ends at the leg's bound.
        let first = outcome.rooms[0]
        #expect(first.counters.callersAnswered == 1)
        #expect(outcome.rooms[1].counters.callersAnswered == 0 && outcome.rooms[2].counters.callersAnswered == 0)
        let trudy = first.legs.filter { $0.id.remote == "_trudy" }
        #expect(trudy.count == 1)
        guard case .callEnded(let why)? = trudy.first?.endReason else {
            Issue.record("trudy's leg: \(trudy.map(\.endReason))")
            return
        }
        #expect(why.contains("no connection within 1m 18s") || why.contains("no connection within 78"), "\(why)")
        Self.membersUntouched(outcome, members: members)
    }

    @Test("a 6th member's presence in a mesh of five: ranked beyond the limit, no leg with it, the five untouched")
    func sixthMember() throws {
        let members = RoomTrial.users
        var trial = try RoomTrial(configuration: Self.configuration, members: 5, join: .simultaneous, index: 0, seed: 4,
                                  bystanders: ["_f0x"])
        trial.holdFor = .seconds(30)
        trial.intrusions = [.init(after: .seconds(10), user: "_f0x") { [Self.presence("_f0x", zone: $0, now: $1)] }]
        let outcome = trial.run()
        #expect(outcome.allPairs != nil)
        for (i, room) in outcome.rooms.enumerated() {
            #expect(room.counters.beyondLimit >= 1, "\(members[i])")
            #expect(!room.legs.contains { $0.id.remote == "_f0x" }, "\(members[i])")
        }
        Self.membersUntouched(outcome, members: members)
    }
}
