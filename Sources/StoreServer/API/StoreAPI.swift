import Foundation
import RecordStore
import Synchronization
import ZoneCore

/// The JSON API in the shape of CloudKit Web Services, over a store backend (embedded or PostgreSQL):
/// docs/CLOUDKIT.md says, endpoint by endpoint and key by key, what follows Apple's reference and
/// what differs. An operation the daemon does not serve is `404 NOT_FOUND`.
///
/// Paths: `POST /database/1/<container>/<environment>/<private|shared|public>/<operation>` where the
/// operation is `records/modify`, `records/lookup`, `records/query`, `records/resolve`, `records/accept`,
/// `changes/database`,
/// `changes/zone`, `zones/modify`, `zones/list`, `subscriptions/modify|list|lookup`,
/// `shares/create`, `shares/update`, `shares/delete`, `shares/accept`, `shares/lookup`;
/// `GET /database/1/<container>/<environment>/push` (event stream); `POST /auth/register`;
/// `GET /health`; the call page `GET /call`, `GET /call/<file>`, `POST|GET /call/report` (CallPage).
/// Identity (Authentication.swift): `Authorization: Bearer <token>`, or CloudKit's `?ckAPIToken=A&ckWebAuthToken=T`
/// (`ckSession=T`); device: `X-Device-ID`. Also `GET …/public/users/current`, `POST …/tokens/create|register`,
/// `GET /webcourier?tok=` (the web clients' push long-poll) and the sign-in page `/auth/signin`.
public final class StoreAPI: Sendable {
    /// What a request turns into.
    public enum Outcome: Sendable {
        case response(HTTPResponse)
        /// Open the push stream for this user's device.
        case eventStream(user: String, deviceID: String)
    }

    public let store: any StoreBackend
    public let users: any UserDirectory
    public let allowRegister: Bool
    /// What call pages reported.
    public let reports = CallReports()
    private let log = Logger(component: "store-api")

    /// The container's API tokens (`ckAPIToken`).
    public let apiTokens: APITokens
    /// Push for web clients: the tokens of `tokens/create` and their long-polls.
    public let webcourier: Webcourier

    /// The container's server-to-server keys (`X-Apple-CloudKit-Request-*`).
    public let serverKeys: ServerKeys

    /// Where uploaded asset files are kept (StoreAPI+Assets.swift); nil: assets/upload is refused.
    public let assets: (any AssetStorage)?
    /// Signs the asset URLs, once the storage's key is read (`assetURLSigner()`).
    let assetSigner = AssetSignerSlot()

    public init(store: any StoreBackend, users: any UserDirectory, allowRegister: Bool,
                apiTokens: APITokens = APITokens(), serverKeys: ServerKeys = ServerKeys(),
                webcourier: Webcourier.Options = Webcourier.Options(),
                assets: (any AssetStorage)? = try? AssetFiles.temporary()) {
        self.assets = assets
        self.store = store
        self.users = users
        self.allowRegister = allowRegister
        self.apiTokens = apiTokens
        self.serverKeys = serverKeys
        self.webcourier = Webcourier(store: store, options: webcourier)
    }

