/// A record's name as its zone's tables key it: records, tombstones and change feed.
///
/// Hashed once (`HashedOnce`): a save looks its name up in the records, the tombstones and the
/// feed, and a change-feed page looks up every name it returns; names run to dozens of characters.
struct RecordKey: Hashable, Sendable {
    private let key: HashedOnce<String>

    init(_ name: String) { key = HashedOnce(name) }

    var name: String { key.names }
}
