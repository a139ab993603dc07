// Calls of two in a room's group call (docs/PROTOCOL.md §11.6). A peer running a call of two
// (`zonertc peer --remote`, `CallSignaling`) writes no presence record. When it has the lower user ID
// it offers first, and its offer starts a leg here (`+Routing`). When we have the lower ID it waits
// for our offer and writes nothing until then; what it did write is its `RoomMember` record, on
// setting the room up. A client that joins group calls says so in that record (`groupCallVersion`);
// so a fresh `RoomMember` record without it, of a user with no presence record, is taken for such a
// peer: after a grace period and one more finished fetch we call it by the roles of two.
import RecordStore
import ZoneCore

/// A user whose fresh `RoomMember` record we saw without a presence record.
struct PairPeerCandidate: Hashable, Sendable {
    /// When to look again (nil: waiting for a fetch to finish).
    var due: Instant?
    /// The count of finished fetches to wait for.
    var fetchesFinished: Int?
}

extension RoomSignaling {
    /// A `RoomMember` record: a candidate when it is recent, its user's own, of a client that makes
    /// only calls of two, and we offer first by the roles of two.
    mutating func roomMemberSeen(_ record: Record, now: Instant) {
        guard let member = try? RoomMember(decoding: record), member.groupCallVersion == nil else { return }
        let user = member.userID
        let window = now.millisecondsSinceEpoch.subtractingSaturated(configuration.pairPeerWindow.wholeMilliseconds)
        guard user != myUserID, SessionKey.precedes(myUserID, user), (try? SessionKey.validate(userID: user)) != nil,
              record.id.recordName == SignalRecordNames.member(user),
              let modified = record.modified, modified.userRecordName == user, modified.timestamp >= window,
              legs[user] == nil, !roster.isMember(user), pairPeers[user] == nil
        else { return }
        pairPeers[user] = PairPeerCandidate(due: now + configuration.pairPeerGrace)
    }

    /// Candidates whose grace is over ask for a fetch; once a fetch begun after that has finished, a
    /// candidate still without a presence record (or a leg) is called.
    mutating func pairPeerTimers(now: Instant, _ out: inout OutputQueue<Action>) {
        guard state == .joined else { return }
        for user in pairPeers.keys.sorted() {
            guard var candidate = pairPeers[user] else { continue }
            if legs[user] != nil || roster.isMember(user) {
                pairPeers[user] = nil
                continue
            }
            if let needed = candidate.fetchesFinished {
                guard fetchesFinished >= needed else { continue }
                pairPeers[user] = nil
                if let rank = rankBeyondLimit(user, now: now) {
                    reportBeyondLimit(user, session: "pair", rank: rank, &out)
                    continue
                }
                counters.pairPeersCalled += 1
                startLeg(user, memberSession: nil, makesFirstOffer: nil, now: now, &out)
            } else if let due = candidate.due, due <= now {
                // A fetch in flight may have been answered before the member's presence was saved: wait
                // for the one after it.
                candidate.fetchesFinished = fetchesFinished + (paths.contains(where: \.isFetching) ? 2 : 1)
                candidate.due = nil
                pairPeers[user] = candidate
                fetchNow(now: now, &out)
            }
        }
    }
}
