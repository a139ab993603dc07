// libFuzzer entry point for signal records read from the store (docs/SIGNALING.md §2): the bytes
// build records of any type with fields of any type and value (`FuzzRecords`), which go through
// `SignalRecord.decode` and the inbox (with a clock, so the epoch lead is checked) and then the
// negotiator. Nothing the other user writes may trap: each record is delivered or dropped, and
// every drop is counted and reported.
//
// Built by Fuzz/run-fuzz.sh against the modules listed in `modules`; libFuzzer supplies `main`.

import RecordStore
@testable import Signaling
import ZoneCore

private let room = try! RoomID("room_fuzz0001")
private let zone = room.zoneID(owner: "_a")
private let sessionKey = "room_fuzz0001#_a#_b"
private let now = Instant.seconds(1_700_000_000)

/// Reads records from fuzz bytes: each field a type byte and a value taken from the bytes, so
/// the fuzzer reaches every type and value of every field of every record type.
private struct FuzzRecords {
    var bytes: [UInt8]
    var index = 0

    mutating func byte() -> UInt8? {
        guard index < bytes.count else { return nil }
        defer { index += 1 }
        return bytes[index]
    }

    mutating func int64() -> Int64 {
        var v: UInt64 = 0
        for _ in 0..<8 { v = v << 8 | UInt64(byte() ?? 0) }
        return Int64(bitPattern: v)
    }

    mutating func text() -> String {
        let n = Int(byte() ?? 0) % 96
        var out: [UInt8] = []
        for _ in 0..<n { guard let b = byte() else { break }; out.append(b) }
        return String(decoding: out, as: UTF8.self)
    }

    /// A value for `field`: often the right type and a plausible value, sometimes anything.
    mutating func value(_ field: String) -> FieldValue? {
        switch (byte() ?? 0) % 10 {
        case 0: return nil
        case 1: return .int64(int64())
        case 2: return .timestamp(int64())
        case 3: return .double(Double(bitPattern: UInt64(bitPattern: int64())))
        case 4: return .list([.int64(int64())])
        case 5: return .emptyList(elementType: "STRING")
        case 6: return .bytes(Array(text().utf8))
        default: break
        }
        switch field {
        case SignalField.sessionKey: return .string(byte().map { $0 & 1 == 0 } ?? true ? sessionKey : text())
        case SignalField.roomID: return .string(room.rawValue)
        case SignalField.userId, SignalField.ownerUserId:
            return .string(byte().map { $0 & 1 == 0 } ?? true ? "_b" : "_a")
        case SignalField.otherUserId: return .string("_a")
        case SignalField.callEpoch, SignalField.seq: return .int64(int64() % 4 == 0 ? int64() : int64() & 0xFF)
        case SignalField.envelopeType: return .string(["offer", "answer", text()][Int(byte() ?? 0) % 3])
        case SignalField.candidateType: return .string(["batch-v1", "single", text()][Int(byte() ?? 0) % 3])
        case SignalField.updatedAt, SignalField.chunkCreatedAt: return .timestamp(int64())
        default: return .string(text())
        }
    }

    mutating func record() -> Record? {
        guard let kind = byte() else { return nil }
        let types = [SignalRecordType.session, SignalRecordType.envelope, SignalRecordType.iceChunk,
                     SignalRecordType.room, SignalRecordType.roomMember, "Message"]
        let type = types[Int(kind) % types.count]
        let fields = [SignalField.sessionKey, SignalField.roomID, SignalField.userId, SignalField.otherUserId,
                      SignalField.callEpoch, SignalField.updatedAt, SignalField.ownerUserId, SignalField.envelopeType,
                      SignalField.payload, SignalField.candidateType, SignalField.candidate,
                      SignalField.chunkCreatedAt, SignalField.seq, SignalField.ufrag, SignalField.name,
                      SignalField.displayName]
        var record = Record(recordType: type, id: RecordID(recordName: "R\(index)", zoneID: zone))
        record.recordChangeTag = String(index)
        for field in fields {
            if let v = value(field) { record.fields[field] = v }
        }
        return record
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func signalRecordFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var reader = FuzzRecords(bytes: Array(UnsafeBufferPointer(start: data, count: size)))
    var records: [Record] = []
    while records.count < 64, let record = reader.record() { records.append(record) }
    for record in records { _ = try? SignalRecord.decode(record) }

    var inbox = SignalInbox(myUserID: "_a", remoteUserID: "_b", sessionKey: sessionKey, maxEpochLead: .seconds(86_400))
    let output = inbox.ingest(records, now: now)
    let refused = output.problems.filter { if case .record = $0 { true } else { false } }.count
    precondition(refused == inbox.counters.malformed, "a dropped record was not counted once")
    for problem in output.problems { _ = problem.description }

    // The negotiator of the offer creator, started, takes the same records (and a session lookup).
    var n = try! CallNegotiator(roomID: room, myUserID: "_a", remoteUserID: "_b", zone: zone, seed: 1)
    _ = n.outputs(after: .startCall, now: now)
    let session = records.first { $0.recordType == SignalRecordType.session }
    _ = n.outputs(after: .lookedUp(session.map { [.found($0)] } ?? []), now: now)
    _ = n.outputs(after: .recordsFetched(records, deleted: []), now: now)
    _ = n.outputs(after: .restart, now: now + .seconds(1))
    _ = n.outputs(after: .timer, now: now + .seconds(2))
    return 0
}
