// One HTTP exchange on a fresh loopback connection, with the response's headers and raw body: what
// a browser sees (a redirect's Location, an HTML page), which the JSON-only pool does not show.
import Foundation
import Net
import ZoneCore
@testable import StoreServer

struct RawResponse: Sendable {
    let status: Int
    let headers: HTTPHeaders
    let body: [UInt8]

    var text: String { String(decoding: body, as: UTF8.self) }
    var json: [String: Any] { (try? WireFormat.parseObject(body)) ?? [:] }
}

func rawHTTP(_ endpoint: Endpoint, _ method: String, _ target: String, headers: [(String, String)] = [],
             body: [UInt8] = [], timeoutMilliseconds: Int = 15_000) async throws -> RawResponse {
    let connection = try HTTPClientConnection(endpoint: endpoint)
    guard let loop = StoreClientLoop.shared else { throw StoreErrorForTests("no client loop") }
    defer { connection.retire(on: loop) }
    let bytes = HTTPClientConnection.request(method: method, path: target, host: endpoint.description,
                                             headers: headers, body: body)
    switch await connection.exchange(bytes, timeoutMilliseconds: timeoutMilliseconds, fresh: true, on: loop) {
    case .success(let (head, body)): return RawResponse(status: head.status, headers: head.headers, body: body)
    case .failure(let e): throw StoreErrorForTests("\(method) \(target.prefix(60)): \(e)")
    }
}

struct StoreErrorForTests: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
