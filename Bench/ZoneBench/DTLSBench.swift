// DTLS-SRTP benchmarks (trait `WebRTC`): the DTLS 1.2 handshake between two DTLSTransports back to
// back in memory — the loopback path without the kernel — wall and CPU time per handshake from
// creating both machines to both holding SRTP keys (certificates made once, as per process); and
// SRTP protect + unprotect of a 1,200-byte RTP packet per profile, CPU time per pair. Every
// handshake's keys and every unprotected packet feed a checksum that is printed, so no work can
// be dropped.
import Foundation
#if WebRTC
import DTLS
#endif
import ZoneCore

enum DTLSBench {
    static func run(json: Bool) {
        #if WebRTC
        measureHandshakes(json: json)
        for profile in SRTPProfile.allCases { measureSRTP(profile, json: json) }
        #else
        print("dtls: this zonertc-bench was built without the WebRTC trait (swift build -c release --traits WebRTC)")
        #endif
    }

    #if WebRTC
    private static func measureHandshakes(json: Bool) {
        let clientCertificate = try! DTLSCertificate(commonName: "bench client", validity: .seconds(86_400))
        let serverCertificate = try! DTLSCertificate(commonName: "bench server", validity: .seconds(86_400))
        var checksum: UInt64 = 0
        var datagrams = 0

        func handshake() -> (wall: UInt64, cpu: UInt64) {
            let wallStart = Stopwatch.monotonicNanoseconds()
            let cpuStart = threadCPUNanoseconds()
            let client = try! DTLSTransport(configuration: DTLSTransportConfiguration(
                role: .client, certificate: clientCertificate, remoteFingerprint: serverCertificate.fingerprint))
            let server = try! DTLSTransport(configuration: DTLSTransportConfiguration(
                role: .server, certificate: serverCertificate, remoteFingerprint: clientCertificate.fingerprint))
            let now = Instant.seconds(1)
            server.handle(.start, now: now)
            client.handle(.start, now: now)
            var connected = 0
            var moved = true
            while moved {
                moved = false
                for (from, to) in [(client, server), (server, client)] {
                    while let output = from.pollOutput() {
                        moved = true
                        switch output {
                        case .transmit(let datagram):
                            datagrams += 1
                            to.handle(.datagram(datagram), now: now)
                        case .connected(_, let keys):
                            connected += 1
                            checksum = checksum &* 31 &+ UInt64(keys.exported[0]) &+ UInt64(keys.exported[55])
                        case .failed(let failure):
                            fatalError("dtls bench: \(failure)")
                        case .closed:
                            fatalError("dtls bench: closed")
                        }
                    }
                }
            }
            precondition(connected == 2, "dtls bench: the handshake stalled")
            return (Stopwatch.monotonicNanoseconds() - wallStart, threadCPUNanoseconds() - cpuStart)
        }

        // The first handshake of the process, as a call's peer does it: OpenSSL's first context, first
        // provider fetches, first ECDH and signatures.
        let cold = handshake()
        for _ in 0..<BenchRun.count(20) { _ = handshake() }  // warm-up
        datagrams = 0
        let count = BenchRun.count(300)
        var walls: [UInt64] = []
        var cpuTotal: UInt64 = 0
        for _ in 0..<count {
            let (wall, cpu) = handshake()
            walls.append(wall)
            cpuTotal += cpu
        }
        walls.sort()
        // The same on loopback UDP, a thread and a socket per side.
        var loopback: [UInt64] = []
        for _ in 0..<BenchRun.count(100) {
            guard let wall = DTLSLoopbackHandshake.measure(client: clientCertificate, server: serverCertificate) else {
                fatalError("dtls bench: a loopback handshake failed")
            }
            loopback.append(wall)
        }
        loopback.sort()
        let loopbackP50 = Double(loopback[loopback.count / 2]) / 1e6
        let loopbackP99 = Double(loopback[loopback.count * 99 / 100]) / 1e6
        let p50 = Double(walls[count / 2]) / 1e6
        let p99 = Double(walls[count * 99 / 100]) / 1e6
        let cpuMean = Double(cpuTotal) / Double(count) / 1e6
        let perHandshake = Double(datagrams) / Double(count)
        if json {
            print("{\"bench\":\"dtls_handshake_memory\",\"handshakes\":\(count),\"p50_ms\":\(f(p50, 3)),"
                + "\"p99_ms\":\(f(p99, 3)),\"first_in_process_ms\":\(f(Double(cold.wall) / 1e6, 3)),"
                + "\"cpu_ms_mean\":\(f(cpuMean, 3)),\"datagrams\":\(f(perHandshake, 1)),"
                + "\"loopback_p50_ms\":\(f(loopbackP50, 3)),\"loopback_p99_ms\":\(f(loopbackP99, 3)),"
                + "\"checksum\":\"\(String(checksum, radix: 16))\"}")
        } else {
            print("dtls (release build expected; one core; two DTLSTransports back to back in memory, ECDSA P-256)")
            print("  handshake to SRTP keys on both sides: p50 \(f(p50, 3)) ms, p99 \(f(p99, 3)) ms wall, "
                + "\(f(cpuMean, 3)) ms CPU mean (\(count) handshakes, \(f(perHandshake, 1)) datagrams each; "
                + "goal p50 ≤ 5 ms); checksum \(String(checksum, radix: 16))")
            print("  on loopback UDP, a thread and a socket per side: p50 \(f(loopbackP50, 3)) ms, "
                + "p99 \(f(loopbackP99, 3)) ms wall (\(loopback.count) handshakes)")
            print("  the process's first handshake (cold OpenSSL): \(f(Double(cold.wall) / 1e6, 3)) ms wall, "
                + "\(f(Double(cold.cpu) / 1e6, 3)) ms CPU")
        }
    }

