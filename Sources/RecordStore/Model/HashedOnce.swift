/// Names a store table looks up many times, hashed once when they are made.
///
/// The store finds zones, records, databases and push devices by their names several times per
/// request; hashing the names each time cost more than the lookups. A key made once carries its
/// hash, so a lookup hashes one word, and `==` compares that word before the names. Seeded as
/// every `Hasher` in this process is, so names chosen to collide cannot be made to; the hash is
/// never written anywhere.
struct HashedOnce<Names: Hashable & Sendable>: Hashable, Sendable {
    let names: Names
    private let identity: Int

    init(_ names: Names) {
        self.names = names
        identity = names.hashValue
    }

    static func == (a: HashedOnce, b: HashedOnce) -> Bool { a.identity == b.identity && a.names == b.names }

    func hash(into hasher: inout Hasher) { hasher.combine(identity) }
}
