#if WebRTC
import DTLS
import SDP
import TestNetwork
import ZoneCore

// Two DTLSTransports wired back to back on the tests' in-memory network (TestNetwork, an ideal
// link: no delay, no loss) on a manual clock: what one transmits reaches the other, unless a
// test's filter drops it. Time moves only when a test moves it.

/// A client and a server transport and the datagrams between them.
final class DTLSPair {
    let client: DTLSTransport
    let server: DTLSTransport
    var now = Instant.seconds(1_700_000_000)
    private let network: TestNetwork
    static let clientAddress = Endpoint(address: .loopbackV4, port: 40001)
    static let serverAddress = Endpoint(address: .loopbackV4, port: 40002)
    /// Every `.connected`, `.failed` and `.closed` seen, per side.
    var clientEvents: [DTLSTransport.Output] = []
    var serverEvents: [DTLSTransport.Output] = []
    /// Datagrams each side sent, in order.
    var clientSent: [[UInt8]] = []
    var serverSent: [[UInt8]] = []
    /// Decides whether a datagram reaches the other side (true: deliver).
    var deliver: (_ fromClient: Bool, _ datagram: [UInt8]) -> Bool = { _, _ in true }

    static let clientCertificate = try! DTLSCertificate(commonName: "client", validity: .seconds(86_400))
    static let serverCertificate = try! DTLSCertificate(commonName: "server", validity: .seconds(86_400))

    init(profiles: [SRTPProfile] = [.aeadAES128GCM, .aes128CMSHA1_80],
         clientExpects: DTLSFingerprint = DTLSPair.serverCertificate.fingerprint,
         serverExpects: DTLSFingerprint = DTLSPair.clientCertificate.fingerprint) throws {
        var clientConfiguration = DTLSTransportConfiguration(
            role: .client, certificate: DTLSPair.clientCertificate, remoteFingerprint: clientExpects)
        clientConfiguration.srtpProfiles = profiles
        let serverConfiguration = DTLSTransportConfiguration(
            role: .server, certificate: DTLSPair.serverCertificate, remoteFingerprint: serverExpects)
        client = try DTLSTransport(configuration: clientConfiguration)
        server = try DTLSTransport(configuration: serverConfiguration)
        network = TestNetwork(start: now, seed: 1)
    }

    /// Starts both sides and passes datagrams until neither has any to pass.
    func start() {
        server.handle(.start, now: now)
        client.handle(.start, now: now)
        settle()
    }

    /// Drains both sides, delivering datagrams (through the filter) until nothing moves.
    func settle() {
        network.advance(to: now)
        var moved = true
        var rounds = 0
        while moved && rounds < 1_000 {
            moved = false
            rounds += 1
            while let output = client.pollOutput() {
                moved = true
                if case .transmit(let datagram) = output {
                    clientSent.append(datagram)
                    if deliver(true, datagram) {
                        network.send(datagram, from: Self.clientAddress, to: Self.serverAddress)
                    }
                } else {
                    clientEvents.append(output)
                }
            }
            while let output = server.pollOutput() {
                moved = true
                if case .transmit(let datagram) = output {
                    serverSent.append(datagram)
                    if deliver(false, datagram) {
                        network.send(datagram, from: Self.serverAddress, to: Self.clientAddress)
                    }
                } else {
                    serverEvents.append(output)
                }
            }
            while let arrival = network.arrival(notAfter: now) {
                moved = true
                let side = arrival.to == Self.serverAddress ? server : client
                side.handle(.datagram(arrival.payload), now: now)
            }
        }
    }

    /// Moves the clock to the earliest deadline of either side and fires it; false if none.
    @discardableResult
    func fireNextDeadline() -> Bool {
        guard let next = Instant.earliest(client.nextDeadline, server.nextDeadline) else { return false }
        now = max(now, next)
        client.handle(.timer, now: now)
        server.handle(.timer, now: now)
        settle()
        return true
    }

    var bothConnected: Bool {
        if case .connected = client.state, case .connected = server.state { return true }
        return false
    }

    /// The keys each side reported.
    var clientKeys: SRTPKeyingMaterial? { DTLSPair.keys(in: clientEvents) }
    var serverKeys: SRTPKeyingMaterial? { DTLSPair.keys(in: serverEvents) }

    static func keys(in events: [DTLSTransport.Output]) -> SRTPKeyingMaterial? {
        for case .connected(_, let keys) in events { return keys }
        return nil
    }
}
#endif
