// The single inbox (spec §5) and its candidate queues (spec §4), one behaviour per test.
import RecordStore
import Testing
import ZoneCore

@testable import SDP
@testable import Signaling

/// Records of the pair (_a11ce, _b0b) in one room, as the inbox sees them.
private struct Pair {
    static let room = try! RoomID("room_inbox001")
    static let key = try! SessionKey(roomID: room, users: "_a11ce", "_b0b")
    static let names = SignalRecordNames(sessionKey: key)
    static let zone = room.zoneID(owner: "_a11ce")
    static func envelope(_ type: EnvelopeType, epoch: Int64, owner: String = "_a11ce", ufrag: String = "ufA1",
                         tag: String? = nil) -> Record {
        let description = SignalFixtures.offerDescription(ufrag: ufrag)
        var record = SignalEnvelope(
            sessionKey: key.rawValue, roomID: room.rawValue, callEpoch: CallEpoch(milliseconds: epoch),
            ownerUserID: owner, envelopeType: type,
            description: type == .offer ? description : try! SessionDescription.answer(
                to: SignalFixtures.offerDescription(ufrag: "them"),
                SilentVideoConfiguration(sessionID: 1, iceCredentials: SignalFixtures.credentials(ufrag), dtls: nil)),
            updatedAtMs: epoch
        ).record(name: names.envelope(epoch: CallEpoch(milliseconds: epoch), type: type), in: zone)
        record.recordChangeTag = tag ?? "t-\(record.id.recordName)"
        return record
    }

    static func chunk(epoch: Int64, seq: Int64, owner: String = "_a11ce", ufrag: String = "ufA1", octet: UInt8 = 1,
                      candidateUfrag: String? = nil, eoc: Bool = false) -> Record {
        var record = SignalIceChunk(
            sessionKey: key.rawValue, roomID: room.rawValue, callEpoch: CallEpoch(milliseconds: epoch),
            ownerUserID: owner,
            candidates: eoc ? [] : [SignalFixtures.candidate(octet: octet, ufrag: candidateUfrag ?? ufrag)],
            endOfCandidates: eoc, chunkCreatedAtMs: epoch, seq: seq, ufrag: ufrag
        ).record(name: names.iceChunk(epoch: CallEpoch(milliseconds: epoch), owner: owner, uuid: "s\(seq)u\(ufrag)"),
                 in: zone)
        record.recordChangeTag = "t-\(record.id.recordName)"
        return record
    }

    static func session(epoch: Int64, by user: String = "_a11ce") -> Record {
        var record = SignalSession(sessionKey: key.rawValue, roomID: room.rawValue, userID: user,
                                   otherUserID: key.otherUser(than: user), callEpoch: CallEpoch(milliseconds: epoch),
                                   updatedAtMs: epoch)
            .record(over: nil, name: names.session, in: zone)
        record.recordChangeTag = "t-ss-\(epoch)"
        return record
    }

    /// B's inbox: it receives A's records.
    static func inbox(_ protections: SignalingProtections = .all) -> SignalInbox {
        SignalInbox(myUserID: "_b0b", remoteUserID: "_a11ce", sessionKey: key.rawValue, protections: protections)
    }
}

private func e(_ ms: Int64) -> CallEpoch { CallEpoch(milliseconds: ms) }

/// The candidates in deliveries, as "epoch:octet" strings, in order (octet 0 for an empty eoc batch).
private func candidates(_ deliveries: [SignalInbox.Delivery]) -> [String] {
    deliveries.flatMap { d -> [String] in
        guard case .candidates(let epoch, _, let list, let eoc) = d else { return [] }
        let items = list.map { "\(epoch):\($0.address.description.split(separator: ".").last!)" }
        return eoc && list.isEmpty ? ["\(epoch):eoc"] : items
    }
}

@Suite("Signal inbox")
struct SignalInboxTests {
    @Test func aVersionIsDeliveredOnceWhateverPathBringsIt() {
        var inbox = Pair.inbox()
        let offer = Pair.envelope(.offer, epoch: 10)
        #expect(inbox.ingest([offer]).deliveries.count == 1)
        #expect(inbox.ingest([offer, offer]).deliveries.isEmpty)
        #expect(inbox.counters.duplicates == 2 && inbox.counters.received == 3)
        // A new version of the same record (a new change tag) is new.
        var again = offer
        again.recordChangeTag = "newer"
        #expect(inbox.ingest([again]).deliveries.count == 1)
    }

