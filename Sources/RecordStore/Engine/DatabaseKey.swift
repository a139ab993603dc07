/// The database of one user in one scope: its zone change feed and subscriptions.
///
/// Hashed once (`HashedOnce`): every record saved in a zone reaches the owner's and each
/// participant's database twice (its change feed, then its subscriptions), and a zone keeps its
/// databases' keys (`ZoneState.ownerDatabase`, `sharedDatabases`), so those lookups hash no name.
struct DatabaseKey: Hashable, Sendable {
    private struct Names: Hashable, Sendable {
        let user: String
        let scope: DatabaseScope
    }

    private let key: HashedOnce<Names>

    init(user: String, scope: DatabaseScope) { key = HashedOnce(Names(user: user, scope: scope)) }

    var user: String { key.names.user }
    var scope: DatabaseScope { key.names.scope }

    /// Identity folded into this database's change tokens (FNV-1a: tokens outlive the process).
    var tokenOwner: UInt64 { FNV1a.hash("db", user, scope.rawValue) }
}
