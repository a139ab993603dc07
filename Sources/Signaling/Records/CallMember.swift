// `CallMember`, one user's presence in a room's group call (docs/PROTOCOL.md §11.1): named
// `CM_<userId>`, written only by its user, holding a member session new on every join, when it
// joined and until when it counts as present. Readers check it against the server's stamps
// (`created`, `modified`), which no client writes.
import RecordStore
import SDP
import ZoneCore

/// A member of a room's group call, as its presence record says.
public struct CallMember: Hashable, Sendable {
    /// The room (= zone name).
    public var roomID: String
    /// The member's user ID; the record's name is `CM_<userId>` and only this user writes it.
    public var userID: String
    /// 32 lower-case hex digits, drawn anew on every join: a new value means a new member session
    /// (the old one crashed or left), whose pairs start over.
    public var memberSession: String
    /// When this member session joined, milliseconds since 1970 (the writer's clock).
    public var joinedAtMs: Int64
    /// Until when the member counts as present unless it refreshes, milliseconds since 1970.
    public var expiresAtMs: Int64

    public init(roomID: String, userID: String, memberSession: String, joinedAtMs: Int64, expiresAtMs: Int64) {
        self.roomID = roomID
        self.userID = userID
        self.memberSession = memberSession
        self.joinedAtMs = joinedAtMs
        self.expiresAtMs = expiresAtMs
    }

    /// The record's name.
    public var recordName: String { SignalRecordNames.callMember(userID) }

    /// The record's fields.
    public var fields: RecordFields {
        [
            SignalField.roomID: .string(roomID), SignalField.userId: .string(userID),
            SignalField.memberSession: .string(memberSession), SignalField.joinedAt: .timestamp(joinedAtMs),
            SignalField.expiresAt: .timestamp(expiresAtMs),
        ]
    }

    /// This version as a record: over `base` (its change tag kept, for a conditional save) or new in `zone`.
    public func record(over base: Record?, in zone: ZoneID) -> Record {
        var record = base ?? Record(recordType: SignalRecordType.callMember,
                                    id: RecordID(recordName: recordName, zoneID: zone))
        record.fields = fields
        return record
    }

    /// Reads a fetched `CallMember`'s fields, checking their types only (see `checked` for the rest).
    public init(decoding record: borrowing Record) throws(SignalRecordError) {
        let r = try FieldReader(record, type: SignalRecordType.callMember)
        roomID = try r.nonEmptyString(SignalField.roomID)
        userID = try r.nonEmptyString(SignalField.userId)
        memberSession = try r.string(SignalField.memberSession)
        joinedAtMs = try r.milliseconds(SignalField.joinedAt)
        expiresAtMs = try r.milliseconds(SignalField.expiresAt)
    }

    /// Reads a fetched record as presence in `roomID`, refusing what another user could have forged or
    /// what would pin a member in the room: the name must be its user's, the last writer the user
    /// itself, the member session 32 lower-case hex digits, `joinedAt` no earlier than the record's
    /// creation and no later than its last change, `expiresAt` at most a TTL after its last change
    /// (each bound widened by `policy.maxClockSkew`, as the server's clock stamps and the writer's
    /// fills the fields).
    public static func checked(_ record: Record, roomID: RoomID, policy: PresencePolicy)
        throws(SignalRecordError) -> CallMember {
        let member = try CallMember(decoding: record)
        let name = record.id.recordName
        func refuse(_ field: String?, _ detail: String) -> SignalRecordError {
            SignalRecordError(.invalidFieldValue, recordName: name, field: field, detail: detail)
        }
        guard member.roomID == roomID.rawValue else {
            throw refuse(SignalField.roomID, "names room \(SDPGrammar.quoted(member.roomID, limit: 40)), "
                            + "not \(roomID)")
        }
        try SessionKey.validate(userID: member.userID)
        guard name == member.recordName else {
            throw refuse(SignalField.userId, "is not the user the record's name is for")
        }
        guard let modified = record.modified, let created = record.created else {
            throw refuse(nil, "has no server stamps (created, modified)")
        }
        guard modified.userRecordName == member.userID else {
            throw SignalRecordError(
                .writtenByAnotherUser, recordName: name, field: SignalField.userId,
                detail: "was last written by \(SDPGrammar.quoted(modified.userRecordName, limit: 40)); "
                    + "only its own user may write it")
        }
        guard isMemberSession(member.memberSession) else {
            throw refuse(SignalField.memberSession, "must be 32 lower-case hex digits")
        }
        let skew = policy.maxClockSkew.wholeMilliseconds
        let earliest = created.timestamp.subtractingSaturated(skew)
        let latest = modified.timestamp.addingSaturated(skew)
        guard member.joinedAtMs >= earliest, member.joinedAtMs <= latest else {
            throw refuse(SignalField.joinedAt, "\(member.joinedAtMs) is outside the record's lifetime "
                            + "[\(earliest), \(latest)] ms")
        }
        let lastExpiry = latest.addingSaturated(policy.ttl.wholeMilliseconds)
        guard member.expiresAtMs >= member.joinedAtMs, member.expiresAtMs <= lastExpiry else {
            throw refuse(SignalField.expiresAt, "\(member.expiresAtMs) is before joinedAt or more than the TTL "
                            + "(\(policy.ttl)) after the record's last change (at most \(lastExpiry) ms)")
        }
        return member
    }

    /// Whether `text` is 32 lower-case hex digits.
    public static func isMemberSession(_ text: String) -> Bool {
        Hex.isLowercase(text, digits: 32)
    }
}