    private static func measureSRTP(_ profile: SRTPProfile, json: Bool) {
        // Fixed keys: the cost of SRTP does not depend on where they came from.
        let exported = (0..<profile.keyingMaterialLength).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        let sender = try! SRTPSession(keys: SRTPKeyingMaterial(profile: profile, exported: exported, role: .client)!)
        let receiver = try! SRTPSession(keys: SRTPKeyingMaterial(profile: profile, exported: exported, role: .server)!)
        var random = SeededRandom(seed: 0x5127_9000)
        var plain: [UInt8] = [0x80, 96, 0, 0, 0, 0, 0, 0, 0xCA, 0xFE, 0xBA, 0xBE]
        while plain.count < 1_200 { plain.append(UInt8(truncatingIfNeeded: random.next())) }
        var packet: [UInt8] = []
        packet.reserveCapacity(1_400)
        var checksum: UInt64 = 0
        var sequence: UInt32 = 0

        func pairs(_ count: Int) {
            for _ in 0..<count {
                sequence &+= 1
                packet.removeAll(keepingCapacity: true)
                packet.append(contentsOf: plain)
                packet[2] = UInt8(truncatingIfNeeded: sequence >> 8)
                packet[3] = UInt8(truncatingIfNeeded: sequence)
                guard sender.protectRTP(&packet), receiver.unprotectRTP(&packet) else {
                    fatalError("srtp bench: a packet did not survive (\(receiver.counters))")
                }
                checksum = checksum &* 31 &+ UInt64(packet[12 + Int(sequence % 1_000)])
            }
        }

        pairs(BenchRun.count(10_000))  // warm-up
        let count = BenchRun.count(400_000)
        let start = threadCPUNanoseconds()
        pairs(count)
        let nanoseconds = Double(threadCPUNanoseconds() - start) / Double(count)
        // The anchors, in the same run: libsrtp2 alone on a C buffer, and (GCM) OpenSSL's AES-GCM alone.
        let libsrtp = SRTPAnchors.libsrtpNanoseconds(profile, packets: count, cpuClock: threadCPUNanoseconds)
        let floor = profile == .aeadAES128GCM
            ? SRTPAnchors.openSSLGCMNanoseconds(packets: count, cpuClock: threadCPUNanoseconds) : nil
        checksum = checksum &+ libsrtp.checksum &+ (floor?.checksum ?? 0)
        let backend = "\(SRTPAnchors.libsrtpVersion) on \(SRTPAnchors.libsrtpBackend())"
        if json {
            print("{\"bench\":\"srtp_protect_unprotect_1200B\",\"profile\":\"\(profile.name)\","
                + "\"ns_cpu\":\(f(nanoseconds, 1)),\"libsrtp_alone_ns_cpu\":\(f(libsrtp.ns, 1)),"
                + (floor.map { "\"openssl_gcm_seal_open_ns_cpu\":\(f($0.ns, 1))," } ?? "")
                + "\"libsrtp\":\"\(backend)\",\"checksum\":\"\(String(checksum, radix: 16))\"}")
        } else {
            print("  SRTP protect + unprotect, 1,200-byte RTP, \(profile.name): \(f(nanoseconds, 1)) ns CPU per packet "
                + "(\(count) packets; goal ≤ 300 ns for AES-GCM); checksum \(String(checksum, radix: 16))")
            print("    anchor, \(backend) alone on one C buffer: \(f(libsrtp.ns, 1)) ns CPU")
            if let floor {
                print("    anchor, OpenSSL EVP AES-128-GCM seal + open of 1,200 B alone (the hardware floor): "
                    + "\(f(floor.ns, 1)) ns CPU")
            }
        }
    }
    #endif

    private static func threadCPUNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    private static func f(_ value: Double, _ decimals: Int) -> String {
        String(format: "%.\(decimals)f", value)
    }
}
