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
    let pairs = URLEncodedPairs.query(of: target)
    // Parts found on bytes: the first `?`, then `&` and the first `=` of each part.
    let bytes = Array(target.utf8)
    let parts = bytes.firstIndex(of: UInt8(ascii: "?"))
        .map { bytes[($0 + 1)...].split(separator: UInt8(ascii: "&")) } ?? []
    precondition(pairs.count == parts.count, "\(pairs.count) pairs from \(parts.count) parts")
    for (part, pair) in zip(parts, pairs) {
        let sent = part.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
        if !sent[0].contains(UInt8(ascii: "%")) {
            precondition(pair.name == String(decoding: sent[0], as: UTF8.self), "name \(pair.name) read back wrong")
        }
        if sent.count > 1, !sent[1].contains(UInt8(ascii: "%")) {
            precondition(pair.value == String(decoding: sent[1], as: UTF8.self), "value \(pair.value) read back wrong")
        }
    }
    let credentials = RequestCredentials(HTTPRequest(method: "GET", target: target))
    let values = Set(pairs.map(\.value))
    if let api = credentials.apiToken { precondition(values.contains(api), "an API token no pair holds") }
    if let web = credentials.webAuthToken { precondition(values.contains(web), "a web token no pair holds") }
    let webTokens = Set(pairs.filter { $0.name == "ckWebAuthToken" || $0.name == "ckSession" }.map(\.value))
    if webTokens.count > 1 { precondition(credentials.conflicting, "two web tokens, not marked conflicting") }
    return 0
}
