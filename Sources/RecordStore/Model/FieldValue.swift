/// A typed field value, as CloudKit records hold them.
///
/// The types of CloudKit Web Services Reference, "Types and Dictionaries" → CKValue
/// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/Types.html):
/// String, Int(64), Double, Date/Time, Bytes, Reference, Location, Asset, and lists of each.
/// (The reference's JavaScript `Boolean` has no schema type: it is stored as an `INT64` 0 or 1.)
///
/// Only a reference, a location and an asset are boxed: the other cases fit in two words, so a
/// field costs no allocation of its own (a list's items live in their array).
public enum FieldValue: Hashable, Sendable {
    case string(String)
    case int64(Int64)
    case double(Double)
    /// Milliseconds since the Unix epoch.
    case timestamp(Int64)
    case bytes([UInt8])
    indirect case reference(Reference)
    indirect case location(Location)
    indirect case asset(Asset)
    /// A list of values of one type (`<TYPE>_LIST`). Lists never nest; a save with items of two
    /// types is refused (a journal written before that rule may still hold one, and reads it).
    case list([FieldValue])
    /// A list with no items that keeps the type it was written with: `elementType` is the item
    /// type as CloudKit spells it (`INT64` for an empty `INT64_LIST`).
    case emptyList(elementType: String)

    /// The item types a typed list may have.
    public static let listElementTypes: Set<String> = [
        "STRING", "INT64", "DOUBLE", "TIMESTAMP", "BYTES", "REFERENCE", "LOCATION", "ASSET", "ASSETID",
    ]

    /// A location's numbers as they count against the record limit.
    static let locationSize = 8 * 8

    /// The bytes this value counts for against the 1 MB record limit (an asset's file does not
    /// count, its dictionary does).
    public var dataSize: Int {
        switch self {
        case .string(let s): return s.utf8.count
        case .int64, .double, .timestamp: return 8
        case .bytes(let b): return b.count
        case .reference(let r):
            return r.recordID.recordName.utf8.count + r.recordID.zoneID.zoneName.utf8.count
                + r.recordID.zoneID.ownerName.utf8.count
        case .location: return Self.locationSize
        case .asset(let a): return a.dataSize
        case .list(let items): return items.reduce(0) { $0 + $1.dataSize }
        case .emptyList: return 0
        }
    }

    /// The type's name as CloudKit Web Services spells it.
    public var typeName: String {
        switch self {
        case .string: return "STRING"
        case .int64: return "INT64"
        case .double: return "DOUBLE"
        case .timestamp: return "TIMESTAMP"
        case .bytes: return "BYTES"
        case .reference: return "REFERENCE"
        case .location: return "LOCATION"
        case .asset(let a): return a.spelling.rawValue
        case .list(let items): return items.first.map { "\($0.typeName)_LIST" } ?? "STRING_LIST"
        case .emptyList(let elementType): return "\(elementType)_LIST"
        }
    }

    public var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }
    public var int64Value: Int64? { if case .int64(let v) = self { return v } else { return nil } }
    public var doubleValue: Double? { if case .double(let v) = self { return v } else { return nil } }
    public var timestampValue: Int64? { if case .timestamp(let v) = self { return v } else { return nil } }
    public var bytesValue: [UInt8]? { if case .bytes(let v) = self { return v } else { return nil } }
    public var referenceValue: Reference? { if case .reference(let r) = self { return r } else { return nil } }
    public var locationValue: Location? { if case .location(let l) = self { return l } else { return nil } }
    public var assetValue: Asset? { if case .asset(let a) = self { return a } else { return nil } }
}
