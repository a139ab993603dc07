import Foundation
import RecordStore
import Synchronization

/// Who a request speaks for, once its credentials are checked.
///
/// CloudKit Web Services Reference, "Composing Web Service Requests" → "Accessing CloudKit Using an
/// API Token" (developer.apple.com/library/archive/documentation/DataManagement/Conceptual/
/// CloudKitWebServicesReference/SettingUpWebServices.html): a request carries the container's API
/// token and, optionally, a web auth token naming the signed-in user.
public enum RequestIdentity: Sendable, Hashable {
    /// A signed-in user: a web auth token (`ckWebAuthToken`, `ckSession`) or our bearer token.
    case user(String)
    /// A valid API token and no user: CloudKit's anonymous caller, who may read the public database
    /// and nothing else. Every endpoint that needs a user answers it `421 AUTHENTICATION_REQUIRED`
    /// with a `redirectURL` to the sign-in page.
    case anonymous

    /// The user's name, nil for the anonymous caller.
    public var userName: String? {
        if case .user(let name) = self { return name }
        return nil
    }
}

/// The container's API tokens (`zonertc store serve --api-token`), checked in constant time.
///
/// An API token says which app is calling, not who: it is compiled into a web page and so is not a
/// user's secret, but it is still never logged, and a wrong one is `401 AUTHENTICATION_FAILED`.
public final class APITokens: Sendable {
    private let tokens: Mutex<[[UInt8]]>

    /// The longest token read; anything longer is refused before it is compared.
    public static let maxLength = 256

    public init(_ tokens: [String] = []) {
        self.tokens = Mutex(tokens.map { Array($0.utf8) })
    }

    /// Whether any API token is declared (without one, `ckAPIToken` is always refused).
    public var isEmpty: Bool { tokens.withLock { $0.isEmpty } }

    /// Whether `token` is one of the declared tokens. Every declared token is compared byte by byte
    /// to the end, so the time taken does not say how much of a guess was right.
    public func contains(_ token: String) -> Bool {
        let guess = Array(token.utf8)
        guard guess.count <= Self.maxLength else { return false }
        return tokens.withLock { known in
            var found: UInt8 = 0
            for candidate in known { found |= Self.constantTimeEquals(candidate, guess) ? 1 : 0 }
            return found == 1
        }
    }

    /// Byte-wise equality whose time depends only on the lengths.
    static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var diff: UInt8 = a.count == b.count ? 0 : 1
        for i in 0..<max(a.count, b.count) {
            diff |= (i < a.count ? a[i] : 0) ^ (i < b.count ? b[i] : 0)
        }
        return diff == 0
    }

    /// Why `token` cannot be an API token, or nil: 16 to 256 characters a URL carries unescaped
    /// (letters, digits, `-`, `.`, `_`, `~`), so it reads the same in a query string and a file.
    public static func problem(_ token: String) -> String? {
        let bytes = Array(token.utf8)
        guard bytes.count >= 16 && bytes.count <= maxLength else { return "an API token has 16 to 256 characters" }
        let ok = bytes.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
                || b == 0x2D || b == 0x2E || b == 0x5F || b == 0x7E
        }
        return ok ? nil : "an API token holds letters, digits, '-', '.', '_' and '~' only"
    }
}

/// The credentials a request carries, as sent: nothing here is checked yet.
struct RequestCredentials: Sendable {
    /// `?ckAPIToken=`.
    var apiToken: String?
    /// `Authorization: Bearer T`, `?ckWebAuthToken=T` or `?ckSession=T` (CloudKit JS 1.x's name);
    /// nil when none is sent.
    var webAuthToken: String?
    /// Set when the request names two different web tokens, or one parameter twice.
    var conflicting = false
    /// `?tok=` of a webcourier URL.
    var courierToken: String?

    /// The query parameters and header this reads; other parameters are left to the endpoint.
    init(_ request: HTTPRequest) {
        var webTokens: [String] = []
        if let auth = request.headers["Authorization"] {
            if auth.hasPrefix("Bearer ") {
                webTokens.append(String(auth.dropFirst(7)).trimmingSpaces)
            } else {
                conflicting = true
            }
        }
        var apiTokens: [String] = []
        var courier: [String] = []
        // A web auth token holds `+`, `/` and `=`, which a client percent-encodes.
        for (name, value) in URLEncodedPairs.query(of: request.target) {
            switch name {
            case "ckAPIToken": apiTokens.append(value)
            case "ckWebAuthToken", "ckSession": webTokens.append(value)
            case "tok": courier.append(value)
            default: break
            }
        }
        if webTokens.dropFirst().contains(where: { $0 != webTokens[0] }) || apiTokens.count > 1 || courier.count > 1 {
            conflicting = true
        }
        apiToken = apiTokens.first
        webAuthToken = webTokens.first
        courierToken = courier.first
    }
}

