/// An ordered change feed: the latest change sequence per key, readable from any sequence on.
///
/// A key changed several times keeps only its latest entry live, so a reader between two tokens
/// sees it once, in its latest version. Superseded entries are skipped on read and compacted away.
struct ChangeLog<Key: Hashable & Sendable>: Sendable {
    private(set) var latest: [Key: UInt64] = [:]
    /// Entries in sequence order. `live` is true exactly while `latest[key] == seq`: it is cleared
    /// where the key changes again or is forgotten, so reads and compaction skip superseded
    /// entries without hashing their keys (a change feed is read far more often than written).
    private var entries: [Entry] = []

    private struct Entry {
        var seq: UInt64
        var key: Key
        var live: Bool
    }

    init() {}

    /// A log holding exactly these live entries (from a snapshot).
    init(restoring pairs: [(key: Key, seq: UInt64)]) {
        for p in pairs.sorted(by: { $0.seq < $1.seq }) { record(p.key, at: p.seq) }
    }

    /// Records that `key` changed at `seq` (sequences only grow).
    mutating func record(_ key: Key, at seq: UInt64) {
        let previous = latest.updateValue(seq, forKey: key)
        // The newest entry changing again (a zone written to over and over, in its database's
        // feed) moves on in place: entries stay in sequence order and nothing needs retiring.
        if let previous, let last = entries.indices.last, entries[last].seq == previous,
           entries[last].live, entries[last].key == key {
            entries[last].seq = seq
            return
        }
        if let previous { retire(key, at: previous) }
        entries.append(Entry(seq: seq, key: key, live: true))
        if entries.count > 64 && entries.count > 2 * latest.count { compact() }
    }

    /// Room for `extra` more keys without rehashing. (Entries are an array: a copy of it grows as
    /// it is made, so room reserved there would only make every copy larger.)
    mutating func reserveCapacity(_ extra: Int) {
        latest.reserveCapacity(latest.count + extra)
    }

    /// Forgets `key` entirely (a pruned tombstone).
    mutating func remove(_ key: Key) {
        if let previous = latest.removeValue(forKey: key) { retire(key, at: previous) }
    }

    /// Live keys changed after `seq`, oldest first, at most `limit`; and whether more remain.
    func changes(after seq: UInt64, limit: Int) -> (keys: [(seq: UInt64, key: Key)], moreComing: Bool) {
        var i = firstIndex(after: seq)
        var out: [(seq: UInt64, key: Key)] = []
        // Room for every entry left (superseded ones are few after compaction): one allocation.
        out.reserveCapacity(min(limit, entries.count - i))
        while i < entries.count {
            let e = entries[i]
            i += 1
            guard e.live else { continue }
            if out.count == limit { return (out, true) }
            out.append((e.seq, e.key))
        }
        return (out, false)
    }

    /// The first entry with a sequence above `seq`.
    private func firstIndex(after seq: UInt64) -> Int {
        var lo = 0, hi = entries.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if entries[mid].seq <= seq { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// Marks `key`'s live entry at `seq` superseded: found by its sequence (entries are in
    /// sequence order), checked by its key, as several keys can share a sequence in a restored log.
    private mutating func retire(_ key: Key, at seq: UInt64) {
        var i = seq == 0 ? 0 : firstIndex(after: seq - 1)
        while i < entries.count, entries[i].seq == seq {
            if entries[i].live, entries[i].key == key {
                entries[i].live = false
                return
            }
            i += 1
        }
        // Not where its sequence puts it (a log whose sequences did not grow): searched in full.
        if let j = entries.firstIndex(where: { $0.live && $0.seq == seq && $0.key == key }) {
            entries[j].live = false
        }
    }

    private mutating func compact() {
        entries.removeAll { !$0.live }
    }
}
