import Foundation
import Glibc
import Net
import StoreServer
import ZoneCore

/// One client connection of `zonertc bench load`, on the load's event loop: requests pipelined
/// (HTTP/1.1 keep-alive: each is sent at once, the answers come back in order), or one push stream.
/// Loop-confined.
///
/// Pipelined, because the devices the bench plays would each send their save at once on a
/// connection of their own: waiting for one answer before sending the next request would add the
/// bench's own queueing to every latency it measures.
///
/// Each connection leaves from a source address of its own choosing in 127.0.0.0/8, so thousands
/// of them spread over many addresses and the daemon's per-address cap does not bind.
final class LoadConnection {
    /// What a finished request came to: the status (0 when the connection failed) and the body.
    typealias Completion = (_ status: Int, _ body: [UInt8]) -> Void

    let tcp: TCPConnection
    private var parser = HTTPResponseParser()
    /// The completions of the requests sent and not answered yet, oldest first from `head`.
    private var waiting: [Completion] = []
    private var head = 0
    /// A push stream: its head's status, then each chunk of events.
    var onStreamHead: (Int) -> Void = { _ in }
    var onStreamChunk: ([UInt8]) -> Void = { _ in }
    /// The connection is gone (after failing whatever was queued).
    var onClose: () -> Void = {}

    private init(tcp: TCPConnection) {
        self.tcp = tcp
    }

    /// Opens a non-blocking connection to `endpoint` from `source` (port chosen by the kernel).
    static func open(to endpoint: Endpoint, from source: IPAddress?, on loop: EventLoop) throws -> LoadConnection {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
                        | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SocketError("socket") }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        if let source {
            // The port is picked at connect time, per destination: many connections per source address.
            setsockopt(fd, Int32(IPPROTO_IP), 24 /* IP_BIND_ADDRESS_NO_PORT */, &one,
                       socklen_t(MemoryLayout<Int32>.size))
            let bound: Int32 = Endpoint(address: source, port: 0).withSockAddr { Glibc.bind(fd, $0, $1) }
            guard bound == 0 else {
                let e = SocketError("bind \(source)")
                Glibc.close(fd)
                throw e
            }
        }
        let r: Int32 = endpoint.withSockAddr { Glibc.connect(fd, $0, $1) }
        guard r == 0 || errno == EINPROGRESS else {
            let e = SocketError("connect \(endpoint)")
            Glibc.close(fd)
            throw e
        }
        let connection = LoadConnection(tcp: TCPConnection(fd: fd, peer: endpoint, loop: loop))
        connection.tcp.onData = { [weak connection] bytes in connection?.received(bytes) }
        connection.tcp.onClose = { [weak connection] in connection?.closed() }
        try connection.tcp.start()
        return connection
    }

    /// Requests sent and not answered yet.
    var load: Int { waiting.count - head }

    /// While set, requests gather and leave a few kilobytes at a time (`releaseHeld()` sends the rest):
    /// a burst of thousands then costs the bench a system call per few requests rather than one each,
    /// and the daemon still gets the first of them at once.
    var holding = false
    private var held: [UInt8] = []
    private static let heldBytesPerSend = 4096

    /// Sends `bytes` (a whole request) now, behind those before it; `done` gets its response.
    func request(_ bytes: [UInt8], done: @escaping Completion) {
        guard !tcp.isClosed else { return done(0, []) }
        waiting.append(done)
        guard holding else { return tcp.send(bytes) }
        held.append(contentsOf: bytes)
        if held.count >= Self.heldBytesPerSend { releaseHeld() }
    }

    /// Sends what `holding` gathered.
    func releaseHeld() {
        guard !held.isEmpty else { return }
        tcp.send(held)
        held.removeAll(keepingCapacity: true)
    }

    /// Sends the request that opens a push stream.
    func openStream(_ bytes: [UInt8]) { tcp.send(bytes) }

    func close() { tcp.close() }

    private func received(_ bytes: ArraySlice<UInt8>) {
        parser.append(bytes)
        while true {
            let step: HTTPResponseParser.Step
            do { step = try parser.parseStep() } catch {
                tcp.close()
                return
            }
            switch step {
            case .needMore:
                return
            case .response(let response, let body):
                guard head < waiting.count else {
                    tcp.close()  // an answer nobody asked for
                    return
                }
                let done = waiting[head]
                head += 1
                if head == waiting.count {
                    waiting.removeAll(keepingCapacity: true)
                    head = 0
                }
                done(response.status, body)
            case .streamHead(let head):
                onStreamHead(head.status)
            case .chunk(let chunk):
                onStreamChunk(chunk)
            case .end:
                tcp.close()
                return
            }
        }
    }

    private func closed() {
        let failed = waiting[head...]
        waiting = []
        head = 0
        for done in failed { done(0, []) }
        onClose()
    }

    /// A request's bytes.
    static func request(method: String, path: String, host: String, headers: [(String, String)],
                        body: [UInt8]) -> [UInt8] {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if method != "GET" || !body.isEmpty { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        return Array(head.utf8) + body
    }
}
