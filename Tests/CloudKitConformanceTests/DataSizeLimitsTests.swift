// CloudKit Web Services Reference, "Data Size Limits"
// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/PropertyMetrics.html):
// 200 operations in a request, 200 records in a response, 1 MB per record (assets' files not
// counted), 50 MB per asset, 750 DELETE_SELF references to one target. Web Services names no error
// for them: a request over a limit is BAD_REQUEST (`ckErrorCode` limitExceeded), nothing applied.
import Foundation
import Testing

@Suite("CloudKit: Data Size Limits")
struct DataSizeLimitsTests {
    private func creates(_ names: Range<Int>, prefix: String = "r") -> [[String: Any]] {
        names.map { operation("create", recordDictionary("\(prefix)\($0)", fields: [:])) }
    }

    @Test("200 operations in a request; 201 are BAD_REQUEST and none is applied",
          arguments: ConformanceBackend.allCases)
    func operations(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let zone = try await user.makeZone()
        let ok = try await user.modify(creates(0..<200), zoneID: zone)
        #expect(ok.status == 200 && ok.records.count == 200 && ok.recordCodes.allSatisfy { $0 == nil })
        let over = try await user.modify(creates(0..<201, prefix: "s"), zoneID: zone)
        #expect(over.status == 400 && over.code == "BAD_REQUEST")
        #expect(over.body["ckErrorCode"] as? String == "limitExceeded")
        #expect(try await user.fetch("s0", zoneID: zone) == nil)
        let lookup = try await user.lookup((0..<201).map { "r\($0)" }, zoneID: zone)
        #expect(lookup.status == 400 && lookup.code == "BAD_REQUEST")
    }

    @Test("1 MB of fields per record: one byte more fails that record", arguments: ConformanceBackend.allCases)
    func recordSize(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let zone = try await user.makeZone()
        // The field's name counts: 1 MB minus "blob".
        let fits = Data(repeating: 1, count: 1024 * 1024 - 4).base64EncodedString()
        let over = Data(repeating: 1, count: 1024 * 1024 - 3).base64EncodedString()
        let a = try await user.modify([operation("create", recordDictionary(
            "fits", fields: ["blob": value(fits, "BYTES")]))], zoneID: zone)
        #expect(a.recordCodes == [nil])
        let b = try await user.modify([operation("create", recordDictionary(
            "big", fields: ["blob": value(over, "BYTES")]))], zoneID: zone)
        #expect(b.recordCodes == ["BAD_REQUEST"] && b.records.first?["ckErrorCode"] as? String == "limitExceeded")
        #expect(try await user.fetch("big", zoneID: zone) == nil)
    }

    @Test("an asset's file counts against 50 MB, not the record's 1 MB", arguments: ConformanceBackend.allCases)
    func assetSize(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let zone = try await user.makeZone()
        let fifty: Int64 = 50 * 1024 * 1024
        let ok = try await user.modify([operation("create", recordDictionary("a", fields: [
            "f": value(["fileChecksum": "c", "size": fifty], "ASSETID")]))], zoneID: zone)
        #expect(ok.recordCodes == [nil])
        let over = try await user.modify([operation("create", recordDictionary("b", fields: [
            "f": value(["fileChecksum": "c", "size": fifty + 1], "ASSETID")]))], zoneID: zone)
        #expect(over.recordCodes == ["BAD_REQUEST"])
    }

    @Test("750 DELETE_SELF references to one target; the 751st is BAD_REQUEST", arguments: ConformanceBackend.allCases)
    func deleteSelfReferrers(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let zone = try await user.makeZone()
        _ = try await user.modify([operation("create", recordDictionary("t", fields: [:]))], zoneID: zone)
        func referrer(_ i: Int) -> [String: Any] {
            operation("create", recordDictionary("s\(i)", fields: [
                "to": value(["recordName": "t", "action": "DELETE_SELF"], "REFERENCE")]))
        }
        for start in stride(from: 0, to: 750, by: 150) {
            let reply = try await user.modify((start..<start + 150).map(referrer), zoneID: zone)
            #expect(reply.recordCodes.allSatisfy { $0 == nil })
        }
        let over = try await user.modify([referrer(750)], zoneID: zone)
        #expect(over.recordCodes == ["BAD_REQUEST"] && over.records.first?["ckErrorCode"] as? String == "limitExceeded")
        // A reference without an action is not limited.
        let plain = try await user.modify([operation("create", recordDictionary("plain", fields: [
            "to": value(["recordName": "t", "action": "NONE"], "REFERENCE")]))], zoneID: zone)
        #expect(plain.recordCodes == [nil])
    }
}
