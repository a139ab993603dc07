// CloudKit Web Services Reference, "Uploading Assets (assets/upload)"
// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/UploadAssets.html), with the
// Asset Dictionary of "Types and Dictionaries" and the asset limit of "Data Size Limits": ask for
// upload URLs, POST the file to one, save the `singleFile` dictionary as the record's ASSETID field,
// and fetch the bytes back from the `downloadURL` every answer carrying the record gives.
import Foundation
import Net
import RecordStore
@testable import StoreServer
import Testing
import TestSupport
import ZoneCore
#if PostgreSQL
import PostgresStore
#endif

@Suite("CloudKit: Uploading Assets")
struct UploadAssetsTests {
    /// The path of an absolute URL the store handed out (or the path itself).
    static func path(_ url: String) -> String {
        guard url.hasPrefix("http://"), let slash = url.dropFirst(7).firstIndex(of: "/") else { return url }
        return String(url[slash...])
    }

    /// Seeded bytes of `count`.
    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var random = SeededRandom(seed: seed)
        return (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    }

    /// assets/upload for one field, then the POST of `file`: the upload URL and the `singleFile` answer.
    static func upload(_ file: [UInt8], as user: ConformanceUser, record: String, field: String = "image",
                       zoneID: [String: Any]) async throws -> (url: String, singleFile: [String: Any], status: Int) {
        let tokens = try await user.post("assets/upload", [
            "zoneID": zoneID, "tokens": [["recordName": record, "recordType": "Photo", "fieldName": field]],
        ])
        let token = (tokens.body["tokens"] as? [[String: Any]])?.first ?? [:]
        #expect(tokens.status == 200 && token["recordName"] as? String == record && token["fieldName"] as? String == field,
                "\(tokens)")
        let url = token["url"] as? String ?? ""
        let answer = try await user.server.raw("POST", path(url), headers: [("Content-Type", "application/octet-stream")],
                                               body: file, write: true)
        if answer.status != 200 && file.count <= Int(Asset.maxFileSize) {
            Issue.record("upload to \(url): \(answer.status) \(answer.text.prefix(300))")
        }
        return (url, answer.json["singleFile"] as? [String: Any] ?? [:], answer.status)
    }

    @Test("upload, save as ASSETID, lookup: the downloadURL serves the same bytes (through the other daemon too)",
          arguments: ConformanceBackend.allCases)
    func roundTrip(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let zone = try await user.makeZone()
        let file = Self.bytes(100_000, seed: 1)
        let (url, single, status) = try await Self.upload(file, as: user, record: "photo", zoneID: zone)
        #expect(status == 200 && url.contains(AssetRoutes.uploadPrefix))
        #expect(integer(single["size"]) == 100_000)
        #expect((single["fileChecksum"] as? String)?.isEmpty == false && single["receipt"] is String)
        let saved = try await user.modify([operation("create", recordDictionary(
            "photo", type: "Photo", fields: ["image": value(single, "ASSETID")]))], zoneID: zone)
        #expect(saved.recordCodes == [nil], "\(saved)")
        let record = try #require(try await user.fetch("photo", zoneID: zone))
        let asset = ((record["fields"] as? [String: Any])?["image"] as? [String: Any])?["value"] as? [String: Any] ?? [:]
        #expect(asset["fileChecksum"] as? String == single["fileChecksum"] as? String)
        #expect(integer(asset["size"]) == 100_000)
        // The receipt is the upload's credential: answers carry the download URL instead.
        #expect(asset["receipt"] == nil)
        let download = try #require(asset["downloadURL"] as? String)
        let fetched = try await user.server.raw("GET", Self.path(download), write: false)
        #expect(fetched.status == 200 && fetched.body == file)
        // The URL is signed to lapse: without its signature, or with its time moved on, it serves nothing.
        let unsigned = String(Self.path(download).prefix { $0 != "?" })
        #expect(download.contains("?expires=") && download.contains("&signature="))
        #expect(try await user.server.raw("GET", unsigned, write: false).status == 404)
        let later = Self.path(download).replacingOccurrences(of: "expires=", with: "expires=9")
        #expect(try await user.server.raw("GET", later, write: false).status == 404)
        // A used upload URL takes nothing more.
        let again = try await user.server.raw("POST", Self.path(url), body: [1, 2, 3], write: true)
        #expect(again.status == 401 && again.json["serverErrorCode"] as? String == "AUTHENTICATION_FAILED")
    }

    @Test("an upload URL handed out by one daemon takes the upload on the other; a replay is refused on both",
          arguments: ConformanceBackend.allCases)
    func uploadURLAcrossDaemons(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let tokens = try await user.post("assets/upload", ["tokens": [["recordName": "x", "fieldName": "image"]]])
        let url = Self.path((tokens.body["tokens"] as? [[String: Any]])?.first?["url"] as? String ?? "")
        // Asked of the writing daemon, uploaded to the reading one (the same daemon where there is one).
        let file = Self.bytes(2_000, seed: 3)
        let taken = try await user.server.raw("POST", url, body: file, write: false)
        #expect(taken.status == 200 && integer((taken.json["singleFile"] as? [String: Any])?["size"]) == 2_000,
                "\(taken.status) \(taken.text.prefix(200))")
        for write in [true, false] {
            let replay = try await user.server.raw("POST", url, body: [7], write: write)
            #expect(replay.status == 401 && replay.json["serverErrorCode"] as? String == "AUTHENTICATION_FAILED")
        }
    }

    @Test("upload tokens and download URLs: lapsed, forged, altered or signed with another key: refused")
    func uploadTokens() throws {
        let key = Self.bytes(32, seed: 11)
        let signer = AssetURLSigner(key: key)
        let now = Date()
        let token = signer.uploadToken(user: "u1", expires: now.addingTimeInterval(AssetURLSigner.uploadLifetime))
        let upload = try #require(signer.checkUpload(token, now: now))
        #expect(upload.user == "u1" && StoredAsset.isReceipt(upload.receipt))
        // One token, one receipt (what makes a replay find its upload kept); another token, another.
        #expect(signer.checkUpload(token, now: now) == upload)
        let other = signer.uploadToken(user: "u1", expires: now.addingTimeInterval(60))
        #expect(signer.checkUpload(other, now: now)?.receipt != upload.receipt)
        #expect(signer.checkUpload(token, now: now.addingTimeInterval(AssetURLSigner.uploadLifetime + 1)) == nil)
        #expect(AssetURLSigner(key: Self.bytes(32, seed: 12)).checkUpload(token, now: now) == nil)
        var altered = Array(token.utf8)
        altered[10] = altered[10] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(signer.checkUpload(String(decoding: altered, as: UTF8.self), now: now) == nil)
        // A download URL: good until it lapses; another receipt, time or key: forged.
        let query = signer.downloadQuery(receipt: upload.receipt, expires: now.addingTimeInterval(60))
        let pairs = URLEncodedPairs.query(of: query)
        let (expires, signature) = (pairs.first { $0.name == "expires" }?.value, pairs.first { $0.name == "signature" }?.value)
        #expect(signer.checkDownload(receipt: upload.receipt, expires: expires, signature: signature, now: now) == .valid)
        #expect(signer.checkDownload(receipt: upload.receipt, expires: expires, signature: signature,
                                     now: now.addingTimeInterval(61)) == .lapsed)
        #expect(signer.checkDownload(receipt: StoredAsset.newReceipt(), expires: expires, signature: signature,
                                     now: now) == .forged)
        #expect(signer.checkDownload(receipt: upload.receipt, expires: "1" + (expires ?? ""), signature: signature,
                                     now: now) == .forged)
        #expect(signer.checkDownload(receipt: upload.receipt, expires: expires, signature: nil, now: now) == .forged)
        #expect(AssetURLSigner(key: Self.bytes(32, seed: 12)).checkDownload(
            receipt: upload.receipt, expires: expires, signature: signature, now: now) == .forged)
        // A used token's file outlives the token, so its replay always finds the receipt kept.
        #expect(StoreAPI.unreferencedAssetGrace > AssetURLSigner.uploadLifetime)
        for junk in ["", String(repeating: "0", count: 32), "..%2F", String(repeating: "A", count: 5_000), token + "A"] {
            #expect(signer.checkUpload(junk, now: now) == nil)
        }
    }

    @Test("a forged upload URL: 401 AUTHENTICATION_FAILED; a wrong receipt: BAD_REQUEST, nothing of the request applied",
          arguments: ConformanceBackend.allCases)
    func forgeries(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let zone = try await user.makeZone()
        let forged = try await user.server.raw("POST", AssetRoutes.uploadPrefix + String(repeating: "0", count: 32),
                                               body: [1], write: true)
        #expect(forged.status == 401 && forged.json["serverErrorCode"] as? String == "AUTHENTICATION_FAILED")
        let (_, single, _) = try await Self.upload([1, 2, 3], as: user, record: "a", zoneID: zone)
        var wrongReceipt = single
        wrongReceipt["receipt"] = String(repeating: "f", count: 32)
        var wrongSize = single
        wrongSize["size"] = 4
        for bad in [wrongReceipt, wrongSize] {
            let reply = try await user.modify([
                operation("create", recordDictionary("other", fields: ["title": value("x", "STRING")])),
                operation("create", recordDictionary("a", type: "Photo", fields: ["image": value(bad, "ASSETID")])),
            ], zoneID: zone)
            #expect(reply.status == 400 && reply.code == "BAD_REQUEST", "\(reply)")
            #expect(try await user.fetch("other", zoneID: zone) == nil)
        }
        let tooMany = try await user.post("assets/upload", [
            "tokens": (0...AssetRoutes.maxTokens).map { ["fieldName": "f\($0)"] },
        ])
        #expect(tooMany.status == 400 && tooMany.code == "BAD_REQUEST")
        let unknownKey = try await user.post("assets/upload", ["tokens": [["fieldName": "f", "size": 3]]])
        #expect(unknownKey.status == 400 && unknownKey.reason.contains("size"))
    }

    @Test("another user cannot read the record, so gets no downloadURL; a guessed URL is NOT_FOUND",
          arguments: ConformanceBackend.allCases)
    func otherUser(_ backend: ConformanceBackend) async throws {
        let owner = try await backend.user()
        let stranger = try await backend.user()
        let zone = try await owner.makeZone()
        let (_, single, _) = try await Self.upload(Array("secret".utf8), as: owner, record: "s", zoneID: zone)
        let saved = try await owner.modify([operation("create", recordDictionary(
            "s", type: "Photo", fields: ["image": value(single, "ASSETID")]))], zoneID: zone)
        #expect(saved.recordCodes == [nil])
        let looked = try await stranger.lookup(["s"], zoneID: zone)
        #expect(looked.records.first?["downloadURL"] == nil && looked.recordCodes.first != nil, "\(looked)")
        let guessed = try await stranger.server.raw("GET", AssetRoutes.downloadPrefix + String(repeating: "a", count: 32),
                                                    write: false)
        #expect(guessed.status == 404 && guessed.json["serverErrorCode"] as? String == "NOT_FOUND")
        let notReceipt = try await stranger.server.raw("GET", AssetRoutes.downloadPrefix + "../api-tokens", write: false)
        #expect(notReceipt.status == 404)
    }

    @Test("an upload over Data Size Limits' 50 MB: 400 BAD_REQUEST (limitExceeded) from its head, nothing kept",
          arguments: ConformanceBackend.allCases.filter { $0 != .embedded })
    func oversized(_ backend: ConformanceBackend) async throws {
        let server = try await backend.server()
        let endpoint = try #require(server.endpoints.first)
        let head = "POST \(AssetRoutes.uploadPrefix)\(String(repeating: "0", count: 32)) HTTP/1.1\r\nHost: x\r\n"
            + "Content-Length: \(Asset.maxFileSize + 1)\r\n\r\n"
        let answer = try rawExchange(endpoint, Array(head.utf8))
        #expect(answer.hasPrefix("HTTP/1.1 400"), "\(answer.prefix(200))")
        #expect(answer.contains(#""ckErrorCode":"limitExceeded""#) && answer.contains("BAD_REQUEST"))
    }

    /// The head of an upload of `length` bytes to `target` and the first `sent` bytes of its body,
    /// sent on a fresh connection that never sends the rest; what the daemon answers within 2 s.
    static func uploadNeverFinished(_ endpoint: Endpoint, _ target: String, length: Int = 8 << 20,
                                    sent: Int = 64 * 1024) throws -> String {
        let head = "POST \(target) HTTP/1.1\r\nHost: x\r\nContent-Length: \(length)\r\n\r\n"
        return try rawExchange(endpoint, Array(head.utf8) + bytes(sent, seed: 21))
    }

    @Test("a forged or used upload URL with a body over 4 MB: 401 from its head, at once, the body never sent",
          arguments: ConformanceBackend.allCases.filter { $0 != .embedded })
    func refusedBeforeBody(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let tokens = try await user.post("assets/upload", ["tokens": [["fieldName": "image"]]])
        let used = Self.path((tokens.body["tokens"] as? [[String: Any]])?.first?["url"] as? String ?? "")
        #expect(try await user.server.raw("POST", used, body: [1, 2, 3], write: true).status == 200)
        let forged = AssetRoutes.uploadPrefix + String(repeating: "A", count: 60)
        // Used through the writing daemon, refused by each (on PostgreSQL the other reads the same table).
        for endpoint in user.server.endpoints {
            for target in [forged, used] {
                let answer = try Self.uploadNeverFinished(endpoint, target)
                #expect(answer.hasPrefix("HTTP/1.1 401") && answer.contains("AUTHENTICATION_FAILED"),
                        "\(target.prefix(40)): \(answer.prefix(200))")
            }
        }
    }

    @Test("journal: a refused upload over 4 MB (forged, used, lapsed) leaves no spool file; an admitted one is spooled")
    func refusedUploadCostsNoDisk() async throws {
        let directory = FileManager.default.temporaryDirectory.path + "/zonertc-assets-test-\(StoredAsset.newReceipt())"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try EmbeddedStore(options: .inMemoryForTests)
        defer { store.close() }
        let api = StoreAPI(store: store, users: try UserRegistry(directory: nil), allowRegister: false,
                           assets: try AssetFiles(directory: directory + "/assets"))
        try await api.prepareAssetSigning()
        var options = StoreDaemon.Options(listen: try Endpoint(parsing: "127.0.0.1:0"))
        let spool = try BodySpoolDirectory.prepare(directory + "/spool")
        options.spoolDirectory = spool
        let daemon = try StoreDaemon(api: api, options: options)
        try daemon.start()
        defer { daemon.stop() }
        let signer = try await api.assetURLSigner()
        let used = AssetRoutes.uploadPrefix + signer.uploadToken(user: "u", expires: Date().addingTimeInterval(60))
        #expect(try await rawHTTP(daemon.endpoint, "POST", used, body: [1]).status == 200)
        let lapsed = AssetRoutes.uploadPrefix + signer.uploadToken(user: "u", expires: Date().addingTimeInterval(-1))
        let forged = AssetRoutes.uploadPrefix + AssetURLSigner(key: Self.bytes(32, seed: 4))
            .uploadToken(user: "u", expires: Date().addingTimeInterval(60))
        for target in [forged, used, lapsed] {
            let answer = try Self.uploadNeverFinished(daemon.endpoint, target)
            #expect(answer.hasPrefix("HTTP/1.1 401"), "\(answer.prefix(200))")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: spool).isEmpty)
        // A good URL's body is taken (and spooled as it comes): asked to go on, then answered once it is whole.
        let good = AssetRoutes.uploadPrefix + signer.uploadToken(user: "u", expires: Date().addingTimeInterval(60))
        let file = Self.bytes(5 << 20, seed: 6)
        let head = "POST \(good) HTTP/1.1\r\nHost: x\r\nConnection: close\r\nExpect: 100-continue\r\nContent-Length: \(file.count)\r\n\r\n"
        let answer = try rawExchange(daemon.endpoint, Array(head.utf8) + file, timeoutMilliseconds: 10_000)
        #expect(answer.hasPrefix("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200"), "\(answer.prefix(200))")
        #expect(answer.contains("\"size\":\(file.count)"))
    }

    @Test("journal: a spooled upload and an upload URL survive a restart; files no record holds go, held ones stay")
    func restartAndSweep() async throws {
        let directory = FileManager.default.temporaryDirectory.path + "/zonertc-assets-test-\(StoredAsset.newReceipt())"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let users = try UserRegistry(directory: nil)
        let token = try users.add("owner")
        func serve() throws -> (StoreDaemon, EmbeddedStore, StoreAPI) {
            var options = EmbeddedStore.Options(directory: directory)
            options.automaticPush = false
            let store = try EmbeddedStore(options: options)
            let api = StoreAPI(store: store, users: users, allowRegister: false,
                               assets: try AssetFiles(directory: directory + "/assets"))
            var daemonOptions = StoreDaemon.Options(listen: try Endpoint(parsing: "127.0.0.1:0"))
            // Uploads over 64 KB take the spooled path here (4 MB in the daemon's default).
            daemonOptions.limits.maxBodyBytes = 64 * 1024
            daemonOptions.spoolDirectory = try BodySpoolDirectory.prepare(directory + "/assets-spool")
            let daemon = try StoreDaemon(api: api, options: daemonOptions)
            try daemon.start()
            return (daemon, store, api)
        }
        let auth = [("Authorization", "Bearer \(token)"), ("X-Device-ID", "d")]
        func post(_ endpoint: Endpoint, _ op: String, _ body: [String: Any]) async throws -> [String: Any] {
            try await rawHTTP(endpoint, "POST", ConformanceUser.container + "/private/" + op, headers: auth,
                              body: WireFormat.serialize(body)).json
        }
        func uploadURL(_ endpoint: Endpoint) async throws -> String {
            let tokens = try await post(endpoint, "assets/upload", ["tokens": [["fieldName": "image"]]])
            return Self.path(((tokens["tokens"] as? [[String: Any]])?.first?["url"] as? String) ?? "")
        }
        func upload(_ endpoint: Endpoint, _ file: [UInt8]) async throws -> [String: Any] {
            try await rawHTTP(endpoint, "POST", try await uploadURL(endpoint), body: file).json["singleFile"]
                as? [String: Any] ?? [:]
        }
        let kept = Self.bytes(300_000, seed: 5)  // spooled: over the 64 KB in-memory limit
        var (daemon, store, _) = try serve()
        let single = try await upload(daemon.endpoint, kept)
        let orphan = try await upload(daemon.endpoint, [9, 9, 9])
        let pending = try await uploadURL(daemon.endpoint)
        _ = try await post(daemon.endpoint, "records/modify", ["operations": [operation("create", recordDictionary(
            "photo", type: "Photo", fields: ["image": value(single, "ASSETID")]))]])
        _ = daemon.stop()
        store.close()
        // Nothing of the spooled upload is left beside the kept file.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory + "/assets-spool").isEmpty)

        var api: StoreAPI
        (daemon, store, api) = try serve()
        // The upload URL handed out before the restart takes its upload after it, once.
        let late = try await rawHTTP(daemon.endpoint, "POST", pending, body: [4, 5, 6])
        #expect(late.status == 200 && (late.json["singleFile"] as? [String: Any])?["receipt"] is String)
        #expect(try await rawHTTP(daemon.endpoint, "POST", pending, body: [4, 5, 6]).status == 401)
        let lookup = try await post(daemon.endpoint, "records/lookup", ["records": [["recordName": "photo"]]])
        let record = (lookup["records"] as? [[String: Any]])?.first ?? [:]
        let asset = ((record["fields"] as? [String: Any])?["image"] as? [String: Any])?["value"] as? [String: Any]
        let download = Self.path(asset?["downloadURL"] as? String ?? "")
        #expect(try await rawHTTP(daemon.endpoint, "GET", download).body == kept)
        // Signed before the restart, still good after it; one signed to have lapsed: 401.
        let receipt = String(download.dropFirst(AssetRoutes.downloadPrefix.count).prefix { $0 != "?" })
        let lapsed = AssetRoutes.downloadPrefix + receipt
            + (try await api.assetURLSigner()).downloadQuery(receipt: receipt, expires: Date().addingTimeInterval(-1))
        let refused = try await rawHTTP(daemon.endpoint, "GET", lapsed)
        #expect(refused.status == 401 && refused.json["serverErrorCode"] as? String == "AUTHENTICATION_FAILED")
        // A sweep with the grace over: the orphans go, the record's file stays; deleting the record frees it.
        #expect(try await api.removeUnreferencedAssets(keptBefore: Date().addingTimeInterval(1)) == 2)
        #expect(try await api.assets?.asset(receipt: orphan["receipt"] as? String ?? "") == nil)
        #expect(try await rawHTTP(daemon.endpoint, "GET", download).status == 200)
        _ = try await post(daemon.endpoint, "records/modify", ["operations": [operation("forceDelete", ["recordName": "photo"])]])
        #expect(try await api.removeUnreferencedAssets(keptBefore: Date().addingTimeInterval(1)) == 1)
        #expect(try await rawHTTP(daemon.endpoint, "GET", download).status == 404)
        _ = daemon.stop()
        store.close()
    }

    @Test("an upload over 4 MB (spooled by the daemon) saved and served whole, through either daemon",
          arguments: ConformanceBackend.allCases.filter { $0 != .embedded })
    func spooledUpload(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let zone = try await user.makeZone()
        let file = Self.bytes(4 * 1024 * 1024 + 4_097, seed: 9)
        let (_, single, status) = try await Self.upload(file, as: user, record: "big", zoneID: zone)
        #expect(status == 200 && integer(single["size"]) == Int64(file.count), "\(single)")
        let saved = try await user.modify([operation("create", recordDictionary(
            "big", type: "Photo", fields: ["image": value(single, "ASSETID")]))], zoneID: zone)
        #expect(saved.recordCodes == [nil], "\(saved)")
        let record = try #require(try await user.fetch("big", zoneID: zone))
        let asset = ((record["fields"] as? [String: Any])?["image"] as? [String: Any])?["value"] as? [String: Any]
        let download = try #require(asset?["downloadURL"] as? String)
        let fetched = try await user.server.raw("GET", Self.path(download), write: false)
        #expect(fetched.status == 200 && fetched.body == file)
    }

    /// Where a race test keeps files: beside the journal, or in PostgreSQL.
    enum AssetStore: String, CaseIterable, CustomStringConvertible {
        case files, postgres
        var description: String { rawValue }
        static var runnable: [AssetStore] {
            #if PostgreSQL
            if PostgresCluster.runnable { return allCases }
            #endif
            return [.files]
        }
    }

    @Test("the sweep between a save's receipt check and its commit leaves the file; after the lapse the save fails",
          arguments: AssetStore.runnable)
    func sweepRace(_ kind: AssetStore) async throws {
        // The clock stands a second before an upload made now lapses.
        let grace = StoreAPI.unreferencedAssetGrace
        let clock = ManualClock(start: WallClock().now() + .seconds(Int64(grace) - 1))
        func now() -> Date { Date(timeIntervalSince1970: Double(clock.now().millisecondsSinceEpoch) / 1000) }
        let store: any StoreBackend
        let files: any AssetStorage
        switch kind {
        case .files:
            store = try EmbeddedStore(options: .inMemoryForTests, clock: clock)
            files = try AssetFiles.temporary()
        case .postgres:
            #if PostgreSQL
            let cluster = try PostgresCluster.shared()
            var options = PostgresStore.Options(url: cluster.url(schema: try cluster.freshSchema()))
            options.automaticPush = false
            let postgres = try await PostgresStore.open(options: options, clock: clock)
            store = postgres
            files = PostgresAssets(store: postgres)
            #else
            return
            #endif
        }
        defer { store.close() }
        let client = store.client(user: "racer", assets: files)
        func upload(_ seed: UInt64) async throws -> (Asset, [UInt8]) {
            let bytes = Self.bytes(1_000, seed: seed)
            let kept = StoredAsset(receipt: StoredAsset.newReceipt(),
                                   fileChecksum: StoredAsset.checksum(of: SHA256.hash(bytes)),
                                   size: Int64(bytes.count), owner: "racer")
            try await files.keep(kept, bytes: bytes)
            return (Asset(fileChecksum: kept.fileChecksum, size: kept.size, receipt: kept.receipt), bytes)
        }
        func save(_ name: String, _ asset: Asset) -> ModifyRecordsRequest {
            ModifyRecordsRequest(operations: [.create(Record(recordType: "Photo", id: RecordID(recordName: name),
                                                             fields: ["image": .asset(asset)]))])
        }

        // The save's check runs, then the sweep (two seconds on, the upload's day over), then the commit.
        let (asset, bytes) = try await upload(1)
        try await AssetReceipts.check(save("p", asset).operations, in: files, now: now())
        clock.advance(by: .seconds(2))
        #expect(try await files.removeUnreferenced(referenced: [], keptBefore: now() - grace) == 0)
        let saved = try await client.modifyRecords(save("p", asset), scope: .private)
        #expect(saved.results.first?.record != nil, "\(saved)")
        #expect(try await files.bytes(receipt: asset.receipt ?? "") == bytes)

        // Swept first (lapsed, no record holds it): the save is refused, nothing applied.
        // A minute on: the upload, made at the machine's time, is before the cutoff however slowly
        // the test ran up to here (the database stamps it with its own clock).
        let (late, _) = try await upload(2)
        clock.advance(by: .seconds(60))
        #expect(try await files.removeUnreferenced(referenced: [asset.receipt ?? ""],
                                                   keptBefore: now() - grace) == 1)
        await #expect(throws: StoreError.self) { _ = try await client.modifyRecords(save("q", late), scope: .private) }
        #expect(try await client.lookupRecords([RecordID(recordName: "q")], scope: .private).first?.record == nil)
    }
}
