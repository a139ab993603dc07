// Garbage collection of whole pairs in a room (docs/PROTOCOL.md §11.5). A leg's negotiator cleans
// its own pair while the leg lasts (§7); the records of pairs nobody has a leg for — left by
// members who crashed, left at the same moment as their partner, or were removed — stay in the
// zone. This keeps the names of such records (learned from the change feed, never parsed beyond the
// pair's user IDs) and hands them out for deletion once every user of the pair is gone, a bounded
// number per sweep. Pairs of users never seen as group-call members (calls of two) are never touched.
import RecordStore
import ZoneCore

/// Records of pairs without a leg here, deleted once their users are gone.
struct PairCollector: Sendable {
    /// What is known of one pair.
    struct Pair: Sendable {
        /// The pair's users, as far as known (from the records' fields and the session key).
        var users: Set<String> = []
        /// Its records.
        var records: Set<RecordID> = []
    }

    let roomID: RoomID
    /// Record names kept at most; more are not kept (counted in `overflow`).
    let capacity: Int
    private(set) var pairs: [String: Pair] = [:]
    /// Which pair each kept record belongs to, by record name.
    private var pairOf: [String: String] = [:]
    /// Records not kept for want of room.
    private(set) var overflow = 0

    init(roomID: RoomID, capacity: Int = 4_096) {
        self.roomID = roomID
        self.capacity = capacity
    }

    /// Notes a signal record of the pair `key` (fields read: the users it names, nothing else).
    mutating func observe(_ record: Record, key: String) {
        var users: [String] = []
        for field in [SignalField.userId, SignalField.otherUserId, SignalField.ownerUserId] {
            if let user = record.fields[field]?.stringValue { users.append(user) }
        }
        note(key: key, users: users, ids: [record.id])
    }

    /// Notes records of the pair `key` and users of it.
    mutating func note(key: String, users: [String], ids: [RecordID]) {
        var pair = pairs[key] ?? Pair()
        for user in users where pair.users.count < 2 && Self.pair(key, roomID: roomID, includes: user) {
            pair.users.insert(user)
        }
        if pair.users.count == 1, let known = pair.users.first,
           let other = Self.other(in: key, roomID: roomID, than: known) {
            pair.users.insert(other)
        }
        for id in ids where pairOf[id.recordName] == nil {
            guard pairOf.count < capacity else {
                overflow += 1
                continue
            }
            pair.records.insert(id)
            pairOf[id.recordName] = key
        }
        pairs[key] = pair
    }

    /// Forgets records the change feed reported deleted.
    mutating func forget(_ ids: [RecordID]) {
        for id in ids {
            guard let key = pairOf.removeValue(forKey: id.recordName) else { continue }
            pairs[key]?.records.remove(id)
            if pairs[key]?.records.isEmpty == true { pairs[key] = nil }
        }
    }

    /// Forgets the pair `key` (a leg took it over).
    mutating func release(key: String) {
        guard let pair = pairs.removeValue(forKey: key) else { return }
        for id in pair.records { pairOf[id.recordName] = nil }
    }

    /// Up to `limit` records of pairs whose two users are known and `dead` says are done with them,
    /// taken out of the catalogue.
    mutating func take(limit: Int, where dead: (Set<String>) -> Bool) -> [RecordID] {
        var doomed: [RecordID] = []
        for key in pairs.keys.sorted() where doomed.count < limit {
            guard let pair = pairs[key], pair.users.count == 2, dead(pair.users) else { continue }
            let ids = pair.records.sorted { $0.recordName < $1.recordName }.prefix(limit - doomed.count)
            for id in ids {
                doomed.append(id)
                pairOf[id.recordName] = nil
                pairs[key]?.records.remove(id)
            }
            if pairs[key]?.records.isEmpty == true { pairs[key] = nil }
        }
        return doomed
    }

    /// Whether `user` is one of the two users of the session key `key` in `roomID`.
    static func pair(_ key: String, roomID: RoomID, includes user: String) -> Bool {
        other(in: key, roomID: roomID, than: user) != nil
    }

    /// The other user of the session key `key` when `user` is one of its two; nil otherwise. Read from
    /// the key's text and checked by forming the key again (user IDs may hold `#`).
    static func other(in key: String, roomID: RoomID, than user: String) -> String? {
        let head = roomID.rawValue + "#"
        guard key.hasPrefix(head) else { return nil }
        let pair = key.dropFirst(head.count)
        var candidates: [Substring] = []
        if pair.hasPrefix(user + "#") { candidates.append(pair.dropFirst(user.count + 1)) }
        if pair.hasSuffix("#" + user) { candidates.append(pair.dropLast(user.count + 1)) }
        for candidate in candidates {
            let other = String(candidate)
            if let formed = try? SessionKey(roomID: roomID, users: user, other), formed.rawValue == key { return other }
        }
        return nil
    }
}