    /// The answer to `GET /health`.
    public static let healthy = HTTPResponse.json(200, Array(#"{"status":"ok"}"#.utf8))

    public func handle(_ request: HTTPRequest) async -> Outcome {
        let path = request.path
        if path == "/health" { return .response(Self.healthy) }
        if path == "/auth/register" { return .response(await register(request)) }
        if path == SignInPage.path { return .response(await signIn(request)) }
        if path == Webcourier.path { return .response(await pollWebcourier(request)) }
        if path.hasPrefix(SharePage.prefix) { return .response(sharePage(request)) }
        if path == "/call/report" { return .response(await callReport(request)) }
        if path.hasPrefix(AssetRoutes.uploadPrefix) {
            return .response(await Self.$requestScope.withValue(RequestScope(host: request.headers["Host"])) {
                await receiveAssetUpload(request)
            })
        }
        if path.hasPrefix(AssetRoutes.downloadPrefix) { return .response(await serveAssetDownload(request)) }
        if path == "/call" || path.hasPrefix("/call/") {
            guard request.method == "GET" else {
                return .response(error(405, .invalidArguments, "the call page is GET"))
            }
            return .response(CallPage.response(path: path) ?? error(404, .invalidArguments, "no such file \(path)"))
        }
        let parts = path.utf8.split(separator: UInt8(ascii: "/")).map { String(Substring($0)) }
        guard parts.count >= 5, parts[0] == "database", parts[1] == "1" else {
            return .response(error(404, .unknownItem, "no such endpoint \(path)"))
        }
        let identity: RequestIdentity
        switch await identify(request) {
        case .success(let i): identity = i
        case .failure(let refusal): return .response(refusal.response)
        }
        if parts.count == 6 && parts[4] == "tokens" {
            return .response(await tokens(parts[5], request, identity: identity))
        }
        if parts.count == 7 && parts[4] == "public" && parts[5] == "users" {
            return .response(users(parts[6], request, identity: identity))
        }
        // The anonymous caller (an API token alone) may only read the public database.
        if identity == .anonymous && !(parts.count == 7 && parts[4] == "public") {
            return .response(signInRequired(request))
        }
        let user = identity.storeUserName
        let device = request.headers["X-Device-ID"]
        if parts.count == 5 && parts[4] == "push" {
            guard request.method == "GET" else { return .response(error(405, .invalidArguments, "the push stream is GET")) }
            guard let device, !device.isEmpty else {
                return .response(error(400, .invalidArguments, "the push stream needs an X-Device-ID header"))
            }
            // Registered before the stream is answered, so a refusal (too many devices) is the answer;
            // a notification for the device in between is held by the push hub until it listens.
            do {
                try await store.perform(user: user, deviceID: device, access: .write) { e, ctx throws(StoreError) in
                    try e.registerDevice(ctx)
                }
            } catch let e as StoreError {
                log.warning("push registration refused", ["user": user, "error": e.message])
                return .response(.json(WireFormat.status(for: e.code), WireFormat.serialize(WireFormat.encode(e))))
            } catch {
                return .response(self.error(500, .internalError, "\(error)"))
            }
            return .eventStream(user: user, deviceID: device)
        }
        guard parts.count == 7 else { return .response(error(404, .unknownItem, "no such endpoint \(path)")) }
        let scope: DatabaseScope
        switch parts[4] {
        case _ where Self.isShareResolution(parts): scope = .shared
        case "private": scope = .private
        case "shared": scope = .shared
        case "public": scope = .public
        default: return .response(error(404, .unknownItem, "unknown database '\(parts[4])': public, private or shared"))
        }
        guard request.method == "POST" || (request.method == "GET" && parts[6] == "list") else {
            return .response(error(405, .invalidArguments, "use POST for \(parts[5])/\(parts[6])"))
        }
        if !identity.mayCall("\(parts[5])/\(parts[6])", scope: scope) {
            return .response(signInRequired(request))
        }
        let body: WireFormat.Object
        do { body = try WireFormat.parseObject(request.body) } catch {
            return .response(self.error(400, .invalidArguments, "\(error)"))
        }
        let client = store.client(user: user, deviceID: device ?? "", assets: assets)
        do {
            // Made once (at daemon start); this reads it without a lock.
            let signing = assets == nil ? nil : try await assetURLSigner()
            let bound = RequestScope(host: request.headers["Host"], user: user, assetSigning: signing)
            let result = try await Self.$requestScope.withValue(bound) {
                parts[5] == "assets" && parts[6] == "upload"
                    ? try await requestAssetUploads(WireObject(body), user: user)
                    : try await route("\(parts[5])/\(parts[6])", body: body, scope: scope, client: client)
            }
            return .response(.json(200, WireFormat.serialize(result)))
        } catch let e as StoreError {
            return .response(.json(WireFormat.status(for: e.code), WireFormat.serialize(WireFormat.encode(e))))
        } catch let e as WireFormat.ShapeError {
            return .response(error(400, .invalidArguments, e.description))
        } catch let e as NotFound {
            return .response(error(404, .unknownItem, e.description))
        } catch {
            log.error("request failed", ["path": path, "error": "\(error)"])
            return .response(self.error(500, .internalError, "\(error)"))
        }
    }

    /// No such operation: `404 NOT_FOUND`.
    private struct NotFound: Error, CustomStringConvertible { var description: String }

    private func route(_ op: String, body o: WireFormat.Object, scope: DatabaseScope,
                       client: EmbeddedStoreClient) async throws -> WireFormat.Object {
        switch op {
        case "records/modify":
            return try await modifyRecords(WireObject(o), scope: scope, client: client)
        case "records/lookup":
            return try await lookupRecords(WireObject(o), scope: scope, client: client)
        case "records/query":
            return try await queryRecords(WireObject(o), scope: scope, client: client)
        case "records/resolve":
            return try await resolveShares(WireObject(o), accept: false, client: client)
        case "records/accept":
            return try await resolveShares(WireObject(o), accept: true, client: client)
        case "zones/lookup":
            return try await lookupZones(WireObject(o), scope: scope, client: client)
        case "zones/modify":
            return try await modifyZones(WireObject(o), scope: scope, client: client)
        case "zones/list":
            return try await listZones(WireObject(o), scope: scope, client: client)
        case "zones/changes":
            return try await zonesChanges(WireObject(o), scope: scope, client: client)
        case "changes/zone":
            return try await zoneChanges(WireObject(o), scope: scope, client: client)
        case "changes/database":
            return try await databaseChanges(WireObject(o), scope: scope, client: client)
        case "subscriptions/modify":
            return try await modifySubscriptions(WireObject(o), scope: scope, client: client)
        case "subscriptions/list":
            return try await listSubscriptions(WireObject(o), scope: scope, client: client)
        case "subscriptions/lookup":
            return try await lookupSubscriptions(WireObject(o), scope: scope, client: client)
        case "assets/rereference":
            return try await rereferenceAssets(WireObject(o), scope: scope, client: client)
        default:
            return try await routeShares(op, body: o, scope: scope, client: client)
        }
    }

    /// Our `shares/*` (zone-wide shares by zone, for our peers and the call page).
    private func routeShares(_ op: String, body o: WireFormat.Object, scope: DatabaseScope,
                                     client: EmbeddedStoreClient) async throws -> WireFormat.Object {
        let defaultZone = o["zoneID"] == nil ? ZoneID.defaultZone : try WireFormat.decodeZoneID(o["zoneID"])
        switch op {
        case "shares/create":
            var participants: [String: SharePermission] = [:]
            for p in o["participants"] as? [WireFormat.Object] ?? [] {
                guard let user = p["userRecordName"] as? String,
                      let perm = SharePermission(rawValue: p["permission"] as? String ?? "readOnly") else {
                    throw WireFormat.ShapeError("participants need userRecordName and permission readOnly|readWrite")
                }
                participants[user] = perm
            }
            let pub = SharePermission(rawValue: o["publicPermission"] as? String ?? "none") ?? .none
            return ["share": WireFormat.encode(try await client.createShare(zone: defaultZone, publicPermission: pub,
                                                                             participants: participants))]
        case "shares/update":
            var update = ShareUpdate()
            if let p = o["publicPermission"] as? String { update.publicPermission = SharePermission(rawValue: p) }
            for p in o["addParticipants"] as? [WireFormat.Object] ?? [] {
                if let user = p["userRecordName"] as? String {
                    update.addParticipants[user] = SharePermission(rawValue: p["permission"] as? String ?? "") ?? .readOnly
                }
            }
            update.removeParticipants = o["removeParticipants"] as? [String] ?? []
            return ["share": WireFormat.encode(try await client.updateShare(zone: defaultZone, update))]
        case "shares/delete":
            try await client.deleteShare(zone: defaultZone)
            return ["deleted": true]
        case "shares/accept":
            return ["share": WireFormat.encode(try await client.acceptShare(zone: defaultZone))]
        case "shares/lookup":
            return ["share": WireFormat.encode(try await client.fetchShare(zone: defaultZone, scope: scope))]
        default:
            throw NotFound(description: "no operation '\(op)' (docs/CLOUDKIT.md lists the ones served)")
        }
    }

    /// `POST /call/report?room=R&me=U` keeps a call page's result (a JSON object); `GET` reads it back.
    /// Only U itself (its bearer token) may post or read U's report.
    private func callReport(_ request: HTTPRequest) async -> HTTPResponse {
        let query = URLEncodedPairs.query(of: request.target)
        guard let room = query.first(where: { $0.name == "room" })?.value,
              let me = query.first(where: { $0.name == "me" })?.value, !room.isEmpty, !me.isEmpty else {
            return error(400, .invalidArguments, "name the report: /call/report?room=ROOM&me=USER")
        }
        let user: String
        switch await authenticate(request) {
        case .success(let u): user = u
        case .failure(let refusal): return refusal.response
        }
        guard user == me else { return error(403, .permissionFailure, "\(user) may not touch the report of \(me)") }
        switch request.method {
        case "POST":
            guard request.body.count <= CallReports.maxBytes else {
                return error(413, .limitExceeded, "a report is at most \(CallReports.maxBytes) bytes")
            }
            guard let report = try? WireFormat.parseObject(request.body) else {
                return error(400, .invalidArguments, "a report is a JSON object")
            }
            reports.put(room: room, user: me, body: request.body)
            log.info("call report", ["room": room, "user": me, "ok": "\(report["ok"] as? Bool ?? false)",
                                     "reason": "\(report["reason"] as? String ?? "")"])
            return .json(200, Array(#"{"stored":true}"#.utf8))
        case "GET":
            guard let body = reports.report(room: room, user: me) else {
                return error(404, .unknownItem, "no report from \(me) in \(room) yet")
            }
            return .json(200, body)
        default:
            return error(405, .invalidArguments, "POST or GET a report")
        }
    }

    func register(_ request: HTTPRequest) async -> HTTPResponse {
        guard allowRegister else {
            return error(403, .permissionFailure, "registration is off: create users with `zonertc store user add`")
        }
        guard request.method == "POST" else { return error(405, .invalidArguments, "register with POST") }
        guard let o = try? WireFormat.parseObject(request.body), let name = o["userName"] as? String else {
            return error(400, .invalidArguments, #"send {"userName": "..."}"#)
        }
        do {
            let token = try await users.register(name)
            return .json(200, WireFormat.serialize(["userName": name, "token": token]))
        } catch let e as UserRegistry.RegistryError {
            switch e.kind {
            case .exists: return error(409, .alreadyExists, "\(e.description); its token is not handed out again")
            case .invalidName: return error(400, .invalidArguments, e.description)
            case .storage: return error(500, .internalError, e.description)
            }
        } catch {
            return self.error(500, .internalError, "\(error)")
        }
    }

    func error(_ status: Int, _ code: StoreError.Code, _ reason: String) -> HTTPResponse {
        .json(status, WireFormat.serialize(WireFormat.encode(StoreError(code, reason))))
    }

    private func errorBody(_ status: Int, _ code: String, _ reason: String) -> HTTPResponse {
        .json(status, WireFormat.serialize(["serverErrorCode": code, "reason": reason]))
    }
}
