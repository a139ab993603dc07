/// Every user's query subscriptions in the public database, by the record type they watch.
///
/// CloudKit Web Services Reference, "Modifying Subscriptions (subscriptions/modify)"
/// (ModifySubscriptions.html) lists `public` among its databases: there a query subscription fires
/// for a public record whoever wrote it, so a public write concerns every user who subscribed. Each
/// user's subscriptions stay in that user's public database (`DatabaseState.subscriptions`, which the
/// journal, snapshots and PostgreSQL log hold); this index, rebuilt from them whenever they change
/// (`StoreState.apply`, snapshot load), lets a public write reach the subscriptions on its record
/// type with one lookup instead of a pass over every user's databases. A write of a type nobody
/// watches costs that lookup and nothing else.
struct PublicQueryIndex: Sendable {
    /// One subscription: its user and ID.
    struct Watcher: Hashable, Comparable, Sendable {
        var user: String
        var subscriptionID: String

        static func < (a: Watcher, b: Watcher) -> Bool {
            (a.user, a.subscriptionID) < (b.user, b.subscriptionID)
        }
    }

    /// The watchers of each record type, in user then subscription order (the order they fire in).
    private var byType: [String: [Watcher]] = [:]
    /// The record type each watcher is filed under, so that a subscription saved again under
    /// another type (or deleted) leaves its old place.
    private var typeOf: [Watcher: String] = [:]

    /// Whether any public query subscription exists: when none does, a public write keeps no
    /// record of what it changed.
    var isEmpty: Bool { typeOf.isEmpty }

    /// Public query subscriptions held, over all users.
    var count: Int { typeOf.count }

    /// Files `subscription` of `user` (a query subscription; any other kind is only unfiled).
    mutating func put(user: String, _ subscription: Subscription) {
        let watcher = Watcher(user: user, subscriptionID: subscription.subscriptionID)
        remove(watcher)
        guard case .query(let type, _) = subscription.kind else { return }
        typeOf[watcher] = type
        var list = byType[type, default: []]
        // Kept sorted as it is built: a type's list is read on every write of that type.
        let at = list.firstIndex { watcher < $0 } ?? list.endIndex
        list.insert(watcher, at: at)
        byType[type] = list
    }

    /// Unfiles the subscription `id` of `user`, if it is filed.
    mutating func remove(user: String, subscriptionID id: String) {
        remove(Watcher(user: user, subscriptionID: id))
    }

    private mutating func remove(_ watcher: Watcher) {
        guard let type = typeOf.removeValue(forKey: watcher) else { return }
        byType[type]?.removeAll { $0 == watcher }
        if byType[type]?.isEmpty == true { byType[type] = nil }
    }

    /// The subscriptions watching records of `type`, in the order they fire.
    func watchers(of type: String) -> [Watcher] { byType[type] ?? [] }
}
