// The store requests signaling's parts ask for, made in one place for both compositions (a call of
// two, `CallSignaling`, and a room's group call, `RoomSignaling`), and counted by kind.
import RecordStore

extension ChangeSync.Action {
    /// The fetch this action asks for, in the database `scope`; nil for deliveries and stops.
    func storeRequest(zone: ZoneID, scope: DatabaseScope, resultsLimit: Int?) -> StoreRequest? {
        switch self {
        case .fetchZoneChanges(let since):
            return StoreRequest(scope: scope, .fetchZoneChanges(zone, since: since, resultsLimit: resultsLimit))
        case .fetchDatabaseChanges(let since):
            return StoreRequest(scope: scope, .fetchDatabaseChanges(since: since))
        case .deliver, .zoneUnavailable:
            return nil
        }
    }
}

extension ChangeSync.Event {
    /// The event a fetch's outcome is for a path; nil for outcomes no path asks for.
    init?(reply outcome: StoreOutcome) {
        switch outcome {
        case .zoneChanges(let changes): self = .zoneChanges(changes)
        case .databaseChanges(let changes): self = .databaseChanges(changes)
        case .failed(let error): self = .failed(error)
        case .modified, .lookedUp, .zones, .share, .subscriptions: return nil
        }
    }
}

extension CallNegotiator.Action {
    /// The store request this action asks for, in the database `scope`; nil for the rest.
    func storeRequest(scope: DatabaseScope) -> StoreRequest? {
        switch self {
        case .modify(let operations, let atomic):
            return StoreRequest(scope: scope,
                                .modifyRecords(ModifyRecordsRequest(operations: operations, atomic: atomic)))
        case .lookup(let ids):
            return StoreRequest(scope: scope, .lookupRecords(ids))
        case .fetchNow, .ice, .report, .rejected, .remoteHungUp:
            return nil
        }
    }
}

extension CallSignaling.RequestCounts {
    /// Counts `request` by its kind.
    mutating func count(_ request: StoreRequest) {
        switch request.operation {
        case .modifyRecords(let r): if r.saveCount == 0 { deletes += 1 } else { saves += 1 }
        case .lookupRecords: lookups += 1
        case .fetchZoneChanges, .fetchDatabaseChanges: fetches += 1
        case .createZone, .createShare, .fetchShare, .acceptShare, .saveSubscription: break
        }
    }
}
