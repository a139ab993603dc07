import RecordStore

/// What each identity may reach.
///
/// CloudKit Web Services Reference, "Composing Web Service Requests" (SettingUpWebServices.html):
/// a request carries an API token and, "optionally", a web auth token naming the user; without the
/// user it may still read the public database ("By default … world readable, owner writable").
extension RequestIdentity {
    /// The operations the anonymous caller may call, in the public database only.
    static let anonymousOperations: Set<String> = ["records/lookup", "records/query", "zones/list", "zones/lookup"]

    /// The name the store acts as: the user's, or the anonymous reader's reserved one (the engine
    /// refuses that name any write again: `RequestContext.isAnonymous`).
    var storeUserName: String {
        switch self {
        case .user(let name): return name
        case .anonymous: return ReservedNames.anonymousReader
        }
    }

    /// Whether this identity may call `operation` of `scope`: a user anything, the anonymous caller
    /// only the public database's reads; the others answer it `421 AUTHENTICATION_REQUIRED`.
    func mayCall(_ operation: String, scope: DatabaseScope) -> Bool {
        guard self == .anonymous else { return true }
        return scope == .public && Self.anonymousOperations.contains(operation)
    }
}
