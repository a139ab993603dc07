/// A record's name as its zone's tables key it: records, tombstones and change feed.
///
/// The name is hashed once, when the key is made: a save looks its name up in the records, the
/// tombstones and the feed, and a change-feed page looks up every name it returns, each time
/// hashing this alone instead of the whole name again (names run to dozens of characters).
/// Seeded as every `Hasher` in this process is, so names chosen to collide cannot be made to;
/// never written anywhere.
struct RecordKey: Hashable, Sendable {
    let name: String
    private let identity: Int

    init(_ name: String) {
        self.name = name
        var hasher = Hasher()
        hasher.combine(name)
        identity = hasher.finalize()
    }

    static func == (a: RecordKey, b: RecordKey) -> Bool { a.identity == b.identity && a.name == b.name }

    func hash(into hasher: inout Hasher) { hasher.combine(identity) }
}
