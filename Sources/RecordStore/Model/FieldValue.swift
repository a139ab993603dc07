/// A typed field value, as CloudKit records hold them.
///
/// Only a reference (three strings) is boxed: the other cases fit in two words, so a field
/// costs no allocation of its own (a list's items live in their array).
public enum FieldValue: Hashable, Sendable {
    case string(String)
    case int64(Int64)
    case double(Double)
    /// Milliseconds since the Unix epoch.
    case timestamp(Int64)
    case bytes([UInt8])
    indirect case reference(RecordID)
    /// A list of values (CloudKit lists are homogeneous; the store does not insist).
    case list([FieldValue])
    /// A list with no items that keeps the type it was written with: `elementType` is the item
    /// type as CloudKit spells it (`INT64` for an empty `INT64_LIST`).
    case emptyList(elementType: String)

    /// The item types a typed list may have.
    public static let listElementTypes: Set<String> = ["STRING", "INT64", "DOUBLE", "TIMESTAMP", "BYTES", "REFERENCE"]

    /// The bytes this value counts for against the 1 MB record limit.
    public var dataSize: Int {
        switch self {
        case .string(let s): return s.utf8.count
        case .int64, .double, .timestamp: return 8
        case .bytes(let b): return b.count
        case .reference(let r): return r.recordName.utf8.count + r.zoneID.zoneName.utf8.count + r.zoneID.ownerName.utf8.count
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
        case .list(let items): return items.first.map { "\($0.typeName)_LIST" } ?? "STRING_LIST"
        case .emptyList(let elementType): return "\(elementType)_LIST"
        }
    }

    public var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }
    public var int64Value: Int64? { if case .int64(let v) = self { return v } else { return nil } }
    public var doubleValue: Double? { if case .double(let v) = self { return v } else { return nil } }
    public var timestampValue: Int64? { if case .timestamp(let v) = self { return v } else { return nil } }
    public var bytesValue: [UInt8]? { if case .bytes(let v) = self { return v } else { return nil } }
}
