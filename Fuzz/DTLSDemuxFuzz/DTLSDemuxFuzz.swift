// libFuzzer entry point for what a remote can send to a DTLS-SRTP port: the RFC 7983 split of
// `SecureMediaTransport` and everything behind it — the DTLS machine and OpenSSL's record and
// handshake parsing (as server, as a client awaiting its answer, and on a connected association),
// SRTP/SRTCP unprotection. The input is a run of datagrams, each a 2-byte big-endian length and its
// bytes; a length byte pair of FF FF instead moves the clock by a second and fires the timers.
// A trap is a bug; so is garbage that ends a connected association or gets media delivered.
//
// Needs the trait's code and libraries: see `flags` beside this file. Built by Fuzz/run-fuzz.sh.

import DTLS
import ZoneCore

/// The certificates and the long-lived connected pair, made once (handshaking is slow for a fuzzer).
private final class Fixture: @unchecked Sendable {
    let clientCertificate = try! DTLSCertificate(commonName: "fuzz client", validity: .seconds(86_400))
    let serverCertificate = try! DTLSCertificate(commonName: "fuzz server", validity: .seconds(86_400))
    let connected: SecureMediaTransport

    init() {
        let client = try! SecureMediaTransport(configuration: DTLSTransportConfiguration(
            role: .client, certificate: clientCertificate, remoteFingerprint: serverCertificate.fingerprint))
        connected = try! SecureMediaTransport(configuration: DTLSTransportConfiguration(
            role: .server, certificate: serverCertificate, remoteFingerprint: clientCertificate.fingerprint))
        let now = Instant.seconds(1)
        connected.handle(.start, now: now)
        client.handle(.start, now: now)
        var moved = true
        while moved {
            moved = false
            while let output = client.pollOutput() {
                moved = true
                if case .transmit(let datagram) = output { connected.handle(.received(datagram), now: now) }
            }
            while let output = connected.pollOutput() {
                moved = true
                if case .transmit(let datagram) = output { client.handle(.received(datagram), now: now) }
            }
        }
        guard case .connected = connected.dtls.state else { fatalError("fuzz fixture did not connect") }
    }

    func fresh(_ role: DTLSRole) -> SecureMediaTransport {
        let ours = role == .server ? serverCertificate : clientCertificate
        let theirs = role == .server ? clientCertificate : serverCertificate
        return try! SecureMediaTransport(configuration: DTLSTransportConfiguration(
            role: role, certificate: ours, remoteFingerprint: theirs.fingerprint))
    }
}

nonisolated(unsafe) private let fixture = Fixture()
nonisolated(unsafe) private var clock = Instant.seconds(1)

@_cdecl("LLVMFuzzerTestOneInput")
public func dtlsDemuxFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: data, count: size))
    let server = fixture.fresh(.server)
    let client = fixture.fresh(.client)
    client.handle(.start, now: clock)
    var index = 0
    while index + 2 <= bytes.count {
        let length = Int(bytes[index]) << 8 | Int(bytes[index + 1])
        index += 2
        if length == 0xFFFF {
            clock += .seconds(1)
            for transport in [server, client, fixture.connected] { transport.handle(.timer, now: clock) }
        } else {
            let datagram = Array(bytes[index..<min(index + length, bytes.count)])
            index += datagram.count
            for transport in [server, client, fixture.connected] { transport.handle(.received(datagram), now: clock) }
        }
        for transport in [server, client, fixture.connected] {
            while let output = transport.pollOutput() {
                switch output {
                case .rtp, .rtcp:
                    // Nothing unauthenticated may reach the media.
                    preconditionFailure("media delivered from fuzzed bytes: \(output)")
                case .transmit, .stun, .connected, .failed, .closed:
                    break
                }
            }
        }
        precondition(fixture.connected.dtls.state != .closed, "fuzzed bytes closed a connected association")
        if case .failed(let failure) = fixture.connected.dtls.state {
            preconditionFailure("fuzzed bytes failed a connected association: \(failure)")
        }
    }
    return 0
}
