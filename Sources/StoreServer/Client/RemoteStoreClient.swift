import Foundation
import Net
import RecordStore
import Synchronization
import ZoneCore

/// A `StoreClient` that speaks HTTP to `zonertc store serve`, over persistent connections.
///
/// Throttling errors are retried as the store semantics ask: `requestRateLimited` and
/// `serviceUnavailable` after their `retryAfter`, `zoneBusy` with exponential backoff; each retry
/// is logged and counted. Other errors are thrown as `StoreError`s.
public struct RemoteStoreClient: StoreClient {
    /// How hard to try before giving up.
    public struct RetryPolicy: Sendable {
        /// Attempts in all, the first included; 1 turns retrying off.
        public var maxAttempts = 4
        /// A `retryAfter` longer than this is not waited for: the error is thrown.
        public var maxWait: Duration = .seconds(60)
        /// First backoff for `zoneBusy`, doubled per attempt.
        public var backoff: Duration = .milliseconds(100)

        public init() {}

        public static var none: RetryPolicy { var p = RetryPolicy(); p.maxAttempts = 1; return p }
    }

    public struct Configuration: Sendable {
        public var endpoint: Endpoint
        public var container = "iCloud.zonertc"
        public var environment = "development"
        public var token: String
        public var retry = RetryPolicy()
        public var requestTimeout: Duration = .seconds(30)

        public init(endpoint: Endpoint, token: String) {
            self.endpoint = endpoint
            self.token = token
        }
    }

    /// Retries made, by error code; requests sent.
    public final class Statistics: Sendable {
        let state = Mutex<(requests: Int, retries: [String: Int])>((0, [:]))
        public var requests: Int { state.withLock { $0.requests } }
        public var retries: [String: Int] { state.withLock { $0.retries } }
    }

    public let configuration: Configuration
    public let userRecordName: String
    public let deviceID: String
    public let statistics = Statistics()
    /// Kept alive as long as this client: e.g. the in-process daemon that serves it in tests.
    public var retainer: (any Sendable & AnyObject)?
    private let pool: ConnectionPool
    private let log = Logger(component: "store-client")

    public init(configuration: Configuration, userRecordName: String, deviceID: String) {
        self.configuration = configuration
        self.userRecordName = userRecordName
        self.deviceID = deviceID
        pool = ConnectionPool(endpoint: configuration.endpoint)
    }

    /// Parses `http://HOST:PORT` (an IP literal or `localhost`).
    public static func endpoint(fromURL url: String) throws -> Endpoint {
        guard url.hasPrefix("http://") else {
            throw StoreError(.invalidArguments, "store URL '\(url)' must start with http://")
        }
        var rest = String(url.dropFirst(7))
        if rest.hasSuffix("/") { rest.removeLast() }
        rest = rest.replacingOccurrences(of: "localhost:", with: "127.0.0.1:")
        do { return try Endpoint(parsing: rest) } catch {
            throw StoreError(.invalidArguments, "store URL '\(url)': \(error)")
        }
    }

    /// Registers a user with a daemon that allows it (`POST /auth/register`); returns the token.
    public static func register(userName: String, at endpoint: Endpoint) async throws -> String {
        let body = WireFormat.serialize(["userName": userName])
        let (status, object) = try await ConnectionPool(endpoint: endpoint).send(
            method: "POST", path: "/auth/register", headers: [("Content-Type", "application/json")], body: body,
            timeoutMilliseconds: 10_000)
        guard status == 200, let token = object["token"] as? String else { throw WireFormat.decodeError(object) }
        return token
    }

    // MARK: Calls

    private func call(_ operation: String, scope: DatabaseScope, _ body: WireFormat.Object) async throws -> WireFormat.Object {
        let path = "/database/1/\(configuration.container)/\(configuration.environment)/\(scope.rawValue)/\(operation)"
        let headers = [("Authorization", "Bearer \(configuration.token)"), ("X-Device-ID", deviceID),
                       ("Content-Type", "application/json")]
        let bytes = WireFormat.serialize(body)
        var attempt = 1
        while true {
            statistics.state.withLock { $0.requests += 1 }
            let (status, object) = try await pool.send(method: "POST", path: path, headers: headers, body: bytes,
                                                       timeoutMilliseconds: Int(configuration.requestTimeout.milliseconds))
            if status == 200 { return object }
            let error = WireFormat.decodeError(object)
            guard error.code.isRetryable, attempt < configuration.retry.maxAttempts else { throw error }
            let wait: Duration = error.retryAfter.map { .milliseconds(Int64($0 * 1000)) }
                ?? configuration.retry.backoff * (1 << (attempt - 1))
            guard wait <= configuration.retry.maxWait else { throw error }
            statistics.state.withLock { $0.retries[error.code.serverErrorCode, default: 0] += 1 }
            log.notice("retrying after \(error.code.serverErrorCode)",
                       ["operation": operation, "attempt": "\(attempt + 1)", "waitMs": "\(wait.milliseconds)"])
            try await Task.sleep(for: wait)
            attempt += 1
        }
    }

