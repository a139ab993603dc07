// The call page (docs/PROTOCOL.md, docs/CALL-PAGE.md): `GET /call` serves call.html,
// `GET /call/<file>` its stylesheet and ES modules — a second implementation of docs/SIGNALING.md in the
// browser, embedded in the binary from web/ at build time (CallPage+Files.swift).

/// The files of the call page and how each is served.
public enum CallPage {
    /// The page itself, served at `/call`.
    public static let pageFile = "call.html"

    /// The HTTP answer for `GET path`, or nil when `path` is not the page's.
    static func response(path: String) -> HTTPResponse? {
        let name: String
        if path == "/call" || path == "/call/" {
            name = pageFile
        } else if path.hasPrefix("/call/") {
            name = String(path.dropFirst("/call/".count))
        } else {
            return nil
        }
        guard let body = files[name], let type = contentType(of: name) else { return nil }
        // no-cache: a rebuilt daemon serves new modules; the browser revalidates instead of mixing versions.
        return HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Type", type), ("Cache-Control", "no-cache"),
                                                               ("X-Content-Type-Options", "nosniff")]),
                            body: body)
    }

    /// The media type by extension; files of other kinds are not served.
    static func contentType(of name: String) -> String? {
        if name.hasSuffix(".html") { return "text/html; charset=utf-8" }
        if name.hasSuffix(".js") { return "text/javascript; charset=utf-8" }
        if name.hasSuffix(".css") { return "text/css; charset=utf-8" }
        return nil
    }
}
