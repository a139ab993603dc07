// The record schema of spec §2: record types and field names, as the reference design's
// `CloudKitSchema.swift` names them (seed 001, "レコードタイプ/フィールド").
import RecordStore

/// Record type names.
public enum SignalRecordType {
    /// A room: its zone's one `Room` record.
    public static let room = "Room"
    /// A member of a room.
    public static let roomMember = "RoomMember"
    /// The state of a pair's session: the active call epoch.
    public static let session = "SignalSession"
    /// An offer or an answer.
    public static let envelope = "SignalEnvelope"
    /// A batch of trickled ICE candidates.
    public static let iceChunk = "SignalIceChunk"
    /// One user's presence in a room's group call (a mesh of pairs), written only by that user.
    public static let callMember = "CallMember"

    /// The three types signaling writes for a call.
    public static let signalTypes: Set<String> = [session, envelope, iceChunk]
}

/// Field names.
public enum SignalField {
    public static let roomID = "roomID"
    public static let name = "name"
    public static let userId = "userId"
    public static let displayName = "displayName"
    public static let sessionKey = "sessionKey"
    public static let otherUserId = "otherUserId"
    public static let callEpoch = "callEpoch"
    public static let updatedAt = "updatedAt"
    public static let ownerUserId = "ownerUserId"
    public static let envelopeType = "envelopeType"
    public static let payload = "payload"
    public static let candidateType = "candidateType"
    public static let candidate = "candidate"
    public static let chunkCreatedAt = "chunkCreatedAt"
    public static let seq = "seq"
    public static let ufrag = "ufrag"
    public static let memberSession = "memberSession"
    public static let joinedAt = "joinedAt"
    public static let expiresAt = "expiresAt"
    public static let groupCallVersion = "groupCallVersion"
}

/// Reads typed fields of a fetched record, turning every problem into a `SignalRecordError`.
struct FieldReader {
    /// The record's fields and name, all a reader looks at.
    let fields: RecordFields
    let recordName: String

    /// Borrows the record, as the decoders that make one do (an initializer takes its arguments
    /// owned unless told).
    init(_ record: borrowing Record, type: String) throws(SignalRecordError) {
        guard record.recordType == type else {
            throw SignalRecordError(.wrongRecordType, recordName: record.id.recordName,
                                    detail: "is a \(record.recordType), not a \(type)")
        }
        fields = record.fields
        recordName = record.id.recordName
    }

    private func value(_ key: String) throws(SignalRecordError) -> FieldValue {
        // The first field so named, as `fields[key]` gives it, found by length first: names of
        // another length (most of a record's) are passed over without a string comparison, which
        // for two different short names cost a call into the runtime each (a decoder reads every
        // field of every record fetched this way).
        let length = key.utf8.count
        for (name, value) in fields where name.utf8.count == length && name == key {
            return value
        }
        throw SignalRecordError(.missingField, recordName: recordName, field: key, detail: "missing")
    }

    private func wrongType(_ key: String, _ value: FieldValue, _ expected: String) -> SignalRecordError {
        SignalRecordError(.wrongFieldType, recordName: recordName, field: key,
                          detail: "holds a \(value.typeName), expected \(expected)")
    }

    /// A string field (any string, empty included).
    func string(_ key: String) throws(SignalRecordError) -> String {
        let v = try value(key)
        guard let s = v.stringValue else { throw wrongType(key, v, "STRING") }
        return s
    }

    /// A string field that must not be empty.
    func nonEmptyString(_ key: String) throws(SignalRecordError) -> String {
        let s = try string(key)
        guard !s.isEmpty else { throw invalid(key, "is empty") }
        return s
    }

    /// An INT64 field that must not be negative.
    func count(_ key: String) throws(SignalRecordError) -> Int64 {
        let v = try value(key)
        guard let n = v.int64Value else { throw wrongType(key, v, "INT64") }
        guard n >= 0 else { throw invalid(key, "is negative (\(n))") }
        return n
    }

    /// A TIMESTAMP field in milliseconds (an INT64 is accepted too).
    func milliseconds(_ key: String) throws(SignalRecordError) -> Int64 {
        let v = try value(key)
        guard let ms = v.timestampValue ?? v.int64Value else { throw wrongType(key, v, "TIMESTAMP") }
        return ms
    }

    /// The `callEpoch` field.
    func epoch() throws(SignalRecordError) -> CallEpoch {
        CallEpoch(milliseconds: try count(SignalField.callEpoch))
    }

    func invalid(_ key: String, _ detail: String) -> SignalRecordError {
        SignalRecordError(.invalidFieldValue, recordName: recordName, field: key, detail: detail)
    }
}
