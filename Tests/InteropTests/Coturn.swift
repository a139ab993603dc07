// coturn's turnserver on loopback for one test (flags from shared/INTEROP.md): a free listening
// port, a relay port range of its own, a temporary database and pid file; started, waited for
// until it answers a Binding request, and stopped by `stop()` or when released. Also
// turnutils_peer, coturn's UDP echo peer.

import Foundation
import Net
import STUN
import ZoneCore

final class Coturn: @unchecked Sendable {
    let server: Endpoint
    let relayPorts: ClosedRange<UInt16>
    let directory: String
    let process: ChildProcess
    static let user = "u", password = "p", realm = "r"

    init(extraArguments: [String] = []) throws {
        directory = try InteropFiles.temporaryDirectory("coturn")
        let port = try SocketWait.freePort()
        server = Endpoint(address: .loopbackV4, port: port)
        let base = UInt16(50_000 + Int.random(in: 0..<140) * 100)
        relayPorts = base...(base + 99)
        let arguments = [
            "turnserver", "-n", "--log-file=stdout", "--simple-log", "--listening-ip=127.0.0.1",
            "--relay-ip=127.0.0.1", "--listening-port=\(port)", "--min-port=\(relayPorts.lowerBound)",
            "--max-port=\(relayPorts.upperBound)", "-m", "1", "--lt-cred-mech",
            "--user=\(Coturn.user):\(Coturn.password)", "--realm=\(Coturn.realm)", "--fingerprint", "--no-tls",
            "--no-dtls", "--no-cli", "--allow-loopback-peers", "--db=\(directory)/turndb",
            "--pidfile=\(directory)/turnserver.pid",
        ] + extraArguments
        process = try ChildProcess(arguments, logPath: "\(directory)/turnserver.log")
        do { try waitUntilAnswering() } catch {
            process.stop()
            throw error
        }
    }

    deinit { stop() }

    func stop() {
        process.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Sends Binding requests until one is answered (200 ms per try, 10 s in all).
    private func waitUntilAnswering() throws {
        let socket = try UDPSocket(bind: Endpoint(address: .loopbackV4, port: 0))
        let clock = WallClock()
        let end = clock.now() + .seconds(10)
        var random = SystemRandomNumberGenerator()
        while clock.now() < end {
            if process.hasExited { throw InteropFailure("turnserver exited at start:\n\(process.logTail())") }
            let request = STUNMessage(method: .binding, messageClass: .request,
                                      transactionID: .random(using: &random))
            _ = socket.send(try request.encode(fingerprint: true), to: server)
            let (datagrams, _) = SocketWait.wait([socket], until: clock.now() + .milliseconds(200), clock: clock)
            let answered = datagrams.contains {
                (try? STUNMessage(decoding: $0.bytes))?.transactionID == request.transactionID
            }
            if answered {
                return
            }
        }
        throw InteropFailure("turnserver did not answer a Binding request within 10 s:\n\(process.logTail())")
    }
}

/// coturn's `turnutils_peer`: echoes every UDP datagram back to its sender.
final class EchoPeer: @unchecked Sendable {
    let address: Endpoint
    let process: ChildProcess
    private let directory: String

    init() throws {
        directory = try InteropFiles.temporaryDirectory("peer")
        address = Endpoint(address: .loopbackV4, port: try SocketWait.freePort())
        process = try ChildProcess(["turnutils_peer", "-L", "127.0.0.1", "-p", "\(address.port)"],
                                   logPath: "\(directory)/peer.log")
        // Wait until it echoes (200 ms per try, 10 s in all).
        let socket = try UDPSocket(bind: Endpoint(address: .loopbackV4, port: 0))
        let clock = WallClock()
        let end = clock.now() + .seconds(10)
        while clock.now() < end {
            _ = socket.send(Array("probe".utf8), to: address)
            let (datagrams, _) = SocketWait.wait([socket], until: clock.now() + .milliseconds(200), clock: clock)
            if datagrams.contains(where: { $0.bytes == Array("probe".utf8) }) { return }
        }
        process.stop()
        throw InteropFailure("turnutils_peer did not echo within 10 s:\n\(process.logTail())")
    }

    deinit {
        process.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
