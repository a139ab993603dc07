// Bytes to a daemon on a connection of their own, outside any client: what tests of malformed or
// hand-made requests send, and the answer they read back.
import Glibc
import Net
import ZoneCore

/// Sends `bytes` on a fresh loopback connection and reads until the daemon closes it, `isComplete` holds
/// for what came, or `timeoutMilliseconds` pass without a byte; the answer as text.
public func rawExchange(_ endpoint: Endpoint, _ bytes: [UInt8], timeoutMilliseconds: Int = 2000,
                        isComplete: ([UInt8]) -> Bool = { _ in false }) throws -> String {
    let fd = try TCPSocket.connectBlocking(to: endpoint)
    defer { close(fd) }
    _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    TCPSocket.setReceiveTimeout(fd, milliseconds: timeoutMilliseconds)
    var out: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while !isComplete(out) {
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n <= 0 { break }
        out += buffer[0..<n]
    }
    return String(decoding: out, as: UTF8.self)
}

/// Sends `bytes` and reads one HTTP response: its head, then as many body bytes as its `Content-Length`
/// says (a response without one is read until the peer closes). For servers that keep the connection open
/// whatever the request asked (Chromium's DevTools HTTP endpoint), where a plain `rawExchange` would wait
/// out its timeout after every answer.
public func rawResponse(_ endpoint: Endpoint, _ bytes: [UInt8], timeoutMilliseconds: Int = 2000) throws -> String {
    let separator = Array("\r\n\r\n".utf8)
    return try rawExchange(endpoint, bytes, timeoutMilliseconds: timeoutMilliseconds) { out in
        guard let headEnd = out.firstRange(of: separator)?.upperBound else { return false }
        let head = String(decoding: out[..<headEnd], as: UTF8.self).lowercased()
        guard let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
              let length = Int(String(line.dropFirst("content-length:".count).filter { $0 != " " })) else {
            return false
        }
        return out.count - headEnd >= length
    }
}
