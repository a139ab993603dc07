// `SignalSession`, spec §2–3: `SS_<sessionKey>`, holding the active call epoch of a pair. Both
// peers write it with `ifServerRecordUnchanged` and merge conflicts by the maximum epoch.
import RecordStore

/// The shared state of a pair's session: which epoch is active.
public struct SignalSession: Hashable, Sendable {
    /// `<roomID>#<lo>#<hi>`.
    public var sessionKey: String
    public var roomID: String
    /// The user who wrote this version.
    public var userID: String
    /// The other user of the pair.
    public var otherUserID: String
    /// The active epoch: the highest epoch either peer started.
    public var callEpoch: CallEpoch
    /// When the writer saved it, milliseconds since 1970 (the writer's clock).
    public var updatedAtMs: Int64

    public init(sessionKey: String, roomID: String, userID: String, otherUserID: String, callEpoch: CallEpoch,
                updatedAtMs: Int64) {
        self.sessionKey = sessionKey
        self.roomID = roomID
        self.userID = userID
        self.otherUserID = otherUserID
        self.callEpoch = callEpoch
        self.updatedAtMs = updatedAtMs
    }

    /// The fields of this session, for a new record or over a fetched one.
    public var fields: RecordFields {
        [
            SignalField.sessionKey: .string(sessionKey), SignalField.roomID: .string(roomID),
            SignalField.userId: .string(userID), SignalField.otherUserId: .string(otherUserID),
            SignalField.callEpoch: .int64(callEpoch.milliseconds), SignalField.updatedAt: .timestamp(updatedAtMs),
        ]
    }

    /// This version as a record: over `base` (keeping its change tag, for `ifServerRecordUnchanged`)
    /// or as a new record named `name` in `zone`.
    public func record(over base: Record?, name: String, in zone: ZoneID) -> Record {
        var record = base ?? Record(recordType: SignalRecordType.session, id: RecordID(recordName: name, zoneID: zone))
        record.fields = fields
        return record
    }

    /// Reads a fetched `SignalSession` record.
    public init(decoding record: borrowing Record) throws(SignalRecordError) {
        let r = try FieldReader(record, type: SignalRecordType.session)
        sessionKey = try r.nonEmptyString(SignalField.sessionKey)
        roomID = try r.nonEmptyString(SignalField.roomID)
        userID = try r.nonEmptyString(SignalField.userId)
        otherUserID = try r.nonEmptyString(SignalField.otherUserId)
        callEpoch = try r.epoch()
        updatedAtMs = try r.milliseconds(SignalField.updatedAt)
    }
}
