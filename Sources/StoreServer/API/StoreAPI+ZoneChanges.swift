import Foundation
import RecordStore

// zones/changes as CloudKit Web Services Reference documents it: "Fetching Zone Changes
// (zones/changes)" (developer.apple.com/library/archive/…/CloudKitWebServicesReference/
// GetZoneChanges.html) — "Returns the zones that changed since a specified sync token": request
// `syncToken` and `resultsLimit`; response `zones` (the Zone Dictionary of each zone changed, or the
// Zone Fetch Error Dictionary), `syncToken` and `moreComing`.
extension DocumentedKeys {
    static let zonesChangesRequest = DocumentedKeys("a zones/changes request", ["syncToken", "resultsLimit"])
}

extension StoreAPI {
    /// zones/changes: the database's change feed (as changes/database reads it), each zone changed
    /// answered with its Zone Dictionary as it stands (`zoneID`, `atomic`, `syncToken`); a zone
    /// deleted or purged since the token with the Zone Fetch Error Dictionary, `ZONE_NOT_FOUND`.
    func zonesChanges(_ body: WireObject, scope: DatabaseScope,
                      client: EmbeddedStoreClient) async throws -> WireFormat.Object {
        try body.allowing(.zonesChangesRequest)
        let changes = try await client.fetchDatabaseChanges(
            since: try body.string("syncToken").map(ChangeToken.init(rawValue:)),
            resultsLimit: try body.positiveInt("resultsLimit"), scope: scope)
        var zones = changes.changedZones.isEmpty ? []
            : try await client.lookupZones(changes.changedZones, scope: scope).map(Self.encodeZoneLookup)
        for gone in changes.deletedZones + changes.purgedZones {
            zones.append(Self.encodeZoneError(gone, StoreError(.zoneNotFound, "zone \(gone) was deleted")))
        }
        return ["zones": zones, "syncToken": changes.syncToken.rawValue, "moreComing": changes.moreComing]
    }
}
