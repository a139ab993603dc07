import Foundation
import RecordStore

/// The sign-in page a `421 AUTHENTICATION_REQUIRED` answer's `redirectURL` leads to.
///
/// CloudKit Web Services Reference, "Accessing CloudKit Using an API Token" (SettingUpWebServices.html):
/// a request that needs a user and has none is answered with a `redirectURL`; the user signs in
/// there, and the web auth token comes back to the app — posted to the window that opened the page,
/// or appended as `ckWebAuthToken` to the app's URL ("Sign in Callback": post message or URL
/// redirect). The app then sends it as `ckWebAuthToken` (CloudKit JS 1.x: `ckSession`).
///
/// The daemon has no passwords: a user's secret is the token `zonertc store user add` printed (or
/// registration handed out), so signing in is presenting it, and registering a new name is possible
/// where the daemon allows registration. The token is handed back only to this daemon's origin: a
/// redirect names a path here, never another site, so a crafted sign-in link cannot send a token away.
enum SignInPage {
    /// Where the page is served (`GET`) and where its forms post (`POST`).
    static let path = "/auth/signin"
    /// The embedded file (CallPage/web/signin.html).
    static let file = "signin.html"
    /// The longest `redirect` path taken.
    static let maxRedirectBytes = 1024

    /// A `redirect` field's path if it is one of this origin's: starts with one `/`, printable ASCII
    /// without spaces, backslashes or control characters (nothing a browser would read as another
    /// host, nothing that could end a header line).
    static func sameOriginPath(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= maxRedirectBytes, bytes[0] == UInt8(ascii: "/"),
              bytes.count == 1 || (bytes[1] != UInt8(ascii: "/") && bytes[1] != UInt8(ascii: "\\")),
              bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\\") }) else { return nil }
        return text
    }

    /// The fields of a form post (`application/x-www-form-urlencoded`: `+` is a space) or of a JSON object.
    static func fields(_ body: [UInt8]) -> [String: String]? {
        if body.first == UInt8(ascii: "{") {
            guard let o = try? WireFormat.parseObject(body) else { return nil }
            return o.compactMapValues { $0 as? String }
        }
        guard String(validating: body, as: UTF8.self) != nil else { return nil }
        var out: [String: String] = [:]
        for (name, value) in URLEncodedPairs.parts(body[...]) {
            guard let name = URLEncodedPairs.decoded(name, plusIsSpace: true),
                  let value = URLEncodedPairs.decoded(value, plusIsSpace: true) else { return nil }
            out[name] = value
        }
        return out
    }
}

extension StoreAPI {
    /// `GET /auth/signin`: the page. `POST /auth/signin` with `webAuthToken` (sign in) or `userName`
    /// (register, where allowed), and an optional same-origin `redirect` path: `303` to that path with
    /// `ckWebAuthToken` appended, else `{"ckWebAuthToken", "userRecordName"}`.
    func signIn(_ request: HTTPRequest) async -> HTTPResponse {
        switch request.method {
        case "GET":
            guard let page = CallPage.files[SignInPage.file] else {
                return error(500, .internalError, "no sign-in page")
            }
            return HTTPResponse(status: 200, headers: HTTPHeaders([
                ("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store"),
                ("X-Content-Type-Options", "nosniff"), ("X-Frame-Options", "DENY"), ("Referrer-Policy", "no-referrer"),
            ]), body: page)
        case "POST":
            break
        default:
            return error(405, .invalidArguments, "the sign-in page is GET; its forms POST")
        }
        guard request.body.count <= 4096, let form = SignInPage.fields(request.body) else {
            return error(400, .invalidArguments, "send webAuthToken=… (sign in) or userName=… (register) as a form")
        }
        var redirect: String?
        if let r = form["redirect"], !r.isEmpty {
            guard let path = SignInPage.sameOriginPath(r) else {
                return error(400, .invalidArguments, "redirect must be a path of this server (/…)")
            }
            redirect = path
        }
        let token: String, user: String
        if let given = form["webAuthToken"], !given.isEmpty {
            guard given.utf8.count <= APITokens.maxLength, let known = await users.user(forToken: given) else {
                return error(401, .authenticationFailed, "unknown token")
            }
            (token, user) = (given, known)
        } else if let name = form["userName"], !name.isEmpty {
            let registered = await register(HTTPRequest(method: "POST", target: "/auth/register",
                                                        body: WireFormat.serialize(["userName": name])))
            guard registered.status == 200, let o = try? WireFormat.parseObject(registered.body),
                  let t = o["token"] as? String else { return registered }
            (token, user) = (t, name)
        } else {
            return error(400, .invalidArguments, "send webAuthToken=… (sign in) or userName=… (register)")
        }
        let noStore: [(String, String)] = [("Cache-Control", "no-store"), ("Referrer-Policy", "no-referrer")]
        if let redirect {
            let encoded = token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let location = redirect + (redirect.contains("?") ? "&" : "?") + "ckWebAuthToken=" + encoded
            return HTTPResponse(status: 303, headers: HTTPHeaders([("Location", location)] + noStore))
        }
        var answer = HTTPResponse.json(200, WireFormat.serialize(["ckWebAuthToken": token, "userRecordName": user]))
        for (name, value) in noStore { answer.headers.add(name, value) }
        return answer
    }
}
