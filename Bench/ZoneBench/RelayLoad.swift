// relay-load: a paced TURN load for finding the highest rate a relay forwards without loss.
//
// It allocates N allocations on a TURN server (long-term credentials, RFC 8656 §7), binds one
// channel each to a UDP socket of its own (the peer), then sends ChannelData at a fixed total
// rate for a fixed time, round robin over the allocations, and counts what reaches the peer.
// One direction (client → relay → peer), datagrams of --size bytes of application data, so the
// figure sits beside `iperf3 -u -l SIZE` on the same loopback. Each datagram carries the
// monotonic time it was sent at (its first 8 bytes of application data), so the peer also
// measures how long the relay held it: p50 and p99 of send → arrival. Prints one line (or JSON).
//
//   zonertc-bench relay-load --server 127.0.0.1:3478 [--user u --password p --realm r]
//                            [--allocations 10] [--rate 50000] [--seconds 3] [--size 1200] [--json]
import Foundation
import Net
import STUN
import Synchronization
import ZoneCore

enum RelayLoad {
    struct Failure: Error, CustomStringConvertible { var description: String }

    static func run(_ arguments: [String]) -> Int32 {
        func value(_ flag: String, _ fallback: String) -> String {
            guard let i = arguments.firstIndex(of: flag), i + 1 < arguments.count else { return fallback }
            return arguments[i + 1]
        }
        do {
            let server = try Endpoint(parsing: value("--server", "127.0.0.1:3478"))
            let user = value("--user", "u"), password = value("--password", "p"), realm = value("--realm", "r")
            guard let count = Int(value("--allocations", "10")), (1...1000).contains(count),
                  let rate = Double(value("--rate", "50000")), rate > 0,
                  let seconds = Double(value("--seconds", "3")), seconds > 0, seconds <= 60,
                  let size = Int(value("--size", "1200")), (8...1400).contains(size) else {
                throw Failure(description: "bad --allocations (1-1000), --rate, --seconds (<= 60) or --size (8-1400)")
            }
            let peer = try UDPSocket(bind: try Endpoint(parsing: "127.0.0.1:0"), batch: 64)
            var clients: [(socket: UDPSocket, frame: [UInt8])] = []
            for i in 0..<count {
                let socket = try UDPSocket(bind: try Endpoint(parsing: "127.0.0.1:0"))
                let channel = UInt16(0x4000 + i)
                try setUp(socket, server: server, user: user, password: password, realm: realm,
                          channel: channel, peer: peer.localEndpoint, seed: UInt64(i + 1))
                let payload = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ i) }
                clients.append((socket, try ChannelData(channel: channel, payload: payload).encode(padded: true)))
            }
            let result = blast(clients, server: server, peer: peer, rate: rate, seconds: seconds)
            for (i, c) in clients.enumerated() {
                _ = try? request(c.socket, server: server, .refresh, [.lifetime(seconds: 0)], user: user,
                                 password: password, realm: realm, nonce: nonces[UInt64(i + 1)], seed: UInt64(1000 + i))
            }
            let lost = result.sent - result.received
            let p50 = Double(result.latency.percentile(50).nanoseconds) / 1000
            let p99 = Double(result.latency.percentile(99).nanoseconds) / 1000
            let line = String(format: "relay-load: %d allocations, %d-byte datagrams, target %.0f/s: sent %d in %.2f s "
                                + "(%.0f/s), received %d, lost %d (%.3f%%); send → arrival p50 %.0f µs, p99 %.0f µs",
                              count, size, rate, result.sent, result.seconds, Double(result.sent) / result.seconds,
                              result.received, lost, result.sent > 0 ? 100 * Double(lost) / Double(result.sent) : 0,
                              p50, p99)
            if arguments.contains("--json") {
                print("{\"target\":\(Int(rate)),\"sent\":\(result.sent),\"received\":\(result.received),"
                      + "\"seconds\":\(result.seconds),\"achieved\":\(Int(Double(result.sent) / result.seconds)),"
                      + "\"latencyP50Us\":\(Int(p50)),\"latencyP99Us\":\(Int(p99))}")
            } else {
                print(line)
            }
            return 0
        } catch {
            FileHandle.standardError.write(Data("relay-load: \(error)\n".utf8))
            return 1
        }
    }

    /// The nonce each allocation was granted with, by seed.
    nonisolated(unsafe) static var nonces: [UInt64: String] = [:]

    /// Allocate (after the 401 challenge) and bind `channel` to `peer`.
    static func setUp(_ socket: UDPSocket, server: Endpoint, user: String, password: String, realm: String,
                      channel: UInt16, peer: Endpoint, seed: UInt64) throws {
        let challenge = try request(socket, server: server, .allocate, [.requestedTransport(protocolNumber: 17)],
                                    user: user, password: password, realm: realm, nonce: nil, seed: seed)
        guard let nonce = challenge.nonce else { throw Failure(description: "no nonce in the Allocate challenge") }
        nonces[seed] = nonce
        let allocated = try request(socket, server: server, .allocate, [.requestedTransport(protocolNumber: 17)],
                                    user: user, password: password, realm: realm, nonce: nonce, seed: seed)
        guard allocated.xorRelayedAddress != nil else {
            let why = allocated.errorCode.map { "\($0.code) \($0.reason)" } ?? "?"
            throw Failure(description: "Allocate refused: \(why)")
        }
        let bound = try request(socket, server: server, .channelBind, [.channelNumber(channel), .xorPeerAddress(peer)],
                                user: user, password: password, realm: realm, nonce: nonce, seed: seed)
        guard bound.messageClass == .successResponse else { throw Failure(description: "ChannelBind refused") }
    }

    static func request(_ socket: UDPSocket, server: Endpoint, _ method: STUNMethod, _ attributes: [STUNAttribute],
                        user: String, password: String, realm: String, nonce: String?,
                        seed: UInt64) throws -> STUNMessage {
        var rng = SeededRandom(seed: seed &* 0x9E37_79B9 &+ UInt64(method.rawValue))
        var all = attributes
        var key: STUNIntegrityKey?
        if let nonce {
            all += [.username(user), .realm(realm), .nonce(nonce)]
            key = try STUNIntegrityKey.longTerm(username: user, realm: realm, password: password)
        }
        let m = STUNMessage(method: method, messageClass: .request, transactionID: .random(using: &rng),
                            attributes: all)
        for _ in 0..<3 {
            socket.send(try m.encode(key: key, fingerprint: true), to: server)
            while let (bytes, _) = socket.receive(timeoutMilliseconds: 1000) {
                if let reply = try? STUNMessage(decoding: bytes), reply.transactionID == m.transactionID {
                    return reply
                }
            }
        }
        throw Failure(description: "no answer from \(server) to \(method)")
    }

    /// Sends at `rate` for `seconds` from the clients in turn while a thread counts arrivals at `peer`.
    static func blast(_ clients: [(socket: UDPSocket, frame: [UInt8])], server: Endpoint, peer: UDPSocket,
                      rate: Double, seconds: Double)
        -> (sent: Int, received: Int, seconds: Double, latency: LatencyHistogram) {
        let received = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) let peerSocket = peer
        nonisolated(unsafe) var latency = LatencyHistogram()  // the counter thread's until `done`
        let counter = Thread {
            while !stop.load(ordering: .relaxed) {
                if peerSocket.waitReadable(milliseconds: 20) {
                    let now = monotonicNanoseconds()
                    let n = peerSocket.receiveAll { payload, _ in
                        guard payload.count >= 8 else { return }
                        let sentAt = payload.loadUnaligned(as: UInt64.self)
                        latency.record(now >= sentAt ? now - sentAt : 0)
                    }
                    received.add(n, ordering: .relaxed)
                }
            }
            done.signal()
        }
        counter.start()
        let clock = ContinuousClock()
        let start = clock.now
        var sent = 0
        var next = 0
        var clients = clients
        let total = Int(rate * seconds)
        while sent < total {
            let elapsed = clock.now - start
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            let due = min(total, Int(rate * seconds))
            var owed = due - sent
            while owed > 0 {
                // Up to 64 datagrams from one client, then the next client.
                let n = min(owed, 64)
                // The send time goes in front of the application data (after ChannelData's 4 bytes).
                withUnsafeBytes(of: monotonicNanoseconds()) { clients[next].frame.replaceSubrange(4..<12, with: $0) }
                let c = clients[next]
                sent += c.socket.send(Array(repeating: (payload: c.frame, to: server), count: n))
                owed -= n
                next = (next + 1) % clients.count
            }
            usleep(200)
        }
        let sentAt = clock.now - start
        // Wait until arrivals stop (at most 2 s).
        var last = -1
        for _ in 0..<20 {
            usleep(100_000)
            let now = received.load(ordering: .relaxed)
            if now == last { break }
            last = now
        }
        stop.store(true, ordering: .relaxed)
        done.wait()
        let elapsed = Double(sentAt.components.seconds) + Double(sentAt.components.attoseconds) / 1e18
        return (sent, received.load(ordering: .relaxed), elapsed, latency)
    }

    /// CLOCK_MONOTONIC in nanoseconds: the sender and the peer are threads of this process.
    static func monotonicNanoseconds() -> UInt64 {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return UInt64(t.tv_sec) &* 1_000_000_000 &+ UInt64(t.tv_nsec)
    }
}
