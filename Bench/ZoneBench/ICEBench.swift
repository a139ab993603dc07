// ICE benchmark: the CPU cost of one connect — two agents back to back in memory, host candidates
// only, from creation to both having a nominated (selected) pair.
//
// Each connect creates both agents (credentials keyed, host candidates announced), trickles the
// candidates across, and shuttles datagrams between them with zero latency, jumping a virtual
// clock to the next deadline when nothing is in flight: checks, responses, triggered checks and
// the regular nomination (USE-CANDIDATE), each a STUN message with MESSAGE-INTEGRITY and
// FINGERPRINT encoded and verified. CPU time is the thread's (CLOCK_THREAD_CPUTIME_ID).
import Foundation
import ICE
import ZoneCore

enum ICEBench {
    static let connects = BenchRun.count(2_000)

    static func run(json: Bool) {
        let hostA = try! Endpoint(parsing: "127.0.0.1:40000")
        let hostB = try! Endpoint(parsing: "127.0.0.1:40001")
        var datagrams = 0
        var checksum: UInt64 = 0

        func connect(seed: UInt64) {
            var clock = Instant.seconds(1_700_000_000)
            let credentialsA = Credentials(ufrag: "ufA\(seed & 0xFFFF)", password: "passwordAAAAAAAAAAAAAAAA")
            let credentialsB = Credentials(ufrag: "ufB\(seed & 0xFFFF)", password: "passwordBBBBBBBBBBBBBBBB")
            var agents = [
                try! ICEAgent(configuration: AgentConfiguration(hostAddresses: [hostA], role: .controlling,
                                                                credentials: credentialsA, seed: seed), now: clock),
                try! ICEAgent(configuration: AgentConfiguration(hostAddresses: [hostB], role: .controlled,
                                                                credentials: credentialsB, seed: ~seed), now: clock),
            ]
            try! agents[0].setRemoteCredentials(credentialsB)
            try! agents[1].setRemoteCredentials(credentialsA)
            var wire: [(bytes: [UInt8], from: Endpoint, to: Endpoint)] = []
            while agents[0].selectedPair == nil || agents[1].selectedPair == nil {
                var moved = false
                for i in 0..<2 {
                    while let output = agents[i].pollOutput() {
                        moved = true
                        switch output {
                        case .transmit(let bytes, let from, let to):
                            wire.append((bytes, from, to))
                        case .event(.localCandidate(let c)):
                            agents[1 - i].addRemoteCandidate(
                                .remote(kind: c.kind, address: c.address, priority: c.priority, foundation: c.foundation))
                        case .event(.gatheringComplete):
                            agents[1 - i].endOfRemoteCandidates()
                        case .event:
                            break
                        }
                    }
                }
                if !wire.isEmpty {
                    let packets = wire
                    wire.removeAll(keepingCapacity: true)
                    for p in packets {
                        datagrams += 1
                        agents[p.to == hostA ? 0 : 1].handle(.datagram(p.bytes, from: p.from, to: p.to), now: clock)
                    }
                    continue
                }
                if moved { continue }
                let next = [agents[0].nextDeadline, agents[1].nextDeadline].compactMap { $0 }.min()
                guard let next else { fatalError("ICE bench: agents stalled before nomination") }
                clock = max(clock, next)
                for i in 0..<2 { agents[i].handle(.timer, now: clock) }
            }
            checksum = checksum &* 31 &+ UInt64(truncatingIfNeeded: agents[0].selectedPair!.priority(role: .controlling))
        }

        for seed in 0..<UInt64(100) { connect(seed: seed) }  // warm-up
        datagrams = 0
        let start = threadCPUNanoseconds()
        for seed in 0..<UInt64(connects) { connect(seed: seed &+ 1_000) }
        let elapsed = Double(threadCPUNanoseconds() - start)
        let perConnect = elapsed / Double(connects) / 1_000
        let datagramsPerConnect = Double(datagrams) / Double(connects)
        if json {
            print("{\"bench\":\"ice_connect_host_pair\",\"connects\":\(connects),"
                + "\"us_per_connect\":\(String(format: "%.2f", perConnect)),"
                + "\"datagrams_per_connect\":\(String(format: "%.1f", datagramsPerConnect))}")
            print("{\"bench\":\"ice_checksum\",\"value\":\"\(String(checksum, radix: 16))\"}")
        } else {
            print("ice (release build expected; one core; two agents in memory, host candidates only)")
            print("  connect to a nominated pair: \(String(format: "%.2f", perConnect)) µs CPU per connect "
                + "(\(connects) connects, \(String(format: "%.1f", datagramsPerConnect)) datagrams each; goal ≤ 50 µs)")
            print("  checksum \(String(checksum, radix: 16))")
        }
    }

    private static func threadCPUNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}
