// `GET /health` on a connection of its own, outside the daemon's client: what the overload and
// event-loop tests use to see the daemon still answers while every request slot is held.
import Foundation
import Glibc
import Net
import TestSupport
import ZoneCore

/// The daemon's raw answer to `GET /health` (the first 1 KiB), read off the cooperative pool with
/// a 5 s receive timeout.
func rawHealthAnswer(from endpoint: Endpoint) async throws -> String {
    try await offPool { () -> String in
        let fd = try TCPSocket.connectBlocking(to: endpoint)
        defer { close(fd) }
        let request = Array("GET /health HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        TCPSocket.setReceiveTimeout(fd, milliseconds: 5000)
        var buffer = [UInt8](repeating: 0, count: 1024)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return String(decoding: buffer.prefix(max(0, n)), as: UTF8.self)
    }
}
