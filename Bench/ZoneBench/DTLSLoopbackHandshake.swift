// The DTLS handshake on loopback UDP: two `DTLSTransport`s, each on its own thread and socket on
// 127.0.0.1 as two peers would be, so the figure includes the kernel's loopback, the system calls
// and waking the other side for each of the four flights — what a call adds to the in-memory
// handshake, without ICE or signaling. Every wait is bounded (the handshake's own 10 s bound, 200 ms
// per receive).
#if WebRTC
import DTLS
import Foundation
import Net
import ZoneCore

enum DTLSLoopbackHandshake {
    /// Wall nanoseconds from the client's start to both sides holding keys; nil if either failed.
    static func measure(client clientCertificate: DTLSCertificate, server serverCertificate: DTLSCertificate) -> UInt64? {
        guard let clientSocket = try? UDPSocket(bind: Endpoint(address: .loopbackV4, port: 0)),
              let serverSocket = try? UDPSocket(bind: Endpoint(address: .loopbackV4, port: 0)),
              let client = try? DTLSTransport(configuration: DTLSTransportConfiguration(
                  role: .client, certificate: clientCertificate, remoteFingerprint: serverCertificate.fingerprint)),
              let server = try? DTLSTransport(configuration: DTLSTransportConfiguration(
                  role: .server, certificate: serverCertificate, remoteFingerprint: clientCertificate.fingerprint))
        else { return nil }
        let clock = WallClock()
        let done = DispatchGroup()
        let results = Results()
        let start = Stopwatch.monotonicNanoseconds()
        for (transport, socket, peer) in [(server, serverSocket, clientSocket.localEndpoint),
                                          (client, clientSocket, serverSocket.localEndpoint)] {
            let side = Side(transport: transport, socket: socket, peer: peer)
            done.enter()
            Thread.detachNewThread {
                let ok = side.run(clock: clock)
                results.record(ok: ok, at: Stopwatch.monotonicNanoseconds())
                done.leave()
            }
        }
        guard done.wait(timeout: .now() + 15) == .success else { return nil }
        return results.allConnected(of: 2).map { $0 - start }
    }

    /// One side's loop; its transport and socket are used by its thread only.
    private final class Side: @unchecked Sendable {
        let transport: DTLSTransport
        let socket: UDPSocket
        let peer: Endpoint

        init(transport: DTLSTransport, socket: UDPSocket, peer: Endpoint) {
            self.transport = transport
            self.socket = socket
            self.peer = peer
        }

        /// True once connected; false on failure or the handshake's bound.
        func run(clock: WallClock) -> Bool {
            transport.handle(.start, now: clock.now())
            while true {
                while let output = transport.pollOutput() {
                    switch output {
                    case .transmit(let datagram): _ = socket.send(datagram, to: peer)
                    case .connected: return true
                    case .failed, .closed: return false
                    }
                }
                let now = clock.now()
                if let deadline = transport.nextDeadline, deadline <= now {
                    transport.handle(.timer, now: now)
                    continue
                }
                guard case .handshaking = transport.state else { return false }
                let wait = transport.nextDeadline.map { max(1, ($0 - now).nanoseconds / 1_000_000) } ?? 200
                if let (bytes, from) = socket.receive(timeoutMilliseconds: Int32(clamping: min(wait, 200))),
                   from == peer {
                    transport.handle(.datagram(bytes), now: clock.now())
                }
            }
        }
    }

    /// When each side finished, shared by the two threads.
    private final class Results: @unchecked Sendable {
        private let lock = NSLock()
        private var connected = 0
        private var last: UInt64 = 0

        func record(ok: Bool, at instant: UInt64) {
            lock.lock()
            defer { lock.unlock() }
            if ok { connected += 1 }
            last = max(last, instant)
        }

        func allConnected(of count: Int) -> UInt64? {
            lock.lock()
            defer { lock.unlock() }
            return connected == count ? last : nil
        }
    }
}
#endif
