import Foundation
import RecordStore

// Field values on the wire: the Record Field Dictionary `{"value": CKValue, "type": …}` of CloudKit
// Web Services Reference, "Types and Dictionaries"
// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/Types.html),
// with the Location, Asset and Reference dictionaries as values.
extension WireFormat {
    /// The `type` names this store reads and writes, lists aside (`<TYPE>_LIST`).
    public static let fieldTypes: Set<String> = FieldValue.listElementTypes

    // MARK: Encoding

    public static func encodeFields(_ fields: RecordFields, numbersAsStrings: Bool = false) -> Object {
        // Made to size: grown from empty, a record of two fields took two tables.
        var o = Object(minimumCapacity: fields.count)
        for (k, v) in fields { o[k] = encodeField(v, numbersAsStrings: numbersAsStrings) }
        return o
    }

    /// `{"value", "type"}`; with `numbersAsStrings`, INT64, DOUBLE and TIMESTAMP values (and their
    /// lists' items) are written as strings, as a client in a language without 64-bit integers asks.
    public static func encodeField(_ v: FieldValue, numbersAsStrings: Bool = false) -> Object {
        switch v {
        case .list(let items):
            if let first = items.first, items.allSatisfy({ $0.typeName == first.typeName && !isList($0) }) {
                return ["type": v.typeName, "value": items.map { bareValue($0, numbersAsStrings) }]
            }
            // Only a journal written before lists were checked holds one of mixed or nested items.
            return ["type": "LIST", "value": items.map { encodeField($0, numbersAsStrings: numbersAsStrings) }]
        case .emptyList(let elementType):
            return ["type": "\(elementType)_LIST", "value": [Any]()]
        default:
            return ["type": v.typeName, "value": bareValue(v, numbersAsStrings)]
        }
    }

    private static func isList(_ v: FieldValue) -> Bool {
        switch v {
        case .list, .emptyList: true
        default: false
        }
    }

    private static func bareValue(_ v: FieldValue, _ numbersAsStrings: Bool) -> Any {
        switch v {
        case .string(let s): return s
        case .int64(let i): return numbersAsStrings ? String(i) : i as Any
        case .double(let d): return numbersAsStrings ? "\(d)" : d as Any
        case .timestamp(let t): return numbersAsStrings ? String(t) : t as Any
        case .bytes(let b): return Data(b).base64EncodedString()
        case .reference(let r): return encode(r)
        case .location(let l): return encode(l)
        case .asset(let a): return encode(a)
        case .list(let items): return items.map { encodeField($0, numbersAsStrings: numbersAsStrings) }
        case .emptyList: return [Any]()
        }
    }

    public static func encode(_ r: Reference) -> Object {
        ["recordName": r.recordID.recordName, "zoneID": encode(r.recordID.zoneID), "action": r.action.rawValue]
    }

    public static func encode(_ l: Location) -> Object {
        var o: Object = ["latitude": l.latitude, "longitude": l.longitude]
        for (key, value) in l.measurements { if let value { o[key] = value } }
        if let t = l.timestamp { o["timestamp"] = t }
        return o
    }

    /// An asset with a kept file (its `receipt` names one) is answered with the file's `downloadURL`
    /// (StoreAPI+Assets.swift) instead of the receipt, the upload's credential.
    public static func encode(_ a: Asset) -> Object {
        var o: Object = ["fileChecksum": a.fileChecksum, "size": a.size]
        for (key, value) in a.strings { if let value { o[key] = value } }
        if let receipt = a.receipt, StoredAsset.isReceipt(receipt) {
            o["receipt"] = nil
            o["downloadURL"] = AssetRoutes.downloadURL(receipt)
        }
        return o
    }

    // MARK: Decoding