    private func zoneObject(_ zone: ZoneID) -> WireFormat.Object { WireFormat.encode(zone) }

    public func modifyRecords(_ request: ModifyRecordsRequest, scope: DatabaseScope) async throws -> ModifyRecordsResult {
        let ops: [WireFormat.Object] = request.operations.map { op in
            switch op {
            case .create(let r), .replace(let r), .forceReplace(let r):
                return ["operationType": op.kind.rawValue, "record": WireFormat.encodeForSave(r)]
            case .update(let r, let removing), .forceUpdate(let r, let removing):
                var record = WireFormat.encodeForSave(r)
                // A field sent as null is cleared by an update.
                if !removing.isEmpty, var fields = record["fields"] as? WireFormat.Object {
                    for name in removing { fields[name] = NSNull() }
                    record["fields"] = fields
                }
                return ["operationType": op.kind.rawValue, "record": record]
            case .delete(let id, let tag):
                var record: WireFormat.Object = ["recordName": id.recordName, "zoneID": WireFormat.encode(id.zoneID)]
                if let tag { record["recordChangeTag"] = tag }
                return ["operationType": "delete", "record": record]
            case .forceDelete(let id):
                let record: WireFormat.Object = ["recordName": id.recordName, "zoneID": WireFormat.encode(id.zoneID)]
                return ["operationType": "forceDelete", "record": record]
            }
        }
        let o = try await call("records/modify", scope: scope, ["operations": ops, "atomic": request.atomic])
        let items = o["records"] as? [WireFormat.Object] ?? []
        guard items.count == ops.count else {
            throw StoreError(.internalError, "modify answered \(items.count) of \(ops.count) operations")
        }
        var results: [RecordResult] = []
        results.reserveCapacity(items.count)
        for (op, item) in zip(request.operations, items) {
            let id = op.recordID
            if item["serverErrorCode"] != nil {
                results.append(.failed(id, WireFormat.decodeError(item)))
            } else if op.isDelete {
                let zone = item["zoneID"] == nil ? id.zoneID : try WireFormat.decodeZoneID(item["zoneID"])
                results.append(.deleted(RecordID(recordName: id.recordName, zoneID: zone)))
            } else {
                results.append(.saved(try WireFormat.decodeRecord(item, defaultZone: id.zoneID)))
            }
        }
        return ModifyRecordsResult(results: results)
    }

    public func lookupRecords(_ ids: [RecordID], scope: DatabaseScope) async throws -> [LookupResult] {
        let o = try await call("records/lookup", scope: scope, [
            "records": ids.map { ["recordName": $0.recordName, "zoneID": WireFormat.encode($0.zoneID)] }])
        let items = o["records"] as? [WireFormat.Object] ?? []
        guard items.count == ids.count else { throw StoreError(.internalError, "lookup answered \(items.count) of \(ids.count)") }
        return try zip(ids, items).map { id, item in
            item["serverErrorCode"] != nil ? .failed(id, WireFormat.decodeError(item))
                : .found(try WireFormat.decodeRecord(item, defaultZone: id.zoneID))
        }
    }

    public func queryRecords(recordType: String, in zone: ZoneID, filters: [String: FieldValue],
                             scope: DatabaseScope) async throws -> [Record] {
        let filterBy: [WireFormat.Object] = filters.sorted { $0.key < $1.key }.map {
            ["fieldName": $0.key, "comparator": "EQUALS", "fieldValue": WireFormat.encodeField($0.value)]
        }
        var request: WireFormat.Object = ["zoneID": zoneObject(zone),
                                          "query": ["recordType": recordType, "filterBy": filterBy]]
        var records: [Record] = []
        // Page after page while the server hands out a continuationMarker; each page holds at
        // least one record, so this ends after the zone's records.
        while true {
            let o = try await call("records/query", scope: scope, request)
            let page = o["records"] as? [WireFormat.Object] ?? []
            for item in page { records.append(try WireFormat.decodeRecord(item, defaultZone: zone)) }
            guard let next = o["continuationMarker"] as? String, !page.isEmpty else { return records }
            request["continuationMarker"] = next
        }
    }

