/// Who changed a record, from which device, and when: the `created`/`modified` dictionaries of
/// CloudKit Web Services Reference, "Types and Dictionaries" → Record Dictionary, Common Response Keys
/// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/Types.html).
public struct RecordStamp: Hashable, Sendable, Codable {
    /// Milliseconds since the Unix epoch.
    public var timestamp: Int64
    /// The user record name of whoever made the change.
    public var userRecordName: String
    /// The device the change came from, when the request named one.
    public var deviceID: String?

    public init(timestamp: Int64, userRecordName: String, deviceID: String? = nil) {
        self.timestamp = timestamp
        self.userRecordName = userRecordName
        self.deviceID = deviceID
    }
}

/// A record: a type, a name in a zone, typed fields, the server's change tag and stamps, and the
/// records it hangs from (`parent`) or is shared by (`share`).
///
/// Its contents live in one shared box (`RecordStorage`), copied when a shared record is changed:
/// copying a record costs one retain.
public struct Record: Hashable {
    @usableFromInline var storage: RecordStorage

    public init(
        recordType: String, id: RecordID, fields: RecordFields = [:], recordChangeTag: String? = nil,
        created: RecordStamp? = nil, modified: RecordStamp? = nil, parent: String? = nil, share: String? = nil,
        shortGUID: String? = nil
    ) {
        storage = .make(RecordParts(recordType: recordType, id: id, fields: fields, recordChangeTag: recordChangeTag,
                                    created: created, modified: modified, parent: parent, share: share,
                                    shortGUID: shortGUID))
    }

    /// The parts, to be changed: the box is first copied when another record shares it.
    @inlinable
    var uniqueParts: UnsafeMutablePointer<RecordParts> {
        mutating get {
            if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
            return storage.parts
        }
    }

    @inlinable
    public var recordType: String {
        get { storage.parts.pointee.recordType }
        _modify { yield &uniqueParts.pointee.recordType }
    }

    @inlinable
    public var id: RecordID {
        get { storage.parts.pointee.id }
        _modify { yield &uniqueParts.pointee.id }
    }

    @inlinable
    public var fields: RecordFields {
        get { storage.parts.pointee.fields }
        _modify { yield &uniqueParts.pointee.fields }
    }

    /// The server's tag for the version this copy came from; nil for a record never saved.
    @inlinable
    public var recordChangeTag: String? {
        get { storage.parts.pointee.recordChangeTag }
        _modify { yield &uniqueParts.pointee.recordChangeTag }
    }

    @inlinable
    public var created: RecordStamp? {
        get { storage.parts.pointee.created }
        _modify { yield &uniqueParts.pointee.created }
    }

    @inlinable
    public var modified: RecordStamp? {
        get { storage.parts.pointee.modified }
        _modify { yield &uniqueParts.pointee.modified }
    }

    /// The name of the record this one hangs from, in the same zone (Record Dictionary, `parent`).
    @inlinable
    public var parent: String? {
        get { storage.parts.pointee.parent }
        _modify { yield &uniqueParts.pointee.parent }
    }

    /// The name of the share record that shares this one (Record Dictionary, `share`); the
    /// server sets it, a save keeps the server's.
    @inlinable
    public var share: String? {
        get { storage.parts.pointee.share }
        _modify { yield &uniqueParts.pointee.share }
    }

    /// The record's short GUID (Record Dictionary, `createShortGUID` and `shortGUID`; records/resolve,
    /// "Fetching Record Information", finds records by it): made once, when a save asks for it, and
    /// kept while the record lives. A record share keeps its own in its
    /// system fields (`RecordShare.Field.shortGUID`), not here.
    @inlinable
    public var shortGUID: String? {
        get { storage.parts.pointee.shortGUID }
        _modify { yield &uniqueParts.pointee.shortGUID }
    }

    /// Equal parts; two records sharing a box are still compared part by part (a field holding a
    /// NaN is unequal to itself, as it was before records shared boxes).
    public static func == (a: Record, b: Record) -> Bool { a.storage.parts.pointee == b.storage.parts.pointee }

    /// The parts in order, as the record hashed when it held them itself.
    public func hash(into hasher: inout Hasher) { storage.parts.pointee.hash(into: &hasher) }

    @inlinable
    public subscript(key: String) -> FieldValue? {
        get { storage.parts.pointee.fields[key] }
        set { fields[key] = newValue }
    }

    /// Bytes of field data, keys included, as counted against the 1 MB limit.
    public var fieldDataSize: Int { storage.parts.pointee.fields.dataSize }
}

// The box is changed only through a record that holds it alone: `uniqueParts` copies it first otherwise.
extension Record: @unchecked Sendable {}

extension Record: CustomReflectable {
    /// The parts, as a struct holding them would show them (printing a record reads its mirror).
    public var customMirror: Mirror {
        Mirror(self, children: ["recordType": recordType, "id": id, "fields": fields,
                                "recordChangeTag": recordChangeTag as Any, "created": created as Any,
                                "modified": modified as Any, "parent": parent as Any, "share": share as Any,
                                "shortGUID": shortGUID as Any],
               displayStyle: .struct)
    }
}

/// A deleted record as change feeds report it: its ID and its type.
public struct DeletedRecord: Hashable, Sendable {
    public var id: RecordID
    public var recordType: String

    public init(id: RecordID, recordType: String) {
        self.id = id
        self.recordType = recordType
    }
}
