// The 5-tuple as a table key: equal tuples hash alike, and tuples that differ in any part — an
// address, a port, the address family, which side is which — stay apart, colliding words included.
import Testing
@testable import TURN
import ZoneCore

@Suite struct FiveTupleTests {
    func tuple(_ client: IPAddress, _ clientPort: UInt16, _ server: IPAddress, _ serverPort: UInt16) -> FiveTuple {
        FiveTuple(client: Endpoint(address: client, port: clientPort), server: Endpoint(address: server, port: serverPort))
    }

    @Test("equal tuples, equal hashes; every different tuple its own entry")
    func keysStayApart() {
        let relay = IPAddress.v4(0xCB00_7164)
        let tuples = [
            tuple(.v4(0xC633_640A), 50_000, relay, 3478),
            tuple(.v4(0xC633_640A), 50_001, relay, 3478),
            tuple(.v4(0xC633_6414), 50_000, relay, 3478),
            tuple(.v4(0xC633_640A), 50_000, relay, 3479),
            tuple(relay, 3478, .v4(0xC633_640A), 50_000),
            tuple(.v6(IPv6Bits(0x2001_0DB8 << 96 | 1)), 50_000, relay, 3478),
            // The same folded word as the one above (high ⊕ low), yet another address.
            tuple(.v6(IPv6Bits(0x2001_0DB8 << 96 | 1 << 64)), 50_000, relay, 3478),
            tuple(.v6(IPv6Bits(0xC633_640A)), 50_000, relay, 3478),
        ]
        var table: [FiveTuple: Int] = [:]
        for (i, t) in tuples.enumerated() {
            let copy = FiveTuple(client: t.client, server: t.server)
            #expect(copy == t && copy.hashValue == t.hashValue)
            table[t] = i
        }
        #expect(table.count == tuples.count)
        for (i, t) in tuples.enumerated() { #expect(table[t] == i) }
    }
}
