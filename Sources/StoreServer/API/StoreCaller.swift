import RecordStore

/// Who a request comes from, as authentication found it.
///
/// CloudKit Web Services Reference, "Composing Web Service Requests" (SettingUpWebServices.html):
/// a request carries an API token and, "optionally", a web auth token naming the user; without the
/// user it may still read the public database ("By default … world readable, owner writable").
/// Whatever authenticates a request (a bearer token today, `ckAPIToken` + `ckWebAuthToken` next)
/// ends in one of these cases, and `StoreAPI` serves both from there.
public enum StoreCaller: Sendable, Hashable {
    /// A signed-in user, by record name.
    case user(String)
    /// No signed-in user, but allowed to read: the public database's `records/lookup`,
    /// `records/query`, `zones/list` and `zones/lookup`. Anything else is `421
    /// AUTHENTICATION_REQUIRED`, in the API and again in the engine (`RequestContext.anonymous`).
    case anonymous

    /// The operations the anonymous reader may call, in the public database only.
    static let anonymousOperations: Set<String> = ["records/lookup", "records/query", "zones/list", "zones/lookup"]

    /// The name the store acts as: the user's, or the anonymous reader's reserved one.
    var userRecordName: String {
        switch self {
        case .user(let name): return name
        case .anonymous: return ReservedNames.anonymousReader
        }
    }

    /// Why this caller may not call `operation` of `scope`, or nil when it may.
    func refusal(_ operation: String, scope: DatabaseScope) -> String? {
        guard self == .anonymous else { return nil }
        if scope != .public { return "the \(scope.rawValue) database needs a signed-in user" }
        if !Self.anonymousOperations.contains(operation) { return "\(operation) needs a signed-in user" }
        return nil
    }
}
