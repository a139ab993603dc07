// A record written straight from itself (`RecordJSON`, what responses carry) is byte for byte the
// record's dictionary (`WireFormat.encode`) written by `JSONWriter`: every key, stamp, field type,
// `desiredKeys` and `numbersAsStrings`, over seeded random records.
import Foundation
import RecordStore
@testable import StoreServer
import Testing
import ZoneCore

@Suite("Record JSON")
struct RecordJSONTests {
    private static let names = ["a", "seq", "candidate", "Z", "é", "k\"q", "zz", "", "name with space"]
    private static let strings = ["", "candidate:1 1 udp 1 127.0.0.1 5 typ host", "quote \" and \\ and \n\t\u{1}",
                                  "é🎉", "short"]
    private static let doubles = [0.0, -0.0, 1.5, 3.0, 0.1, 1e15, 1e15 - 1, -2.5e-300, 123456.789, 1e300]
    private static let integers: [Int64] = [0, -1, 42, Int64.min, Int64.max, 1_764_393_600_000]

    private func pick<T>(_ items: [T], _ rng: inout SeededRandom) -> T { items[Int(rng.next() % UInt64(items.count))] }
    private func maybe<T>(_ value: T, _ rng: inout SeededRandom) -> T? { rng.next() % 2 == 0 ? value : nil }

    private func field(_ rng: inout SeededRandom, plainOnly: Bool) -> FieldValue {
        switch rng.next() % (plainOnly ? 5 : 9) {
        case 0: return .string(pick(Self.strings, &rng))
        case 1: return .int64(pick(Self.integers, &rng))
        case 2: return .double(pick(Self.doubles, &rng))
        case 3: return .timestamp(pick(Self.integers, &rng))
        case 4: return .bytes((0..<Int(rng.next() % 9)).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
        case 5: return .reference(Reference(RecordID(recordName: "target", zoneID: ZoneID(zoneName: "z")),
                                            action: .deleteSelf))
        case 6: return .location(Location(latitude: 1.5, longitude: -2, altitude: 3))
        case 7: return .list([.int64(1), .int64(-2)])
        default: return .emptyList(elementType: "STRING")
        }
    }

    private func record(_ rng: inout SeededRandom, fieldCount: Int, plainOnly: Bool) -> Record {
        var pairs: [(String, FieldValue)] = []
        for i in 0..<fieldCount {
            let name = i < Self.names.count ? pick(Self.names, &rng) : "f\(rng.next() % 100)"
            pairs.append((name, field(&rng, plainOnly: plainOnly)))
        }
        let stamp = RecordStamp(timestamp: pick(Self.integers, &rng), userRecordName: "_user",
                                deviceID: maybe("device \"1\"", &rng))
        return Record(recordType: pick(["SignalIceChunk", "T\"", ""], &rng),
                      id: RecordID(recordName: pick(["F1", "name \\ odd"], &rng),
                                   zoneID: ZoneID(zoneName: "room", ownerName: pick(["", "_owner"], &rng))),
                      fields: RecordFields(pairs), recordChangeTag: maybe("tag1", &rng), created: maybe(stamp, &rng),
                      modified: maybe(stamp, &rng), parent: maybe("parent", &rng), share: maybe("share", &rng),
                      shortGUID: maybe("guid", &rng))
    }

    @Test("written from the record or from its dictionary, the same bytes")
    func sameBytes() {
        var rng = SeededRandom(seed: 26)
        let renderings = [RecordRendering.all, RecordRendering(numbersAsStrings: true),
                          RecordRendering(desiredKeys: []), RecordRendering(desiredKeys: ["seq", "é", "missing", "f7"]),
                          RecordRendering(desiredKeys: ["a", "Z"], numbersAsStrings: true)]
        for trial in 0..<400 {
            // Past 16 fields the writer sorts them another way; a tenth of the records have fields
            // of the types written from the dictionary.
            let count = trial % 25 == 0 ? 40 : Int(rng.next() % 6)
            let r = record(&rng, fieldCount: count, plainOnly: trial % 10 != 0)
            for rendering in renderings {
                let direct = JSONWriter.serialize(RecordJSON(r, rendering))
                let viaDictionary = JSONWriter.serialize(WireFormat.encode(r, rendering))
                #expect(direct == viaDictionary,
                        "trial \(trial): \(String(decoding: direct, as: UTF8.self)) != \(String(decoding: viaDictionary, as: UTF8.self))")
            }
        }
    }

    @Test("inside a response's arrays and dictionaries, as the API returns them")
    func nested() {
        let r = Record(recordType: "T", id: RecordID(recordName: "r", zoneID: ZoneID(zoneName: "z", ownerName: "_o")),
                       fields: ["n": .int64(1)])
        let text = String(decoding: JSONWriter.serialize(["records": [RecordJSON(r, .all)] as [Any]] as [String: Any]),
                          as: UTF8.self)
        #expect(text == #"{"records":[{"fields":{"n":{"type":"INT64","value":1}},"recordName":"r","recordType":"T","#
                + #""zoneID":{"ownerRecordName":"_o","zoneName":"z"}}]}"#)
    }
}
