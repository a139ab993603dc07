// CloudKit Web Services Reference, "Types and Dictionaries"
// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/Types.html):
// CKValue's field types and their lists, the Record Field, Location, Asset, Reference and Zone ID
// dictionaries, and the Record Dictionary's response keys (`created`/`modified` with `deviceID`).
import Foundation
import Testing

@Suite("CloudKit: Types and Dictionaries")
struct TypesAndDictionariesTests {
    /// Saves `fields` in a record and fetches it back.
    private func roundTrip(_ backend: ConformanceBackend, _ fields: [String: Any]) async throws -> [String: Any] {
        let user = try await backend.user()
        let zone = try await user.makeZone()
        let saved = try await user.modify([operation("create", recordDictionary("r", fields: fields))], zoneID: zone)
        #expect(saved.status == 200 && saved.recordCodes == [nil], "\(saved)")
        return try #require(try await user.fetch("r", zoneID: zone))
    }

    @Test("every scalar type keeps its value and type", arguments: ConformanceBackend.allCases)
    func scalars(_ backend: ConformanceBackend) async throws {
        let r = try await roundTrip(backend, [
            "s": value("héllo ✓", "STRING"), "i": value(Int64.min, "INT64"), "j": value(Int64.max, "INT64"),
            "d": value(0.1, "DOUBLE"), "tiny": value(5e-324, "DOUBLE"),
            "t": value(1_700_000_000_123 as Int64, "TIMESTAMP"),
            "b": value(Data([0, 1, 255]).base64EncodedString(), "BYTES"),
        ])
        #expect(r.field("s") as? String == "héllo ✓" && r.fieldType("s") == "STRING")
        #expect(r.int("i") == Int64.min && r.int("j") == Int64.max && r.fieldType("j") == "INT64")
        #expect((r.field("d") as? NSNumber)?.doubleValue == 0.1)
        #expect((r.field("tiny") as? NSNumber)?.doubleValue == 5e-324)
        #expect(r.int("t") == 1_700_000_000_123 && r.fieldType("t") == "TIMESTAMP")
        #expect(r.field("b") as? String == "AAH/" && r.fieldType("b") == "BYTES")
    }

