#if WebRTC
import DTLS
import Foundation
import Net
import SDP
import Testing
import TestSupport
import ZoneCore

// Our DTLSTransport against OpenSSL's own command-line DTLS endpoints on loopback UDP: `openssl
// s_server` (we are the client, `a=setup:active`) and `openssl s_client` (we are the server). The
// handshake must complete with the profile asked for, our check of their certificate must pass,
// and the keys we export must be the bytes openssl prints for `-keymatexport EXTRACTOR-dtls_srtp`
// (RFC 5764 §4.2). The transport is driven by a few lines of real-socket loop: it is the same
// sans-I/O machine, given the wall clock.

@Suite(.serialized) struct OpenSSLInteropTests {
    /// A P-256 certificate made by openssl for the openssl side, and its SDP fingerprint.
    struct Credentials {
        let directory: URL
        var certificate: String { directory.appendingPathComponent("cert.pem").path }
        var key: String { directory.appendingPathComponent("key.pem").path }
        let fingerprint: DTLSFingerprint
    }

    static func makeCredentials(openssl: String) throws -> Credentials {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("zonertc-dtls-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let keyPath = directory.appendingPathComponent("key.pem").path
        let certificatePath = directory.appendingPathComponent("cert.pem").path
        let request = try spawnWatched([openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                                        "-nodes", "-keyout", keyPath, "-out", certificatePath, "-days", "1",
                                        "-subj", "/CN=openssl"])
        try #require(request.wait(within: .seconds(30)) == 0, "openssl req: \(request.stderr)")
        let x509 = try spawnWatched([openssl, "x509", "-in", certificatePath, "-noout", "-fingerprint", "-sha256"])
        try #require(x509.wait(within: .seconds(30)) == 0, "openssl x509: \(x509.stderr)")
        // "sha256 Fingerprint=AB:CD:…"
        let hex = try #require(x509.stdout.split(separator: "=").last).trimmingCharacters(in: .whitespacesAndNewlines)
        let digest = try hex.split(separator: ":").map { try #require(UInt8($0, radix: 16)) }
        try #require(digest.count == 32, "openssl printed '\(hex)'")
        return Credentials(directory: directory,
                           fingerprint: DTLSFingerprint(hashFunction: "sha-256", digest: digest))
    }

    /// The hex openssl printed after "Keying material: ", upper-case.
    static func printedKeyingMaterial(_ text: String) -> String? {
        guard let range = text.range(of: "Keying material: ") else { return nil }
        let hex = text[range.upperBound...].prefix { $0.isHexDigit }
        return hex.isEmpty ? nil : hex.uppercased()
    }

    static func hex(_ bytes: [UInt8]) -> String {
        Hex.encode(bytes, uppercase: true)
    }

    /// Runs `transport` on `socket` with the wall clock until it connects or fails, or `limit`
    /// passes. `remote` is where to send; nil until the first datagram says (the server role).
    static func drive(_ transport: DTLSTransport, on socket: UDPSocket, remote: Endpoint?,
                      within limit: Duration) -> DTLSTransport.Output? {
        let clock = WallClock()
        let giveUp = clock.now() + limit
        var remote = remote
        transport.handle(.start, now: clock.now())
        while clock.now() < giveUp {
            while let output = transport.pollOutput() {
                switch output {
                case .transmit(let datagram):
                    if let remote { socket.send(datagram, to: remote) }
                case .connected, .failed, .closed:
                    return output
                }
            }
            let now = clock.now()
            if let deadline = transport.nextDeadline, deadline <= now {
                transport.handle(.timer, now: now)
                continue
            }
            let wake = Instant.earliest(transport.nextDeadline, giveUp) ?? giveUp
            let waitMilliseconds = Int32(clamping: max(1, (wake - now).nanoseconds / 1_000_000))
            if let (bytes, from) = socket.receive(timeoutMilliseconds: waitMilliseconds) {
                if remote == nil { remote = from }
                if from == remote { transport.handle(.datagram(bytes), now: clock.now()) }
            }
        }
        return nil
    }

    static let cases: [(SRTPProfile, DTLSRole)] = [
        (.aeadAES128GCM, .client), (.aes128CMSHA1_80, .client), (.aeadAES128GCM, .server), (.aes128CMSHA1_80, .server),
    ]

    @Test(arguments: OpenSSLInteropTests.cases)
    func handshakeWithOpenSSLAndTheSameKeys(profile: SRTPProfile, ourRole: DTLSRole) throws {
        guard ExternalProgram.runnable("openssl") else {
            print("skipped: openssl not installed (apt-get install openssl)")
            return
        }
        let openssl = try ExternalProgram.require("openssl", package: "openssl")
        let credentials = try OpenSSLInteropTests.makeCredentials(openssl: openssl)
        defer { try? FileManager.default.removeItem(at: credentials.directory) }
        let socket = try UDPSocket(bind: Endpoint(address: .loopbackV4, port: 0))
        let ours = try DTLSCertificate.forProcess()
        var configuration = DTLSTransportConfiguration(role: ourRole, certificate: ours,
                                                       remoteFingerprint: credentials.fingerprint)
        configuration.srtpProfiles = [profile]
        let transport = try DTLSTransport(configuration: configuration)
        let common = ["-dtls1_2", "-cert", credentials.certificate, "-key", credentials.key, "-use_srtp", profile.name,
                      "-keymatexport", SRTPKeyingMaterial.exporterLabel,
                      "-keymatexportlen", "\(profile.keyingMaterialLength)"]

        // s_server reads commands from stdin: give it a pipe that stays open until we are done.
        var input: [Int32] = [-1, -1]
        try #require(pipe(&input) == 0)
        defer { close(input[1]) }
        let child: ProcessWatch
        var remote: Endpoint?
        switch ourRole {
        case .client:
            child = try spawnWatched([openssl, "s_server", "-accept", "127.0.0.1:0"] + common, stdin: input[0])
            close(input[0])
            try #require(child.wait(within: .seconds(20)) { $0.stdout.contains("ACCEPT") },
                         "s_server did not start: \(child.stderr)")
            let accept = try #require(child.stdout.split(separator: "\n").first { $0.hasPrefix("ACCEPT") })
            remote = try Endpoint(parsing: String(accept.dropFirst("ACCEPT ".count)))
        case .server:
            close(input[0])
            child = try spawnWatched([openssl, "s_client", "-connect", "\(socket.localEndpoint)"] + common)
        }
        defer {
            // SIGKILL: a child spawned from a test thread may inherit a mask that blocks SIGTERM.
            kill(child.pid, SIGKILL)
            _ = child.wait(within: .seconds(10))
        }

        let outcome = OpenSSLInteropTests.drive(transport, on: socket, remote: remote, within: .seconds(15))
        guard case .connected(let negotiated, let keys) = outcome else {
            Issue.record("no handshake with openssl: \(String(describing: outcome)); stderr: \(child.stderr)")
            return
        }
        #expect(negotiated == profile)
        #expect(transport.remoteFingerprint == credentials.fingerprint)
        let printed = child.wait(within: .seconds(15)) { OpenSSLInteropTests.printedKeyingMaterial($0.stdout) != nil }
        try #require(printed, "openssl printed no keying material: \(child.stdout)\n\(child.stderr)")
        #expect(OpenSSLInteropTests.printedKeyingMaterial(child.stdout) == OpenSSLInteropTests.hex(keys.exported))
        #expect(child.stdout.contains("SRTP Extension negotiated, profile=\(profile.name)"))
    }
}
#endif
