import Foundation
import RecordStore

// zones/list and zones/modify, key by key as CloudKit Web Services Reference documents them:
// "Fetching Zones (zones/list)" ("fetches all the zones and their sync tokens": no request keys,
// the Zone Dictionary per zone) and "Modifying Zones (zones/modify)" (`operations`; the Zone
// Operation Dictionary: `operationType` create or delete, `zone` with its single `zoneID`)
// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/GettingAllZones.html,
// …/ModifyZones.html). zones/lookup is in StoreAPI+Query.swift.
extension DocumentedKeys {
    static let zoneListRequest = DocumentedKeys("a zones/list request", [])
    static let zoneModifyRequest = DocumentedKeys("a zones/modify request", ["operations"])
    static let zoneOperation = DocumentedKeys("a zone operation", ["operationType", "zone"])
    /// The Zone Dictionary as a request sends it; an answer's keys may come back with it.
    static let zoneDictionary = DocumentedKeys("a zone dictionary", ["zoneID"], responseOnly: ["atomic", "syncToken"])
}

extension StoreAPI {
    /// The Zone Dictionary: `zoneID`, `atomic` (custom zones), `syncToken` (the zone's change feed
    /// as it stands; none for the default zone), as zones/list, zones/lookup and zones/modify answer it.
    static func encodeZone(_ zone: ZoneID, atomic: Bool, syncToken: ChangeToken?) -> WireFormat.Object {
        var o: WireFormat.Object = ["zoneID": WireFormat.encode(zone), "atomic": atomic]
        if let syncToken { o["syncToken"] = syncToken.rawValue }
        return o
    }

    /// The Zone Fetch Error Dictionary: the error's keys and the `zoneID` it is about.
    static func encodeZoneError(_ zone: ZoneID, _ error: StoreError) -> WireFormat.Object {
        var o = WireFormat.encode(error)
        o["zoneID"] = WireFormat.encode(zone)
        return o
    }

    /// A zone lookup's answer for one zone: its Zone Dictionary, or its Zone Fetch Error Dictionary.
    static func encodeZoneLookup(_ result: ZoneLookupResult) -> WireFormat.Object {
        switch result {
        case .found(let zone, let atomic, let token): return encodeZone(zone, atomic: atomic, syncToken: token)
        case .failed(let zone, let e): return encodeZoneError(zone, e)
        }
    }

    /// zones/list: every zone of the database with its Zone Dictionary (one request of the engine,
    /// as throttling counts it).
    func listZones(_ body: WireObject, scope: DatabaseScope,
                   client: EmbeddedStoreClient) async throws -> WireFormat.Object {
        try body.allowing(.zoneListRequest)
        var zones: [WireFormat.Object] = []
        for result in try await client.listZoneDictionaries(scope: scope) {
            guard case .found(let zone, let atomic, let token) = result else { continue }
            zones.append(Self.encodeZone(zone, atomic: atomic, syncToken: token))
        }
        return ["zones": zones]
    }

    /// zones/modify: each operation `create` or `delete` of `zone.zoneID`, answered with the Zone
    /// Dictionary (a deletion with `deleted`), or the Zone Fetch Error Dictionary.
    func modifyZones(_ body: WireObject, scope: DatabaseScope,
                     client: EmbeddedStoreClient) async throws -> WireFormat.Object {
        try body.allowing(.zoneModifyRequest)
        var save: [ZoneID] = [], delete: [ZoneID] = []
        // Where each operation's answer is among the engine's (saves first, then deletes), so the
        // answers come in the request's order.
        var order: [(isSave: Bool, index: Int)] = []
        for op in try body.objects("operations", required: true) {
            try op.allowing(.zoneOperation)
            guard let zone = try op.object("zone") else {
                throw WireFormat.ShapeError("\(op.name("zone")) is required")
            }
            try zone.allowing(.zoneDictionary)
            guard let raw = zone["zoneID"] else { throw WireFormat.ShapeError("\(zone.name("zoneID")) is required") }
            let id = try WireFormat.decodeZoneID(raw, context: zone.name("zoneID"))
            switch try op.requiredString("operationType") {
            case "create":
                order.append((true, save.count))
                save.append(id)
            case "delete":
                order.append((false, delete.count))
                delete.append(id)
            case let other:
                throw WireFormat.ShapeError("\(op.name("operationType")): '\(other)' is not create or delete")
            }
        }
        // A saved zone is answered with its Zone Dictionary ("Modifying Zones": "the keys described in
        // Zone Dictionary"), its change feed's syncToken among them, which the save answers.
        let answers = try await client.modifyZonesAnswering(save: save, delete: delete, scope: scope)
        guard answers.count == order.count else { throw StoreError(.internalError, "zones/modify lost an answer") }
        return ["zones": order.map { isSave, index -> WireFormat.Object in
            let answer = answers[isSave ? index : save.count + index]
            switch answer.result {
            case .saved(let z): return Self.encodeZone(z, atomic: !z.isDefaultZone, syncToken: answer.syncToken)
            case .deleted(let z): return ["zoneID": WireFormat.encode(z), "deleted": true]
            case .failed(let z, let e): return Self.encodeZoneError(z, e)
            }
        }]
    }
}
