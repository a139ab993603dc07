import Foundation
import RecordStore

/// CloudKit Web Services' JSON shapes for records, zones, tokens and errors, both ways.
///
/// Records: `{"recordName","recordType","recordChangeTag","zoneID":{"zoneName","ownerRecordName"},
/// "fields":{name:{"value","type"}},"created":{"timestamp","userRecordName"},"modified":{…}}`.
/// Field types: STRING, INT64, DOUBLE, TIMESTAMP (ms), BYTES (base64), REFERENCE
/// (`{"recordName","zoneID","action":"NONE"}`), and `<TYPE>_LIST` with an array value (an empty one
/// keeps its type). Integers out of Int64 are refused naming the field; doubles are written shortest
/// and read exactly (`JSONReader`), so they round-trip bit for bit.
public enum WireFormat {
    public typealias Object = [String: Any]

    /// A request body that does not have the expected shape.
    public struct ShapeError: Error, CustomStringConvertible, Sendable {
        public var description: String
        public init(_ d: String) { description = d }
    }

    // MARK: Zones

    public static func encode(_ zone: ZoneID) -> Object {
        ["zoneName": zone.zoneName, "ownerRecordName": zone.ownerName]
    }

    public static func decodeZoneID(_ any: Any?, context: String = "zoneID") throws -> ZoneID {
        guard let o = any as? Object, let name = o["zoneName"] as? String else {
            throw ShapeError("\(context) needs {\"zoneName\": …}")
        }
        return ZoneID(zoneName: name, ownerName: o["ownerRecordName"] as? String ?? o["ownerName"] as? String ?? "")
    }

    // MARK: Records

    public static func encode(_ record: Record) -> Object {
        var o: Object = ["recordName": record.id.recordName, "recordType": record.recordType,
                         "zoneID": encode(record.id.zoneID), "fields": encodeFields(record.fields)]
        if let tag = record.recordChangeTag { o["recordChangeTag"] = tag }
        if let c = record.created { o["created"] = ["timestamp": c.timestamp, "userRecordName": c.userRecordName] }
        if let m = record.modified { o["modified"] = ["timestamp": m.timestamp, "userRecordName": m.userRecordName] }
        return o
    }

    public static func decodeRecord(_ any: Any?, defaultZone: ZoneID) throws -> Record {
        guard let o = any as? Object else { throw ShapeError("a record must be an object") }
        guard let name = o["recordName"] as? String else { throw ShapeError("a record needs recordName") }
        guard let type = o["recordType"] as? String else { throw ShapeError("record \(name) needs recordType") }
        let zone = o["zoneID"] == nil ? defaultZone : try decodeZoneID(o["zoneID"])
        var pairs: [(String, FieldValue)] = []
        if let f = o["fields"] {
            guard let fo = f as? Object else { throw ShapeError("fields of \(name) must be an object") }
            pairs.reserveCapacity(fo.count)
            for (key, value) in fo { pairs.append((key, try decodeField(value, name: "\(name).\(key)"))) }
        }
        let fields = RecordFields(pairs)
        func stamp(_ any: Any?) -> RecordStamp? {
            guard let s = any as? Object, let t = int64(s["timestamp"]), let u = s["userRecordName"] as? String else { return nil }
            return RecordStamp(timestamp: t, userRecordName: u)
        }
        return Record(recordType: type, id: RecordID(recordName: name, zoneID: zone), fields: fields,
                      recordChangeTag: o["recordChangeTag"] as? String, created: stamp(o["created"]),
                      modified: stamp(o["modified"]))
    }

    public static func encodeFields(_ fields: RecordFields) -> Object {
        var o: Object = [:]
        for (k, v) in fields { o[k] = encodeField(v) }
        return o
    }

    public static func encodeField(_ v: FieldValue) -> Object {
        switch v {
        case .list(let items):
            let types = Set(items.map(\.typeName))
            if types.count <= 1, !items.contains(where: { if case .list = $0 { return true } else { return false } }) {
                return ["type": v.typeName, "value": items.map(bareValue)]
            }
            return ["type": "LIST", "value": items.map(encodeField)]
        case .emptyList(let elementType):
            return ["type": "\(elementType)_LIST", "value": [Any]()]
        default:
            return ["type": v.typeName, "value": bareValue(v)]
        }
    }

    private static func bareValue(_ v: FieldValue) -> Any {
        switch v {
        case .string(let s): return s
        case .int64(let i): return i
        case .double(let d): return d
        case .timestamp(let t): return t
        case .bytes(let b): return Data(b).base64EncodedString()
        case .reference(let id): return ["recordName": id.recordName, "zoneID": encode(id.zoneID), "action": "NONE"] as Object
        case .list(let items): return items.map(encodeField)
        case .emptyList: return [Any]()
        }
    }