    public func fetchZoneChanges(_ zone: ZoneID, since token: ChangeToken?, resultsLimit: Int?,
                                 scope: DatabaseScope) async throws -> ZoneChanges {
        var z: WireFormat.Object = ["zoneID": zoneObject(zone)]
        if let token { z["syncToken"] = token.rawValue }
        if let resultsLimit { z["resultsLimit"] = resultsLimit }
        let o = try await call("changes/zone", scope: scope, ["zones": [z]])
        guard let first = (o["zones"] as? [WireFormat.Object])?.first else {
            throw StoreError(.internalError, "changes/zone answered without a zone")
        }
        // Zone Record Fetch Error Dictionary: this zone's failure, in a 200 answer.
        if first["serverErrorCode"] != nil { throw WireFormat.decodeError(first) }
        guard let t = first["syncToken"] as? String else {
            throw StoreError(.internalError, "changes/zone answered a zone without a syncToken")
        }
        var changed: [Record] = [], deleted: [DeletedRecord] = []
        for r in first["records"] as? [WireFormat.Object] ?? [] {
            if r["deleted"] as? Bool == true {
                let zoneID = r["zoneID"] == nil ? zone : try WireFormat.decodeZoneID(r["zoneID"])
                deleted.append(DeletedRecord(id: RecordID(recordName: r["recordName"] as? String ?? "", zoneID: zoneID),
                                             recordType: r["recordType"] as? String ?? ""))
            } else {
                changed.append(try WireFormat.decodeRecord(r, defaultZone: zone))
            }
        }
        return ZoneChanges(changed: changed, deleted: deleted, syncToken: ChangeToken(rawValue: t),
                           moreComing: first["moreComing"] as? Bool ?? false)
    }

    public func fetchDatabaseChanges(since token: ChangeToken?, resultsLimit: Int?,
                                     scope: DatabaseScope) async throws -> DatabaseChanges {
        var body: WireFormat.Object = [:]
        if let token { body["syncToken"] = token.rawValue }
        if let resultsLimit { body["resultsLimit"] = resultsLimit }
        let o = try await call("changes/database", scope: scope, body)
        func zones(_ key: String) throws -> [ZoneID] {
            try (o[key] as? [WireFormat.Object] ?? []).map { try WireFormat.decodeZoneID($0["zoneID"]) }
        }
        return DatabaseChanges(changedZones: try zones("zones"), deletedZones: try zones("deletedZones"),
                               purgedZones: try zones("purgedZones"),
                               syncToken: ChangeToken(rawValue: o["syncToken"] as? String ?? ""),
                               moreComing: o["moreComing"] as? Bool ?? false)
    }

    public func modifyZones(save: [ZoneID], delete: [ZoneID], scope: DatabaseScope) async throws -> [ZoneResult] {
        let ops = save.map { ["operationType": "create", "zone": ["zoneID": WireFormat.encode($0)]] as WireFormat.Object }
            + delete.map { ["operationType": "delete", "zone": ["zoneID": WireFormat.encode($0)]] as WireFormat.Object }
        let o = try await call("zones/modify", scope: scope, ["operations": ops])
        let items = o["zones"] as? [WireFormat.Object] ?? []
        let asked = save + delete
        guard items.count == asked.count else { throw StoreError(.internalError, "zones/modify answered \(items.count) of \(asked.count)") }
        return try zip(asked, items).enumerated().map { i, pair in
            let (zone, item) = pair
            if item["serverErrorCode"] != nil { return .failed(zone, WireFormat.decodeError(item)) }
            let id = try WireFormat.decodeZoneID(item["zoneID"])
            return i < save.count ? .saved(id) : .deleted(id)
        }
    }

    public func listZones(scope: DatabaseScope) async throws -> [ZoneID] {
        let o = try await call("zones/list", scope: scope, [:])
        return try (o["zones"] as? [WireFormat.Object] ?? []).map { try WireFormat.decodeZoneID($0["zoneID"]) }
    }

