// Membership of a room's group call (docs/PROTOCOL.md §11.1, §11.4–11.5): joining (our presence
// saved and the room's records read before any leg starts), the roster deciding the legs and who
// offers first in each, the room's limit, members expiring, the periodic collection of dead pairs,
// removing a member, and leaving.
import RecordStore
import ZoneCore

extension RoomSignaling {
    mutating func join(now: Instant, _ out: inout OutputQueue<Action>) {
        guard state == .idle else { return }
        state = .joining
        pairRecords.start(fromTheBeginning: !paths.isEmpty && paths.allSatisfy { $0.zoneToken == nil })
        sendPresence(presence.join(now: now), &out)
        for i in paths.indices { sync(i, .start, now, &out) }
        // Without paths (tests feeding records by hand) there is nothing to catch up on.
        if paths.isEmpty { caughtUp = true }
    }

    mutating func sendPresence(_ request: ModifyRecordsRequest, _ out: inout OutputQueue<Action>) {
        let store = StoreRequest(scope: binding.scope, .modifyRecords(request))
        requests.count(store)
        counters.presenceSaves += 1
        out.append(.store(store, origin: .presence))
    }

    mutating func presenceAnswered(_ outcome: StoreOutcome, now: Instant, _ out: inout OutputQueue<Action>) {
        let failuresBefore = presence.failures
        let (result, again) = presence.answered(outcome, now: now)
        counters.presenceFailures += presence.failures - failuresBefore
        if let again { sendPresence(again, &out) }
        switch result {
        case .none: break
        case .joined: joinIfReady(now: now, &out)
        case .removed: leave(.removed, now: now, &out)
        case .failed(let error): leave(.presenceFailed(error), now: now, &out)
        }
    }

    /// Joined once our presence is saved and the first fetch has finished: the roster is then
    /// whole, so our rank (and who offers to whom) is known before any leg starts. What came while
    /// joining is routed now: presence first, then everything else.
    mutating func joinIfReady(now: Instant, _ out: inout OutputQueue<Action>) {
        guard state == .joining, caughtUp, presence.phase == .present else { return }
        state = .joined
        joinedAt = now
        out.append(.joined)
        nextSweep = now + sweepInterval
        let early = held
        held = []
        heldRecords = 0
        for batch in early { routeMembers(batch.records, deleted: batch.deleted, now: now, &out) }
        applyRoster(now: now, &out)
        for batch in early { routeSignals(batch.records, deleted: batch.deleted, now: now, &out) }
        pairPeerTimers(now: now, &out)
        // The settling fetch: a member whose presence save was still on its way when our first fetch
        // was read (it joined at the same moment) is seen now rather than on its push, seconds later.
        // Legs that started above have already asked for the same fetch.
        for i in paths.indices where !paths[i].isFetching { sync(i, .fetchNow, now, &out) }
    }

    /// How often dead pairs and long-expired members are collected: the legs' garbage-collection interval.
    var sweepInterval: Duration { configuration.signaling.negotiator.garbageCollection?.interval ?? .seconds(60) }

    /// Brings the legs in line with the members present: this peer leaves when ranked beyond the
    /// limit; a member within it gets a leg (the later joiner of the two offers first), one beyond it none.
    mutating func applyRoster(now: Instant, _ out: inout OutputQueue<Action>) {
        guard state == .joined else { return }
        let ranked = members(now: now)
        if ranked != lastRoster {
            lastRoster = ranked
            out.append(.roster(ranked))
        }
        let limit = configuration.maxMembers
        if let mine = ranked.firstIndex(where: { $0.userID == myUserID }), mine + 1 > limit {
            leave(.roomFull(rank: mine + 1, limit: limit), now: now, &out)
            return
        }
        let myOrder = JoinOrder(presence.member)
        for (index, member) in ranked.enumerated() where member.userID != myUserID {
            let user = member.userID
            if index + 1 > limit {
                endLeg(user, .beyondLimit(rank: index + 1, limit: limit), now: now, &out)
                reportBeyondLimit(user, session: member.memberSession, rank: index + 1, &out)
                continue
            }
            if legs[user] != nil {
                if legs[user]?.memberSession == nil { legs[user]?.memberSession = member.memberSession }
                continue
            }
            // A member session whose leg with us ended unanswered or by itself gets a new one only by offering.
            guard !finishedSessions.contains("\(user) \(member.memberSession)") else { continue }
            startLeg(user, memberSession: member.memberSession,
                     makesFirstOffer: myOrder.offersFirst(to: JoinOrder(member)), now: now, &out)
        }
    }