    /// A version is its record's whole name and tag, though only the tag and the name's length are
    /// hashed (the whole name too when there is no tag): same tag and same-length names are still
    /// two versions, and without tags, names alone tell them apart.
    @Test func versionsWithOneTagOrNoneAreToldApartByName() {
        var inbox = Pair.inbox()
        var first = Pair.chunk(epoch: 10, seq: 1, octet: 1), second = Pair.chunk(epoch: 10, seq: 2, octet: 2)
        #expect(first.id.recordName.utf8.count == second.id.recordName.utf8.count)
        #expect(first.id.recordName != second.id.recordName)
        first.recordChangeTag = "same"
        second.recordChangeTag = "same"
        _ = inbox.ingest([first, second, first])
        #expect(inbox.counters.received == 3 && inbox.counters.duplicates == 1)

        var untagged = Pair.inbox()
        first.recordChangeTag = nil
        second.recordChangeTag = nil
        _ = untagged.ingest([first, second, second])
        #expect(untagged.counters.received == 3 && untagged.counters.duplicates == 1)
    }

    @Test func ownRecordsAreObservedNeverDelivered() {
        var inbox = Pair.inbox()
        let output = inbox.ingest([Pair.envelope(.answer, epoch: 10, owner: "_b0b"),
                                   Pair.session(epoch: 10, by: "_b0b")])
        #expect(output.deliveries.isEmpty && inbox.counters.ownRecords == 2)
        #expect(output.observed.map(\.ownerUserID) == ["_b0b"])  // sessions are never collected
    }

    @Test func ownChunkVersionsTheStoreSavedAreNotedUnreadOthersNamingUsAreChecked() {
        // A's inbox: chunks owned by _a11ce are its own.
        var inbox = SignalInbox(myUserID: "_a11ce", remoteUserID: "_b0b", sessionKey: Pair.key.rawValue)
        // A version the store saved for A is taken from its fields: even a payload that could not be
        // read (never the case for a save of ours) is not looked at.
        var saved = Pair.chunk(epoch: 10, seq: 0)
        saved.fields[SignalField.candidate] = .string("{not a batch")
        inbox.ownChunkSaved(saved, epoch: e(10))
        // A record that only names A as its owner is read, and refused when it cannot be.
        var claimed = Pair.chunk(epoch: 10, seq: 1)
        claimed.fields[SignalField.candidate] = .string("{not a batch")
        let output = inbox.ingest([saved, claimed])
        #expect(inbox.counters.ownRecords == 1 && inbox.counters.malformed == 1)
        #expect(output.observed.map(\.id.recordName) == [saved.id.recordName])
        // A later version of the saved record (someone saved over it) is read again, and refused.
        var over = saved
        over.recordChangeTag = "written-by-someone-else"
        _ = inbox.ingest([over])
        #expect(inbox.counters.ownRecords == 1 && inbox.counters.malformed == 2)
        // Saved versions of epochs that fall below the floor are forgotten: read like any other.
        var old = Pair.chunk(epoch: 10, seq: 2)
        old.fields[SignalField.candidate] = .string("{not a batch")
        inbox.ownChunkSaved(old, epoch: e(10))
        inbox.raiseFloor(to: e(20))
        _ = inbox.ingest([old])
        #expect(inbox.counters.ownRecords == 1 && inbox.counters.malformed == 3)
    }

    @Test func othersSessionsAndUnknownTypesAreIgnored() {
        var inbox = Pair.inbox()
        var foreign = Pair.envelope(.offer, epoch: 10)
        foreign.fields[SignalField.sessionKey] = .string("room_inbox001#_a11ce#_carol")
        let third = Pair.envelope(.offer, epoch: 11, owner: "_carol")
        let message = Record(recordType: "Message", id: RecordID(recordName: "m1", zoneID: Pair.zone),
                             recordChangeTag: "1")
        let output = inbox.ingest([foreign, third, message, Room(roomID: Pair.room, name: "r").record(in: Pair.zone)])
        #expect(output.deliveries.isEmpty)
        #expect(inbox.counters.foreignSession == 2 && inbox.counters.unrelated == 2)
    }

    @Test func recordsBelowTheFloorAreDroppedAndCounted() {
        var inbox = Pair.inbox()
        inbox.raiseFloor(to: e(20))
        let output = inbox.ingest([Pair.envelope(.offer, epoch: 10), Pair.chunk(epoch: 10, seq: 0),
                                   Pair.session(epoch: 10), Pair.envelope(.offer, epoch: 20)])
        #expect(output.deliveries.count == 1 && inbox.counters.staleDrops == 3)
        #expect(output.observed.count == 3)  // stale records are still catalogued for GC
        inbox.raiseFloor(to: e(15))  // floors never go down
        #expect(inbox.floor == e(20))
    }

    @Test func deliveriesComeSessionsFirstThenDescriptionsByEpoch() {
        var inbox = Pair.inbox()
        let output = inbox.ingest([Pair.envelope(.answer, epoch: 30), Pair.envelope(.offer, epoch: 40),
                                   Pair.envelope(.offer, epoch: 30), Pair.session(epoch: 40)])
        let order = output.deliveries.map { d -> String in
            switch d {
            case .session(let s, _): return "S\(s.callEpoch)"
            case .envelope(let e, _): return "\(e.envelopeType)\(e.callEpoch)"
            case .candidates: return "C"
            }
        }
        #expect(order == ["S40", "offer30", "answer30", "offer40"])
    }