    public func modifySubscriptions(save: [Subscription], delete: [String],
                                    scope: DatabaseScope) async throws -> [SubscriptionResult] {
        let ops = save.map { ["operationType": "create", "subscription": WireFormat.encode($0)] as WireFormat.Object }
            + delete.map { ["operationType": "delete", "subscription": ["subscriptionID": $0]] as WireFormat.Object }
        let o = try await call("subscriptions/modify", scope: scope, ["operations": ops])
        let items = o["subscriptions"] as? [WireFormat.Object] ?? []
        let ids = save.map(\.subscriptionID) + delete
        guard items.count == ids.count else { throw StoreError(.internalError, "subscriptions/modify answered \(items.count) of \(ids.count)") }
        return try zip(ids, items).enumerated().map { i, pair in
            let (id, item) = pair
            if item["serverErrorCode"] != nil { return .failed(id, WireFormat.decodeError(item)) }
            return i < save.count ? .saved(try WireFormat.decodeSubscription(item)) : .deleted(id)
        }
    }

    public func listSubscriptions(scope: DatabaseScope) async throws -> [Subscription] {
        let o = try await call("subscriptions/list", scope: scope, [:])
        return try (o["subscriptions"] as? [WireFormat.Object] ?? []).map(WireFormat.decodeSubscription)
    }

    public func createShare(zone: ZoneID, publicPermission: SharePermission,
                            participants: [String: SharePermission]) async throws -> ZoneShare {
        let o = try await call("shares/create", scope: .private, [
            "zoneID": zoneObject(zone), "publicPermission": publicPermission.rawValue,
            "participants": participants.sorted { $0.key < $1.key }.map { ["userRecordName": $0.key, "permission": $0.value.rawValue] }])
        return try WireFormat.decodeShare(o["share"] as? WireFormat.Object ?? [:])
    }

    public func updateShare(zone: ZoneID, _ update: ShareUpdate) async throws -> ZoneShare {
        var body: WireFormat.Object = ["zoneID": zoneObject(zone), "removeParticipants": update.removeParticipants,
                                       "addParticipants": update.addParticipants.sorted { $0.key < $1.key }.map {
                                           ["userRecordName": $0.key, "permission": $0.value.rawValue] }]
        if let p = update.publicPermission { body["publicPermission"] = p.rawValue }
        let o = try await call("shares/update", scope: .private, body)
        return try WireFormat.decodeShare(o["share"] as? WireFormat.Object ?? [:])
    }

    public func deleteShare(zone: ZoneID) async throws {
        _ = try await call("shares/delete", scope: .private, ["zoneID": zoneObject(zone)])
    }

    public func acceptShare(zone: ZoneID) async throws -> ZoneShare {
        let o = try await call("shares/accept", scope: .shared, ["zoneID": zoneObject(zone)])
        return try WireFormat.decodeShare(o["share"] as? WireFormat.Object ?? [:])
    }

    public func fetchShare(zone: ZoneID, scope: DatabaseScope) async throws -> ZoneShare {
        let o = try await call("shares/lookup", scope: scope, ["zoneID": zoneObject(zone)])
        return try WireFormat.decodeShare(o["share"] as? WireFormat.Object ?? [:])
    }

    /// Opens the device's push stream; returns once the daemon is listening for it.
    public func notifications() async throws -> AsyncStream<PushNotification> {
        let path = "/database/1/\(configuration.container)/\(configuration.environment)/push"
        let request = HTTPClientConnection.request(
            method: "GET", path: path, host: configuration.endpoint.description,
            headers: [("Authorization", "Bearer \(configuration.token)"), ("X-Device-ID", deviceID),
                      ("Accept", "text/event-stream")], body: [])
        return try await EventStreamReader.open(endpoint: configuration.endpoint, request: request)
    }
}

/// Idle persistent connections to one daemon; a request takes one (or opens one) and gives it back.
final class ConnectionPool: Sendable {
    private static let log = Logger(component: "store-client")
    let endpoint: Endpoint
    private let idle = Mutex<[HTTPClientConnection]>([])

    init(endpoint: Endpoint) { self.endpoint = endpoint }

