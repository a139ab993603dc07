// The presence record of a group call (docs/PROTOCOL.md §11.1): its name, its fields, and what a
// reader refuses — checked against the server's stamps, one case per line.
import RecordStore
import Testing
import ZoneCore

@testable import Signaling

@Suite("Call member records")
struct CallMemberTests {
    private let room = try! RoomID("room_memb0001")
    private let t0: Int64 = 1_700_000_000_000
    private var zone: ZoneID { room.zoneID(owner: "_own") }
    private let session = "0123456789abcdef0123456789abcdef"

    private func member(_ user: String = "_b0b") -> CallMember {
        CallMember(roomID: room.rawValue, userID: user, memberSession: session, joinedAtMs: t0,
                   expiresAtMs: t0 + 45_000)
    }

    /// The record as a store hands it out: created at `t0`, last written by `writer` at `modifiedAt`.
    private func stored(_ record: Record, writer: String = "_b0b", createdAt: Int64? = nil,
                        modifiedAt: Int64? = nil) -> Record {
        var record = record
        record.created = RecordStamp(timestamp: createdAt ?? t0, userRecordName: writer)
        record.modified = RecordStamp(timestamp: modifiedAt ?? t0, userRecordName: writer)
        record.recordChangeTag = "1"
        return record
    }

    private func check(_ record: Record) throws(SignalRecordError) -> CallMember {
        try CallMember.checked(record, roomID: room, policy: .default)
    }

    /// "<kind> <field>" of the refusal, or "accepted".
    private func refusal(_ record: Record) -> String {
        do {
            _ = try check(record)
            return "accepted"
        } catch {
            return "\(error.kind) \(error.field ?? "-")"
        }
    }

    private func with(_ field: String, _ value: FieldValue) -> Record {
        var record = member().record(over: nil, in: zone)
        record.fields[field] = value
        return stored(record)
    }

    @Test func aRecordReadsBackAsItsMember() throws {
        let record = stored(member().record(over: nil, in: zone))
        #expect(record.id.recordName == "CM__b0b")
        #expect(record.recordType == "CallMember")
        #expect(try check(record) == member())
        #expect(record.fields[SignalField.joinedAt] == .timestamp(t0))
    }

    @Test func aLongUserIDIsCompactedInTheNameOnly() throws {
        let user = "_" + String(repeating: "x", count: 300)
        let record = stored(member(user).record(over: nil, in: zone), writer: user)
        #expect(record.id.recordName == "CM_" + SignalRecordNames.compact(user))
        #expect(record.id.recordName.utf8.count <= 255)
        #expect(try check(record).userID == user)
    }

    @Test func hostileFieldsAreRefusedWithTheirField() {
        #expect(refusal(with(SignalField.joinedAt, .timestamp(t0 - 11_000))) == "invalidFieldValue joinedAt")
        #expect(refusal(with(SignalField.joinedAt, .timestamp(t0 + 11_000))) == "invalidFieldValue joinedAt")
        #expect(refusal(with(SignalField.joinedAt, .timestamp(.min))) == "invalidFieldValue joinedAt")
        #expect(refusal(with(SignalField.joinedAt, .string("0"))) == "wrongFieldType joinedAt")
        #expect(refusal(with(SignalField.expiresAt, .timestamp(t0 + 56_000))) == "invalidFieldValue expiresAt")
        #expect(refusal(with(SignalField.expiresAt, .timestamp(.max))) == "invalidFieldValue expiresAt")
        #expect(refusal(with(SignalField.expiresAt, .timestamp(t0 - 1))) == "invalidFieldValue expiresAt")
        #expect(refusal(with(SignalField.memberSession, .string("0123"))) == "invalidFieldValue memberSession")
        #expect(refusal(with(SignalField.memberSession, .string(session.uppercased())))
                == "invalidFieldValue memberSession")
        #expect(refusal(with(SignalField.memberSession, .int64(1))) == "wrongFieldType memberSession")
        #expect(refusal(with(SignalField.roomID, .string("room_other001"))) == "invalidFieldValue roomID")
        #expect(refusal(with(SignalField.userId, .string("_eve"))) == "invalidFieldValue userId")
        #expect(refusal(with(SignalField.userId, .string("b b"))) == "invalidUserID -")
    }

    @Test func theWriterMustBeTheMember() {
        let record = member().record(over: nil, in: zone)
        #expect(refusal(stored(record, writer: "_eve")) == "writtenByAnotherUser userId")
        #expect(refusal(record) == "invalidFieldValue -")
    }

    @Test func aRefreshedRecordMayExpireATTLAfterItsLastChange() throws {
        var refreshed = member()
        refreshed.expiresAtMs = t0 + 600_000 + 45_000
        let record = stored(refreshed.record(over: nil, in: zone), modifiedAt: t0 + 600_000)
        #expect(try check(record).expiresAtMs == t0 + 645_000)
    }
}