    @Test func earlyCandidatesWaitForTheirDescriptionThenFlowInOrder() {
        var inbox = Pair.inbox()
        let held = inbox.ingest([Pair.chunk(epoch: 10, seq: 1, octet: 2), Pair.chunk(epoch: 10, seq: 0, octet: 1)])
        #expect(held.deliveries.isEmpty && inbox.counters.earlyCandidateHolds == 2)
        #expect(candidates(inbox.remoteDescriptionApplied(epoch: e(10), ufrag: "ufA1")) == ["10:1", "10:2"])
        #expect(candidates(inbox.ingest([Pair.chunk(epoch: 10, seq: 2, octet: 3)]).deliveries) == ["10:3"])
    }

    @Test func aGapInSeqHoldsLaterChunks() {
        var inbox = Pair.inbox()
        _ = inbox.remoteDescriptionApplied(epoch: e(10), ufrag: "ufA1")
        #expect(inbox.ingest([Pair.chunk(epoch: 10, seq: 2, octet: 3)]).deliveries.isEmpty)
        #expect(inbox.ingest([Pair.chunk(epoch: 10, seq: 1, octet: 2)]).deliveries.isEmpty)
        #expect(inbox.counters.outOfOrderHolds == 2)
        let flow = inbox.ingest([Pair.chunk(epoch: 10, seq: 0, octet: 1)])
        #expect(candidates(flow.deliveries) == ["10:1", "10:2", "10:3"])
        // A seq already handed over is a duplicate even in a new record version.
        var replay = Pair.chunk(epoch: 10, seq: 1, octet: 2)
        replay.recordChangeTag = "again"
        #expect(inbox.ingest([replay]).deliveries.isEmpty && inbox.counters.duplicates == 1)
    }

    @Test func nothingAfterEndOfCandidates() {
        var inbox = Pair.inbox()
        _ = inbox.remoteDescriptionApplied(epoch: e(10), ufrag: "ufA1")
        // seq 2 arrives early, then the end at seq 1 makes it void.
        #expect(inbox.ingest([Pair.chunk(epoch: 10, seq: 2, octet: 3)]).deliveries.isEmpty)
        let flow = inbox.ingest([Pair.chunk(epoch: 10, seq: 0, octet: 1), Pair.chunk(epoch: 10, seq: 1, eoc: true)])
        #expect(candidates(flow.deliveries) == ["10:1", "10:eoc"])
        #expect(inbox.ingest([Pair.chunk(epoch: 10, seq: 3, octet: 4)]).deliveries.isEmpty)
        #expect(inbox.counters.afterEndOfCandidates == 2)
    }

    @Test func aChunkOfAnotherGenerationIsDroppedAndItsSeqConsumed() {
        var inbox = Pair.inbox()
        _ = inbox.remoteDescriptionApplied(epoch: e(10), ufrag: "ufA1")
        let flow = inbox.ingest([Pair.chunk(epoch: 10, seq: 0, ufrag: "zzzz", octet: 9),
                                 Pair.chunk(epoch: 10, seq: 1, octet: 2),
                                 Pair.chunk(epoch: 10, seq: 2, octet: 3, candidateUfrag: "yyyy")])
        // seq 0: the chunk's ufrag is wrong; seq 2: its candidate names another ufrag.
        #expect(candidates(flow.deliveries) == ["10:2"])
        #expect(inbox.counters.ufragMismatches == 2)
    }

    @Test func raisingTheFloorDiscardsHeldChunks() {
        var inbox = Pair.inbox()
        _ = inbox.ingest([Pair.chunk(epoch: 10, seq: 0), Pair.chunk(epoch: 10, seq: 1), Pair.chunk(epoch: 30, seq: 0)])
        inbox.raiseFloor(to: e(20))
        #expect(inbox.counters.staleDrops == 2)
        #expect(inbox.remoteDescriptionApplied(epoch: e(10), ufrag: "ufA1").isEmpty)
        #expect(candidates(inbox.remoteDescriptionApplied(epoch: e(30), ufrag: "ufA1")) == ["30:1"])
    }

    @Test func withoutProtectionsEverythingPassesAsTheReferenceDesignDid() {
        var inbox = Pair.inbox(.none)
        inbox.raiseFloor(to: e(20))
        let offer = Pair.envelope(.offer, epoch: 10)
        let flow = inbox.ingest([offer, offer, Pair.chunk(epoch: 10, seq: 5, ufrag: "zzzz", octet: 7)])
        #expect(flow.deliveries.count == 3)
        #expect(candidates(flow.deliveries) == ["10:7"])
        #expect(inbox.counters.duplicates == 1 && inbox.counters.staleDrops == 0)
    }
}
