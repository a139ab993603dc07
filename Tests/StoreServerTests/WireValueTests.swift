// Values keep their value and type on the way in and out of the HTTP wire format (issue #13,
// item 5): integers out of range are refused naming the field (never wrapped), doubles round-trip
// bit for bit, empty typed lists keep their type.
import Foundation
@testable import RecordStore
@testable import StoreServer
import Testing
import ZoneCore

@Suite("Wire format values")
struct WireValueTests {
    /// A field read from a JSON text the way the daemon reads a request body.
    private func decode(_ json: String, name: String = "n") throws -> FieldValue {
        let body = try WireFormat.parseObject(Array("{\"field\":\(json)}".utf8))
        return try #require(try WireFormat.decodeField(body["field"]!, name: name))
    }

    /// Through the wire and back: encode, serialize, parse, decode.
    private func roundTrip(_ value: FieldValue) throws -> FieldValue {
        let bytes = WireFormat.serialize(["field": WireFormat.encodeField(value)] as WireFormat.Object)
        return try #require(try WireFormat.decodeField(try WireFormat.parseObject(bytes)["field"]!, name: "f"))
    }

    static let outOfRange: [String] = [
        #"{"type":"INT64","value":18446744073709551616}"#,       // 2^64, was stored as 0
        #"{"type":"INT64","value":1e19}"#,                        // was stored as INT64_MIN
        #"{"type":"INT64","value":9223372036854775808}"#,         // 2^63
        #"{"type":"INT64","value":-9223372036854775809}"#,
        #"{"type":"INT64","value":-1e300}"#,
        #"{"type":"TIMESTAMP","value":18446744073709551616}"#,
        #"{"type":"TIMESTAMP","value":1e19}"#,
        #"{"type":"INT64_LIST","value":[1,18446744073709551616]}"#,
        #"{"value":18446744073709551616}"#,                       // untyped: read as a DOUBLE, not wrapped
    ]