    /// A field's value; nil when its value is JSON `null` (in an update: clear the field).
    /// `zone` is the record's: a reference without a `zoneID` names a record of it. `legacyLists`:
    /// read a `LIST` of field dictionaries, which this store answers for a list of mixed or nested
    /// items that a journal written before lists were checked may hold (a response, never a request).
    public static func decodeField(_ any: Any, name: String, zone: ZoneID = .defaultZone,
                                   legacyLists: Bool = false) throws -> FieldValue? {
        if isNull(any) { return nil }
        let field = try WireObject(any, at: "field \(name)", what: #"{"value": …, "type": …}"#)
        try field.allowing(.field)
        guard let value = field["value"] else {
            if field.object.keys.contains("value") { return nil }
            throw ShapeError(#"field \#(name) must be {"value": …, "type": …}"#)
        }
        let type = try field.string("type") ?? inferType(value, name: name)
        if type == "LIST", legacyLists, let items = value as? [Any] {
            var out: [FieldValue] = []
            for item in items {
                guard let v = try decodeField(item, name: name, zone: zone, legacyLists: true) else {
                    throw ShapeError("field \(name): a LIST item is null")
                }
                out.append(v)
            }
            return .list(out)
        }
        if type.hasSuffix("_LIST") {
            guard let items = value as? [Any] else { throw ShapeError("field \(name): \(type) needs an array") }
            let element = String(type.dropLast(5))
            guard fieldTypes.contains(element) else { throw ShapeError("field \(name): unknown type '\(type)'") }
            // An empty list keeps its type: an empty INT64_LIST comes back as one.
            if items.isEmpty { return .emptyList(elementType: element) }
            var out: [FieldValue] = []
            out.reserveCapacity(items.count)
            for item in items { out.append(try decodeBare(item, type: element, name: name, zone: zone)) }
            return .list(out)
        }
        return try decodeBare(value, type: type, name: name, zone: zone)
    }

    /// The type an untyped value has: a string is a STRING, `true`/`false` an INT64, a number an
    /// INT64 or a DOUBLE by its text, a dictionary a LOCATION, REFERENCE or ASSETID by its keys, an
    /// array a list of its first item's type.
    private static func inferType(_ value: Any, name: String) throws -> String {
        if value is String { return "STRING" }
        if isBoolean(value) { return "INT64" }
        if value is JSONLargeInteger { return "DOUBLE" }
        if let n = value as? NSNumber { return isFloatingPoint(n) ? "DOUBLE" : "INT64" }
        if let o = value as? Object {
            if o["latitude"] != nil || o["longitude"] != nil { return "LOCATION" }
            if o["recordName"] != nil { return "REFERENCE" }
            if o["fileChecksum"] != nil { return "ASSETID" }
        }
        if let items = value as? [Any] {
            guard let first = items.first else {
                throw ShapeError("field \(name): an empty list needs its type (e.g. \"STRING_LIST\")")
            }
            if first is [Any] { throw ShapeError("field \(name): a list holds no lists (CloudKit lists do not nest)") }
            return try inferType(first, name: name) + "_LIST"
        }
        throw ShapeError("field \(name): the value's type cannot be told without \"type\"")
    }

    private static func decodeBare(_ value: Any, type: String, name: String, zone: ZoneID) throws -> FieldValue {
        switch type {
        case "STRING":
            guard let s = value as? String else { throw ShapeError("field \(name): STRING needs a string") }
            return .string(s)
        case "INT64":
            // CloudKit has no boolean type: true and false are the integers 1 and 0.
            if isBoolean(value), let b = value as? Bool { return .int64(b ? 1 : 0) }
            return .int64(try integer(value, field: name, type: type, what: "an integer"))
        case "DOUBLE":
            return .double(try double(value, field: name, what: "DOUBLE"))
        case "TIMESTAMP":
            return .timestamp(try integer(value, field: name, type: type, what: "milliseconds"))
        case "BYTES":
            guard let s = value as? String, let d = Data(base64Encoded: s) else {
                throw ShapeError("field \(name): BYTES needs base64")
            }
            return .bytes([UInt8](d))
        case "REFERENCE":
            return .reference(try decodeReference(value, field: name, zone: zone))
        case "LOCATION":
            return .location(try decodeLocation(value, field: name))
        case "ASSET", "ASSETID":
            return .asset(try decodeAsset(value, field: name, spelling: Asset.Spelling(rawValue: type)!))
        case "LIST":
            throw ShapeError("field \(name): type LIST is not a CloudKit type; a list is <TYPE>_LIST, of one type")
        default:
            throw ShapeError("field \(name): unknown type '\(type)'")
        }
    }

    /// Reference Dictionary: `recordName` (required), `zoneID` (the record's zone when left out),
    /// `action` (`NONE` when left out).
    static func decodeReference(_ value: Any, field name: String, zone: ZoneID) throws -> Reference {
        let o = try WireObject(value, at: "field \(name)", what: #"a REFERENCE {"recordName", "zoneID", "action"}"#)
        try o.allowing(.reference)
        let recordName = try o.requiredString("recordName")
        let target = try o["zoneID"].map { try decodeZoneID($0, context: o.name("zoneID")) } ?? zone
        var action = ReferenceAction.none
        if let text = try o.string("action") {
            guard let a = ReferenceAction(rawValue: text) else {
                throw ShapeError("\(o.name("action")): '\(text)' is not NONE, DELETE_SELF or VALIDATE")
            }
            action = a
        }
        return Reference(RecordID(recordName: recordName, zoneID: target), action: action)
    }

    /// Location Dictionary: `latitude` and `longitude` required, the rest optional.
    static func decodeLocation(_ value: Any, field name: String) throws -> Location {
        let o = try WireObject(value, at: "field \(name)", what: #"a LOCATION {"latitude", "longitude", …}"#)
        try o.allowing(.location)
        func number(_ key: String) throws -> Double? {
            try o[key].map { try double($0, field: o.name(key), what: "a number") }
        }
        guard let latitude = try number("latitude"), let longitude = try number("longitude") else {
            throw ShapeError("field \(name): a location needs latitude and longitude")
        }
        return Location(latitude: latitude, longitude: longitude,
                        horizontalAccuracy: try number("horizontalAccuracy"),
                        verticalAccuracy: try number("verticalAccuracy"), altitude: try number("altitude"),
                        speed: try number("speed"), course: try number("course"),
                        timestamp: try o["timestamp"].map {
                            try integer($0, field: o.name("timestamp"), type: "TIMESTAMP", what: "milliseconds")
                        })
    }

    /// Asset Dictionary: `fileChecksum` and `size` required; `referenceChecksum`, `wrappingKey`,
    /// `receipt` and `downloadURL` kept as given.
    static func decodeAsset(_ value: Any, field name: String, spelling: Asset.Spelling) throws -> Asset {
        let o = try WireObject(value, at: "field \(name)", what: #"an asset {"fileChecksum", "size", …}"#)
        try o.allowing(.asset)
        let checksum = try o.requiredString("fileChecksum")
        guard let sizeValue = o["size"] else { throw ShapeError("\(o.name("size")) is required") }
        return Asset(spelling: spelling, fileChecksum: checksum,
                     size: try integer(sizeValue, field: o.name("size"), type: "size", what: "a byte count"),
                     referenceChecksum: try o.string("referenceChecksum"), wrappingKey: try o.string("wrappingKey"),
                     receipt: try o.string("receipt"), downloadURL: try o.string("downloadURL"))
    }

    /// Whether `value` is JSON's `null`. Asked by exact type: `is NSNull` would first bridge a string
    /// or a dictionary to its Foundation class (a copy of all of it) to find out.
    static func isNull(_ value: Any) -> Bool { type(of: value) == NSNull.self }

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

    /// An INT64 or TIMESTAMP value (a JSON integer, or its decimal text, as `numbersAsStrings`
    /// clients send it); the error names the field and says whether the value was not an integer
    /// or out of range.
    static func integer(_ value: Any, field name: String, type: String, what: String) throws -> Int64 {
        if let i = int64(value) { return i }
        if let text = value as? String {
            if let i = Int64(text) { return i }
            if !text.isEmpty, text.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D }) {
                throw ShapeError("field \(name): \(type) value \(text.prefix(40)) is out of range "
                                 + "(\(Int64.min) … \(Int64.max))")
            }
            throw ShapeError("field \(name): \(type) needs \(what)")
        }
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

    /// A DOUBLE (a JSON number, or its text); never NaN or infinite.
    static func double(_ value: Any, field name: String, what: String) throws -> Double {
        if let large = value as? JSONLargeInteger { return large.double }
        if let text = value as? String {
            guard let d = Double(text), d.isFinite, !text.isEmpty,
                  text.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D || $0 == 0x2B || $0 == 0x2E
                                        || $0 == 0x65 || $0 == 0x45 }) else {
                throw ShapeError("field \(name): \(what) needs a finite number")
            }
            return d
        }
        guard !isBoolean(value), let n = value as? NSNumber else {
            throw ShapeError("field \(name): \(what) needs a number")
        }
        return n.doubleValue
    }
}
