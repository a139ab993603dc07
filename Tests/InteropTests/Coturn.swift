// coturn's turnserver on loopback for one test (flags from docs/INTEROP.md): a listening port free
// for UDP and TCP (coturn binds both), a relay port range of its own, a temporary database and pid
// file; started, waited for until it answers a Binding request, and stopped by `stop()` or when
// released. Also turnutils_peer, coturn's UDP echo peer.

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

    /// coturn's words when its listener cannot bind (it then retries forever instead of exiting).
    static let bindFailure = "Cannot bind"

    init(extraArguments: [String] = []) throws {
        // A port free a moment ago can be taken before coturn binds it (other tests and programs on
        // this machine open ports all the time). Retrying on another port after coturn reports a
        // failed *bind* is legitimate: nothing the test asserts has happened yet.
        var failures: [String] = []
        for _ in 0..<5 {
            let directory = try InteropFiles.temporaryDirectory("coturn")
            let port = try SocketWait.freeUDPAndTCPPort()
            let server = Endpoint(address: .loopbackV4, port: port)
            let base = UInt16(50_000 + Int.random(in: 0..<140) * 100)
            let relayPorts = base...(base + 99)
            let arguments = [
                "turnserver", "-n", "--log-file=stdout", "--simple-log", "--listening-ip=127.0.0.1",
                "--relay-ip=127.0.0.1", "--listening-port=\(port)", "--min-port=\(relayPorts.lowerBound)",
                "--max-port=\(relayPorts.upperBound)", "-m", "1", "--lt-cred-mech",
                "--user=\(Coturn.user):\(Coturn.password)", "--realm=\(Coturn.realm)", "--fingerprint", "--no-tls",
                "--no-dtls", "--no-cli", "--allow-loopback-peers", "--db=\(directory)/turndb",
                "--pidfile=\(directory)/turnserver.pid",
            ] + extraArguments
            let process = try ChildProcess(arguments, logPath: "\(directory)/turnserver.log")
            do {
                if try Coturn.waitUntilAnswering(process, server: server) {
                    self.server = server
                    self.relayPorts = relayPorts
                    self.directory = directory
                    self.process = process
                    return
                }
                failures.append("port \(port): \(process.logTail(4))")
            } catch {
                process.stop()
                try? FileManager.default.removeItem(atPath: directory)
                throw error
            }
            process.stop()
            try? FileManager.default.removeItem(atPath: directory)
        }
        throw InteropFailure("turnserver could not bind a listening port in 5 tries:\n"
                             + failures.joined(separator: "\n"))
    }

    deinit { stop() }

    func stop() {
        process.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Sends Binding requests until one is answered (200 ms per try, 10 s in all): true. False
    /// when coturn's log says its listener could not bind; throws when it exits or stays silent.
    private static func waitUntilAnswering(_ process: ChildProcess, server: Endpoint) throws -> Bool {
        let socket = try UDPSocket(bind: Endpoint(address: .loopbackV4, port: 0))
        let clock = WallClock()
        let end = clock.now() + .seconds(10)
        var random = SystemRandomNumberGenerator()
        while clock.now() < end {
            if process.log.contains(bindFailure) { return false }
            if process.hasExited { throw InteropFailure("turnserver exited at start:\n\(process.logTail())") }
            let request = STUNMessage(method: .binding, messageClass: .request,
                                      transactionID: .random(using: &random))
            _ = socket.send(try request.encode(fingerprint: true), to: server)
            let (datagrams, _) = SocketWait.wait([socket], until: clock.now() + .milliseconds(200), clock: clock)
            let answered = datagrams.contains {
                (try? STUNMessage(decoding: $0.bytes))?.transactionID == request.transactionID
            }
            if answered {
                return true
            }
        }
        if process.log.contains(bindFailure) { return false }
        throw InteropFailure("turnserver did not answer a Binding request within 10 s:\n\(process.logTail())")
    }
}

/// coturn's `turnutils_peer`: echoes every UDP datagram back to its sender.
final class EchoPeer: @unchecked Sendable {
    let address: Endpoint
    let process: ChildProcess
    private let directory: String

    init() throws {
        // turnutils_peer retries a failed bind forever: a port taken since it was found free is
        // seen in its log and another one tried (a retry of the bind only, as for coturn).
        var failures: [String] = []
        for _ in 0..<5 {
            let directory = try InteropFiles.temporaryDirectory("peer")
            let address = Endpoint(address: .loopbackV4, port: try SocketWait.freePort())
            let process = try ChildProcess(["turnutils_peer", "-L", "127.0.0.1", "-p", "\(address.port)"],
                                           logPath: "\(directory)/peer.log")
            if try EchoPeer.echoes(at: address, process) {
                self.address = address
                self.process = process
                self.directory = directory
                return
            }
            failures.append("port \(address.port): \(process.logTail(4))")
            process.stop()
            try? FileManager.default.removeItem(atPath: directory)
        }
        throw InteropFailure("turnutils_peer could not bind a port in 5 tries:\n" + failures.joined(separator: "\n"))
    }

    /// Waits until `address` echoes (200 ms per try, 10 s in all): true. False when the peer's log
    /// says its bind failed; throws when it exits or stays silent.
    private static func echoes(at address: Endpoint, _ process: ChildProcess) throws -> Bool {
        let socket = try UDPSocket(bind: Endpoint(address: .loopbackV4, port: 0))
        let clock = WallClock()
        let end = clock.now() + .seconds(10)
        while clock.now() < end {
            if process.log.contains("Address already in use") { return false }
            if process.hasExited { throw InteropFailure("turnutils_peer exited:\n\(process.logTail())") }
            _ = socket.send(Array("probe".utf8), to: address)
            let (datagrams, _) = SocketWait.wait([socket], until: clock.now() + .milliseconds(200), clock: clock)
            if datagrams.contains(where: { $0.bytes == Array("probe".utf8) }) { return true }
        }
        if process.log.contains("Address already in use") { return false }
        process.stop()
        throw InteropFailure("turnutils_peer did not echo within 10 s:\n\(process.logTail())")
    }

    deinit {
        process.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
