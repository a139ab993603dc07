// A user of a conformance server: its token, its device, and requests as CloudKit Web Services
// clients send them (`POST /database/1/<container>/<environment>/<database>/<operation>`).
import Foundation
import RecordStore
import StoreServer

struct ConformanceUser: Sendable {
    let name: String
    let token: String
    let device: String
    let server: ConformanceServer

    static let container = "/database/1/iCloud.com.example.conformance/development"

    /// Operations that change the store: sent to the writing daemon where there are two. An upload
    /// URL is held by the daemon that handed it out, which takes the upload too.
    private static let writes: Set<String> = ["records/modify", "zones/modify", "subscriptions/modify",
                                              "records/accept", "assets/upload"]

    /// POSTs `body` (a JSON object) to `operation` of `database`; `write` picks the daemon (default:
    /// the writing one for operations that change the store).
    func post(_ operation: String, _ body: [String: Any], database: String = "private",
              write: Bool? = nil) async throws -> Reply {
        try await send(operation, WireFormat.serialize(body), database: database, write: write)
    }

    /// POSTs raw bytes (bad JSON among them).
    func send(_ operation: String, _ bytes: [UInt8], database: String = "private",
              authorization: String? = nil, write: Bool? = nil) async throws -> Reply {
        try await server.request("POST", "\(Self.container)/\(database)/\(operation)",
                                 headers: [("Authorization", authorization ?? "Bearer \(token)"),
                                           ("X-Device-ID", device), ("Content-Type", "application/json")],
                                 body: bytes, write: write ?? Self.writes.contains(operation))
    }

    /// The API token every conformance server declares (`store serve --api-token`).
    static let apiToken = "conformance-api-token-0001"
    /// The server-to-server key every conformance server declares (builds with OpenSSL), and its user.
    static let serverKeyID = "conformance-server-key"
    static let serverKeyUser = "server_user"

    /// A request as CloudKit JS sends it: credentials in the query string (`ckAPIToken` and
    /// `ckWebAuthToken`, or `ckSession`; `nil` leaves one out), a `text/plain` JSON body, no
    /// `Authorization` header. `path` follows the container (`private/records/lookup`, `tokens/create`).
    func web(_ path: String, _ body: [String: Any]? = [:], method: String = "POST",
             apiToken: String? = ConformanceUser.apiToken, webToken: String?? = .none,
             session: Bool = false, extra: String = "", write: Bool = false) async throws -> Reply {
        var query: [String] = []
        if let apiToken { query.append("ckAPIToken=\(apiToken)") }
        let web: String? = webToken ?? token
        if let web { query.append("\(session ? "ckSession" : "ckWebAuthToken")=\(web)") }
        if !extra.isEmpty { query.append(extra) }
        let target = "\(Self.container)/\(path)" + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
        return try await server.request(method, target, headers: [("Content-Type", "text/plain")],
                                        body: body.map { WireFormat.serialize($0) } ?? [], write: write)
    }

    /// A custom zone of this user's, made for the test.
    func makeZone(_ name: String = "zone_c") async throws -> [String: Any] {
        let zoneID: [String: Any] = ["zoneName": name]
        let create: [String: Any] = ["operationType": "create", "zone": ["zoneID": zoneID]]
        let reply = try await post("zones/modify", ["operations": [create]])
        guard reply.status == 200 else { throw StoreError(.internalError, "zone \(name): \(reply.body)") }
        return zoneID
    }

    /// `records/modify` with `operations` in `zoneID` (more keys in `extra`).
    func modify(_ operations: [[String: Any]], zoneID: [String: Any]? = nil,
                _ extra: [String: Any] = [:]) async throws -> Reply {
        var body = extra
        body["operations"] = operations
        if let zoneID { body["zoneID"] = zoneID }
        return try await post("records/modify", body)
    }

    /// `records/lookup` of `names` in `zoneID`.
    func lookup(_ names: [String], zoneID: [String: Any]? = nil, _ extra: [String: Any] = [:]) async throws -> Reply {
        var body = extra
        body["records"] = names.map { ["recordName": $0] }
        if let zoneID { body["zoneID"] = zoneID }
        return try await post("records/lookup", body)
    }

    /// The record `name` as the server holds it, or nil.
    func fetch(_ name: String, zoneID: [String: Any]? = nil) async throws -> [String: Any]? {
        let reply = try await lookup([name], zoneID: zoneID)
        guard let record = reply.records.first, record["serverErrorCode"] == nil else { return nil }
        return record
    }
}

/// An operation dictionary: `{"operationType": type, "record": record}`.
func operation(_ type: String, _ record: [String: Any]) -> [String: Any] {
    ["operationType": type, "record": record]
}

/// A record dictionary.
func recordDictionary(_ name: String?, type: String? = "Note", tag: String? = nil,
                      fields: [String: Any] = [:]) -> [String: Any] {
    var o: [String: Any] = ["fields": fields]
    if let name { o["recordName"] = name }
    if let type { o["recordType"] = type }
    if let tag { o["recordChangeTag"] = tag }
    return o
}

/// A field-value dictionary with its type.
func value(_ v: Any, _ type: String? = nil) -> [String: Any] {
    var o: [String: Any] = ["value": v]
    if let type { o["type"] = type }
    return o
}
