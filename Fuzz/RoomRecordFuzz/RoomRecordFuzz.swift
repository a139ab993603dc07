// libFuzzer entry point for what other users write into a room's group call (docs/PROTOCOL.md
// §11): the bytes build presence records, room members and signal records of any fields, stamps
// (creator, last writer, times) and deletions, which a joined `RoomSignaling` takes in with a clock
// moving on. Nothing the others write may trap: each record is routed, used or dropped and counted.
//
// Built by Fuzz/run-fuzz.sh against the modules listed in `modules`; libFuzzer supplies `main`.

import RecordStore
@testable import Signaling
import ZoneCore

private let room = try! RoomID("room_fuzz0002")
private let zone = room.zoneID(owner: "_own")
private let users = ["_a", "_b", "_c", "_me", "_own", "x#y"]
private let now = Instant.seconds(1_700_000_000)

/// Reads records from fuzz bytes: each field a type byte and a value taken from the bytes.
private struct FuzzRecords {
    var bytes: [UInt8]
    var index = 0

    mutating func byte() -> UInt8 {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return bytes[index]
    }

    var done: Bool { index >= bytes.count }

    mutating func int64() -> Int64 {
        var v: UInt64 = 0
        for _ in 0..<8 { v = v << 8 | UInt64(byte()) }
        return Int64(bitPattern: v)
    }

    mutating func user() -> String { users[Int(byte()) % users.count] }

    /// A time near `now` mostly, anything sometimes.
    mutating func milliseconds() -> Int64 {
        byte() % 4 == 0 ? int64() : now.millisecondsSinceEpoch + Int64(Int8(bitPattern: byte())) * 1_000
    }

    mutating func text() -> String {
        let n = Int(byte()) % 48
        return String(decoding: (0..<n).map { _ in byte() }, as: UTF8.self)
    }

    mutating func value(_ field: String) -> FieldValue? {
        switch byte() % 8 {
        case 0: return nil
        case 1: return .int64(int64())
        case 2: return .timestamp(milliseconds())
        case 3: return .string(text())
        default: break
        }
        switch field {
        case SignalField.roomID: return .string(room.rawValue)
        case SignalField.userId, SignalField.ownerUserId, SignalField.otherUserId: return .string(user())
        case SignalField.sessionKey:
            let (a, b) = (user(), user())
            return .string((try? SessionKey(roomID: room, users: a, b).rawValue) ?? text())
        case SignalField.memberSession: return .string(byte() % 2 == 0 ? String(repeating: "a1", count: 16) : text())
        case SignalField.joinedAt, SignalField.expiresAt, SignalField.updatedAt, SignalField.chunkCreatedAt:
            return .timestamp(milliseconds())
        case SignalField.callEpoch, SignalField.seq: return .int64(byte() % 4 == 0 ? int64() : milliseconds())
        case SignalField.envelopeType: return .string(["offer", "answer", text()][Int(byte()) % 3])
        case SignalField.groupCallVersion: return .int64(Int64(byte() % 3))
        default: return .string(text())
        }
    }

    mutating func record() -> Record {
        let types = [SignalRecordType.callMember, SignalRecordType.roomMember, SignalRecordType.session,
                     SignalRecordType.envelope, SignalRecordType.iceChunk, "Message"]
        let type = types[Int(byte()) % types.count]
        let owner = user()
        let names = [SignalRecordNames.callMember(owner), SignalRecordNames.member(owner), "SS_\(text())",
                     "SE_\(text())", "CM_\(text())", "R\(index)"]
        var record = Record(recordType: type, id: RecordID(recordName: names[Int(byte()) % names.count], zoneID: zone))
        for field in [SignalField.roomID, SignalField.userId, SignalField.otherUserId, SignalField.ownerUserId,
                      SignalField.sessionKey, SignalField.memberSession, SignalField.joinedAt, SignalField.expiresAt,
                      SignalField.callEpoch, SignalField.envelopeType, SignalField.payload, SignalField.updatedAt,
                      SignalField.displayName, SignalField.groupCallVersion] {
            if let v = value(field) { record.fields[field] = v }
        }
        record.recordChangeTag = String(index)
        if byte() % 8 != 0 { record.created = RecordStamp(timestamp: milliseconds(), userRecordName: user()) }
        if byte() % 8 != 0 {
            record.modified = RecordStamp(timestamp: milliseconds(), userRecordName: byte() % 2 == 0 ? owner : user())
        }
        return record
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func roomRecordFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var reader = FuzzRecords(bytes: Array(UnsafeBufferPointer(start: data, count: size)))
    var configuration = RoomSignalingConfiguration(signaling: SignalingConfiguration(name: "fuzz", ingestion: []))
    configuration.uplinkKbps = UInt64(reader.byte())
    let binding = RoomBinding(roomID: room, role: .participant(ownerUserID: "_own"), myUserID: "_me")
    var machine = try! RoomSignaling(configuration: configuration, binding: binding, myUserID: "_me", seed: 1, now: now)
    var clock = now
    for action in machine.outputs(after: .join, now: clock) {
        guard case .store(let request, .presence) = action, case .modifyRecords(let m) = request.operation else { continue }
        var mine = m.saves[0]
        mine.recordChangeTag = "p"
        _ = machine.outputs(after: .reply(.presence, .modified(ModifyRecordsResult(results: [.saved(mine)]))), now: clock)
    }
    var rounds = 0
    while !reader.done && rounds < 16 {
        rounds += 1
        var records: [Record] = []
        for _ in 0..<(Int(reader.byte()) % 12) { records.append(reader.record()) }
        let deleted = (0..<(Int(reader.byte()) % 3)).map { _ in
            RecordID(recordName: [SignalRecordNames.callMember(reader.user()), "SE_\(reader.text())"][Int(reader.byte()) % 2],
                     zoneID: zone)
        }
        let before = machine.counters
        for action in machine.outputs(after: .fetched(records, deleted: deleted), now: clock) {
            if case .rejected(_, let problem) = action { _ = problem.description }
        }
        precondition(machine.counters.memberRecordsRefused >= before.memberRecordsRefused)
        clock = clock + .milliseconds(Int64(reader.byte()) * 500)
        _ = machine.outputs(after: .timer, now: clock)
        if reader.byte() % 16 == 0 { _ = machine.outputs(after: .leave, now: clock) }
    }
    return 0
}