    /// Sends one request; returns the status and the JSON body.
    func send(method: String, path: String, headers: [(String, String)], body: [UInt8],
              timeoutMilliseconds: Int) async throws -> (Int, WireFormat.Object) {
        let host = endpoint.description
        let bytes = HTTPClientConnection.request(method: method, path: path, host: host, headers: headers, body: body)
        // On a loop's thread (a peer's driver runs its store requests as tasks on its own loop) the
        // exchange runs on that loop: no hand-over to the client loop's thread and back, two thread
        // wake-ups per request that cost milliseconds each on a busy machine.
        guard let loop = EventLoop.current ?? StoreClientLoop.shared else {
            throw StoreError(.serviceUnavailable, "the store client has no event loop (epoll_create or eventfd failed)")
        }
        let sent = Stopwatch.monotonicNanoseconds()
        let (status, responseBody) = try await roundTrip(bytes, timeoutMilliseconds: timeoutMilliseconds, on: loop)
        let received = Stopwatch.monotonicNanoseconds()
        let object: WireFormat.Object
        do { object = try WireFormat.parseObject(responseBody) } catch {
            throw StoreError(.internalError, "the store answered \(status) without a JSON object")
        }
        if Self.log.isEnabled(.debug) {
            // The exchange on the wire against reading the answer's JSON.
            let parsed = Stopwatch.monotonicNanoseconds()
            Self.log.debug("\(method) \(path.split(separator: "/").suffix(2).joined(separator: "/")) \(status)", [
                "ms": String(format: "%.3f", Double(received &- sent) / 1e6),
                "parseMs": String(format: "%.3f", Double(parsed &- received) / 1e6),
                "bytes": "\(responseBody.count)", "mono": "\(parsed / 1000)"])
        }
        return (status, object)
    }

    /// A request is sent again, on a new connection, only when a pooled one turns out closed
    /// before any of the response arrived: the server's idle timeout closed it as we sent. A
    /// pooled connection that times out or breaks mid-response is not retried: the server may
    /// have run the request (a save), and running it twice would answer a write that landed with
    /// a conflict against itself. A pooled connection found closed before the request went out
    /// is dropped for the next.
    private func roundTrip(_ bytes: [UInt8], timeoutMilliseconds: Int, on loop: EventLoop) async throws -> (Int, [UInt8]) {
        // A connection stays with the loop that first watched it; those of a loop that stopped are dropped
        // (closed: nothing would run on that loop again).
        pooled: while let conn = idle.withLock({ pool -> HTTPClientConnection? in
            pool.removeAll { $0.watchingLoop?.isStopping == true }
            guard let index = pool.lastIndex(where: { $0.watchingLoop == nil || $0.watchingLoop === loop }) else {
                return nil
            }
            return pool.remove(at: index)
        }) {
            switch await conn.exchange(bytes, timeoutMilliseconds: timeoutMilliseconds, fresh: false, on: loop) {
            case .success(let (head, body)):
                keep(conn, head, loop: loop)
                return (head.status, body)
            case .failure(let e) where e.kind == .closedBeforeSending: continue pooled
            case .failure(let e) where e.kind == .closedBeforeResponse: break pooled
            case .failure(let e): throw StoreError(.serviceUnavailable, "store at \(endpoint): \(e)")
            }
        }
        // Connecting blocks (at most its 5 s timeout): on a thread of the blocking pool.
        let endpoint = self.endpoint
        let conn: HTTPClientConnection = try await withCheckedThrowingContinuation { continuation in
            ThreadPool.blockingIO.run {
                do { continuation.resume(returning: try HTTPClientConnection(endpoint: endpoint)) } catch {
                    continuation.resume(throwing: StoreError(.serviceUnavailable,
                                                             "cannot reach the store at \(endpoint): \(error)"))
                }
            }
        }
        switch await conn.exchange(bytes, timeoutMilliseconds: timeoutMilliseconds, fresh: true, on: loop) {
        case .success(let (head, body)):
            keep(conn, head, loop: loop)
            return (head.status, body)
        case .failure(let e):
            throw StoreError(.serviceUnavailable, "store at \(endpoint): \(e)")
        }
    }

    private func keep(_ conn: HTTPClientConnection, _ head: HTTPResponseParser.Head, loop: EventLoop) {
        if head.headers["Connection"]?.lowercased() == "close" { return conn.retire(on: loop) }
        let kept = idle.withLock { pool -> Bool in
            guard pool.count < 64 else { return false }
            pool.append(conn)
            return true
        }
        if !kept { conn.retire(on: loop) }
    }

}
