import Foundation
import RecordStore

// changes/zone and changes/database: CloudKit Web Services Reference, "Fetching Record Zone Changes
// (changes/zone)" and "Fetching Database Changes (changes/database)"
// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/FetchingRecordZoneChanges(changeszone).html,
// …/FetchingDatabaseChanges(changeszone).html).
extension StoreAPI {
    /// One zone's options: the request's, overridden by the zone dictionary's.
    private struct ZoneChangeOptions {
        var rendering = RecordRendering.all
        var resultsLimit: Int?
        var recordTypes: Set<String>?

        mutating func read(_ o: WireObject) throws {
            rendering = try StoreAPI.rendering(o, over: rendering)
            if let asStrings = try o.bool("numberAsStrings") { rendering.numbersAsStrings = asStrings }
            if try o.bool("reverse") == true {
                // A reversed feed could not hand out a token that resumes where it stopped.
                throw WireFormat.ShapeError("\(o.name("reverse")): changes in reverse order are not supported "
                                            + "(docs/CLOUDKIT.md)")
            }
            if let limit = try o.positiveInt("resultsLimit") { resultsLimit = limit }
            if let types = try o.strings("desiredRecordTypes") { recordTypes = Set(types) }
        }
    }

    func zoneChanges(_ body: WireObject, scope: DatabaseScope,
                     client: EmbeddedStoreClient) async throws -> WireFormat.Object {
        // The whole request, not each zone's: the public database has no change feed at all.
        try StoreEngine.checkHasChangeFeeds(scope, "changes/zone")
        try body.allowing(.zoneChangesRequest)
        var common = ZoneChangeOptions()
        try common.read(body)
        var out: [Any] = []
        for z in try body.objects("zones", required: true) {
            try z.allowing(.zoneChangesZone)
            guard let raw = z["zoneID"] else { throw WireFormat.ShapeError("\(z.name("zoneID")) is required") }
            var zone = try WireFormat.decodeZoneID(raw, context: z.name("zoneID"))
            if scope == .private && zone.ownerName.isEmpty { zone.ownerName = client.userRecordName }
            var options = common
            try options.read(z)
            let token = try z.string("syncToken").map(ChangeToken.init(rawValue:))
            let changes: ZoneChanges
            do {
                changes = try await client.fetchZoneChanges(zone, since: token, resultsLimit: options.resultsLimit,
                                                            scope: scope)
            } catch let error as StoreError where !error.code.isRetryable {
                // Zone Record Fetch Error Dictionary: this zone failed, the others go on. Throttling
                // is the whole request's.
                out.append(Self.encodeZoneError(zone, error))
                continue
            }
            let types = options.recordTypes
            // An array of `Any` as the writer takes it, each record written from itself (`RecordJSON`).
            var records: [Any] = []
            records.reserveCapacity(changes.changed.count + changes.deleted.count)
            for record in changes.changed where types?.contains(record.recordType) ?? true {
                records.append(RecordJSON(record, options.rendering))
            }
            for gone in changes.deleted where types?.contains(gone.recordType) ?? true {
                records.append(["recordName": gone.id.recordName, "recordType": gone.recordType, "deleted": true,
                                "zoneID": WireFormat.encode(gone.id.zoneID)] as WireFormat.Object)
            }
            out.append(["zoneID": WireFormat.encode(zone), "records": records,
                        "syncToken": changes.syncToken.rawValue, "moreComing": changes.moreComing] as WireFormat.Object)
        }
        return ["zones": out]
    }

    func databaseChanges(_ body: WireObject, scope: DatabaseScope,
                         client: EmbeddedStoreClient) async throws -> WireFormat.Object {
        try body.allowing(.databaseChangesRequest)
        let changes = try await client.fetchDatabaseChanges(
            since: try body.string("syncToken").map(ChangeToken.init(rawValue:)),
            resultsLimit: try body.positiveInt("resultsLimit"), scope: scope)
        return ["zones": changes.changedZones.map { ["zoneID": WireFormat.encode($0)] },
                "deletedZones": changes.deletedZones.map { ["zoneID": WireFormat.encode($0)] },
                "purgedZones": changes.purgedZones.map { ["zoneID": WireFormat.encode($0)] },
                "syncToken": changes.syncToken.rawValue, "moreComing": changes.moreComing]
    }
}
