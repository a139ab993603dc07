import ZoneCore

/// The web push tokens the store holds, by digest, with each user's in creation order.
struct WebTokenTable: Sendable {
    private(set) var byDigest: [String: WebPushToken] = [:]
    /// Each user's token digests, oldest first.
    private var byUser: [String: [String]] = [:]

    var count: Int { byDigest.count }

    subscript(digest: String) -> WebPushToken? { byDigest[digest] }

    /// The user's tokens, oldest first.
    func tokens(of user: String) -> [WebPushToken] { (byUser[user] ?? []).compactMap { byDigest[$0] } }

    mutating func put(_ token: WebPushToken) {
        if byDigest.updateValue(token, forKey: token.digest) == nil {
            var mine = byUser[token.user, default: []]
            let at = mine.firstIndex { (byDigest[$0]?.serial ?? 0) > token.serial } ?? mine.endIndex
            mine.insert(token.digest, at: at)
            byUser[token.user] = mine
        }
    }

    mutating func remove(_ digest: String) {
        guard let gone = byDigest.removeValue(forKey: digest) else { return }
        byUser[gone.user]?.removeAll { $0 == digest }
        if byUser[gone.user]?.isEmpty == true { byUser[gone.user] = nil }
    }
}

extension StoreEngine {
    /// Keeps a new web push token of the signed-in user's (`tokens/create`); when the user then
    /// holds more than `maxPerUser`, their oldest are forgotten. Returns the digests forgotten.
    public mutating func createWebToken(digest: String, environment: String, container: String, maxPerUser: Int,
                                        _ ctx: RequestContext) throws(StoreError) -> [String] {
        try admit(ctx, touchesZone: false)
        try checkSignedIn(scope: .private, access: .write, ctx)
        guard digest.utf8.count == 64, digest.utf8.allSatisfy({ Hex.value($0) != nil }) else {
            throw StoreError(.invalidArguments, "a web token's digest is 64 hex digits")
        }
        guard environment == "development" || environment == "production" else {
            throw StoreError(.invalidArguments, "apnsEnvironment is \"development\" or \"production\"")
        }
        guard container.utf8.count <= 255 else {
            throw StoreError(.invalidArguments, "a container name has at most 255 bytes")
        }
        guard state.webTokens[digest] == nil else {
            throw StoreError(.invalidArguments, "that web token exists already")
        }
        let mine = state.webTokens.tokens(of: ctx.user)
        commit(.putWebToken(WebPushToken(digest: digest, user: ctx.user, environment: environment,
                                         container: container, serial: (mine.last?.serial ?? 0) &+ 1)))
        var forgotten: [String] = []
        for old in mine.prefix(max(0, mine.count + 1 - max(1, maxPerUser))) {
            commit(.deleteWebToken(digest: old.digest))
            forgotten.append(old.digest)
        }
        return forgotten
    }

    /// Registers a web push token (`tokens/register`): it must be the signed-in user's, created for
    /// `environment` (anything else is one `BAD_REQUEST`, so a guess learns nothing). The token's
    /// device (`ctx.deviceID`, every web token of a user shares one) joins the user's push devices,
    /// so their subscriptions fire to it. Returns the token and whether it was registered before.
    public mutating func registerWebToken(digest: String, environment: String,
                                          _ ctx: RequestContext) throws(StoreError) -> (WebPushToken, already: Bool) {
        try admit(ctx, touchesZone: false)
        try checkSignedIn(scope: .private, access: .write, ctx)
        guard var token = state.webTokens[digest], token.user == ctx.user, token.environment == environment else {
            throw StoreError(.invalidArguments, "apnsToken is not one of yours for \(environment): call tokens/create")
        }
        if token.registered { return (token, true) }
        try registerDevice(ctx)
        token.registered = true
        commit(.putWebToken(token))
        return (token, false)
    }

    /// The web push token whose digest is `digest`, if the store holds it.
    public func webToken(digest: String) -> WebPushToken? { state.webTokens[digest] }

    /// The digests of every registered web push token (at most 16 a user).
    public func registeredWebTokenDigests() -> [String] {
        state.webTokens.byDigest.values.filter(\.registered).map(\.digest)
    }
}
