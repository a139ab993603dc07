// What fetches bring, routed (docs/PROTOCOL.md §11.3): presence records first (they decide which
// legs exist), then `RoomMember` records (calls of two), then signal records, each by its
// `sessionKey` field to its pair's leg before anything else of it is read. A signal record of a pair
// of ours without a leg starts one when it is an offer its owner wrote (the offer proves presence);
// records of other pairs are kept by name only, for collection. A record whose last writer is not
// the user it names as its owner is dropped unread.
import RecordStore
import SDP
import ZoneCore

extension RoomSignaling {
    /// Records a fetch (or a test) delivered: held while joining, routed once joined.
    mutating func delivered(_ records: [Record], deleted: [DeletedRecord], now: Instant,
                            _ out: inout OutputQueue<Action>) {
        switch state {
        case .idle, .leaving, .left:
            return
        case .joining:
            notePairRecords(records, deleted: deleted)
            var kept = records
            if heldRecords + records.count > Self.maxHeldRecords {
                counters.heldOverflow += records.count
                pairRecords.lose()
                kept = []
            }
            heldRecords += kept.count
            held.append((kept, deleted))
        case .joined:
            notePairRecords(records, deleted: deleted)
            routeMembers(records, deleted: deleted, now: now, &out)
            applyRoster(now: now, &out)
            routeSignals(records, deleted: deleted, now: now, &out)
            pairPeerTimers(now: now, &out)
        }
    }

    /// Keeps the session records and envelopes of our pairs (by the session key field alone, as routing
    /// does) for the legs' first lookups.
    private mutating func notePairRecords(_ records: [Record], deleted: [DeletedRecord]) {
        guard pairRecords.isWhole else { return }
        for record in records
        where record.recordType == SignalRecordType.session || record.recordType == SignalRecordType.envelope {
            guard let key = record.fields[SignalField.sessionKey]?.stringValue,
                  PairCollector.pair(key, roomID: binding.roomID, includes: myUserID) else { continue }
            pairRecords.take(record, writtenByOwner: writtenByOwner(record))
        }
        pairRecords.forget(deleted.map(\.id))
    }

    /// Presence records and their deletions, in the order they came.
    mutating func routeMembers(_ records: [Record], deleted: [DeletedRecord], now: Instant,
                               _ out: inout OutputQueue<Action>) {
        for record in records where record.recordType == SignalRecordType.callMember {
            memberRecord(record, now: now, &out)
        }
        for deletion in deleted where Self.isMemberDeletion(deletion) {
            memberDeleted(deletion.id, now: now, &out)
        }
    }

    private static func isMemberDeletion(_ deletion: DeletedRecord) -> Bool {
        deletion.recordType == SignalRecordType.callMember
            || deletion.recordType.isEmpty && deletion.id.recordName.hasPrefix("CM_")
    }

    /// `RoomMember` records (calls of two), then signal records by pair, then the deletions of signal
    /// records; each leg gets its share in one step.
    mutating func routeSignals(_ records: [Record], deleted: [DeletedRecord], now: Instant,
                               _ out: inout OutputQueue<Action>) {
        var signals: [(record: Record, key: String)] = []
        for record in records {
            switch record.recordType {
            case SignalRecordType.roomMember:
                roomMemberSeen(record, now: now)
            case SignalRecordType.session, SignalRecordType.envelope, SignalRecordType.iceChunk:
                guard let key = record.fields[SignalField.sessionKey]?.stringValue else {
                    // Every reader drops it; said once, here, instead of by every leg.
                    out.append(.rejected(remote: nil, .record(SignalRecordError(
                        .missingField, recordName: record.id.recordName, field: SignalField.sessionKey,
                        detail: "missing or not a STRING: the record belongs to no pair"))))
                    continue
                }
                signals.append((record, key))
            default:
                continue
            }
        }
        // Offers that start legs first: a pair's chunks may come before its offer in one batch.
        for (record, key) in signals where legByKey[key] == nil { callerOffer(record, key: key, now: now, &out) }
        var perLeg: [String: [Record]] = [:]
        for (record, key) in signals {
            guard let remote = legByKey[key] else {
                counters.otherPairRecords += 1
                pairs.observe(record, key: key)
                continue
            }
            guard writtenByOwner(record) else {
                refuseForged(record, remote: remote, &out)
                continue
            }
            counters.routedRecords += 1
            perLeg[remote, default: []].append(record)
        }
        var deletedPerLeg: [String: [RecordID]] = [:]
        var signalDeletions: [RecordID] = []
        for deletion in deleted where !Self.isMemberDeletion(deletion) {
            signalDeletions.append(deletion.id)
            for (remote, leg) in legs where leg.owns(deletion.id.recordName) {
                deletedPerLeg[remote, default: []].append(deletion.id)
            }
        }
        pairs.forget(signalDeletions)
        for remote in Set(perLeg.keys).union(deletedPerLeg.keys).sorted() {
            negotiate(remote, .recordsFetched(perLeg[remote] ?? [], deleted: deletedPerLeg[remote] ?? []),
                      now: now, &out)
        }
    }

