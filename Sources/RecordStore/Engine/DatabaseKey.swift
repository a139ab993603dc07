/// The database of one user in one scope: its zone change feed and subscriptions.
///
/// The user's name is hashed once, when the key is made: every record saved in a zone reaches the
/// owner's and each participant's database twice (its change feed, then its subscriptions), and a
/// zone keeps its databases' keys (`ZoneState.ownerDatabase`, `sharedDatabases`), so those lookups
/// hash this alone instead of the name again. Seeded as every `Hasher` in this process is, so
/// names chosen to collide cannot be made to; never written anywhere.
struct DatabaseKey: Hashable, Sendable {
    let user: String
    let scope: DatabaseScope
    private let identity: Int

    init(user: String, scope: DatabaseScope) {
        self.user = user
        self.scope = scope
        var hasher = Hasher()
        hasher.combine(user)
        hasher.combine(scope)
        identity = hasher.finalize()
    }

    static func == (a: DatabaseKey, b: DatabaseKey) -> Bool {
        a.identity == b.identity && a.scope == b.scope && a.user == b.user
    }

    func hash(into hasher: inout Hasher) { hasher.combine(identity) }

    /// Identity folded into this database's change tokens (FNV-1a: tokens outlive the process).
    var tokenOwner: UInt64 { FNV1a.hash("db", user, scope.rawValue) }
}
