/// Who changed a record and when (CloudKit's `created`/`modified`).
public struct RecordStamp: Hashable, Sendable, Codable {
    /// Milliseconds since the Unix epoch.
    public var timestamp: Int64
    /// The user record name of whoever made the change.
    public var userRecordName: String

    public init(timestamp: Int64, userRecordName: String) {
        self.timestamp = timestamp
        self.userRecordName = userRecordName
    }
}

/// A record: a type, a name in a zone, typed fields, and the server's change tag.
public struct Record: Hashable, Sendable {
    public var recordType: String
    public var id: RecordID
    public var fields: RecordFields
    /// The server's tag for the version this copy came from; nil for a record never saved.
    public var recordChangeTag: String?
    public var created: RecordStamp?
    public var modified: RecordStamp?

    public init(
        recordType: String, id: RecordID, fields: RecordFields = [:], recordChangeTag: String? = nil,
        created: RecordStamp? = nil, modified: RecordStamp? = nil
    ) {
        self.recordType = recordType
        self.id = id
        self.fields = fields
        self.recordChangeTag = recordChangeTag
        self.created = created
        self.modified = modified
    }

    public subscript(key: String) -> FieldValue? {
        get { fields[key] }
        set { fields[key] = newValue }
    }

    /// Bytes of field data, keys included, as counted against the 1 MB limit.
    public var fieldDataSize: Int {
        fields.reduce(0) { $0 + $1.key.utf8.count + $1.value.dataSize }
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
