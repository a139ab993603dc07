import Foundation
import RecordStore

// records/query as CloudKit Web Services Reference's "Fetching Records Using a Query
// (records/query)" documents it, with its Query, Filter and Sort Descriptor dictionaries
// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/QueryingRecords.html).
// Filtering, sorting and paging happen in the engine (`StoreEngine.queryRecords`), the same for
// every backend; this reads the request and writes the answer.
extension StoreAPI {
    func queryRecords(_ body: WireObject, scope: DatabaseScope,
                      client: EmbeddedStoreClient) async throws -> WireFormat.Object {
        try body.allowing(.queryRequest)
        let zoneID = try body["zoneID"].map { try WireFormat.decodeZoneID($0) }
        // "This key is ignored if zoneID is non-null."
        let zoneWide = try body.bool("zoneWide") ?? false
        let rendering = try Self.rendering(body)
        let resultsLimit = try body.positiveInt("resultsLimit")
        let marker = try body.string("continuationMarker")
        guard let q = try body.object("query") else { throw WireFormat.ShapeError("query is required") }
        let query = try Self.decodeQuery(q, zone: zoneID ?? .defaultZone)
        let page = try await client.query(query, in: zoneID, zoneWide: zoneWide, resultsLimit: resultsLimit,
                                          continuationMarker: marker, scope: scope)
        var answer: WireFormat.Object = ["records": page.records.map { RecordJSON($0, rendering) as Any }]
        if let next = page.continuationMarker { answer["continuationMarker"] = next }
        return answer
    }

    /// The Query dictionary: `recordType` (required), `filterBy`, `sortBy`.
    static func decodeQuery(_ q: WireObject, zone: ZoneID,
                            limits: RecordQuery.Limits = RecordQuery.Limits()) throws -> RecordQuery {
        try q.allowing(.query)
        let type = try q.requiredString("recordType")
        // Counted before any is read: a request of a million filters is refused, not decoded.
        for key in ["filterBy", "sortBy"] {
            let count = try q.array(key)?.count ?? 0
            let limit = key == "filterBy" ? limits.filters : limits.sortDescriptors
            if count > limit {
                throw StoreError(.limitExceeded, "\(q.name(key)): \(count) dictionaries; the limit is \(limit)")
            }
        }
        var filters: [QueryFilter] = []
        for f in try q.objects("filterBy") {
            filters.append(try decodeFilter(f, zone: zone, limits: limits))
        }
        var sort: [QuerySort] = []
        for s in try q.objects("sortBy") {
            try s.allowing(.sort)
            var location: Location?
            if let raw = s["relativeLocation"] {
                guard case .location(let l)? = try WireFormat.decodeField(raw, name: s.name("relativeLocation")) else {
                    throw WireFormat.ShapeError("\(s.name("relativeLocation")) must be a LOCATION field dictionary")
                }
                location = l
            }
            sort.append(QuerySort(try s.requiredString("fieldName"), ascending: try s.bool("ascending") ?? true,
                                  relativeLocation: location))
        }
        return RecordQuery(recordType: type, filters: filters, sort: sort)
    }

    /// The Filter dictionary: `comparator`, `fieldName`, `fieldValue` (required), `distance` (NEAR).
    private static func decodeFilter(_ f: WireObject, zone: ZoneID,
                                     limits: RecordQuery.Limits) throws -> QueryFilter {
        try f.allowing(.filter)
        let name = try f.requiredString("comparator")
        guard let comparator = QueryComparator(rawValue: name) else {
            let known = QueryComparator.allCases.map(\.rawValue).joined(separator: ", ")
            throw WireFormat.ShapeError("\(f.name("comparator")): unknown comparator '\(name)' (the Filter "
                                        + "dictionary's: \(known))")
        }
        let system = try f.string("systemFieldName").map { name throws -> QuerySystemField in
            guard let known = QuerySystemField(rawValue: name) else {
                let names = QuerySystemField.allCases.map(\.rawValue).joined(separator: ", ")
                throw WireFormat.ShapeError("\(f.name("systemFieldName")): unknown system field '\(name)' (\(names))")
            }
            return known
        }
        let field: String
        switch (try f.string("fieldName"), system) {
        case (let name?, nil): field = name
        case (nil, let known?): field = known.rawValue
        case (_?, _?):
            throw WireFormat.ShapeError("\(f.name("fieldName")) and \(f.name("systemFieldName")): a filter names one")
        case (nil, nil):
            throw WireFormat.ShapeError("\(f.name("fieldName")) or \(f.name("systemFieldName")) is required")
        }
        guard let raw = f["fieldValue"] else { throw WireFormat.ShapeError("\(f.name("fieldValue")) is required") }
        // A list's items counted before they are read.
        if let items = (raw as? WireFormat.Object)?["value"] as? [Any], items.count > limits.valuesPerFilter {
            throw StoreError(.limitExceeded, "\(f.name("fieldValue")): \(items.count) values; the limit is "
                             + "\(limits.valuesPerFilter)")
        }
        guard let value = try WireFormat.decodeField(raw, name: field, zone: zone) else {
            throw WireFormat.ShapeError("\(f.name("fieldValue")) must not be null")
        }
        var distance: Double?
        if let d = f["distance"] {
            guard !WireFormat.isBoolean(d), let n = d as? NSNumber else {
                throw WireFormat.ShapeError("\(f.name("distance")) must be a number of metres")
            }
            distance = n.doubleValue
        }
        if let system {
            if distance != nil { throw WireFormat.ShapeError("\(f.name("distance")) is only read by NEAR on a field") }
            return QueryFilter(comparator, system: system, systemValue(value, system))
        }
        return QueryFilter(comparator, field, value, distance: distance)
    }

    /// A system field's value as the engine compares it: a name sent as the reference clients send
    /// (`{"recordName": …}`) is its name, a time sent as a number is a `TIMESTAMP`; other values stay
    /// as sent, for the engine to refuse by type.
    private static func systemValue(_ value: FieldValue, _ system: QuerySystemField) -> FieldValue {
        func item(_ v: FieldValue) -> FieldValue {
            switch v {
            case .reference(let r) where !system.isTimestamp: return .string(r.recordID.recordName)
            case .int64(let ms) where system.isTimestamp: return .timestamp(ms)
            default: return v
            }
        }
        if case .list(let items) = value { return .list(items.map(item)) }
        return item(value)
    }

    /// zones/lookup ("Fetching Zones by Identifier", GettingZonesbyIdentifier.html): `zones`, an
    /// array of Zone ID dictionaries; one Zone Dictionary (`zoneID`, `atomic`, `syncToken`) or
    /// Zone Fetch Error Dictionary per zone, in the request's order.
    func lookupZones(_ body: WireObject, scope: DatabaseScope,
                     client: EmbeddedStoreClient) async throws -> WireFormat.Object {
        try body.allowing(.zoneLookupRequest)
        let items = try body.requiredArray("zones")
        var ids: [ZoneID] = []
        ids.reserveCapacity(min(items.count, 256))
        for (i, item) in items.enumerated() {
            ids.append(try WireFormat.decodeZoneID(item, context: "zones[\(i)]"))
        }
        return ["zones": try await client.lookupZones(ids, scope: scope).map(Self.encodeZoneLookup)]
    }
}
