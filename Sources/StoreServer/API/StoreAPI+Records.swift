import Foundation
import RecordStore

// records/modify and records/lookup, key by key as CloudKit Web Services Reference documents
// them: "Modifying Records (records/modify)", "Fetching Records by Record Name (records/lookup)"
// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/ModifyRecords.html,
// …/LookupRecords.html). records/query is in StoreAPI+Query.swift. A documented key this store does not serve yet is
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
    static func encode(_ result: RecordResult, _ rendering: RecordRendering) -> Any {
        switch result {
        case .saved(let record): return RecordJSON(record, rendering)
        case .deleted(let id):
            return ["recordName": id.recordName, "deleted": true, "zoneID": WireFormat.encode(id.zoneID)]
        case .failed(let id, let e): return WireFormat.encode(e, recordName: id.recordName)
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
            if Self.isZoneShareRecord(recordObject) || Self.isRecordShareRecord(recordObject) {
                let share = try Self.decodeShareRecord(recordObject, zone: zone, kind: kind)
                operations.append(Self.operation(kind, share.record, removing: share.cleared))
                renderings.append(try Self.rendering(op, over: rendering))
                continue
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
        // Zone shares (cloudkit.zoneshare) are answered from the share; the records from the zones.
        let shares = try await lookupShareRecords(ids, renderings: renderings, scope: scope, client: client)
        let recordIDs = shares.isEmpty ? ids : ids.enumerated().filter { shares[$0.offset] == nil }.map(\.element)
        var results = recordIDs.isEmpty ? [] : try await client.lookupRecords(recordIDs, scope: scope)[...]
        return ["records": zip(ids, renderings).enumerated().map { i, entry -> Any in
            if let share = shares[i] { return share }
            let (id, rendering) = entry
            switch results.popFirst() {
            case .found(let record): return RecordJSON(record, rendering)
            case .failed(_, let e): return WireFormat.encode(e, recordName: id.recordName)
            case nil: return WireFormat.encode(StoreError(.internalError, "no answer"), recordName: id.recordName)
            }
        }]
    }
}
