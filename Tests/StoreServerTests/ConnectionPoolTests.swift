import Foundation
import Glibc
import Net
import RecordStore
@testable import StoreServer
import Synchronization
import Testing
import ZoneCore

/// The store client's connection pool sends a request again only when a pooled connection was
/// closed before any of the response came back; a request that timed out or whose response broke
/// off may have run on the server (a save), so it is never sent twice.
@Suite("Store client connection pool", .serialized)
struct ConnectionPoolTests {
    /// What the scripted server does with the request it receives as its Nth (0-based).
    enum Reply: Sendable {
        case answer
        case answerThenClose
        case silence
        case halfThenClose
    }

    /// A scripted HTTP/1.1 server on loopback, on a thread of its own, counting connections and
    /// requests. `finish()` reads whatever is still pending, stops the thread and returns the counts.
    final class ScriptedServer: @unchecked Sendable {
        let endpoint: Endpoint
        private let listener: Int32
        private let script: [Reply]
        private let stopping = Atomic<Bool>(false)
        private let done = DispatchSemaphore(value: 0)
        private var connections = 0
        private var requests = 0

        init(_ script: [Reply]) throws {
            (listener, endpoint) = try TCPSocket.listen(on: try Endpoint(parsing: "127.0.0.1:0"))
            self.script = script
            let thread = Thread { [self] in self.serve() }
            thread.start()
        }

        func finish() -> (connections: Int, requests: Int) {
            stopping.store(true, ordering: .sequentiallyConsistent)
            #expect(done.wait(timeout: .now() + 10) == .success, "the scripted server did not stop")
            return (connections, requests)
        }

        private func serve() {
            var open: [(fd: Int32, pending: [UInt8])] = []
            var lastPass = false
            while true {
                var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
                    + open.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
                _ = poll(&fds, nfds_t(fds.count), lastPass ? 0 : 20)
                while let (fd, _) = try? TCPSocket.accept(listener) {
                    connections += 1
                    open.append((fd, []))
                }
                var closed: Set<Int32> = []
                for i in open.indices {
                    var buffer = [UInt8](repeating: 0, count: 4096)
                    let n = buffer.withUnsafeMutableBytes { recv(open[i].fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                    if n == 0 { closed.insert(open[i].fd); continue }
                    guard n > 0 else { continue }
                    open[i].pending += buffer[0..<n]
                    while let end = Self.requestEnd(open[i].pending) {
                        open[i].pending.removeFirst(end)
                        let reply = requests < script.count ? script[requests] : .answer
                        requests += 1
                        let ok = Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}".utf8)
                        switch reply {
                        case .answer: _ = send(open[i].fd, ok, ok.count, Int32(MSG_NOSIGNAL))
                        case .answerThenClose:
                            _ = send(open[i].fd, ok, ok.count, Int32(MSG_NOSIGNAL))
                            closed.insert(open[i].fd)
                        case .silence: break
                        case .halfThenClose:
                            _ = send(open[i].fd, ok, 20, Int32(MSG_NOSIGNAL))
                            closed.insert(open[i].fd)
                        }
                    }
                }
                for fd in closed { Glibc.close(fd) }
                open.removeAll { closed.contains($0.fd) }
                if lastPass { break }
                if stopping.load(ordering: .sequentiallyConsistent) { lastPass = true }
            }
            for c in open { Glibc.close(c.fd) }
            Glibc.close(listener)
            done.signal()
        }

        /// Where the first complete request in `bytes` ends (head and Content-Length body), if any.
        static func requestEnd(_ bytes: [UInt8]) -> Int? {
            guard bytes.count >= 4,
                  let head = (3..<bytes.count).first(where: { bytes[$0 - 3...$0].elementsEqual([13, 10, 13, 10]) })
            else { return nil }
            let text = String(decoding: bytes[...head], as: UTF8.self).lowercased()
            let length = text.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
            return bytes.count >= head + 1 + length ? head + 1 + length : nil
        }
    }

    private func post(_ pool: ConnectionPool, timeoutMs: Int) async throws -> Int {
        try await pool.send(method: "POST", path: "/x", headers: [], body: Array("{}".utf8),
                            timeoutMilliseconds: timeoutMs).0
    }

    /// The second request on a pooled connection gets silence (the client times out) or half a
    /// response: either way it may have run, so it arrives once and the call fails.
    @Test("a request that timed out or whose response broke off is not sent again on a new connection",
          arguments: [Reply.silence, .halfThenClose])
    func failedRequestIsNotResent(_ second: Reply) async throws {
        let server = try ScriptedServer([.answer, second])
        let pool = ConnectionPool(endpoint: server.endpoint)
        #expect(try await post(pool, timeoutMs: 5000) == 200)
        await #expect(throws: StoreError.self) { try await post(pool, timeoutMs: 300) }
        let seen = server.finish()
        #expect(seen.connections == 1 && seen.requests == 2, "\(seen)")
    }

    @Test("a pooled connection the server has closed is left for a new one; the request arrives once")
    func closedConnectionIsReplaced() async throws {
        let server = try ScriptedServer([.answerThenClose, .answer, .answer])
        let pool = ConnectionPool(endpoint: server.endpoint)
        #expect(try await post(pool, timeoutMs: 5000) == 200)
        #expect(try await post(pool, timeoutMs: 5000) == 200)
        #expect(try await post(pool, timeoutMs: 5000) == 200)
        let seen = server.finish()
        #expect(seen.connections == 2 && seen.requests == 3, "\(seen)")
    }
}
