import Foundation
import Glibc
import Net
import RecordStore
@testable import StoreServer
import Testing
import ZoneCore

/// Issue 13, item 7: bare-LF framing, half-closed clients, a full daemon and greedy addresses.
@Suite("HTTP connection hardening")
struct ConnectionHardeningTests {
    let t0 = Instant.seconds(1000)

    private func sends(_ actions: [HTTPServerConnection.Action]) -> String {
        actions.compactMap {
            if case .send(let b) = $0 { return String(decoding: b, as: UTF8.self) } else { return nil }
        }.joined()
    }

    // MARK: Framing (sans-I/O)

    @Test("bare LF or a lone CR in the head: 400 as soon as it arrives, whole or a byte at a time", arguments: [
        "GET /health HTTP/1.1\nHost: x\n\n",
        "GET /health HTTP/1.1\r\nHost: x\n",
        "GET /health HTTP/1.1\r\nHost: x\r\n\n",
        "GET /health HTTP/1.1\rHost: x\r\n\r\n",
    ])
    func bareLineEnds(_ text: String) {
        var whole = HTTPRequestParser()
        whole.append(Array(text.utf8))
        #expect(throws: HTTPParseError.self) { _ = try whole.parseStep() }
        // A byte at a time: refused at the offending byte, not at a timeout.
        var split = HTTPRequestParser()
        var refusedAt: Int?
        for (i, byte) in text.utf8.enumerated() {
            split.append([byte])
            do { _ = try split.parseStep() } catch {
                #expect(error.status == 400)
                refusedAt = i
                break
            }
        }
        let bad = text.utf8.enumerated().first { i, b in
            let bytes = Array(text.utf8)
            return (b == 10 && (i == 0 || bytes[i - 1] != 13)) || (i > 0 && bytes[i - 1] == 13 && b != 10)
        }!.offset
        #expect(refusedAt == bad)
    }

    @Test("the machine answers bare-LF framing with 400 and a close at once, with no wait for 408")
    func bareLFInTheMachine() {
        var m = HTTPServerConnection(now: t0)
        let actions = m.outputs(after: .received(Array("GET /health HTTP/1.1\nHost: x\n".utf8)[...]), now: t0)
        #expect(sends(actions).hasPrefix("HTTP/1.1 400"))
        #expect(actions.last == .close)
        #expect(m.nextDeadline == nil)  // no wait for 408
    }

    @Test("stray CRLFs before a request and CRLF split across reads are still fine")
    func crlfStillFine() throws {
        var p = HTTPRequestParser()
        for chunk in ["\r", "\n\r\nGET /a HTTP/1.1\r", "\nHost: x\r", "\n", "\r", "\n"] {
            p.append(Array(chunk.utf8))
            if case .request(let r) = try p.parseStep() {
                #expect(r.path == "/a")
                return
            }
        }
        Issue.record("no request")
    }

    // MARK: Half-close (sans-I/O)

    @Test("a client that half-closes after a complete request gets its answer, then the close")
    func halfCloseAfterRequest() {
        var m = HTTPServerConnection(now: t0)
        let a = m.outputs(after: .received(Array("GET /health HTTP/1.1\r\nHost: x\r\n\r\n".utf8)[...]), now: t0)
        #expect(a.count == 1)
        #expect(m.outputs(after: .peerFinishedSending, now: t0) == [])
        #expect(!m.isClosed)
        let answer = m.outputs(after: .respond(HTTPResponse.json(200, Array("{}".utf8))), now: t0)
        #expect(sends(answer).hasPrefix("HTTP/1.1 200"))
        #expect(answer.last == .close)
        #expect(m.nextDeadline == nil)
        #expect(m.isClosed)
    }

