/// An ordered change feed: the latest change sequence per key, readable from any sequence on.
///
/// A key changed several times keeps only its latest entry live, so a reader between two tokens
/// sees it once, in its latest version. Superseded entries are skipped on read and compacted away.
struct ChangeLog<Key: Hashable & Sendable>: Sendable {
    private(set) var latest: [Key: UInt64] = [:]
    private var entries: [(seq: UInt64, key: Key)] = []

    init() {}

    /// A log holding exactly these live entries (from a snapshot).
    init(restoring pairs: [(key: Key, seq: UInt64)]) {
        for p in pairs.sorted(by: { $0.seq < $1.seq }) { record(p.key, at: p.seq) }
    }

    /// Records that `key` changed at `seq` (sequences only grow).
    mutating func record(_ key: Key, at seq: UInt64) {
        latest[key] = seq
        entries.append((seq, key))
        if entries.count > 64 && entries.count > 2 * latest.count { compact() }
    }

    /// Forgets `key` entirely (a pruned tombstone).
    mutating func remove(_ key: Key) {
        latest[key] = nil
    }

    /// Live keys changed after `seq`, oldest first, at most `limit`; and whether more remain.
    func changes(after seq: UInt64, limit: Int) -> (keys: [(seq: UInt64, key: Key)], moreComing: Bool) {
        var lo = 0, hi = entries.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if entries[mid].seq <= seq { lo = mid + 1 } else { hi = mid }
        }
        var out: [(seq: UInt64, key: Key)] = []
        var i = lo
        while i < entries.count {
            let e = entries[i]
            i += 1
            guard latest[e.key] == e.seq else { continue }
            if out.count == limit { return (out, true) }
            out.append(e)
        }
        return (out, false)
    }

    private mutating func compact() {
        entries = entries.filter { latest[$0.key] == $0.seq }
    }
}
