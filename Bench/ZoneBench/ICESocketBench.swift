// ICE connect time over real loopback UDP sockets: two ICETransports in one process, their
// credentials and candidates handed over directly (no signaling), one thread polling both
// sockets. Measured from the agents' creation to both having a selected pair — what aioice's
// `Connection.connect()` measures in Bench/ice-connect/aioice_connect.py.
import Foundation
import ICE
import Net
import Peer
import ZoneCore

enum ICESocketBench {
    static func run(json: Bool, connects: Int = BenchRun.count(200)) {
        var samples: [Double] = []
        var failures = 0
        for i in 0..<connects {
            if let ms = connectOnce(seed: UInt64(i + 1)) { samples.append(ms) } else { failures += 1 }
        }
        samples.sort()
        func pct(_ p: Double) -> Double { samples.isEmpty ? .nan : samples[min(samples.count - 1, Int(p * Double(samples.count)))] }
        if json {
            print(#"{"suite":"ice-udp","connects":\#(connects),"failures":\#(failures),"p50Ms":\#(pct(0.5)),"p90Ms":\#(pct(0.9)),"p99Ms":\#(pct(0.99))}"#)
        } else {
            print(String(format: "ice-udp: %d connects over loopback UDP, ICE connect p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, %d failed",
                         connects, pct(0.5), pct(0.9), pct(0.99), failures))
        }
    }

    static func connectOnce(seed: UInt64) -> Double? {
        guard let sa = try? UDPSocket(bind: Endpoint(address: .loopbackV4, port: 0)),
              let sb = try? UDPSocket(bind: Endpoint(address: .loopbackV4, port: 0)) else { return nil }
        let clock = WallClock()
        var random = SeededRandom(seed: seed)
        let ca = Credentials.random(using: &random), cb = Credentials.random(using: &random)
        let start = clock.now()
        func transport(_ socket: UDPSocket, _ role: Role, _ c: Credentials, _ s: UInt64) -> ICETransport? {
            var agent = AgentConfiguration(hostAddresses: [socket.localEndpoint], role: role, credentials: c, seed: s)
            agent.pacing = .milliseconds(5)
            return try? ICETransport(configuration: .init(agent: agent), now: start)
        }
        guard var a = transport(sa, .controlling, ca, seed), var b = transport(sb, .controlled, cb, seed &+ 99)
        else { return nil }
        try? a.setRemoteCredentials(cb)
        try? b.setRemoteCredentials(ca)
        var done = [false, false]
        let sockets = [sa, sb]
        let deadline = start + .seconds(5)
        while !(done[0] && done[1]) {
            let now = clock.now()
            if now > deadline { return nil }
            // Outputs: transmits to the socket, candidates straight to the other agent.
            var candidatesForB: [Candidate] = [], candidatesForA: [Candidate] = []
            while let out = a.pollOutput() {
                switch out {
                case .transmit(let bytes, _, let to): _ = sa.send(bytes, to: to)
                case .event(.localCandidate(let c)): candidatesForB.append(.remote(kind: c.kind, address: c.address, priority: c.priority, foundation: c.foundation))
                case .event(.selectedPair): done[0] = true
                case .event: break
                }
            }
            while let out = b.pollOutput() {
                switch out {
                case .transmit(let bytes, _, let to): _ = sb.send(bytes, to: to)
                case .event(.localCandidate(let c)): candidatesForA.append(.remote(kind: c.kind, address: c.address, priority: c.priority, foundation: c.foundation))
                case .event(.selectedPair): done[1] = true
                case .event: break
                }
            }
            for c in candidatesForB { b.addRemoteCandidate(c) }
            for c in candidatesForA { a.addRemoteCandidate(c) }
            if !candidatesForA.isEmpty || !candidatesForB.isEmpty { continue }
            if done[0] && done[1] { break }
            // Wait for a datagram or the next deadline.
            let next = [a.nextDeadline, b.nextDeadline].compactMap { $0 }.min() ?? now + .milliseconds(10)
            let waitMs = Int32(clamping: max(0, (next - now).nanoseconds / 1_000_000))
            var fds = sockets.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            _ = poll(&fds, 2, waitMs)
            let t = clock.now()
            for (index, socket) in sockets.enumerated() where fds[index].revents != 0 {
                var batch: [([UInt8], Endpoint)] = []
                _ = socket.receiveAll { buffer, from in batch.append((Array(buffer), from)) }
                for (bytes, from) in batch {
                    if index == 0 { a.handle(.datagram(bytes, from: from, to: sa.localEndpoint), now: t) }
                    else { b.handle(.datagram(bytes, from: from, to: sb.localEndpoint), now: t) }
                }
            }
            if let d = a.nextDeadline, d <= t { a.handle(.timer, now: t) }
            if let d = b.nextDeadline, d <= t { b.handle(.timer, now: t) }
        }
        return (clock.now() - start).milliseconds
    }
}
