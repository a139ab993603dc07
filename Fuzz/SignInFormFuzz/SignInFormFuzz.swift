// libFuzzer entry point for the sign-in page's form (`POST /auth/signin`,
// application/x-www-form-urlencoded or a JSON object; SignInPage.swift) and its `redirect` check:
// arbitrary bytes as a form body. A trap here is a bug: a hostile form must only ever be refused.
// Checked: a form of plain pairs (no `%`, `+` or JSON) reads back as sent; a redirect path taken
// is one of this origin's (a single leading `/`, printable ASCII, no backslash), so a token is
// never sent to another site.
//
// Built by Fuzz/run-fuzz.sh from the modules listed in `modules`; libFuzzer supplies `main`.
@testable import StoreServer

@_cdecl("LLVMFuzzerTestOneInput")
public func signInFormFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let body = Array(UnsafeBufferPointer(start: data, count: size))
    let fields = SignInPage.fields(body)
    let text = String(decoding: body, as: UTF8.self)
    if body.first != UInt8(ascii: "{"), text.utf8.elementsEqual(body), !text.contains("%"), !text.contains("+") {
        precondition(fields != nil, "a plain form refused")
        let form = fields
        for pair in text.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            // A later pair of the same name wins.
            let last = text.split(separator: "&").last { $0.split(separator: "=", maxSplits: 1,
                                                                  omittingEmptySubsequences: false)[0] == kv[0] }
            guard last == pair else { continue }
            precondition(form?[String(kv[0])] == (kv.count > 1 ? String(kv[1]) : ""), "pair \(pair) read back wrong")
        }
    }
    for value in (fields.map { Array($0.values) } ?? []) + [text] {
        guard let path = SignInPage.sameOriginPath(value) else { continue }
        let bytes = Array(path.utf8)
        precondition(bytes.first == UInt8(ascii: "/") && (bytes.count == 1 || bytes[1] != UInt8(ascii: "/")),
                     "redirect \(path) leaves the origin")
        precondition(bytes.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\\") }, "redirect \(path)")
    }
    return 0
}
