import Foundation
import Net
import ZoneCore

/// One persistent HTTP/1.1 client connection with blocking I/O: a request out, a response in.
/// Used from dispatch threads, never from the cooperative pool.
final class HTTPClientConnection: @unchecked Sendable {
    struct ClientError: Error, CustomStringConvertible {
        enum Kind {
            /// The server closed or reset the connection before any byte of the response: on a
            /// pooled connection, usually its idle timeout crossing our request.
            case closedBeforeResponse
            /// A pooled connection found closed (or holding bytes nobody asked for) before the
            /// request was sent: nothing went out, so another connection may carry it.
            case closedBeforeSending
            /// No complete response within the timeout: the server may still be working on it.
            case timedOut
            case failed
        }

        var kind: Kind = .failed
        var description: String
    }

    let endpoint: Endpoint
    private(set) var fd: Int32
    private var parser = HTTPResponseParser()
    var buffer = [UInt8](repeating: 0, count: 65536)
    /// On `StoreClientLoop` (loop-confined): the request in progress, and whether the loop watches
    /// the socket.
    var pending: LoopExchange?
    var watched = false
    var watchingLoop: EventLoop?

    init(endpoint: Endpoint, timeoutSeconds: Int = 5) throws {
        self.endpoint = endpoint
        fd = try TCPSocket.connectBlocking(to: endpoint, timeoutSeconds: timeoutSeconds)
    }

    deinit {
        guard fd >= 0 else { return }
        // A socket the client loop watches is forgotten there before it is closed, on the loop's
        // thread, so its number cannot be reused (and the new socket unwatched) in between.
        // A loop that stopped (a call's driver that ended) runs nothing posted to it: closed here.
        if watched, let loop = watchingLoop, !loop.isStopping {
            let fd = self.fd
            loop.execute {
                loop.deregister(fd)
                Glibc.close(fd)
            }
        } else {
            Glibc.close(fd)
        }
    }

    func close() {
        if fd >= 0 { Glibc.close(fd); fd = -1 }
    }

    /// Unblocks a reader on another thread (for streams being cancelled).
    func shutdownBoth() {
        if fd >= 0 { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    /// What a failed `send` (errno set) means for the request: the server closing or resetting
    /// the connection is "closed before any response" (on a pooled one, its idle timeout).
    func sendFailure() -> ClientError {
        let closed = errno == EPIPE || errno == ECONNRESET
        return ClientError(kind: closed ? .closedBeforeResponse : .failed,
                           description: "send to \(endpoint): \(String(cString: strerror(errno)))")
    }

    /// What `recv` returning `n` ≤ 0 (errno set when negative) means, given whether any byte of the
    /// response came before. EINTR and EAGAIN are the caller's.
    func receiveFailure(_ n: Int, received: Bool) -> ClientError {
        if n == 0 {
            return ClientError(kind: received ? .failed : .closedBeforeResponse,
                               description: "\(endpoint) closed the connection")
        }
        return ClientError(kind: errno == ECONNRESET && !received ? .closedBeforeResponse : .failed,
                           description: "recv from \(endpoint): \(String(cString: strerror(errno)))")
    }

    func sendAll(_ bytes: [UInt8]) throws {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + done, $0.count - done, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw sendFailure()
            }
            done += n
        }
    }

    /// Reads until the parser yields a step other than `needMore`.
    func nextStep(timeoutMilliseconds: Int) throws -> HTTPResponseParser.Step {
        TCPSocket.setReceiveTimeout(fd, milliseconds: timeoutMilliseconds)
        var received = parser.hasBufferedBytes
        while true {
            let step: HTTPResponseParser.Step
            do { step = try parser.parseStep() } catch {
                throw ClientError(description: "bad response from \(endpoint): \(error)")
            }
            if step != .needMore { return step }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                throw ClientError(kind: .timedOut,
                                  description: "no response from \(endpoint) within \(timeoutMilliseconds) ms")
            }
            if n <= 0 { throw receiveFailure(n, received: received) }
            received = true
            parser.append(buffer[0..<n])
        }
    }

    /// The first `count` bytes of `buffer` arrived: to the parser.
    func appendReceived(_ count: Int) { parser.append(buffer[0..<count]) }

    func parseStep() throws -> HTTPResponseParser.Step { try parser.parseStep() }

    /// Whether the connection can carry another request: the server has not closed it (its idle
    /// timeout) and sent nothing unasked. Looked at without waiting, before a pooled connection is
    /// used, so a request is not sent into a connection already closed.
    var isReusable: Bool {
        guard fd >= 0, !parser.hasBufferedBytes else { return false }
        var byte: UInt8 = 0
        let n = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
    }

    static func request(method: String, path: String, host: String, headers: [(String, String)],
                        body: [UInt8]) -> [UInt8] {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host)\r\n"
        for (k, v) in headers { head += "\(k): \(v)\r\n" }
        if method != "GET" || !body.isEmpty { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        var out = Array(head.utf8)
        out.append(contentsOf: body)
        return out
    }
}