    /// The rank `user` would have beyond the limit, or nil when it may have a leg: a present member
    /// by its place in the join order, anyone else by the legs already there.
    func rankBeyondLimit(_ user: String, now: Instant) -> Int? {
        let limit = configuration.maxMembers
        if roster.isPresent(user, now: now) {
            let rank = (members(now: now).firstIndex { $0.userID == user } ?? 0) + 1
            return rank > limit ? rank : nil
        }
        return legs.count + 2 > limit ? legs.count + 2 : nil
    }

    /// Reports `user` beyond the limit, once per member session.
    mutating func reportBeyondLimit(_ user: String, session: String, rank: Int, _ out: inout OutputQueue<Action>) {
        guard reportedBeyondLimit.insert("\(user) \(session)").inserted else { return }
        counters.beyondLimit += 1
        out.append(.beyondLimit(userID: user, rank: rank, limit: configuration.maxMembers))
    }

    /// Members whose presence ran out: no new leg with them; a leg not (or no longer) connected ends.
    /// A connected leg stays until its ICE fails (the member may only have lost the store). Then the
    /// periodic collection.
    mutating func membershipTimers(now: Instant, _ out: inout OutputQueue<Action>) {
        for member in roster.newlyExpired(now: now) {
            counters.membersExpired += 1
            guard let leg = legs[member.userID], leg.memberSession == member.memberSession else { continue }
            let connected = if case .connected = leg.negotiator.state { true } else { false }
            if !connected || leg.iceFailed != nil { endLeg(member.userID, .remoteExpired, now: now, &out) }
        }
        applyRoster(now: now, &out)
        if let bound = configuration.aloneTimeout, !everHadLeg, let joinedAt, now >= joinedAt + bound {
            leave(.alone(after: bound), now: now, &out)
            return
        }
        if let due = nextSweep, due <= now { sweep(now: now) }
    }

    /// Deletes the records of members expired for longer than a TTL that have no leg here (anyone may:
    /// a member that comes back finds its record gone and saves it again, §11.1) and a bounded number
    /// of records of pairs whose users are gone.
    mutating func sweep(now: Instant) {
        nextSweep = now + sweepInterval
        for member in roster.longExpired(now: now, grace: configuration.presence.ttl) where legs[member.userID] == nil {
            _ = roster.remove(recordName: member.recordName)
            cleanup.append(RecordID(recordName: member.recordName, zoneID: binding.zone))
        }
        let room = max(0, LegRequestBatch.maxOperations - cleanup.count)
        let gone = goneUsers.union([myUserID])
        cleanup += pairs.take(limit: room) { users in users.isSubset(of: gone) }
    }

    /// Users who have left the call (presence deleted or expired) and have no leg here.
    var goneUsers: Set<String> {
        roster.departed.filter { legs[$0] == nil }
    }

    /// The room's owner removes `user`: its presence record is deleted (the member sees that and
    /// leaves; the others end their legs with it). Anyone else's request is ignored.
    mutating func remove(_ user: String, _ out: inout OutputQueue<Action>) {
        guard state == .joined, binding.scope == .private, user != myUserID else { return }
        cleanup.append(RecordID(recordName: SignalRecordNames.callMember(user), zoneID: binding.zone))
    }

    /// Leaves the room: every leg ends (each deleting our records of its pair), the records of every
    /// pair of ours go (session records included: no leg of ours will read them again), so do the
    /// records of other pairs whose users are gone, and our presence record last of all.
    mutating func leave(_ reason: LeaveReason, now: Instant, _ out: inout OutputQueue<Action>) {
        switch state {
        case .idle:
            state = .left(reason)
            out.append(.left(reason))
            return
        case .joining, .joined:
            break
        case .leaving, .left:
            return
        }
        state = .leaving(reason)
        for remote in legs.keys.sorted() { endLeg(remote, .localLeave, now: now, &out) }
        pairPeers = [:]
        held = []
        let me = myUserID
        cleanup += pairs.take(limit: .max) { users in users.contains(me) }
        let room = max(0, LegRequestBatch.maxOperations - cleanup.count)
        let gone = goneUsers
        cleanup += pairs.take(limit: room) { users in users.isSubset(of: gone) }
        if let id = presence.leave() { cleanup.append(id) }
    }

    /// Every deletion of our leaving was answered.
    mutating func finishLeaving(_ reason: LeaveReason, _ out: inout OutputQueue<Action>) {
        state = .left(reason)
        out.append(.left(reason))
    }
}