    /// A signal record of a pair without a leg here: when it is a recent offer to us that its owner
    /// wrote (after our last leg with it ended), a leg starts (we answer: the offer proves its writer
    /// wants the call, with or without a presence record — a member we have not seen yet, or a
    /// call-of-two peer).
    private mutating func callerOffer(_ record: Record, key: String, now: Instant, _ out: inout OutputQueue<Action>) {
        guard record.recordType == SignalRecordType.envelope,
              record.fields[SignalField.envelopeType]?.stringValue == EnvelopeType.offer.rawValue,
              let owner = record.fields[SignalField.ownerUserId]?.stringValue, owner != myUserID,
              PairCollector.other(in: key, roomID: binding.roomID, than: myUserID) == owner
        else { return }
        var window = now.millisecondsSinceEpoch.subtractingSaturated(configuration.pairPeerWindow.wholeMilliseconds)
        if let ended = legEndedAtMs[owner] { window = max(window, ended) }
        guard record.modified.map({ $0.timestamp >= window }) ?? true else { return }
        guard writtenByOwner(record) else {
            refuseForged(record, remote: nil, &out)
            return
        }
        if let rank = rankBeyondLimit(owner, now: now) {
            reportBeyondLimit(owner, session: roster.members[owner]?.memberSession ?? "caller", rank: rank, &out)
            return
        }
        if roster.members[owner] == nil { counters.callersAnswered += 1 }
        startLeg(owner, memberSession: roster.members[owner]?.memberSession, makesFirstOffer: false, now: now, &out)
    }

    /// Whether `record`'s last writer is the user it names as its writer: the owner of an envelope or
    /// a chunk, the `userId` of a session record. A record without stamps (made by a test, never by a
    /// store) is let through.
    func writtenByOwner(_ record: Record) -> Bool {
        guard let writer = record.modified?.userRecordName else { return true }
        let field = record.recordType == SignalRecordType.session ? SignalField.userId : SignalField.ownerUserId
        return record.fields[field]?.stringValue == writer
    }

    private mutating func refuseForged(_ record: Record, remote: String?, _ out: inout OutputQueue<Action>) {
        counters.forgedRecords += 1
        let field = record.recordType == SignalRecordType.session ? SignalField.userId : SignalField.ownerUserId
        let claimed = record.fields[field]?.stringValue ?? "?"
        let writer = record.modified?.userRecordName ?? "?"
        out.append(.rejected(remote: remote, .record(SignalRecordError(
            .writtenByAnotherUser, recordName: record.id.recordName, field: field,
            detail: "names \(SDPGrammar.quoted(claimed, limit: 40)) but was written by "
                + SDPGrammar.quoted(writer, limit: 40)))))
    }

    /// A presence record: checked, then taken into the roster (a new member session ends the old leg).
    private mutating func memberRecord(_ record: Record, now: Instant, _ out: inout OutputQueue<Action>) {
        let member: CallMember
        do {
            member = try CallMember.checked(record, roomID: binding.roomID, policy: configuration.presence)
        } catch {
            counters.memberRecordsRefused += 1
            out.append(.rejected(remote: nil, .record(error)))
            return
        }
        guard member.userID != myUserID else { return }
        switch roster.take(member) {
        case .joined:
            counters.membersJoined += 1
        case .rejoined(_, let previous):
            counters.membersJoined += 1
            counters.rejoins += 1
            if let leg = legs[member.userID], leg.memberSession == nil || leg.memberSession == previous.memberSession {
                endLeg(member.userID, .remoteRejoined, now: now, &out)
            }
        case .refreshed, .unchanged:
            break
        }
    }

    /// A presence record was deleted: ours (someone removed us) or a member's (it left).
    private mutating func memberDeleted(_ id: RecordID, now: Instant, _ out: inout OutputQueue<Action>) {
        if id.recordName == presence.recordID.recordName {
            if presence.deletedByOthers(now: now) == .removed { leave(.removed, now: now, &out) }
            return
        }
        guard let member = roster.remove(recordName: id.recordName) else { return }
        counters.membersLeft += 1
        endLeg(member.userID, .remoteLeft, now: now, &out)
    }
}