    @Test("two pipelined requests then a half-close: both answered, then the close")
    func halfClosePipelined() {
        var m = HTTPServerConnection(now: t0)
        let get = Array("GET /health HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        _ = m.outputs(after: .received((get + get)[...]), now: t0)
        _ = m.outputs(after: .peerFinishedSending, now: t0)
        let first = m.outputs(after: .respond(HTTPResponse(status: 204)), now: t0)
        #expect(first.contains { if case .dispatch = $0 { true } else { false } })
        #expect(first.last != .close)
        let second = m.outputs(after: .respond(HTTPResponse(status: 204)), now: t0)
        #expect(second.last == .close)
    }

    @Test("a half-close in the middle of a request closes at once: it can never complete")
    func halfCloseMidRequest() {
        var m = HTTPServerConnection(now: t0)
        _ = m.outputs(after: .received(Array("GET /health HTTP/1.1\r\nHo".utf8)[...]), now: t0)
        #expect(m.outputs(after: .peerFinishedSending, now: t0) == [.close])
        #expect(m.isClosed)
    }

    // MARK: Admission (pure, manual clock)

    func held(_ id: UInt64, _ address: String, idle: Instant?) -> ConnectionAdmission.Held {
        ConnectionAdmission.Held(id: id, address: try! IPAddress(parsing: address), idleSince: idle)
    }

    @Test("full: the longest-idle connection makes room; busy ones never do; none idle long enough → 503")
    func admissionAtTheLimit() throws {
        var limits = ConnectionAdmission.Limits()
        limits.maxConnections = 3
        limits.evictableAfterIdle = .seconds(2)
        func decide(_ newcomer: IPAddress, _ held: [ConnectionAdmission.Held],
                    _ now: Instant) -> ConnectionAdmission.Decision {
            var admission = ConnectionAdmission(limits: limits, holding: held)
            return admission.decide(newcomer: newcomer, now: now)
        }
        let now = t0 + .seconds(100)
        let newcomer = try IPAddress(parsing: "10.0.0.9")
        let some = [held(1, "10.0.0.1", idle: t0 + .seconds(50)), held(2, "10.0.0.2", idle: nil),
                    held(3, "10.0.0.3", idle: t0 + .seconds(10))]
        #expect(decide(newcomer, Array(some.prefix(2)), now) == .admit)
        #expect(decide(newcomer, some, now) == .admitEvicting(3))
        let busy = [held(1, "10.0.0.1", idle: nil), held(2, "10.0.0.2", idle: nil),
                    held(3, "10.0.0.3", idle: now - .seconds(1))]
        guard case .refuse(let reason) = decide(newcomer, busy, now) else {
            Issue.record("admitted with nothing evictable"); return
        }
        #expect(reason.contains("too many connections (3)"))
        // A second later the idle one has waited long enough.
        #expect(decide(newcomer, busy, now + .seconds(1)) == .admitEvicting(3))
    }

    @Test("per address: past the cap an address's own idle connection makes room, else 503; others are admitted")
    func admissionPerAddress() throws {
        var limits = ConnectionAdmission.Limits()
        limits.maxConnections = 100
        limits.maxPerAddress = 2
        limits.evictableAfterIdle = .zero
        func decide(_ newcomer: IPAddress, _ held: [ConnectionAdmission.Held],
                    _ now: Instant) -> ConnectionAdmission.Decision {
            var admission = ConnectionAdmission(limits: limits, holding: held)
            return admission.decide(newcomer: newcomer, now: now)
        }
        let greedy = try IPAddress(parsing: "10.0.0.1")
        let busy = [held(1, "10.0.0.1", idle: nil), held(2, "10.0.0.1", idle: nil), held(3, "10.0.0.2", idle: t0)]
        guard case .refuse(let reason) = decide(greedy, busy, t0) else {
            Issue.record("greedy address admitted"); return
        }
        #expect(reason.contains("from 10.0.0.1 (2)"))
        #expect(decide(try IPAddress(parsing: "10.0.0.3"), busy, t0) == .admit)
        let oneIdle = [held(1, "10.0.0.1", idle: nil), held(2, "10.0.0.1", idle: t0), held(3, "10.0.0.2", idle: t0)]
        #expect(decide(greedy, oneIdle, t0) == .admitEvicting(2))
    }

    @Test("a decision looks at as many held connections at 10,000 as at 10 (work counted, not timed)")
    func admissionCostIsFlat() throws {
        /// Held connections looked at per newcomer while `held` connections fill the daemon: all but
        /// ten are push streams (never idle), ten serve requests, and every round one of them goes
        /// idle, a newcomer evicts the longest idle, and the newcomer sends a request.
        func examinedPerNewcomer(held: Int) throws -> Double {
            var limits = ConnectionAdmission.Limits()
            limits.maxConnections = held
            limits.maxPerAddress = 256
            limits.evictableAfterIdle = .seconds(1)
            var admission = ConnectionAdmission(limits: limits)
            func address(_ id: UInt64) throws -> IPAddress {
                try IPAddress(parsing: "10.\(id / 65_536 % 256).\(id / 256 % 256).\(id % 256)")
            }
            var now = t0
            for id in 0..<UInt64(held) {
                admission.opened(.init(id: id, address: try address(id), idleSince: id < 10 ? now : nil))
            }
            var requestConnections = Array(0..<UInt64(min(10, held)))
            var next = UInt64(held)
            let rounds = 2000
            for round in 0..<rounds {
                now = now + .milliseconds(200)
                let busy = requestConnections[round % requestConnections.count]
                admission.update(busy, idleSince: nil)
                admission.update(busy, idleSince: now)
                guard case .admitEvicting(let victim) = admission.decide(newcomer: try address(next), now: now) else {
                    continue
                }
                admission.closed(victim)
                admission.opened(.init(id: next, address: try address(next), idleSince: now))
                admission.update(next, idleSince: nil)
                requestConnections.removeAll { $0 == victim }
                requestConnections.append(next)
                next += 1
            }
            return Double(admission.examined) / Double(rounds)
        }
        let few = try examinedPerNewcomer(held: 10)
        let many = try examinedPerNewcomer(held: 10_000)
        #expect(few > 0)
        #expect(many <= few * 1.5 + 1, "\(many) connections looked at per newcomer at 10,000 held, \(few) at 10")
    }

    // MARK: A real daemon

    final class Running: Sendable {
        let daemon: StoreDaemon
        let store: EmbeddedStore

        init(configure: (inout StoreDaemon.Options) -> Void) throws {
            store = try EmbeddedStore(options: .inMemoryForTests)
            var options = StoreDaemon.Options(listen: try Endpoint(parsing: "127.0.0.1:0"))
            configure(&options)
            daemon = try StoreDaemon(api: StoreAPI(store: store, users: try UserRegistry(directory: nil),
                                                   allowRegister: false), options: options)
            try daemon.start()
        }

        deinit { daemon.stop(); store.close() }

        func connect() throws -> Int32 {
            let fd = try TCPSocket.connectBlocking(to: daemon.endpoint)
            TCPSocket.setReceiveTimeout(fd, milliseconds: 5000)
            return fd
        }
    }

    static func send(_ fd: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Reads until the daemon closes (or the 5 s receive timeout): the whole reply, and whether it closed.
    static func readToEnd(_ fd: Int32) -> (String, closed: Bool) {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { return (String(decoding: out, as: UTF8.self), true) }
            if n < 0 { return (String(decoding: out, as: UTF8.self), false) }
            out += buffer[0..<n]
        }
    }

    /// Reads one response to a request that keeps the connection open (its head says how long it is).
    static func readResponse(_ fd: Int32) -> String {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let text = String(decoding: out, as: UTF8.self)
            if let head = text.range(of: "\r\n\r\n"),
               let length = text.range(of: #"Content-Length: (\d+)"#, options: .regularExpression)
                .flatMap({ Int(text[$0].split(separator: " ")[1]) }),
               out.count - text.utf8.distance(from: text.startIndex, to: head.upperBound) >= length {
                return text
            }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return text }
            out += buffer[0..<n]
        }
    }

