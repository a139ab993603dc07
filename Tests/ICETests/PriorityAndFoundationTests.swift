// RFC 8445 §5.1.2 (candidate priority), §6.1.2.3 (pair priority), §5.1.1.3 (foundation).

import Testing
import ZoneCore
@testable import ICE

@Suite struct PriorityAndFoundationTests {
    @Test func candidatePriorityFormula() {
        // 2^24 × type preference + 2^8 × local preference + (256 − component)
        #expect(Priority.candidate(kind: .host, localPreference: 65535) == 126 * 16_777_216 + 65535 * 256 + 255)
        #expect(Priority.candidate(kind: .host, localPreference: 65535) == 2_130_706_431)
        #expect(Priority.candidate(kind: .peerReflexive, localPreference: 65535) == 1_862_270_975)
        #expect(Priority.candidate(kind: .serverReflexive, localPreference: 65535) == 1_694_498_815)
        #expect(Priority.candidate(kind: .relay, localPreference: 65535) == 16_777_215)
        #expect(Priority.candidate(kind: .host, localPreference: 0, component: 2) == 126 << 24 | 254)
        #expect(Priority.typePreference(.host) > Priority.typePreference(.peerReflexive))
        #expect(Priority.typePreference(.peerReflexive) > Priority.typePreference(.serverReflexive))
        #expect(Priority.typePreference(.serverReflexive) > Priority.typePreference(.relay))
    }

    @Test func hostCandidatesPreferTheFirstAddress() {
        let first = Candidate.host(try! Endpoint(parsing: "10.0.0.1:1"),
                                   localPreference: Priority.hostLocalPreference(index: 0))
        let second = Candidate.host(try! Endpoint(parsing: "10.0.0.2:1"),
                                    localPreference: Priority.hostLocalPreference(index: 1))
        #expect(first.priority == second.priority + 256)
        #expect(first.component == 1 && first.relatedAddress == nil)
    }

    @Test func pairPriorityFormula() {
        let g: UInt32 = 2_130_706_431, d: UInt32 = 1_694_498_815
        // 2^32 × MIN(G, D) + 2 × MAX(G, D) + (G > D ? 1 : 0)
        #expect(Priority.pair(controlling: g, controlled: d) == (UInt64(d) << 32) + 2 * UInt64(g) + 1)
        #expect(Priority.pair(controlling: d, controlled: g) == (UInt64(d) << 32) + 2 * UInt64(g))
        #expect(Priority.pair(controlling: 5, controlled: 5) == (5 << 32) + 10)
        let top: UInt32 = (1 << 31) - 1  // the largest valid candidate priority
        #expect(Priority.pair(controlling: top, controlled: top) == (UInt64(top) << 32) + 2 * UInt64(top))
        _ = Priority.pair(controlling: .max, controlled: .max)  // a bogus peer value wraps, no trap
    }

    @Test func bothAgentsComputeTheSamePairPriority() {
        let a = Candidate.host(try! Endpoint(parsing: "10.0.0.1:5000"))
        let b = Candidate.remote(kind: .serverReflexive, address: try! Endpoint(parsing: "203.0.113.1:9"),
                                 priority: 1_694_498_815, foundation: "7")
        let atA = CandidatePair(id: 0, local: a, remote: b, state: .waiting)
        let atB = CandidatePair(id: 0, local: b, remote: a, state: .waiting)
        #expect(atA.priority(role: .controlling) == atB.priority(role: .controlled))
        #expect(atA.priority(role: .controlled) == atB.priority(role: .controlling))
    }

    @Test func foundationsFollowTypeBaseAndServer() {
        let ip1 = IPAddress.v4(0x0A00_0001), ip2 = IPAddress.v4(0x0A00_0002)
        let s1 = IPAddress.v4(0xC633_6401), s2 = IPAddress.v4(0xC633_6402)
        let host1 = CandidateFoundation.compute(kind: .host, base: ip1)
        #expect(host1 == CandidateFoundation.compute(kind: .host, base: ip1))
        #expect(host1 != CandidateFoundation.compute(kind: .host, base: ip2))
        #expect(CandidateFoundation.compute(kind: .host, base: ip1)
            != CandidateFoundation.compute(kind: .serverReflexive, base: ip1, server: s1))
        #expect(CandidateFoundation.compute(kind: .serverReflexive, base: ip1, server: s1)
            != CandidateFoundation.compute(kind: .serverReflexive, base: ip1, server: s2))
        // Two sockets on one interface (different ports) share the host foundation.
        #expect(Candidate.host(try! Endpoint(parsing: "10.0.0.1:5000")).foundation
            == Candidate.host(try! Endpoint(parsing: "10.0.0.1:5001")).foundation)
        let f = CandidateFoundation.compute(kind: .relay, base: .v6(1), server: .v6(2))
        #expect(!f.isEmpty && f.count <= 32 && f.allSatisfy(\.isNumber))
    }

    /// Foundations are signalled, so their digits must not change: the CRC-32 of the kind, a zero
    /// byte, the base's address bytes, a zero byte, the server's address bytes, and "udp".
    @Test func foundationsAreTheCRCOfTheirInputs() throws {
        let v6 = try Endpoint(parsing: "[2001:db8::1:2]:1").address
        let cases: [(Candidate.Kind, IPAddress, IPAddress?)] = [
            (.host, .v4(0x0A00_0001), nil), (.serverReflexive, .v4(0xC000_0201), .v4(0xC633_6401)),
            (.relay, v6, .v4(0x7F00_0001)), (.peerReflexive, v6, nil),
        ]
        for (kind, base, server) in cases {
            let input = Array(kind.rawValue.utf8) + [0] + base.addressBytes + [0] + (server?.addressBytes ?? [])
                + Array("udp".utf8)
            #expect(CandidateFoundation.compute(kind: kind, base: base, server: server)
                == String(CRC32.checksum(input)))
        }
    }
}
