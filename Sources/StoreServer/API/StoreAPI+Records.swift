import Foundation
import RecordStore

// records/modify, records/lookup and records/query, key by key as CloudKit Web Services Reference
// documents them: "Modifying Records (records/modify)", "Fetching Records by Record Name
// (records/lookup)", "Fetching Records Using a Query (records/query)"
// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/ModifyRecords.html,
// …/LookupRecords.html, …/QueryingRecords.html). A documented key this store does not serve yet is
// refused with BAD_REQUEST naming it, never ignored; docs/CLOUDKIT.md lists them.
extension StoreAPI {
    /// `desiredKeys` and `numbersAsStrings` of a request or of one of its dictionaries, over `base`.
    static func rendering(_ o: WireObject, over base: RecordRendering = .all) throws -> RecordRendering {
        var rendering = base
        if let keys = try o.strings("desiredKeys") { rendering.desiredKeys = keys }
        if let asStrings = try o.bool("numbersAsStrings") { rendering.numbersAsStrings = asStrings }
        return rendering
    }

    /// A per-record result: the record, a deletion, or the Record Fetch Error Dictionary.
    static func encode(_ result: RecordResult, _ rendering: RecordRendering) -> WireFormat.Object {
        switch result {
        case .saved(let record): return WireFormat.encode(record, rendering)
        case .deleted(let id):
            return ["recordName": id.recordName, "deleted": true, "zoneID": WireFormat.encode(id.zoneID)]
        case .failed(let id, let e): return WireFormat.encode(e, recordName: id.recordName)
        }
    }

    static func refuseNotYetSupported(_ o: WireObject, _ key: String, what: String) throws {
        if o[key] != nil {
            throw WireFormat.ShapeError("\(o.name(key)): \(what) is not supported yet (docs/CLOUDKIT.md)")
        }
    }

    func modifyRecords(_ body: WireObject, scope: DatabaseScope,
                       client: EmbeddedStoreClient) async throws -> WireFormat.Object {
        try body.allowing(.modifyRequest)
        let zone = try body["zoneID"].map { try WireFormat.decodeZoneID($0) } ?? .defaultZone
        let atomic = try body.bool("atomic") ?? true
        let rendering = try Self.rendering(body)
        var operations: [RecordOperation] = []
        var renderings: [RecordRendering] = []
        for op in try body.objects("operations", required: true) {
            try op.allowing(.recordOperation)
            let typeName = try op.requiredString("operationType")
            guard let kind = RecordOperation.Kind(rawValue: typeName) else {
                throw WireFormat.ShapeError("\(op.name("operationType")): '\(typeName)' is not one of "
                                            + RecordOperation.Kind.allCases.map(\.rawValue).joined(separator: ", "))
            }
            guard let recordObject = try op.object("record") else {
                throw WireFormat.ShapeError("\(op.name("record")) is required")
            }
            let sent = try WireFormat.decodeRequestRecord(
                recordObject, zone: zone, forDelete: kind == .delete || kind == .forceDelete,
                newName: { kind == .create ? UUID().uuidString : nil })
            let record = sent.record
            switch kind {
            case .create: operations.append(.create(record))
            case .update: operations.append(.update(record, removing: sent.cleared))
            case .forceUpdate: operations.append(.forceUpdate(record, removing: sent.cleared))
            case .replace: operations.append(.replace(record))
            case .forceReplace: operations.append(.forceReplace(record))
            case .delete: operations.append(.delete(record.id, recordChangeTag: record.recordChangeTag))
            case .forceDelete: operations.append(.forceDelete(record.id))
            }
            renderings.append(try Self.rendering(op, over: rendering))
        }
        let result = try await client.modifyRecords(ModifyRecordsRequest(operations: operations, atomic: atomic),
                                                    scope: scope)
        return ["records": zip(result.results, renderings).map { Self.encode($0, $1) }]
    }

    func lookupRecords(_ body: WireObject, scope: DatabaseScope,
                       client: EmbeddedStoreClient) async throws -> WireFormat.Object {
        try body.allowing(.lookupRequest)
        let zone = try body["zoneID"].map { try WireFormat.decodeZoneID($0) } ?? .defaultZone
        let rendering = try Self.rendering(body)
        var ids: [RecordID] = []
        var renderings: [RecordRendering] = []
        for r in try body.objects("records", required: true) {
            try r.allowing(.lookupRecord)
            let recordZone = try r["zoneID"].map { try WireFormat.decodeZoneID($0, context: r.name("zoneID")) } ?? zone
            ids.append(RecordID(recordName: try r.requiredString("recordName"), zoneID: recordZone))
            renderings.append(try Self.rendering(r, over: rendering))
        }
        let results = try await client.lookupRecords(ids, scope: scope)
        return ["records": zip(zip(ids, results), renderings).map { pair, rendering -> WireFormat.Object in
            switch pair.1 {
            case .found(let record): return WireFormat.encode(record, rendering)
            case .failed(_, let e): return WireFormat.encode(e, recordName: pair.0.recordName)
            }
        }]
    }

    /// Queries with `EQUALS` filters in one zone; sorting, paging, other comparators and zone-wide
    /// queries come with a later phase and are refused by name until then.
    func queryRecords(_ body: WireObject, scope: DatabaseScope,
                      client: EmbeddedStoreClient) async throws -> WireFormat.Object {
        try body.allowing(.queryRequest)
        try Self.refuseNotYetSupported(body, "resultsLimit", what: "paging a query")
        try Self.refuseNotYetSupported(body, "continuationMarker", what: "paging a query")
        let zoneID = try body["zoneID"].map { try WireFormat.decodeZoneID($0) }
        // "This key is ignored if zoneID is non-null."
        if zoneID == nil, try body.bool("zoneWide") == true {
            throw WireFormat.ShapeError("zoneWide: searching every zone is not supported yet (docs/CLOUDKIT.md)")
        }
        _ = try body.bool("zoneWide")
        let rendering = try Self.rendering(body)
        guard let query = try body.object("query") else { throw WireFormat.ShapeError("query is required") }
        try query.allowing(.query)
        let type = try query.requiredString("recordType")
        if let sort = try query.array("sortBy"), !sort.isEmpty {
            throw WireFormat.ShapeError("query.sortBy: sorting is not supported yet (docs/CLOUDKIT.md)")
        }
        let zone = zoneID ?? .defaultZone
        var filters: [String: FieldValue] = [:]
        for f in try query.objects("filterBy") {
            try f.allowing(.filter)
            let comparator = try f.requiredString("comparator")
            guard comparator == "EQUALS" else {
                throw WireFormat.ShapeError("\(f.name("comparator")): \(comparator) is not supported yet; "
                                            + "EQUALS is (docs/CLOUDKIT.md)")
            }
            try Self.refuseNotYetSupported(f, "systemFieldName", what: "filtering on system fields")
            try Self.refuseNotYetSupported(f, "distance", what: "NEAR")
            let name = try f.requiredString("fieldName")
            guard let raw = f["fieldValue"] else { throw WireFormat.ShapeError("\(f.name("fieldValue")) is required") }
            guard let value = try WireFormat.decodeField(raw, name: name, zone: zone) else {
                throw WireFormat.ShapeError("\(f.name("fieldValue")) must not be null")
            }
            filters[name] = value
        }
        let records = try await client.queryRecords(recordType: type, in: zone, filters: filters, scope: scope)
        return ["records": records.map { WireFormat.encode($0, rendering) }]
    }
}
