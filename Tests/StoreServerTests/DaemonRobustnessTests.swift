import Foundation
import Glibc
import Net
import RecordStore
@testable import StoreServer
import Testing
import TestSupport
import ZoneCore

/// A live daemon on loopback fed bad input: it answers with errors, closes, and keeps serving others.
@Suite("Store daemon under bad input")
struct DaemonRobustnessTests {
    final class Running: Sendable {
        let daemon: StoreDaemon
        let store: EmbeddedStore
        let token: String

        init(maxConnections: Int = 64) throws {
            store = try EmbeddedStore(options: .inMemoryForTests)
            let users = try UserRegistry(directory: nil)
            token = try users.add("alice")
            var options = StoreDaemon.Options(listen: try Endpoint(parsing: "127.0.0.1:0"))
            options.maxConnections = maxConnections
            daemon = try StoreDaemon(api: StoreAPI(store: store, users: users, allowRegister: true), options: options)
            try daemon.start()
        }

        deinit { daemon.stop(); store.close() }

        var client: RemoteStoreClient {
            var c = RemoteStoreClient(configuration: .init(endpoint: daemon.endpoint, token: token),
                                      userRecordName: "alice", deviceID: "d")
            c.retainer = self
            return c
        }

        /// Sends raw bytes on a new connection and reads until the server closes it or 2 s pass; with
        /// `keepOpen`, reads one answer and hands back the open connection.
        func raw(_ bytes: [UInt8], keepOpen: Bool = false) throws -> (String, Int32) {
            guard keepOpen else { return (try rawExchange(daemon.endpoint, bytes), -1) }
            // Kept open: the first answer, and the connection for the caller to go on with.
            let fd = try TCPSocket.connectBlocking(to: daemon.endpoint)
            _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            TCPSocket.setReceiveTimeout(fd, milliseconds: 2000)
            var buf = [UInt8](repeating: 0, count: 4096)
            let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            return (String(decoding: buf.prefix(max(0, n)), as: UTF8.self), fd)
        }
    }

    @Test("garbage, oversized and header-flooding requests get 400/413/431 and a close; others are served")
    func badRequests() async throws {
        let running = try Running()
        let client = running.client
        var random = SeededRandom(seed: 11)
        let garbage = (0..<600).map { _ in UInt8(truncatingIfNeeded: random.next()) } + Array("\r\n\r\n".utf8)
        #expect(try running.raw(garbage).0.hasPrefix("HTTP/1.1 400"))
        let big = Array("POST /database/1/c/e/private/records/modify HTTP/1.1\r\nHost: x\r\nContent-Length: 9000000\r\n\r\n".utf8)
        #expect(try running.raw(big).0.hasPrefix("HTTP/1.1 413"))
        let flood = Array("GET / HTTP/1.1\r\nHost: x\r\n".utf8) + Array(repeating: Array("X-A: aaaaaaaaaaaaaaaa\r\n".utf8), count: 1000).flatMap { $0 }
        #expect(try running.raw(flood).0.hasPrefix("HTTP/1.1 431"))
        let notJSON = Array("POST /database/1/c/e/private/records/modify HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(running.token)\r\nContent-Length: 3\r\n\r\n{{{".utf8)
        let reply = try running.raw(notJSON, keepOpen: true)
        close(reply.1)
        #expect(reply.0.hasPrefix("HTTP/1.1 400") && reply.0.contains("BAD_REQUEST"))
        // The daemon still serves a well-behaved client.
        #expect(try await client.listZones(scope: .private).map(\.zoneName) == ["_defaultZone"])
    }

    @Test("a client stalled mid-request does not hold up others")
    func slowClient() async throws {
        let running = try Running()
        let fd = try TCPSocket.connectBlocking(to: running.daemon.endpoint)
        let partial = Array("POST /database/1/c/e/private/zones/list HTTP/1.1\r\nHost: x\r\nContent-Len".utf8)
        _ = partial.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        let client = running.client
        for _ in 0..<20 { _ = try await client.listZones(scope: .private) }
        close(fd)
    }

    @Test("past the connection limit a client gets 503 with retryAfter")
    func connectionLimit() async throws {
        let running = try Running(maxConnections: 2)
        let a = try TCPSocket.connectBlocking(to: running.daemon.endpoint)
        let b = try TCPSocket.connectBlocking(to: running.daemon.endpoint)
        // Make sure both are accepted before the third arrives.
        for fd in [a, b] {
            let req = Array("GET /health HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
            _ = req.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            var buf = [UInt8](repeating: 0, count: 512)
            TCPSocket.setReceiveTimeout(fd, milliseconds: 2000)
            _ = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        }
        let third = try running.raw(Array("GET /health HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        #expect(third.0.hasPrefix("HTTP/1.1 503"))
        #expect(third.0.contains("retryAfter"))
        close(a)
        close(b)
    }

    @Test("no token: 421 AUTHENTICATION_REQUIRED; a wrong one: 401 AUTHENTICATION_FAILED; the public database: 200")
    func identity() throws {
        let running = try Running()
        let none = try running.raw(Array("POST /database/1/c/e/private/zones/list HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n".utf8), keepOpen: true)
        close(none.1)
        #expect(none.0.hasPrefix("HTTP/1.1 421") && none.0.contains("AUTHENTICATION_REQUIRED"))
        let wrong = try running.raw(Array("POST /database/1/c/e/private/zones/list HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer nope\r\nContent-Length: 0\r\n\r\n".utf8), keepOpen: true)
        close(wrong.1)
        #expect(wrong.0.hasPrefix("HTTP/1.1 401") && wrong.0.contains("AUTHENTICATION_FAILED"))
        let pub = try running.raw(Array("POST /database/1/c/e/public/zones/list HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(running.token)\r\nContent-Length: 0\r\n\r\n".utf8), keepOpen: true)
        close(pub.1)
        #expect(pub.0.hasPrefix("HTTP/1.1 200") && pub.0.contains("__defaultOwner__"))
    }

    @Test("the remote client retries retryAfter errors visibly, and gives up past its budget")
    func retries() async throws {
        var options = EmbeddedStore.Options.inMemoryForTests
        var throttle = ThrottlePolicy()
        throttle.injectServiceUnavailable = 1
        throttle.retryAfterSeconds = 0.001...0.001
        options.configuration.throttle = throttle
        let store = try EmbeddedStore(options: options)
        let users = try UserRegistry(directory: nil)
        let token = try users.add("alice")
        let daemon = try StoreDaemon(api: StoreAPI(store: store, users: users, allowRegister: false),
                                     options: .init(listen: try Endpoint(parsing: "127.0.0.1:0")))
        try daemon.start()
        defer { daemon.stop(); store.close() }
        var config = RemoteStoreClient.Configuration(endpoint: daemon.endpoint, token: token)
        config.retry.maxAttempts = 3
        let client = RemoteStoreClient(configuration: config, userRecordName: "alice", deviceID: "d")
        let error = await #expect(throws: StoreError.self) { _ = try await client.listZones(scope: .private) }
        #expect(error?.code == .serviceUnavailable)
        #expect(client.statistics.requests == 3)
        #expect(client.statistics.retries == ["TRY_AGAIN_LATER": 2])
    }
}
