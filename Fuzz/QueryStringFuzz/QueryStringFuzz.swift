// libFuzzer entry point for the request target's query string, as the daemon reads credentials from
// it ("Accessing CloudKit Using an API Token": `ckAPIToken`, `ckWebAuthToken`, `ckSession`; the
// webcourier URL's `tok`): arbitrary bytes as a target, split into percent-decoded pairs, then read
// as a request's credentials. A trap here is a bug: a hostile URL must only ever be refused.
// Checked: one pair per non-empty `&`-separated part after the first `?`; a name or value that
// holds no `%` comes back as sent; the credentials name only values of the pairs, and two
// different web tokens are always marked conflicting (never one of them picked).
//
// Built by Fuzz/run-fuzz.sh from the modules listed in `modules`; libFuzzer supplies `main`.
@testable import StoreServer

@_cdecl("LLVMFuzzerTestOneInput")
public func queryStringFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let target = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let pairs = RequestCredentials.queryItems(target)
    // The first `?` byte, as the daemon finds it (a `?` may open a grapheme cluster with what follows).
    let query = target.utf8.firstIndex(of: UInt8(ascii: "?")).map { target[target.index(after: $0)...] }
    let parts = query.map { $0.split(separator: "&") } ?? []
    precondition(pairs.count == parts.count, "\(pairs.count) pairs from \(parts.count) parts")
    for (part, pair) in zip(parts, pairs) {
        let sent = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        if !sent[0].contains("%") { precondition(pair.0 == String(sent[0]), "name \(pair.0) from \(sent[0])") }
        if sent.count > 1, !sent[1].contains("%") {
            precondition(pair.1 == String(sent[1]), "value \(pair.1) from \(sent[1])")
        }
    }
    let credentials = RequestCredentials(HTTPRequest(method: "GET", target: target))
    let values = Set(pairs.map(\.1))
    if let api = credentials.apiToken { precondition(values.contains(api), "an API token no pair holds") }
    if let web = credentials.webAuthToken { precondition(values.contains(web), "a web token no pair holds") }
    let webTokens = Set(pairs.filter { $0.0 == "ckWebAuthToken" || $0.0 == "ckSession" }.map(\.1))
    if webTokens.count > 1 { precondition(credentials.conflicting, "two web tokens, not marked conflicting") }
    return 0
}
