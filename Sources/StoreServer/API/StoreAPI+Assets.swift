import Foundation
import Glibc
import RecordStore
import ZoneCore

// Assets as CloudKit Web Services Reference documents them: "Uploading Assets (assets/upload)"
// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/UploadAssets.html), the Asset
// Dictionary of "Types and Dictionaries" (…/Types.html) and the asset file limit of "Data Size
// Limits" (…/PropertyMetrics.html). Three steps: `assets/upload` hands out one upload URL per asset
// field; a POST of the file's bytes to that URL answers `{"singleFile": {fileChecksum, size,
// receipt}}`; a record saved with that dictionary as an `ASSETID` field holds the file, and every
// answer carrying the record gives the field a `downloadURL` serving the same bytes.
// docs/CLOUDKIT.md says, key by key, what follows the reference and what differs.

/// Where the daemon takes and serves asset bytes.
public enum AssetRoutes {
    /// `POST /asset-upload/<token>`: the upload URL; the token is its credential.
    public static let uploadPrefix = "/asset-upload/"
    /// `GET /asset-download/<receipt>`: the download URL; the receipt is its credential.
    public static let downloadPrefix = "/asset-download/"
    /// Data Size Limits: "Maximum number of tokens in a request: 200".
    public static let maxTokens = 200
    /// Upload bodies over the in-memory limit are streamed to a spool file, up to the asset file limit.
    public static var streaming: HTTPRequestParser.Streaming {
        HTTPRequestParser.Streaming(pathPrefix: uploadPrefix, maxBytes: Int(Asset.maxFileSize))
    }

    /// The download URL of `receipt` for the host the request named (a path alone without one),
    /// signed to lapse `AssetURLSigner.downloadLifetime` from now.
    static func downloadURL(_ receipt: String) -> String {
        let query = StoreAPI.assetSigning.map {
            $0.downloadQuery(receipt: receipt, expires: Date().addingTimeInterval(AssetURLSigner.downloadLifetime))
        }
        return url(downloadPrefix + receipt) + (query ?? "")
    }

    static func url(_ path: String) -> String { (StoreAPI.requestOrigin ?? "") + path }
}

extension DocumentedKeys {
    // UploadAssets.html: the request and the Asset Field Dictionary.
    static let assetUploadRequest = DocumentedKeys("an assets/upload request", ["zoneID", "tokens"])
    static let assetField = DocumentedKeys("an asset field dictionary", ["recordName", "recordType", "fieldName"])
}

extension StoreAPI {
    /// `assets/upload`: one Token Response Dictionary (`recordName`, `fieldName`, `url`) per asset
    /// field asked, in order.
    func requestAssetUploads(_ body: WireObject, user: String) async throws -> WireFormat.Object {
        try body.allowing(.assetUploadRequest)
        _ = try body["zoneID"].map { try WireFormat.decodeZoneID($0) }
        let fields = try body.objects("tokens", required: true)
        guard !fields.isEmpty else { throw WireFormat.ShapeError("tokens: name at least one asset field") }
        guard fields.count <= AssetRoutes.maxTokens else {
            throw StoreError(.limitExceeded, "tokens: at most \(AssetRoutes.maxTokens) a request (Data Size Limits)")
        }
        guard assets != nil else { throw StoreError(.internalError, "this store keeps no asset files") }
        let signer = try await assetURLSigner()
        let expires = Date().addingTimeInterval(AssetURLSigner.uploadLifetime)
        var tokens: [WireFormat.Object] = []
        for field in fields {
            try field.allowing(.assetField)
            let fieldName = try field.requiredString("fieldName")
            let recordName = try field.string("recordName") ?? UUID().uuidString
            _ = try field.string("recordType")
            let token = signer.uploadToken(user: user, expires: expires)
            tokens.append(["recordName": recordName, "fieldName": fieldName,
                           "url": AssetRoutes.url(AssetRoutes.uploadPrefix + token)])
        }
        return ["tokens": tokens]
    }

    /// The answer to an upload whose URL is forged, lapsed or used.
    private var uploadRefused: HTTPResponse {
        error(401, .authenticationFailed,
              "not an upload URL this store handed out, used already, or lapsed: ask assets/upload again")
    }

    /// What the head of an upload allows.
    private enum UploadHead {
        case allowed(AssetURLSigner.Upload)
        case refused(HTTPResponse)
    }

    /// What the head of an upload allows: its upload, or the answer refusing it.
    private func checkUploadHead(_ request: HTTPRequest) async -> UploadHead {
        guard request.method == "POST" else { return .refused(error(405, .invalidArguments, "upload the file with POST")) }
        let token = String(request.path.dropFirst(AssetRoutes.uploadPrefix.count))
        guard assets != nil else { return .refused(error(500, .internalError, "this store keeps no asset files")) }
        do {
            guard let checked = try await assetURLSigner().checkUpload(token, now: Date()) else {
                return .refused(uploadRefused)
            }
            return .allowed(checked)
        } catch {
            return .refused(self.error(500, .internalError, "\(error)"))
        }
    }

    /// Whether the daemon should take the body of the upload `request` (one over the in-memory
    /// limit, which it would spool to disk): nil to take it, else the answer, sent before any byte
    /// of the body is read. A forged, lapsed or used upload URL is refused here, so it costs no disk
    /// and its client hears at once; the upload itself checks again (`receiveAssetUpload`), since
    /// another daemon may take the same URL meanwhile.
    public func admitUploadBody(_ request: HTTPRequest) async -> HTTPResponse? {
        let upload: AssetURLSigner.Upload
        switch await checkUploadHead(request) {
        case .allowed(let checked): upload = checked
        case .refused(let refusal): return refusal
        }
        do {
            if try await assets?.asset(receipt: upload.receipt) != nil { return uploadRefused }
        } catch {
            return self.error(500, .internalError, "\(error)")
        }
        return nil
    }

