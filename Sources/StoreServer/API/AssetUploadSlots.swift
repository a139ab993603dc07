import Foundation
import RecordStore
import Synchronization

/// The upload URLs `assets/upload` handed out and not yet used: each names the user, database,
/// zone, record and field it was asked for, is good for one upload, and lapses after `lifetime`.
/// Held in memory by the daemon that issued them (an upload goes to the URL it was given); at
/// most `capacity` at once, the oldest dropped first.
final class AssetUploadSlots: Sendable {
    /// What one upload URL was asked for.
    struct Slot: Sendable {
        let user: String
        let scope: DatabaseScope
        let zone: ZoneID
        let recordName: String
        let fieldName: String
        let expires: Date
    }

    static let lifetime: TimeInterval = 3600
    static let capacity = 100_000

    private let slots = Mutex<(byToken: [String: Slot], order: [String])>(([:], []))

    /// A new upload URL's token for `slot`.
    func open(_ slot: Slot) -> String {
        let token = StoredAsset.newReceipt()
        slots.withLock { s in
            let now = Date()
            if s.order.count >= Self.capacity || s.order.first.map({ (s.byToken[$0]?.expires ?? now) <= now }) == true {
                s.order.removeAll { s.byToken[$0].map { $0.expires <= now } ?? true }
                while s.order.count >= Self.capacity { s.byToken[s.order.removeFirst()] = nil }
            }
            s.byToken[token] = slot
            s.order.append(token)
        }
        return token
    }

    /// The slot of `token`, taken (a URL is good for one upload); nil when unknown or lapsed.
    func take(_ token: String) -> Slot? {
        slots.withLock { s in
            guard let slot = s.byToken.removeValue(forKey: token) else { return nil }
            s.order.removeAll { $0 == token }
            return slot.expires > Date() ? slot : nil
        }
    }
}