    @Test("a list of every type keeps its items and type; an empty list keeps its type",
          arguments: ConformanceBackend.allCases)
    func lists(_ backend: ConformanceBackend) async throws {
        let location: [String: Any] = ["latitude": 1.5, "longitude": -2.5]
        let asset: [String: Any] = ["fileChecksum": "abc", "size": 10]
        let r = try await roundTrip(backend, [
            "s": value(["a", "b"], "STRING_LIST"), "i": value([1, -2], "INT64_LIST"), "d": value([0.5], "DOUBLE_LIST"),
            "t": value([1, 2], "TIMESTAMP_LIST"), "b": value(["AAE="], "BYTES_LIST"),
            "r": value([["recordName": "x", "action": "NONE"]], "REFERENCE_LIST"),
            "l": value([location], "LOCATION_LIST"), "a": value([asset], "ASSETID_LIST"),
            "e": value([Any](), "DOUBLE_LIST"),
        ])
        let types = ["s": "STRING_LIST", "i": "INT64_LIST", "d": "DOUBLE_LIST", "t": "TIMESTAMP_LIST",
                     "b": "BYTES_LIST", "r": "REFERENCE_LIST", "l": "LOCATION_LIST", "a": "ASSETID_LIST",
                     "e": "DOUBLE_LIST"]
        for (name, type) in types { #expect(r.fieldType(name) == type, "\(name)") }
        #expect(r.field("s") as? [String] == ["a", "b"] && (r.field("e") as? [Any])?.isEmpty == true)
        #expect(((r.field("l") as? [[String: Any]])?.first?["latitude"] as? NSNumber)?.doubleValue == 1.5)
    }

    @Test("LOCATION: every key of the Location Dictionary comes back", arguments: ConformanceBackend.allCases)
    func location(_ backend: ConformanceBackend) async throws {
        let location: [String: Any] = ["latitude": 48.8584, "longitude": 2.2945, "horizontalAccuracy": 5.0,
                                       "verticalAccuracy": 3.0, "altitude": 35.5, "speed": 1.25, "course": 90.0,
                                       "timestamp": 1_700_000_000_000 as Int64]
        let r = try await roundTrip(backend, ["where": value(location, "LOCATION")])
        #expect(r.fieldType("where") == "LOCATION")
        let back = try #require(r.field("where") as? [String: Any])
        #expect(Set(back.keys) == Set(location.keys))
        for key in ["latitude", "longitude", "horizontalAccuracy", "verticalAccuracy", "altitude", "speed", "course"] {
            #expect((back[key] as? NSNumber)?.doubleValue == (location[key] as? Double), "\(key)")
        }
        #expect(integer(back["timestamp"]) == 1_700_000_000_000)
    }

    @Test("LOCATION: latitude and longitude are required and on Earth", arguments: ConformanceBackend.allCases)
    func locationChecks(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let zone = try await user.makeZone()
        let missing = try await user.modify([operation("create", recordDictionary(
            "r", fields: ["w": value(["latitude": 1.0], "LOCATION")]))], zoneID: zone)
        #expect(missing.status == 400 && missing.reason.contains("longitude"))
        let off = try await user.modify([operation("create", recordDictionary(
            "r", fields: ["w": value(["latitude": 91.0, "longitude": 0.0], "LOCATION")]))], zoneID: zone)
        #expect(off.recordCodes == ["BAD_REQUEST"])
        #expect((off.records.first?["reason"] as? String ?? "").contains("latitude"))
    }

    @Test("ASSETID and ASSET without a receipt: the Asset Dictionary comes back whole, under the type it was sent as",
          arguments: ConformanceBackend.allCases)
    func assets(_ backend: ConformanceBackend) async throws {
        var asset: [String: Any] = ["fileChecksum": "AXU0XS2eHr6mRNKqnFkPbmYm", "size": 1234,
                                    "referenceChecksum": "AUm2", "wrappingKey": "k3y",
                                    "downloadURL": "https://example.invalid/a"]
        let r = try await roundTrip(backend, ["photo": value(asset, "ASSETID"), "thumb": value(asset, "ASSET")])
        #expect(r.fieldType("photo") == "ASSETID" && r.fieldType("thumb") == "ASSET")
        let back = try #require(r.field("photo") as? [String: Any])
        #expect(Set(back.keys) == Set(asset.keys) && integer(back["size"]) == 1234)
        #expect(back["fileChecksum"] as? String == "AXU0XS2eHr6mRNKqnFkPbmYm")
        // A receipt must be an upload of this store's (UploadAssetsTests).
        asset["receipt"] = "r3c31pt"
        let user = try await backend.user()
        let foreign = try await user.modify([operation("create", recordDictionary(
            "r", fields: ["photo": value(asset, "ASSETID")]))], zoneID: try await user.makeZone())
        #expect(foreign.status == 400 && foreign.code == "BAD_REQUEST", "\(foreign)")
    }

    @Test("ASSETID: fileChecksum and size are required", arguments: ConformanceBackend.allCases)
    func assetChecks(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let zone = try await user.makeZone()
        for (asset, key) in [(["size": 1] as [String: Any], "fileChecksum"), (["fileChecksum": "x"], "size")] {
            let reply = try await user.modify([operation("create", recordDictionary(
                "r", fields: ["a": value(asset, "ASSETID")]))], zoneID: zone)
            #expect(reply.status == 400 && reply.reason.contains(key), "\(reply)")
        }
    }

    @Test("REFERENCE: the action is kept; left out it is NONE; an unknown one is refused",
          arguments: ConformanceBackend.allCases)
    func references(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let zone = try await user.makeZone()
        let reply = try await user.modify([
            operation("create", recordDictionary("target", fields: [:])),
            operation("create", recordDictionary("r", fields: [
                "none": value(["recordName": "target", "action": "NONE"], "REFERENCE"),
                "self": value(["recordName": "target", "action": "DELETE_SELF"], "REFERENCE"),
                "valid": value(["recordName": "target", "action": "VALIDATE"], "REFERENCE"),
                "bare": value(["recordName": "elsewhere"], "REFERENCE"),
            ])),
        ], zoneID: zone)
        #expect(reply.recordCodes == [nil, nil], "\(reply)")
        let r = try #require(try await user.fetch("r", zoneID: zone))
        func action(_ name: String) -> String? { (r.field(name) as? [String: Any])?["action"] as? String }
        #expect(action("none") == "NONE" && action("self") == "DELETE_SELF" && action("valid") == "VALIDATE")
        #expect(action("bare") == "NONE")
        // A reference without a zoneID names a record of the record's own zone.
        let bareZone = (r.field("bare") as? [String: Any])?["zoneID"] as? [String: Any]
        #expect(bareZone?["zoneName"] as? String == "zone_c")
        let unknown = try await user.modify([operation("create", recordDictionary(
            "s", fields: ["x": value(["recordName": "target", "action": "CASCADE"], "REFERENCE")]))], zoneID: zone)
        #expect(unknown.status == 400 && unknown.reason.contains("CASCADE"))
    }

    @Test("without a type, a value's type is told from it; true and false are INT64 1 and 0",
          arguments: ConformanceBackend.allCases)
    func inferredTypes(_ backend: ConformanceBackend) async throws {
        let r = try await roundTrip(backend, [
            "s": value("x"), "i": value(7), "d": value(7.5), "yes": value(true), "no": value(false),
            "loc": value(["latitude": 1.0, "longitude": 2.0]), "ref": value(["recordName": "t"]),
            "asset": value(["fileChecksum": "c", "size": 1]), "list": value(["a", "b"]),
        ])
        let types = ["s": "STRING", "i": "INT64", "d": "DOUBLE", "yes": "INT64", "no": "INT64", "loc": "LOCATION",
                     "ref": "REFERENCE", "asset": "ASSETID", "list": "STRING_LIST"]
        for (name, type) in types { #expect(r.fieldType(name) == type, "\(name)") }
        #expect(r.int("yes") == 1 && r.int("no") == 0)
    }

    @Test("created and modified: timestamp, userRecordName, deviceID; created stays, modified moves",
          arguments: ConformanceBackend.allCases)
    func stamps(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user(device: "phone-1")
        let zone = try await user.makeZone()
        let made = try await user.modify([operation("create", recordDictionary("r", fields: [:]))], zoneID: zone)
        let first = try #require(made.records.first)
        let other = ConformanceUser(name: user.name, token: user.token, device: "laptop-2", server: user.server)
        let updated = try #require(try await other.modify([operation("forceUpdate", recordDictionary(
            "r", fields: ["v": value(1)]))], zoneID: zone).records.first)
        let created = try #require(updated["created"] as? [String: Any])
        let modified = try #require(updated["modified"] as? [String: Any])
        #expect(created["deviceID"] as? String == "phone-1" && modified["deviceID"] as? String == "laptop-2")
        #expect(created["userRecordName"] as? String == user.name && modified["userRecordName"] as? String == user.name)
        #expect(integer(created["timestamp"]) == integer((first["created"] as? [String: Any])?["timestamp"]))
    }

    @Test("Zone ID Dictionary: ownerRecordName defaults to the current user", arguments: ConformanceBackend.allCases)
    func zoneID(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        _ = try await user.makeZone()
        let explicit: [String: Any] = ["zoneName": "zone_c", "ownerRecordName": user.name]
        _ = try await user.modify([operation("create", recordDictionary("r", fields: [:]))], zoneID: explicit)
        #expect(try await user.fetch("r", zoneID: ["zoneName": "zone_c"]) != nil)
        let wrong = try await user.post("records/lookup", ["zoneID": ["name": "zone_c"],
                                                           "records": [["recordName": "r"]]])
        #expect(wrong.status == 400 && wrong.reason.contains("name"))
    }
}
