// The other members of a room's group call, as their presence records say (docs/PROTOCOL.md
// §11.1): the latest checked version of each user's `CallMember`, who is present now, who joined
// anew (a new member session), and who is gone. Versions that fail the checks never get here.
import RecordStore
import ZoneCore

/// The presence of the other members.
struct Roster: Sendable {
    /// How a version of a member's record changes what we know.
    enum Change: Hashable, Sendable {
        /// A member session not known before (the user's first, or one after it had left).
        case joined(CallMember)
        /// The same member session, refreshed.
        case refreshed(CallMember)
        /// A new member session of a user whose earlier session we knew: that one is over.
        case rejoined(CallMember, previous: CallMember)
        /// Nothing new (an older or the same version).
        case unchanged
    }

    /// The latest version of each user's record, by user ID.
    private(set) var members: [String: CallMember] = [:]
    /// Users whose record was deleted or expired and who have not come back: their pairs may be collected.
    private(set) var departed: Set<String> = []
    /// Users known to have expired, so an expiry is acted on once.
    private var expired: Set<String> = []

    /// Takes in a checked version of a member's record.
    mutating func take(_ member: CallMember) -> Change {
        let user = member.userID
        let change: Change
        if let known = members[user] {
            if known.memberSession != member.memberSession {
                change = .rejoined(member, previous: known)
            } else if member.expiresAtMs > known.expiresAtMs {
                change = .refreshed(member)
            } else {
                return .unchanged
            }
        } else {
            change = .joined(member)
        }
        members[user] = member
        expired.remove(user)
        departed.remove(user)
        return change
    }

    /// The member whose record named `recordName` was deleted, now gone; nil if none was known.
    mutating func remove(recordName: String) -> CallMember? {
        guard let user = members.first(where: { $0.value.recordName == recordName })?.key else { return nil }
        expired.remove(user)
        departed.insert(user)
        return members.removeValue(forKey: user)
    }

    /// Whether `user` is present at `now`.
    func isPresent(_ user: String, now: Instant) -> Bool {
        members[user].map { $0.expiresAtMs > now.millisecondsSinceEpoch } ?? false
    }

    /// Whether `user` has a presence record (present or expired).
    func isMember(_ user: String) -> Bool { members[user] != nil }

    /// Members present at `now`.
    func present(now: Instant) -> [CallMember] {
        let ms = now.millisecondsSinceEpoch
        return members.values.filter { $0.expiresAtMs > ms }
    }

    /// Members whose presence ran out by `now` and were not reported yet; each is reported once.
    mutating func newlyExpired(now: Instant) -> [CallMember] {
        let ms = now.millisecondsSinceEpoch
        var out: [CallMember] = []
        for member in members.values where member.expiresAtMs <= ms && !expired.contains(member.userID) {
            expired.insert(member.userID)
            departed.insert(member.userID)
            out.append(member)
        }
        return out.sorted { $0.userID.utf8.lexicographicallyPrecedes($1.userID.utf8) }
    }

    /// Members expired for longer than `grace` at `now`: their records may be deleted by anyone.
    func longExpired(now: Instant, grace: Duration) -> [CallMember] {
        let limit = now.millisecondsSinceEpoch.subtractingSaturated(grace.wholeMilliseconds)
        return members.values.filter { $0.expiresAtMs <= limit }
    }

    /// When the next expiry not yet reported is due (it may have passed: then a timer is due now).
    var nextExpiry: Instant? {
        let next = members.values.lazy.filter { !expired.contains($0.userID) }.map(\.expiresAtMs).min()
        return next.map { Instant.milliseconds($0) }
    }
}
