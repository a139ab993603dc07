import Foundation
import RecordStore

extension StoreAPI {
    /// `POST …/tokens/create` and `POST …/tokens/register` — CloudKit Web Services Reference,
    /// "Creating APNs Tokens (tokens/create)" (CreateTokens.html) and "Registering Tokens
    /// (tokens/register)" (RegisterTokens.html). Both need a signed-in user: a token is that user's,
    /// and only that user's subscriptions fire to it.
    ///
    /// - create: `{"apnsEnvironment"}` → `{"apnsEnvironment", "apnsToken", "webcourierURL"}`.
    /// - register: `{"apnsEnvironment", "apnsToken"}` (both required) → the same three keys; the
    ///   token's device joins the user's devices in the store, so its subscriptions notify it.
    func tokens(_ operation: String, _ request: HTTPRequest, identity: RequestIdentity) async -> HTTPResponse {
        guard operation == "create" || operation == "register" else {
            return error(404, .unknownItem, "no operation 'tokens/\(operation)': tokens/create or tokens/register")
        }
        guard request.method == "POST" else { return error(405, .invalidArguments, "use POST for tokens/\(operation)") }
        guard let user = identity.userName else { return signInRequired(request) }
        let body: WireFormat.Object
        do { body = try WireFormat.parseObject(request.body) } catch {
            return self.error(400, .invalidArguments, "\(error)")
        }
        let allowed: Set<String> = operation == "create" ? ["apnsEnvironment"] : ["apnsEnvironment", "apnsToken"]
        if let unknown = body.keys.sorted().first(where: { !allowed.contains($0) }) {
            return error(400, .invalidArguments, "tokens/\(operation) has no key '\(unknown)'")
        }
        guard let environment = body["apnsEnvironment"] as? String,
              environment == "development" || environment == "production" else {
            return error(400, .invalidArguments, "apnsEnvironment is required: \"development\" or \"production\"")
        }
        let container = request.path.split(separator: "/").dropFirst(2).first.map(String.init) ?? ""
        do {
            if operation == "create" {
                let token = try await webcourier.create(user: user, environment: environment, container: container)
                return tokenAnswer(request, environment: environment, token: token)
            }
            guard let token = body["apnsToken"] as? String, !token.isEmpty,
                  token.utf8.count <= APITokens.maxLength else {
                return error(400, .invalidArguments, "apnsToken is required: the token tokens/create answered")
            }
            // The store keeps the token (by digest), so any daemon on the database registers it.
            try await webcourier.register(token: token, user: user, environment: environment)
            return tokenAnswer(request, environment: environment, token: token)
        } catch let e as StoreError {
            return .json(WireFormat.status(for: e.code), WireFormat.serialize(WireFormat.encode(e)))
        } catch {
            return self.error(500, .internalError, "\(error)")
        }
    }

    private func tokenAnswer(_ request: HTTPRequest, environment: String, token: String) -> HTTPResponse {
        .json(200, WireFormat.serialize([
            "apnsEnvironment": environment, "apnsToken": token,
            "webcourierURL": Self.baseURL(request) + Webcourier.path + "?tok=" + token,
        ]))
    }

    /// `GET /webcourier?tok=T`: the long-poll of a web client's token. Answers the token's next
    /// notification, at once when one is waiting (CloudKit JS's Notification: `notificationID`,
    /// `notificationType`, `containerIdentifier`, `subscriptionID`, `zoneID`, `isPruned` — set when
    /// notifications before it were dropped, or for a catch-up after a restart — plus our
    /// `databaseScope`), or after the timeout `204` with no body, and the client polls again. The URL
    /// is the token's capability, as Apple's webcourier URL is; a poll that also sends credentials must
    /// be the token's user's (`403 ACCESS_DENIED` otherwise).
    func pollWebcourier(_ request: HTTPRequest) async -> HTTPResponse {
        guard request.method == "GET" else { return error(405, .invalidArguments, "the webcourier URL is GET") }
        let credentials = RequestCredentials(request)
        // Only what tokens/create makes (64 hex digits) reaches the store: a hostile URL of any length
        // or alphabet is one 404.
        guard !credentials.conflicting, let token = credentials.courierToken, SecretToken.isWellFormed(token) else {
            return error(404, .unknownItem, "no such webcourier token")
        }
        var caller: String?
        if credentials.webAuthToken != nil || credentials.apiToken != nil {
            switch await identify(request) {
            case .success(let identity): caller = identity.userName
            case .failure(let refusal): return refusal.response
            }
        }
        switch await webcourier.poll(token: token, caller: caller) {
        case .unknown:
            return error(404, .unknownItem, "no such webcourier token")
        case .forbidden:
            return error(403, .permissionFailure, "this webcourier URL is another user's")
        case .notRegistered:
            return error(400, .invalidArguments, "register the token first (tokens/register)")
        case .failed(let e):
            return .json(WireFormat.status(for: e.code), WireFormat.serialize(WireFormat.encode(e)))
        case .empty:
            return HTTPResponse(status: 204, headers: HTTPHeaders([("Cache-Control", "no-store")]))
        case .notification(let note, let pruned, let user, let container):
            var o: WireFormat.Object = [
                "notificationID": String(note.notificationID), "subscriptionID": note.subscriptionID,
                "databaseScope": note.databaseScope.rawValue, "containerIdentifier": container,
                "notificationType": await notificationType(note, user: user), "isPruned": pruned,
            ]
            if let zone = note.zoneID { o["zoneID"] = WireFormat.encode(zone) }
            // A query subscription's record and why (CloudKit JS's QueryNotification `recordName`,
            // `queryNotificationReason`, `isPublicDatabase`).
            if let name = note.recordName, let reason = note.queryNotificationReason {
                o["recordName"] = name
                o["queryNotificationReason"] = reason.rawValue
                o["isPublicDatabase"] = note.databaseScope == .public
            }
            var answer = HTTPResponse.json(200, WireFormat.serialize(o))
            answer.headers.add("Cache-Control", "no-store")
            return answer
        }
    }

    /// CloudKit's notification type for the subscription that fired: `query`, `recordZone` or
    /// `database` (CKNotification.NotificationType); a subscription deleted since is judged by its zone.
    private func notificationType(_ note: PushNotification, user: String) async -> String {
        // Only a query subscription's notification names a record (a firesOnce one is gone by now).
        if note.queryNotificationReason != nil { return "query" }
        let client = store.client(user: user, deviceID: Webcourier.deviceID)
        let subscriptions = (try? await client.listSubscriptions(scope: note.databaseScope)) ?? []
        switch subscriptions.first(where: { $0.subscriptionID == note.subscriptionID })?.kind {
        case .query: return "query"
        case .zone: return "recordZone"
        case .database: return "database"
        case nil: return note.zoneID == nil ? "database" : "recordZone"
        }
    }
}