extension StoreAPI {
    /// Why a request is refused before it reaches an endpoint.
    struct Refusal: Error { var response: HTTPResponse }

    /// The identity a request's credentials name ("Accessing CloudKit Using an API Token"):
    /// - a web auth token (`ckWebAuthToken`, `ckSession`, or our `Authorization: Bearer`) names a
    ///   user; an unknown one is `401 AUTHENTICATION_FAILED`;
    /// - a `ckAPIToken` must be one the daemon declares, else `401 AUTHENTICATION_FAILED`; alone it
    ///   is the anonymous identity;
    /// - nothing at all is `421 AUTHENTICATION_REQUIRED` with the sign-in page's `redirectURL`;
    /// - a server-to-server key's signature (`ServerKeys`) acts as the keys' user; a bad one is `401`.
    ///
    /// Our bearer token needs no API token: our peers and the call page send it alone.
    func identify(_ request: HTTPRequest) async -> Result<RequestIdentity, Refusal> {
        // "Accessing CloudKit Using a Server-to-Server Key": a signed request is judged by its signature alone.
        if ServerKeys.signed(request) {
            switch serverKeys.verify(request, now: Date()) {
            case .success(let user): return .success(.user(user))
            case .failure(let refused):
                return .failure(Refusal(response: error(401, .authenticationFailed, refused.reason)))
            }
        }
        let credentials = RequestCredentials(request)
        if credentials.conflicting {
            return .failure(Refusal(response: error(401, .authenticationFailed,
                                                    "the request names conflicting or malformed credentials")))
        }
        if let api = credentials.apiToken, !apiTokens.contains(api) {
            return .failure(Refusal(response: error(401, .authenticationFailed, "unknown API token")))
        }
        guard let web = credentials.webAuthToken else {
            if credentials.apiToken != nil { return .success(.anonymous) }
            return .failure(Refusal(response: signInRequired(request)))
        }
        guard web.utf8.count <= APITokens.maxLength, let user = await users.user(forToken: web) else {
            return .failure(Refusal(response: error(401, .authenticationFailed, "unknown web auth token")))
        }
        return .success(.user(user))
    }

    /// The signed-in user a request names; the anonymous caller and a request without credentials get
    /// `421 AUTHENTICATION_REQUIRED` with a `redirectURL`.
    func authenticate(_ request: HTTPRequest) async -> Result<String, Refusal> {
        switch await identify(request) {
        case .success(.user(let name)): return .success(name)
        case .success(.anonymous): return .failure(Refusal(response: signInRequired(request)))
        case .failure(let refusal): return .failure(refusal)
        }
    }

    /// `421 AUTHENTICATION_REQUIRED` with `redirectURL`: where the user signs in (or registers) and
    /// gets the web auth token to send as `ckWebAuthToken`, as CloudKit's sign-in page hands it back.
    func signInRequired(_ request: HTTPRequest) -> HTTPResponse {
        var o = WireFormat.encode(StoreError(.notAuthenticated, "sign in: open redirectURL, then send the web auth "
                                             + "token it hands back as ckWebAuthToken (or Authorization: Bearer)"))
        o["redirectURL"] = Self.baseURL(request) + SignInPage.path
        return .json(421, WireFormat.serialize(o))
    }

    /// `http://HOST` from the request's `Host` header when it is a plain host name or address with an
    /// optional port; "" otherwise (the URLs handed back are then relative). The header is the
    /// client's own, but it is still checked, so it cannot put anything else into a URL we answer.
    static func baseURL(_ request: HTTPRequest) -> String {
        guard let host = request.headers["Host"], !host.isEmpty, host.utf8.count <= 255,
              host.utf8.allSatisfy({ b in
                  (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
                      || b == 0x2D || b == 0x2E || b == 0x3A || b == 0x5B || b == 0x5D
              }) else { return "" }
        return "http://\(host)"
    }
}
