// The store requests the sans-I/O signaling machines ask for, and their outcomes: a closed
// vocabulary over `StoreClient`, so any driver (the embedded store, the remote client, the
// simulator) can carry them out the same way.
import RecordStore

/// One request to the record store, in a database.
public struct StoreRequest: Hashable, Sendable {
    /// The database the request addresses (resolved once per room: spec §1).
    public var scope: DatabaseScope
    public var operation: Operation

    public init(scope: DatabaseScope, _ operation: Operation) {
        self.scope = scope
        self.operation = operation
    }

    /// What to ask.
    public enum Operation: Hashable, Sendable {
        /// `modifyRecords`.
        case modifyRecords(ModifyRecordsRequest)
        /// `lookupRecords`: records by name.
        case lookupRecords([RecordID])
        /// `fetchZoneChanges`.
        case fetchZoneChanges(ZoneID, since: ChangeToken?, resultsLimit: Int?)
        /// `fetchDatabaseChanges`.
        case fetchDatabaseChanges(since: ChangeToken?)
        /// `modifyZones` saving one zone.
        case createZone(ZoneID)
        /// `createShare`: the zone-wide share.
        case createShare(ZoneID, publicPermission: SharePermission, participants: [String: SharePermission])
        /// `fetchShare`.
        case fetchShare(ZoneID)
        /// `acceptShare` (a no-op when accepted already).
        case acceptShare(ZoneID)
        /// `modifySubscriptions` saving one subscription.
        case saveSubscription(Subscription)
    }
}

/// What a store request came to.
public enum StoreOutcome: Hashable, Sendable {
    /// `modifyRecords`' per-item results.
    case modified(ModifyRecordsResult)
    /// `lookupRecords`' per-item results.
    case lookedUp([LookupResult])
    /// A page of zone changes.
    case zoneChanges(ZoneChanges)
    /// A page of database changes.
    case databaseChanges(DatabaseChanges)
    /// `modifyZones`' per-zone results.
    case zones([ZoneResult])
    /// The share created, fetched or accepted.
    case share(ZoneShare)
    /// `modifySubscriptions`' per-subscription results.
    case subscriptions([SubscriptionResult])
    /// The request failed as a whole.
    case failed(StoreError)
}

extension StoreClient {
    /// Carries out `request`; every error comes back as `.failed`.
    public func perform(_ request: StoreRequest) async -> StoreOutcome {
        let scope = request.scope
        do {
            switch request.operation {
            case .modifyRecords(let r): return .modified(try await modifyRecords(r, scope: scope))
            case .lookupRecords(let ids): return .lookedUp(try await lookupRecords(ids, scope: scope))
            case .fetchZoneChanges(let zone, let since, let limit):
                return .zoneChanges(try await fetchZoneChanges(zone, since: since, resultsLimit: limit, scope: scope))
            case .fetchDatabaseChanges(let since):
                return .databaseChanges(try await fetchDatabaseChanges(since: since, resultsLimit: nil, scope: scope))
            case .createZone(let zone): return .zones(try await modifyZones(save: [zone], delete: [], scope: scope))
            case .createShare(let zone, let permission, let participants):
                return .share(try await createShare(zone: zone, publicPermission: permission,
                                                    participants: participants))
            case .fetchShare(let zone): return .share(try await fetchShare(zone: zone, scope: scope))
            case .acceptShare(let zone): return .share(try await acceptShare(zone: zone))
            case .saveSubscription(let s):
                return .subscriptions(try await modifySubscriptions(save: [s], delete: [], scope: scope))
            }
        } catch let error as StoreError {
            return .failed(error)
        } catch {
            return .failed(StoreError(.internalError, "\(error)"))
        }
    }
}
