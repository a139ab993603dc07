// Group calls converge (docs/PROTOCOL.md §11): members joining together, one joining a connected
// mesh, each pair negotiated once by the later joiner, records routed to their pair before parsing,
// the legs' first lookups answered from the feed and each publication atomic, each leg's `b=AS` share.
import RecordStore
import Testing
import ZoneCore

@testable import SDP
@testable import Signaling

@Suite("Mesh convergence")
struct MeshConvergenceTests {
    static let users = ["_u1", "_u2", "_u3", "_u4", "_u5"]

    /// Five members joining in the same step: all ten pairs connect, each on the one epoch its
    /// later joiner offered (no glare, no fallback, no reset), and no leg sees another pair's record.
    @Test func fiveMembersJoiningTogetherConnectEveryPair() throws {
        let lab = try MeshLab()
        let group = try Self.users.map { try lab.add($0) }
        lab.join(group)
        #expect(lab.run(for: .seconds(20)) { lab.meshConnected(group) })
        for (i, a) in group.enumerated() {
            #expect(a.room.legIDs.count == 4)
            #expect(a.room.counters.fallbackOffers == 0)
            for b in group[(i + 1)...] {
                let na = try #require(a.room.negotiator(of: b.userID))
                let nb = try #require(b.room.negotiator(of: a.userID))
                #expect(na.counters.epochsStarted + nb.counters.epochsStarted == 1, "\(a.userID)–\(b.userID)")
                #expect(na.counters.epochsAbandoned + nb.counters.epochsAbandoned == 0)
                #expect(na.counters.resets + nb.counters.resets == 0)
                // The later joiner offered.
                let aLater = JoinOrder(b.room.me) < JoinOrder(a.room.me)
                #expect(na.roles.makesFirstOffer == aLater && nb.roles.makesFirstOffer == !aLater)
                for n in [na, nb] {
                    #expect(n.inbox.counters.foreignSession == 0 && n.inbox.counters.unrelated == 0)
                    #expect(n.inbox.counters.malformed == 0)
                }
            }
        }
    }

    /// A fifth member joining a connected mesh of four offers to each of them; the six pairs of
    /// the four start no new epoch.
    @Test func aFifthMemberJoiningStartsNoEpochOfTheOtherPairs() throws {
        var configuration = MeshLab.standard
        configuration.uplinkKbps = 2_000
        let lab = try MeshLab(configuration: configuration)
        let four = try Self.users.prefix(4).map { try lab.add($0) }
        lab.join(four)
        #expect(lab.run(for: .seconds(20)) { lab.meshConnected(four) })
        func epochs() -> [Int] {
            four.flatMap { a in four.compactMap { a.room.negotiator(of: $0.userID)?.counters.epochsStarted } }
        }
        let before = epochs()
        lab.run(for: .seconds(2))
        let fifth = try lab.add(Self.users[4])
        lab.join([fifth])
        #expect(lab.run(for: .seconds(20)) { lab.meshConnected(four + [fifth]) })
        #expect(epochs() == before)
        for start in fifth.startedLegs {
            #expect(start.makesFirstOffer, "\(start.leg)")
            // Five members: each leg's share of the uplink is a quarter.
            #expect(start.configuration.bandwidths == [SDPBandwidth(type: "AS", value: 500)])
            let offer = try #require(fifth.localDescriptions(toward: start.leg.remote).first)
            #expect(offer.media.first?.bandwidths == [SDPBandwidth(type: "AS", value: 500)])
        }
        for member in four {
            let leg = try #require(member.startedLegs.last { $0.leg.remote == fifth.userID })
            #expect(!leg.makesFirstOffer)
        }
    }

    /// The joiner's three legs take their session records from the zone it has just read (no lookup
    /// request, no round trip: docs/PROTOCOL.md §11.3); each pair's offer and session record goes as one
    /// atomic request of its own.
    @Test func firstLookupsComeFromTheFeedAndEachPublicationIsAtomic() throws {
        let lab = try MeshLab()
        let four = try Self.users.prefix(4).map { try lab.add($0) }
        lab.join(Array(four.prefix(3)))
        #expect(lab.run(for: .seconds(20)) { lab.meshConnected(Array(four.prefix(3))) })
        lab.join([four[3]])
        #expect(lab.run(for: .seconds(20)) { lab.meshConnected(four) })
        let joiner = four[3]
        let lookups = joiner.storeRequests.filter { request in
            if case .lookupRecords = request.operation { true } else { false }
        }
        #expect(lookups.isEmpty)
        #expect(joiner.room.counters.lookupsFromFeed == 3)
        let publications = joiner.storeRequests.compactMap { request -> ModifyRecordsRequest? in
            if case .modifyRecords(let m) = request.operation, m.atomic { m } else { nil }
        }
        #expect(publications.count == 3)
        for publication in publications {
            #expect(publication.saves.map(\.recordType) == [SignalRecordType.envelope, SignalRecordType.session])
            let keys = Set(publication.saves.compactMap { $0.fields[SignalField.sessionKey]?.stringValue })
            #expect(keys.count == 1)
        }
    }
}