    /// `POST /asset-upload/<token>` with the file's bytes (in memory, or spooled by the daemon).
    func receiveAssetUpload(_ request: HTTPRequest) async -> HTTPResponse {
        let upload: AssetURLSigner.Upload
        switch await checkUploadHead(request) {
        case .allowed(let checked): upload = checked
        case .refused(let refusal): return refusal
        }
        guard let assets else { return error(500, .internalError, "this store keeps no asset files") }
        let refused = uploadRefused
        guard Int64(request.spooledBody?.length ?? request.body.count) <= Asset.maxFileSize else {
            return .json(400, WireFormat.serialize(WireFormat.encode(StoreError(
                .limitExceeded, "an asset file is at most \(Asset.maxFileSize) bytes (Data Size Limits)"))))
        }
        do {
            let asset: StoredAsset
            let kept: Bool
            if let spooled = request.spooledBody {
                let (checksum, size) = try Self.checksum(ofFileAt: spooled.path)
                asset = StoredAsset(receipt: upload.receipt, fileChecksum: checksum, size: size, owner: upload.user)
                kept = try await assets.keep(asset, fileAt: spooled.path)
            } else {
                asset = StoredAsset(receipt: upload.receipt,
                                    fileChecksum: StoredAsset.checksum(of: SHA256.hash(request.body)),
                                    size: Int64(request.body.count), owner: upload.user)
                kept = try await assets.keep(asset, bytes: request.body)
            }
            guard kept else { return refused }
            let single: WireFormat.Object = ["fileChecksum": asset.fileChecksum, "size": asset.size,
                                             "receipt": asset.receipt]
            return .json(200, WireFormat.serialize(["singleFile": single]))
        } catch let e as StoreError {
            return .json(WireFormat.status(for: e.code), WireFormat.serialize(WireFormat.encode(e)))
        } catch {
            return self.error(500, .internalError, "\(error)")
        }
    }

    /// `GET /asset-download/<receipt>`: the file's bytes.
    func serveAssetDownload(_ request: HTTPRequest) async -> HTTPResponse {
        guard request.method == "GET" else { return error(405, .invalidArguments, "download the file with GET") }
        let receipt = String(request.path.dropFirst(AssetRoutes.downloadPrefix.count))
        let missing = error(404, .unknownItem, "no asset file at this URL")
        guard let assets, StoredAsset.isReceipt(receipt) else { return missing }
        do {
            let query = URLEncodedPairs.query(of: request.target)
            switch try await assetURLSigner().checkDownload(
                receipt: receipt, expires: query.first { $0.name == "expires" }?.value,
                signature: query.first { $0.name == "signature" }?.value, now: Date()) {
            case .valid: break
            case .forged: return missing
            case .lapsed:
                return error(401, .authenticationFailed,
                             "this downloadURL lapsed: fetch the record again for a fresh one")
            }
            guard let bytes = try await assets.bytes(receipt: receipt) else { return missing }
            return HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Type", "application/octet-stream")]),
                                body: bytes)
        } catch {
            return self.error(500, .internalError, "\(error)")
        }
    }

    /// The signer of the asset URLs, made from the asset storage's key once (`prepareAssetSigning`,
    /// else on first use) and then read without a lock.
    func assetURLSigner() async throws(StoreError) -> AssetURLSigner {
        if let signer = assetSigner.signer { return signer }
        guard let assets else { throw StoreError(.internalError, "this store keeps no asset files") }
        return assetSigner.keep(AssetURLSigner(key: try await assets.signingKey()))
    }

    /// Reads the asset storage's signing key now (the daemon calls it before serving), so that no
    /// request waits for it; does nothing for a store that keeps no asset files.
    public func prepareAssetSigning() async throws(StoreError) {
        if assets != nil { _ = try await assetURLSigner() }
    }

    /// SHA-256 (base64) and size of a file, read in blocks.
    static func checksum(ofFileAt path: String) throws -> (String, Int64) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw StoreError(.internalError, "cannot open the upload: \(errnoText())") }
        defer { close(fd) }
        var h = SHA256()
        var block = [UInt8](repeating: 0, count: 1 << 20)
        var size: Int64 = 0
        while true {
            let n = block.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw StoreError(.internalError, "cannot read the upload: \(errnoText())") }
            if n == 0 { break }
            h.update(block[0..<n])
            size += Int64(n)
        }
        return (StoredAsset.checksum(of: h.finalize()), size)
    }
}

extension StoreAPI {
    /// How long an upload no record holds is kept: long enough to save the record it was for.
    public static let unreferencedAssetGrace: TimeInterval = 24 * 3600

    /// Removes the asset files kept before `cutoff` that no record holds: uploads never saved in a
    /// record, and the files of records deleted or changed since. How many.
    public func removeUnreferencedAssets(keptBefore cutoff: Date) async throws -> Int {
        guard let assets else { return 0 }
        let referenced = try await store.perform(user: "_assets", deviceID: nil, access: .read) { e, _ in
            e.assetReceipts
        }
        return try await assets.removeUnreferenced(referenced: referenced, keptBefore: cutoff)
    }
}
