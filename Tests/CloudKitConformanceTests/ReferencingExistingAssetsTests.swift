// CloudKit Web Services Reference, "Referencing Existing Assets (assets/rereference)"
// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/RereferenceAssets.html): the
// asset fields named are answered as Asset Dictionaries a client saves into other records.
import Foundation
import Testing

@Suite("CloudKit: Referencing Existing Assets")
struct ReferencingExistingAssetsTests {
    @Test("an asset rereferenced into a second record: both serve the bytes; missing records and fields refused",
          arguments: ConformanceBackend.allCases)
    func rereference(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let zone = try await user.makeZone()
        let file = UploadAssetsTests.bytes(5_000, seed: 11)
        let (_, single, _) = try await UploadAssetsTests.upload(file, as: user, record: "first", zoneID: zone)
        let saved = try await user.modify([operation("create", recordDictionary(
            "first", type: "Photo", fields: ["image": value(single, "ASSETID"), "title": value("t")]))], zoneID: zone)
        #expect(saved.recordCodes == [nil], "\(saved)")

        let answer = try await user.post("assets/rereference", ["zoneID": zone, "assets": [
            ["recordName": "first", "fieldName": "image"], ["recordName": "nobody", "fieldName": "image"],
            ["recordName": "first", "fieldName": "title"],
        ]])
        let assets = answer.body["assets"] as? [[String: Any]] ?? []
        #expect(answer.status == 200 && assets.count == 3, "\(answer)")
        let asset = try #require(assets.first)
        #expect(asset["receipt"] as? String == single["receipt"] as? String && asset["downloadURL"] is String)
        #expect(asset["fileChecksum"] as? String == single["fileChecksum"] as? String)
        #expect(assets.dropFirst().map { $0["serverErrorCode"] as? String } == ["NOT_FOUND", "BAD_REQUEST"])

        let second = try await user.modify([operation("create", recordDictionary(
            "second", type: "Photo", fields: ["image": value(asset, "ASSETID")]))], zoneID: zone)
        #expect(second.recordCodes == [nil], "\(second)")
        _ = try await user.modify([operation("forceDelete", ["recordName": "first"])], zoneID: zone)
        let record = try #require(try await user.fetch("second", zoneID: zone))
        let kept = ((record["fields"] as? [String: Any])?["image"] as? [String: Any])?["value"] as? [String: Any]
        let download = try #require(kept?["downloadURL"] as? String)
        #expect(try await user.server.raw("GET", UploadAssetsTests.path(download), write: false).body == file)

        let bad = try await user.post("assets/rereference", ["assets": [["recordName": "x", "fileName": "image"]]])
        #expect(bad.status == 400 && bad.reason.contains("fileName"), "\(bad)")
        let none = try await user.post("assets/rereference", ["zoneID": zone])
        #expect(none.status == 400 && none.reason.contains("assets"), "\(none)")
    }
}