    public static func decodeField(_ any: Any, name: String) throws -> FieldValue {
        guard let o = any as? Object, let value = o["value"] else {
            throw ShapeError("field \(name) must be {\"value\": …, \"type\": …}")
        }
        let type = (o["type"] as? String) ?? inferType(value)
        if type == "LIST" {
            guard let items = value as? [Any] else { throw ShapeError("field \(name): LIST needs an array") }
            return .list(try items.map { try decodeField($0, name: name) })
        }
        if type.hasSuffix("_LIST") {
            guard let items = value as? [Any] else { throw ShapeError("field \(name): \(type) needs an array") }
            let element = String(type.dropLast(5))
            guard FieldValue.listElementTypes.contains(element) else {
                throw ShapeError("field \(name): unknown type '\(type)'")
            }
            // An empty list keeps its type: an empty INT64_LIST comes back as one.
            if items.isEmpty { return .emptyList(elementType: element) }
            return .list(try items.map { try decodeBare($0, type: element, name: name) })
        }
        return try decodeBare(value, type: type, name: name)
    }

    private static func inferType(_ value: Any) -> String {
        if value is String { return "STRING" }
        if isBoolean(value) { return "UNKNOWN" }
        if value is JSONLargeInteger { return "DOUBLE" }
        if let n = value as? NSNumber { return isFloatingPoint(n) ? "DOUBLE" : "INT64" }
        return "UNKNOWN"
    }

    private static func decodeBare(_ value: Any, type: String, name: String) throws -> FieldValue {
        switch type {
        case "STRING":
            guard let s = value as? String else { throw ShapeError("field \(name): STRING needs a string") }
            return .string(s)
        case "INT64":
            return .int64(try integer(value, field: name, type: type, what: "an integer"))
        case "DOUBLE":
            if let large = value as? JSONLargeInteger { return .double(large.double) }
            guard !isBoolean(value), let n = value as? NSNumber else {
                throw ShapeError("field \(name): DOUBLE needs a number")
            }
            return .double(n.doubleValue)
        case "TIMESTAMP":
            return .timestamp(try integer(value, field: name, type: type, what: "milliseconds"))
        case "BYTES":
            guard let s = value as? String, let d = Data(base64Encoded: s) else {
                throw ShapeError("field \(name): BYTES needs base64")
            }
            return .bytes([UInt8](d))
        case "REFERENCE":
            guard let o = value as? Object, let rn = o["recordName"] as? String else {
                throw ShapeError("field \(name): REFERENCE needs {\"recordName\", \"zoneID\"}")
            }
            let zone = o["zoneID"] == nil ? ZoneID.defaultZone : try decodeZoneID(o["zoneID"])
            return .reference(RecordID(recordName: rn, zoneID: zone))
        default:
            throw ShapeError("field \(name): unknown type '\(type)'")
        }
    }

    /// Whether `value` is JSON's `true` or `false` (on Linux `is Bool` also holds for an NSNumber 0 or 1).
    static func isBoolean(_ value: Any) -> Bool { type(of: value) == Bool.self }

    /// Whether the reader read this number with a fraction or exponent.
    static func isFloatingPoint(_ n: NSNumber) -> Bool {
        let t = String(cString: n.objCType)
        return t == "d" || t == "f"
    }

    /// The integer `any` holds exactly, or nil: a fraction, a value outside Int64 (2^64, 1e19) or
    /// a non-number never becomes an integer (no wrapping, no rounding).
    static func int64(_ any: Any?) -> Int64? {
        guard let any, !isBoolean(any), let n = any as? NSNumber else { return nil }
        return isFloatingPoint(n) ? Int64(exactly: n.doubleValue) : n.int64Value
    }

    /// An INT64 or TIMESTAMP value; the error names the field and says whether the value was not
    /// an integer or out of range.
    private static func integer(_ value: Any, field name: String, type: String, what: String) throws -> Int64 {
        if let i = int64(value) { return i }
        if let large = value as? JSONLargeInteger {
            throw ShapeError("field \(name): \(type) value \(large.text.prefix(40)) is out of range "
                             + "(\(Int64.min) … \(Int64.max))")
        }
        if !isBoolean(value), let n = value as? NSNumber {
            let d = n.doubleValue
            if d == d.rounded() {
                throw ShapeError("field \(name): \(type) value \(n) is out of range "
                                 + "(\(Int64.min) … \(Int64.max))")
            }
        }
        throw ShapeError("field \(name): \(type) needs \(what)")
    }

    // MARK: Errors

    public static func encode(_ error: StoreError, recordName: String? = nil) -> Object {
        var o: Object = ["serverErrorCode": error.code.serverErrorCode, "reason": error.message]
        if let r = error.retryAfter { o["retryAfter"] = r }
        if let rn = recordName { o["recordName"] = rn }
        if let server = error.serverRecord { o["serverRecord"] = encode(server) }
        return o
    }

    public static func decodeError(_ o: Object) -> StoreError {
        let code = StoreError.Code(serverErrorCode: o["serverErrorCode"] as? String ?? "") ?? .internalError
        var error = StoreError(code, o["reason"] as? String ?? "no reason given")
        error.retryAfter = (o["retryAfter"] as? NSNumber)?.doubleValue
        if let server = o["serverRecord"] { error.serverRecord = try? decodeRecord(server, defaultZone: .defaultZone) }
        return error
    }

