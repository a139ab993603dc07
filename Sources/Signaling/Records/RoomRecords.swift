// The room's own records, spec §2: `Room` (named by its room ID) and `RoomMember` (`RM_<userId>`).
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

    public init(userID: String, displayName: String) {
        self.userID = userID
        self.displayName = displayName
    }

    /// The record to save in `zone`.
    public func record(in zone: ZoneID) -> Record {
        Record(recordType: SignalRecordType.roomMember,
               id: RecordID(recordName: SignalRecordNames.member(userID), zoneID: zone),
               fields: [SignalField.userId: .string(userID), SignalField.displayName: .string(displayName)])
    }

    /// Reads a fetched `RoomMember` record.
    public init(decoding record: borrowing Record) throws(SignalRecordError) {
        let r = try FieldReader(record, type: SignalRecordType.roomMember)
        userID = try r.nonEmptyString(SignalField.userId)
        displayName = try r.string(SignalField.displayName)
    }
}