    @Test("real socket: bare-LF framing is answered 400 and closed at once")
    func bareLFOnASocket() throws {
        let running = try Running { _ in }
        let fd = try running.connect()
        defer { close(fd) }
        let watch = Stopwatch()
        Self.send(fd, "GET /health HTTP/1.1\nHost: x\n\n")
        let (reply, closed) = Self.readToEnd(fd)
        #expect(reply.hasPrefix("HTTP/1.1 400"), "\(reply)")
        #expect(closed)
        #expect(watch.elapsed < .seconds(5))
    }

    @Test("real socket: a request then shutdown(SHUT_WR) still gets its answer, then the close")
    func halfCloseOnASocket() throws {
        let running = try Running { _ in }
        for _ in 0..<20 {
            let fd = try running.connect()
            Self.send(fd, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            shutdown(fd, Int32(SHUT_WR))
            let (reply, closed) = Self.readToEnd(fd)
            close(fd)
            #expect(reply.hasPrefix("HTTP/1.1 200") && reply.contains(#""status":"ok""#), "\(reply)")
            #expect(closed)
        }
    }

    @Test("real socket: with every slot held by idle keep-alive connections, a newcomer evicts the oldest")
    func evictionOnASocket() throws {
        let running = try Running {
            $0.maxConnections = 4
            $0.evictableAfterIdle = .zero
        }
        var idle: [Int32] = []
        for _ in 0..<4 {
            let fd = try running.connect()
            Self.send(fd, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(Self.readResponse(fd).hasPrefix("HTTP/1.1 200"))
            idle.append(fd)
        }
        defer { for fd in idle { close(fd) } }
        let newcomer = try running.connect()
        defer { close(newcomer) }
        Self.send(newcomer, "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let (reply, _) = Self.readToEnd(newcomer)
        #expect(reply.hasPrefix("HTTP/1.1 200"), "\(reply)")
        // The oldest was closed by the daemon: reading it gives the end of the stream.
        let (rest, closed) = Self.readToEnd(idle[0])
        #expect(rest.isEmpty && closed)
    }

    @Test("real socket: one address past its cap with nothing idle gets 503")
    func perAddressCapOnASocket() throws {
        let running = try Running {
            $0.maxConnectionsPerAddress = 2
            $0.evictableAfterIdle = .seconds(3600)
        }
        var held: [Int32] = []
        for _ in 0..<2 {
            let fd = try running.connect()
            Self.send(fd, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(Self.readResponse(fd).hasPrefix("HTTP/1.1 200"))
            held.append(fd)
        }
        defer { for fd in held { close(fd) } }
        let third = try running.connect()
        defer { close(third) }
        // Nothing sent: the refusal comes unasked (bytes left unread at the close would reset it).
        let (reply, _) = Self.readToEnd(third)
        #expect(reply.hasPrefix("HTTP/1.1 503") && reply.contains("from 127.0.0.1 (2)"), "\(reply)")
    }
}
