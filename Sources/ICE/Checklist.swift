// The checklist: RFC 8445 §6.1.2 (forming pairs, §6.1.2.4 pruning, §6.1.2.5 ordering, §6.1.2.6
// initial states), §6.1.4.2 (which pair the pacing timer checks next), §7.2.5.3.3 (unfreezing by
// foundation after a success), and RFC 8838 §10 (pairs added by trickle at any time).
//
// One checklist for the single data stream (one component). The triggered-check queue is FIFO.

import ZoneCore

/// The pairs of the agent's one data stream and the triggered-check queue.
struct Checklist {
    /// Every pair, indexed by `CandidatePair.id`.
    private(set) var pairs: [CandidatePair] = []
    /// Pairs waiting for a triggered check (RFC 8445 §7.3.1.4), oldest first.
    private var triggered = OutputQueue<Int>()

    subscript(id: Int) -> CandidatePair {
        _read { yield pairs[id] }
        _modify { yield &pairs[id] }
    }

    /// The pair whose local base and remote address are these.
    func pairID(base: Endpoint, remote: Endpoint) -> Int? {
        pairs.firstIndex { $0.local.base == base && $0.remote.address == remote && !$0.isPeerReflexiveValid }
    }

    /// Pairs `local` with `remote` (same address family only, RFC 8445 §6.1.2.2). A server-reflexive
    /// local candidate is replaced by its base (§6.1.2.4), and a pair redundant with an existing one
    /// (same base, same remote address) is pruned, keeping the higher priority. The new pair's
    /// initial state follows RFC 8838 §10: waiting unless a pair of its foundation is already
    /// waiting or in progress (then frozen); a foundation that already succeeded starts waiting.
    ///
    /// - Returns: the new pair's ID, or nil when it was pruned or impossible.
    @discardableResult
    mutating func add(local: Candidate, remote: Candidate, role: Role) -> Int? {
        guard local.address.family == remote.address.family else { return nil }
        var local = local
        if local.kind == .serverReflexive {
            local = Candidate.host(local.base)  // its base, a host candidate
        }
        if let existing = pairID(base: local.base, remote: remote.address) {
            // Redundant. Keep the higher-priority local candidate for a pair not yet checked.
            if pairs[existing].state == .frozen || pairs[existing].state == .waiting,
               local.priority > pairs[existing].local.priority {
                pairs[existing].local = local
            }
            return nil
        }
        let id = pairs.count
        var pair = CandidatePair(id: id, local: local, remote: remote, state: .frozen)
        var blocked = false, succeeded = false
        for i in pairs.indices where pairs[i].sharesFoundation(with: pair) {
            switch pairs[i].state {
            case .waiting, .inProgress: blocked = true
            case .succeeded: succeeded = true
            case .frozen, .failed: break
            }
        }
        pair.state = (succeeded || !blocked) ? .waiting : .frozen
        pairs.append(pair)
        return id
    }

    /// Adds a valid pair with a peer-reflexive local candidate, produced by a check on `from`
    /// (RFC 8445 §7.2.5.3.2); it is not itself checked.
    mutating func addPeerReflexiveValid(local: Candidate, from id: Int) -> Int {
        let newID = pairs.count
        var pair = CandidatePair(id: newID, local: local, remote: pairs[id].remote, state: .succeeded)
        pair.valid = true
        pairs.append(pair)
        return newID
    }

    /// Queues a triggered check on `id` (RFC 8445 §7.3.1.4), unless one is queued already, and
    /// sets the pair waiting (the caller has cancelled a check in flight).
    mutating func trigger(_ id: Int) {
        if !triggered.contains(where: { $0 == id }) { triggered.append(id) }
        if pairs[id].state != .succeeded { pairs[id].state = .waiting }
    }

    /// Takes `id` off the triggered-check queue (its cancelled check was answered after all).
    mutating func untrigger(_ id: Int) {
        triggered.removeAll { $0 == id }
    }

    /// The pair the pacing timer checks next (RFC 8445 §6.1.4.2): the oldest triggered pair, else
    /// the highest-priority waiting pair, else the highest-priority frozen pair whose foundation
    /// has nothing waiting or in progress (unfrozen now). Nil when there is nothing to check.
    mutating func nextPairToCheck(role: Role) -> Int? {
        if let id = triggered.pop() { return id }
        if let id = best(role: role, whereAt: { pairs[$0].state == .waiting }) { return id }
        if let id = best(role: role, whereAt: { pairs[$0].state == .frozen && !isBusy(foundationAt: $0) }) {
            pairs[id].state = .waiting
            return id
        }
        return nil
    }

    /// `best(role:where:)` with a predicate on the pair's index (it reads only the fields it needs).
    private func best(role: Role, whereAt predicate: (Int) -> Bool) -> Int? {
        var bestID: Int?
        var bestPriority: UInt64 = 0
        for i in pairs.indices where predicate(i) {
            let p = pairs[i].priority(role: role)
            if bestID == nil || p > bestPriority {
                bestID = pairs[i].id
                bestPriority = p
            }
        }
        return bestID
    }

    /// True when the pacing timer has a check to send: a triggered check, a waiting pair, or a
    /// frozen pair whose foundation has nothing waiting or in progress.
    var hasPendingChecks: Bool {
        if !triggered.isEmpty { return true }
        for i in pairs.indices where pairs[i].state == .waiting { return true }
        for i in pairs.indices where pairs[i].state == .frozen {
            // A frozen pair waits while a pair of its foundation is being checked.
            if !isBusy(foundationAt: i) { return true }
        }
        return false
    }

    /// True when some pair could still succeed.
    var hasUnfinishedPairs: Bool {
        if !triggered.isEmpty { return true }
        for i in pairs.indices where pairs[i].state == .waiting || pairs[i].state == .frozen
            || pairs[i].state == .inProgress {
            return true
        }
        return false
    }

    /// Whether a pair of the foundation of the pair at `index` is waiting or being checked (a frozen
    /// pair of that foundation then stays frozen, RFC 8445 §6.1.2.6). States are compared first:
    /// they are cheap.
    func isBusy(foundationAt index: Int) -> Bool {
        for i in pairs.indices where (pairs[i].state == .waiting || pairs[i].state == .inProgress)
            && pairs[i].local.foundation == pairs[index].local.foundation
            && pairs[i].remote.foundation == pairs[index].remote.foundation {
            return true
        }
        return false
    }

    /// Unfreezes every frozen pair of `pair`'s foundation (RFC 8445 §7.2.5.3.3).
    mutating func unfreeze(foundationOf pair: CandidatePair) {
        for i in pairs.indices where pairs[i].state == .frozen && pairs[i].sharesFoundation(with: pair) {
            pairs[i].state = .waiting
        }
    }

    /// The highest-priority pair satisfying `predicate`; ties go to the older pair.
    func best(role: Role, where predicate: (CandidatePair) -> Bool) -> Int? {
        var bestID: Int?
        var bestPriority: UInt64 = 0
        for i in pairs.indices where predicate(pairs[i]) {
            let p = pairs[i].priority(role: role)
            if bestID == nil || p > bestPriority {
                bestID = pairs[i].id
                bestPriority = p
            }
        }
        return bestID
    }

    /// The pairs in checklist order: decreasing priority (RFC 8445 §6.1.2.5).
    func ordered(role: Role) -> [CandidatePair] {
        pairs.sorted { $0.priority(role: role) > $1.priority(role: role) }
    }
}

extension CandidatePair {
    /// A valid pair whose local candidate is peer-reflexive, learned from a response.
    var isPeerReflexiveValid: Bool { valid && local.kind == .peerReflexive }
}
