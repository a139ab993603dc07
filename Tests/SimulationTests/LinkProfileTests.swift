// `--link` speaks the impairment vocabulary of `--impair`: the same names and values, the old
// spellings still accepted, and the link's own defaults (broadband) under what is not given.

import Testing
import ZoneCore
@testable import Simulation

@Suite struct LinkProfileTests {
    @Test func theVocabularyOfImpair() throws {
        let link = try LinkProfile.parse("delay=40ms,jitter=1ms,loss=10%,reorder=0.1,reorder-gap=5ms,duplicate=0.05")
        #expect(link == LinkProfile(delay: .milliseconds(40), jitter: .milliseconds(1), loss: 0.1, reorder: 0.1,
                                    reorderGap: .milliseconds(5), duplicate: 0.05))
        #expect(try LinkProfile.parse("latency=40ms,reorder-delay=5ms")
                == LinkProfile.parse("delay=40ms,reorder-gap=5ms"))
        #expect(try LinkProfile.parse("loss=0.2") == LinkProfile(loss: 0.2))  // over broadband
        #expect(try LinkProfile.parse(LinkProfile.parse("delay=3ms,bandwidth=1mbit").description)
                == LinkProfile(delay: .milliseconds(3), bitsPerSecond: 1_000_000))
        #expect(LinkProfile(LinkProfile.datacenter.spec) == .datacenter)
    }

    @Test("bad links say what is wrong", arguments: [
        ("seed=3", "unknown key 'seed'"), ("delay=5", "with a unit"), ("loss=2", "between 0 and 1"),
        ("bandwidth=fast", "rate"), ("latency=1ms,delay=2ms", "given twice"),
    ])
    func badLinks(_ text: String, _ message: String) {
        do {
            _ = try LinkProfile.parse(text)
            Issue.record("\(text) parsed")
        } catch {
            #expect(error.description.contains(message), "\(error)")
        }
    }

    /// A link that always duplicates: `transmit` describes both copies, the duplicate up to 1 ms
    /// after the first, and `send` lists them in that order with the same datagram.
    @Test func duplicatesAreDescribedAndListed() throws {
        let a = Endpoint(address: .v4(0xC633_640A), port: 5000)
        let b = Endpoint(address: .v4(0xC633_6414), port: 5002)
        let now = Instant.seconds(1_700_000_000)
        for seed in UInt64(1)...5 {
            var network = VirtualNetwork(seed: seed)
            let link = LinkProfile(delay: .milliseconds(10), jitter: .zero, duplicate: 1)
            let hostA = network.addHost("a", address: a.address, link: link)
            _ = network.addHost("b", address: b.address, link: link)
            var twin = network
            let copies = try network.transmit([7, 8], from: a, to: b, host: hostA, now: now).get()
            #expect(copies.at == now + .milliseconds(20))
            let duplicateAt = try #require(copies.duplicateAt)
            #expect(duplicateAt > copies.at && duplicateAt <= copies.at + .milliseconds(1))
            let listed = try twin.send([7, 8], from: a, to: b, host: hostA, now: now).get()
            #expect(listed.map(\.at) == [copies.at, duplicateAt])
            #expect(listed.allSatisfy { $0.datagram.payload == [7, 8] && $0.datagram.destination == b })
            #expect(network.counters.duplicated == 1 && twin.counters.duplicated == 1)
        }
    }
}