    @Test(arguments: outOfRange.prefix(8))
    func integersOutOfRangeAreRefusedNamingTheField(json: String) throws {
        do {
            let value = try decode(json, name: "callEpoch")
            Issue.record("\(json) was read as \(value)")
        } catch let error as WireFormat.ShapeError {
            #expect(error.description.contains("field callEpoch") && error.description.contains("out of range"),
                    "\(error)")
        }
    }

    @Test func anUntypedHugeIntegerIsADoubleNotAWrappedInteger() throws {
        #expect(try decode(Self.outOfRange[8]) == .double(18446744073709551616))
    }

    @Test func theEdgesOfInt64AreExact() throws {
        #expect(try decode(#"{"type":"INT64","value":9223372036854775807}"#) == .int64(.max))
        #expect(try decode(#"{"type":"INT64","value":-9223372036854775808}"#) == .int64(.min))
        #expect(try decode(#"{"type":"TIMESTAMP","value":-1}"#) == .timestamp(-1))
        #expect(try decode(#"{"type":"INT64","value":1e3}"#) == .int64(1000))
        #expect(throws: WireFormat.ShapeError.self) { try decode(#"{"type":"INT64","value":1.5}"#) }
        // CloudKit has no boolean type: true is the INT64 1. A number in a string is read exactly
        // (what `numbersAsStrings` clients send); anything else in a string is refused.
        #expect(try decode(#"{"type":"INT64","value":true}"#) == .int64(1))
        #expect(try decode(#"{"type":"INT64","value":"-5"}"#) == .int64(-5))
        #expect(throws: WireFormat.ShapeError.self) { try decode(#"{"type":"INT64","value":"5x"}"#) }
        #expect(throws: WireFormat.ShapeError.self) { try decode(#"{"type":"INT64","value":"1.5"}"#) }
        #expect(throws: WireFormat.ShapeError.self) { try decode(#"{"type":"DOUBLE","value":1e400}"#) }
        for value: FieldValue in [.int64(.max), .int64(.min), .timestamp(.max), .timestamp(.min)] {
            #expect(try roundTrip(value) == value)
        }
    }

    @Test func emptyTypedListsKeepTheirType() throws {
        for element in FieldValue.listElementTypes.sorted() {
            let read = try decode(#"{"type":"\#(element)_LIST","value":[]}"#)
            #expect(read == .emptyList(elementType: element) && read.typeName == "\(element)_LIST")
            #expect(try roundTrip(read) == read)
            // And through the journal's codec, so a daemon restart keeps the type too.
            var w = ByteWriter()
            MutationCodec.encode(read, into: &w)
            var r = ByteReader(w.bytes)
            #expect(try MutationCodec.decodeValue(&r, depth: 0) == read)
        }
        #expect(throws: WireFormat.ShapeError.self) { try decode(#"{"type":"BOGUS_LIST","value":[]}"#) }
    }

    @Test func doublesThatFoundationGotWrongRoundTrip() throws {
        // Shortest representations whose last digit JSONSerialization on Linux changed, and edges.
        let values: [Double] = [0.1, 0.3, 2.2250738585072014e-308, 5e-324, 1.7976931348623157e308,
                                -0.0, 0.0, 1e15, 1e16, 123456789.12345679, 9007199254740993, 4.35,
                                0.000001, 1e-7, 3.0, -2.5e-10, .pi, -.ulpOfOne]
        for d in values {
            guard case .double(let back) = try roundTrip(.double(d)) else {
                Issue.record("\(d) did not come back as a DOUBLE")
                continue
            }
            #expect(back.bitPattern == d.bitPattern, "\(d) came back as \(back)")
        }
    }

    /// Random bit patterns (every finite double is as likely as its pattern), 1,000 to a
    /// DOUBLE_LIST field, through encode → JSON bytes → parse → decode.
    @Test func randomDoublesRoundTripBitForBit() throws {
        let total = ProcessInfo.processInfo.environment["ZONERTC_DOUBLE_ROUNDTRIPS"].flatMap(Int.init) ?? 1_000_000
        var random = SeededRandom(seed: 0xD0B1E)
        var checked = 0, mismatches = 0
        let started = Date()
        while checked < total {
            var batch: [Double] = []
            while batch.count < 1_000 {
                let d = Double(bitPattern: random.next())
                if d.isFinite { batch.append(d) }
            }
            guard case .list(let items) = try roundTrip(.list(batch.map(FieldValue.double))) else {
                Issue.record("the list did not come back as a list")
                return
            }
            for (sent, got) in zip(batch, items) where got.doubleValue?.bitPattern != sent.bitPattern {
                mismatches += 1
                if mismatches <= 5 { Issue.record("\(sent) came back as \(got)") }
            }
            checked += batch.count
        }
        #expect(mismatches == 0)
        print("wire doubles: \(checked) round-tripped, \(mismatches) changed, "
              + String(format: "%.2f s", Date().timeIntervalSince(started)))
    }

    @Test func theReaderRefusesWhatIsNotJSON() {
        for text in ["", "{", "{\"a\":}", "[1,]", "01", "1.", "-", "+1", ".5", "\"\\x\"", "\"\u{1}\"", "nul", "{} x",
                     "\"\\ud800\"", String(repeating: "[", count: 100) + String(repeating: "]", count: 100)] {
            #expect(throws: JSONReadError.self, "\(text.prefix(20))") { try JSONReader.parse(Array(text.utf8)) }
        }
        let object = try? JSONReader.parse(Array(#" {"a":[1,-2.5e3,"\u00e9\ud83d\ude00",true,null]} "#.utf8))
        #expect(object is [String: Any])
        let parsed = try? JSONReader.parse(Array(#""\u00e9\ud83d\ude00\n""#.utf8)) as? String
        #expect(parsed == "é😀\n")
    }

    /// Strings without escapes are read in one step, strings with them byte by byte; both give
    /// the same text, and each refusal names the byte where the problem is.
    @Test func stringsWithAndWithoutEscapesReadTheSame() throws {
        let cases: [(String, String)] = [
            (#""plain""#, "plain"), (#""caf\u00e9 ok""#, "caf\u{e9} ok"), ("\"caf\u{e9} \u{1F600}\"", "caf\u{e9} \u{1F600}"),
            (#""a\"b\\c""#, "a\"b\\c"), (#""tail\n""#, "tail\n"), (#""\tlead""#, "\tlead"), (#""""#, ""),
        ]
        for (json, text) in cases {
            #expect(try JSONReader.parse(Array(json.utf8)) as? String == text, "\(json)")
            #expect(try JSONReader.parse(JSONWriter.serialize(text)) as? String == text, "\(json)")
        }
        #expect(JSONWriter.serialize(["b": "x\u{1}", "a": "y"] as [String: Any]) == Array(#"{"a":"y","b":"x\u0001"}"#.utf8))
        func refusal(_ bytes: [UInt8]) -> JSONReadError? {
            do { _ = try JSONReader.parse(bytes); return nil } catch { return error }
        }
        #expect(refusal(Array(#""abc"#.utf8))?.offset == 4)
        #expect(refusal(Array(#""ab"#.utf8) + [0x01] + Array(#"c""#.utf8))?.offset == 3)
        #expect(refusal([0x22, 0x61, 0xFF, 0x22])?.offset == 4)
        #expect(refusal([0x22, 0x5C, 0x6E, 0xFF, 0x22])?.offset == 5)
    }

    /// End to end through a daemon: the 400 names the field; a record of doubles comes back exact.
    @Test func theDaemonRefusesAnOutOfRangeIntegerAndKeepsDoubles() async throws {
        let running = try DaemonRobustnessTests.Running()
        let body = #"{"operations":[{"operationType":"forceUpdate","record":{"recordName":"r1","recordType":"T","#
            + #""fields":{"big":{"type":"INT64","value":18446744073709551616}}}}]}"#
        let request = "POST /database/1/c/e/private/records/modify HTTP/1.1\r\nHost: x\r\n"
            + "Authorization: Bearer \(running.token)\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
        let reply = try running.raw(Array(request.utf8), keepOpen: true)
        close(reply.1)
        #expect(reply.0.hasPrefix("HTTP/1.1 400") && reply.0.contains("BAD_REQUEST"), "\(reply.0)")
        #expect(reply.0.contains("field r1.big") && reply.0.contains("out of range"), "\(reply.0)")

        let client = running.client
        let values: [Double] = [0.1, 2.2250738585072014e-308, 123456789.12345679, -0.0, 5e-324]
        let id = RecordID(recordName: "doubles", zoneID: .defaultZone)
        let record = Record(recordType: "T", id: id, fields: [
            "d": .list(values.map(FieldValue.double)), "empty": .emptyList(elementType: "INT64"), "max": .int64(.max),
        ])
        _ = try await client.modifyRecords(ModifyRecordsRequest(saves: [record], savePolicy: .allKeys), scope: .private)
        let back = try await client.lookupRecords([id], scope: .private)
        guard case .found(let stored)? = back.first else {
            Issue.record("not found: \(back)")
            return
        }
        #expect(stored.fields["d"] == .list(values.map(FieldValue.double)))
        if case .list(let items)? = stored.fields["d"] {
            #expect(items.compactMap(\.doubleValue).map(\.bitPattern) == values.map(\.bitPattern))
        }
        #expect(stored.fields["empty"] == .emptyList(elementType: "INT64"))
        #expect(stored.fields["max"] == .int64(.max))
    }

    /// A list of mixed or nested items, which only a journal written before lists were checked holds,
    /// is answered as `LIST` and read back by clients; a request may not send one.
    @Test func aLegacyMixedListIsAnsweredAndReadBackButNotAccepted() throws {
        let mixed = FieldValue.list([.int64(1), .string("x"), .list([.double(2.5)])])
        let record = Record(recordType: "T", id: RecordID(recordName: "old"), fields: ["m": mixed])
        let answered = try WireFormat.parseObject(WireFormat.serialize(WireFormat.encode(record)))
        #expect(((answered["fields"] as? WireFormat.Object)?["m"] as? WireFormat.Object)?["type"] as? String == "LIST")
        #expect(try WireFormat.decodeRecord(answered, defaultZone: .defaultZone).fields["m"] == mixed)
        let field = try #require((answered["fields"] as? WireFormat.Object)?["m"])
        #expect(throws: WireFormat.ShapeError.self) { try WireFormat.decodeField(field, name: "m") }
    }
}