    /// The HTTP status for a request-level error.
    public static func status(for code: StoreError.Code) -> Int {
        switch code {
        case .notAuthenticated: return 401
        case .permissionFailure: return 403
        case .zoneNotFound, .unknownItem: return 404
        case .serverRecordChanged, .alreadyExists: return 409
        case .limitExceeded: return 413
        case .requestRateLimited: return 429
        case .serviceUnavailable, .zoneBusy: return 503
        case .internalError: return 500
        case .invalidArguments, .changeTokenExpired, .batchRequestFailed: return 400
        }
    }

    // MARK: Shares and subscriptions

    public static func encode(_ share: ZoneShare) -> Object {
        ["zoneID": encode(share.zoneID), "publicPermission": share.publicPermission.rawValue,
         "shortGUID": share.changeTag, "recordName": ZoneShare.recordName,
         "participants": share.participants.values.sorted { $0.userRecordName < $1.userRecordName }.map {
             ["userRecordName": $0.userRecordName, "permission": $0.permission.rawValue,
              "acceptanceStatus": $0.status.rawValue] as Object
         }]
    }

    public static func decodeShare(_ o: Object) throws -> ZoneShare {
        let zone = try decodeZoneID(o["zoneID"])
        var participants: [String: ShareParticipant] = [:]
        for p in o["participants"] as? [Object] ?? [] {
            guard let user = p["userRecordName"] as? String,
                  let permission = SharePermission(rawValue: p["permission"] as? String ?? "") else { continue }
            participants[user] = ShareParticipant(userRecordName: user, permission: permission,
                                                  status: ParticipantStatus(rawValue: p["acceptanceStatus"] as? String ?? "") ?? .invited)
        }
        return ZoneShare(zoneID: zone, publicPermission: SharePermission(rawValue: o["publicPermission"] as? String ?? "") ?? .none,
                         participants: participants, changeTag: o["shortGUID"] as? String ?? "")
    }

    public static func encode(_ sub: Subscription) -> Object {
        var o: Object = ["subscriptionID": sub.subscriptionID]
        switch sub.kind {
        case .database: o["subscriptionType"] = "database"
        case .zone(let z): o["subscriptionType"] = "zone"; o["zoneID"] = encode(z)
        case .query(let type, let z):
            o["subscriptionType"] = "query"
            o["query"] = ["recordType": type]
            if let z { o["zoneID"] = encode(z) }
        }
        return o
    }

    public static func decodeSubscription(_ any: Any?) throws -> Subscription {
        guard let o = any as? Object, let id = o["subscriptionID"] as? String else {
            throw ShapeError("a subscription needs subscriptionID")
        }
        switch o["subscriptionType"] as? String ?? "database" {
        case "database": return Subscription(subscriptionID: id, kind: .database)
        case "zone": return Subscription(subscriptionID: id, kind: .zone(try decodeZoneID(o["zoneID"])))
        case "query":
            guard let q = o["query"] as? Object, let type = q["recordType"] as? String else {
                throw ShapeError("a query subscription needs query.recordType")
            }
            return Subscription(subscriptionID: id, kind: .query(recordType: type,
                                                                 zoneID: o["zoneID"] == nil ? nil : try decodeZoneID(o["zoneID"])))
        case let other: throw ShapeError("unknown subscriptionType '\(other)'")
        }
    }

    public static func encode(_ n: PushNotification) -> Object {
        var o: Object = ["notificationID": n.notificationID, "subscriptionID": n.subscriptionID,
                         "databaseScope": n.databaseScope.rawValue]
        if let z = n.zoneID { o["zoneID"] = encode(z) }
        return o
    }

    public static func decodeNotification(_ o: Object) -> PushNotification? {
        // A UInt64: above Int64.max the reader keeps it as a large integer literal.
        let id = (o["notificationID"] as? JSONLargeInteger).flatMap { UInt64($0.text) }
            ?? int64(o["notificationID"]).flatMap { UInt64(exactly: $0) }
        guard let id, let sub = o["subscriptionID"] as? String,
              let scope = DatabaseScope(rawValue: o["databaseScope"] as? String ?? "") else { return nil }
        return PushNotification(notificationID: id, subscriptionID: sub, databaseScope: scope,
                                zoneID: o["zoneID"] == nil ? nil : try? decodeZoneID(o["zoneID"]))
    }

    // MARK: JSON bytes

    public static func serialize(_ o: Any) -> [UInt8] { JSONWriter.serialize(o) }

    public static func parseObject(_ bytes: [UInt8]) throws -> Object {
        if bytes.isEmpty { return [:] }
        let value: Any
        do { value = try JSONReader.parse(bytes) } catch { throw ShapeError("the body is not JSON: \(error)") }
        guard let o = value as? Object else { throw ShapeError("the body is not a JSON object") }
        return o
    }
}
