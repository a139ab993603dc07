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
    // Byte tests, not the text's: `%` followed by a combining mark is one Character, not "%".
    if body.first != UInt8(ascii: "{"), text.utf8.elementsEqual(body),
       !body.contains(UInt8(ascii: "%")), !body.contains(UInt8(ascii: "+")) {
        precondition(fields != nil, "a plain form refused")
        func part(_ bytes: ArraySlice<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }
        func nameAndValue(_ pair: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
            pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
        }
        let pairs = body.split(separator: UInt8(ascii: "&"))
        // A later pair of the same name wins (names compare as the dictionary's String keys do).
        var last: [String: Int] = [:]
        for (index, pair) in pairs.enumerated() { last[part(nameAndValue(pair)[0])] = index }
        for (index, pair) in pairs.enumerated() {
            let kv = nameAndValue(pair)
            let name = part(kv[0])
            guard last[name] == index else { continue }
            precondition(fields?[name] == (kv.count > 1 ? part(kv[1]) : ""), "pair \(name) read back wrong")
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
