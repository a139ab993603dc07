// records/query's continuationMarker decoder: what a client sends back is hostile, so every string
// either decodes to a cursor of this query or is refused with BAD_REQUEST, and never traps.
@testable import RecordStore
import Testing
import ZoneCore

@Suite("Query continuation markers")
struct QueryCursorTests {
    let query = RecordQuery(recordType: "Song", filters: [QueryFilter(.equals, "genre", .string("jazz"))],
                            sort: [QuerySort("n", ascending: false)])
    var digest: [UInt8] { QueryCursor.digest(of: query, zones: [ZoneID(zoneName: "z", ownerName: "u")],
                                             scope: .private, user: "u") }

    @Test("a marker decodes to the cursor it was made from, names with separators and non-ASCII included")
    func roundTrip() throws {
        for name in ["a", "", "with\u{1}control", "naïve/名前", String(repeating: "x", count: 255)] {
            let cursor = QueryCursor(offset: 12_345, owner: "u", zoneName: "z", recordName: name)
            #expect(try QueryCursor.decode(cursor.encode(digest: digest), digest: digest) == cursor)
        }
    }

    @Test("a marker of another query, zone, database or user is refused")
    func foreign() {
        let marker = QueryCursor(offset: 1, owner: "u", zoneName: "z", recordName: "a").encode(digest: digest)
        let others = [
            QueryCursor.digest(of: RecordQuery(recordType: "Song"), zones: [ZoneID(zoneName: "z", ownerName: "u")],
                               scope: .private, user: "u"),
            QueryCursor.digest(of: query, zones: [ZoneID(zoneName: "y", ownerName: "u")], scope: .private, user: "u"),
            QueryCursor.digest(of: query, zones: [ZoneID(zoneName: "z", ownerName: "u")], scope: .shared, user: "u"),
            QueryCursor.digest(of: query, zones: [ZoneID(zoneName: "z", ownerName: "u")], scope: .private, user: "v"),
        ]
        for other in others {
            #expect(throws: StoreError.self) { try QueryCursor.decode(marker, digest: other) }
        }
    }

    @Test("seeded random strings, and every one-byte change and truncation of a marker, never trap")
    func hostile() {
        var random = SeededRandom(seed: 26)
        let marker = QueryCursor(offset: 3, owner: "u", zoneName: "z", recordName: "b").encode(digest: digest)
        var inputs: [String] = []
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=+/ \u{0}é"
            .unicodeScalars)
        for _ in 0..<2_000 {
            let count = Int(random.next() % 120)
            inputs.append(String(String.UnicodeScalarView((0..<count).map { _ in
                alphabet[Int(random.next() % UInt64(alphabet.count))]
            })))
        }
        for i in 0..<marker.utf8.count {
            inputs.append(String(marker.prefix(i)))
            var bytes = Array(marker.utf8)
            bytes[i] = UInt8(truncatingIfNeeded: random.next() % 128)
            inputs.append(String(decoding: bytes, as: UTF8.self))
        }
        // The right digest with a huge offset, and with no separators after it.
        var forged: [UInt8] = [1] + digest + [UInt8](repeating: 0xFF, count: 8) + Array("u\u{0}z\u{0}b".utf8)
        inputs.append(Base64URL.encode(forged))
        forged = [1] + digest + [UInt8](repeating: 0, count: 8) + Array("no separators".utf8)
        inputs.append(Base64URL.encode(forged))
        for input in inputs {
            do {
                let cursor = try QueryCursor.decode(input, digest: digest)
                #expect(cursor.offset >= 0)
                #expect(cursor.resume(in: []) == 0)
            } catch {
                #expect(error.code == .invalidArguments, "\(input): \(error)")
            }
        }
    }
}
