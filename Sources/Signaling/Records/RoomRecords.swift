// The room's own records, docs/PROTOCOL.md §4: `Room` (named by its room ID) and `RoomMember`
// (`RM_<userId>`, with `groupCallVersion` when the member's client joins group calls, §11.6).
import RecordStore

/// A room: the zone's `Room` record.
public struct Room: Hashable, Sendable {
    /// The room's ID (= zone name = record name).
    public var roomID: RoomID
    /// A name people see.
    public var name: String

    public init(roomID: RoomID, name: String) {
        self.roomID = roomID
        self.name = name
    }

    /// The record to save in `zone`.
    public func record(in zone: ZoneID) -> Record {
        Record(recordType: SignalRecordType.room, id: RecordID(recordName: roomID.rawValue, zoneID: zone),
               fields: [SignalField.roomID: .string(roomID.rawValue), SignalField.name: .string(name)])
    }

    /// Reads a fetched `Room` record.
    public init(decoding record: borrowing Record) throws(SignalRecordError) {
        let r = try FieldReader(record, type: SignalRecordType.room)
        roomID = try RoomID(r.string(SignalField.roomID))
        name = try r.string(SignalField.name)
    }
}

/// A member of a room.
public struct RoomMember: Hashable, Sendable {
    /// The member's user ID.
    public var userID: String
    /// A name people see.
    public var displayName: String
    /// The version of the group-call protocol the member's client speaks (docs/PROTOCOL.md §11), or
    /// nil for a client that only makes calls of two: such a member, fresh in the room, may be waiting
    /// for a call-of-two offer.
    public var groupCallVersion: Int64?

    /// The group-call protocol this implementation speaks.
    public static let currentGroupCallVersion: Int64 = 1

    public init(userID: String, displayName: String, groupCallVersion: Int64? = nil) {
        self.userID = userID
        self.displayName = displayName
        self.groupCallVersion = groupCallVersion
    }

    /// The record to save in `zone`.
    public func record(in zone: ZoneID) -> Record {
        var fields: RecordFields = [SignalField.userId: .string(userID), SignalField.displayName: .string(displayName)]
        if let groupCallVersion { fields[SignalField.groupCallVersion] = .int64(groupCallVersion) }
        return Record(recordType: SignalRecordType.roomMember,
                      id: RecordID(recordName: SignalRecordNames.member(userID), zoneID: zone), fields: fields)
    }

    /// Reads a fetched `RoomMember` record (a `groupCallVersion` that is not a positive INT64 is
    /// read as none).
    public init(decoding record: borrowing Record) throws(SignalRecordError) {
        let r = try FieldReader(record, type: SignalRecordType.roomMember)
        userID = try r.nonEmptyString(SignalField.userId)
        displayName = try r.string(SignalField.displayName)
        groupCallVersion = record.fields[SignalField.groupCallVersion]?.int64Value.flatMap { $0 > 0 ? $0 : nil }
    }
}
