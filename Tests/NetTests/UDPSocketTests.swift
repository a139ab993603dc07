import Testing
import Net
import ZoneCore

/// Real datagrams on loopback through the batched paths.
@Suite("UDP socket")
struct UDPSocketTests {
    @Test("a batch of datagrams sent with sendmmsg arrives whole through recvmmsg, sources intact")
    func batch() throws {
        let a = try UDPSocket(bind: try Endpoint(parsing: "127.0.0.1:0"))
        let b = try UDPSocket(bind: try Endpoint(parsing: "127.0.0.1:0"))
        let payloads = (0..<100).map { i in [UInt8](repeating: UInt8(i), count: 1 + i * 7) }
        #expect(a.send(payloads.map { ($0, b.localEndpoint) }) == 100)
        var received: [[UInt8]] = []
        var sources = Set<Endpoint>()
        // Loopback delivers synchronously; read until all are in (bounded).
        for _ in 0..<1000 where received.count < 100 {
            b.receiveAll { bytes, from in
                received.append(Array(bytes))
                sources.insert(from)
            }
        }
        #expect(received == payloads)
        #expect(sources == [a.localEndpoint])
        #expect(b.send([9, 9], to: a.localEndpoint))
        var back: [UInt8] = []
        for _ in 0..<1000 where back.isEmpty { a.receiveAll { bytes, _ in back = Array(bytes) } }
        #expect(back == [9, 9])
    }

    @Test("IPv6 loopback too")
    func ipv6() throws {
        guard let a = try? UDPSocket(bind: try Endpoint(parsing: "[::1]:0")) else { return }  // no IPv6 here
        let b = try UDPSocket(bind: try Endpoint(parsing: "[::1]:0"))
        #expect(a.send([1, 2, 3], to: b.localEndpoint))
        var got: [UInt8] = []
        for _ in 0..<1000 where got.isEmpty { b.receiveAll { bytes, _ in got = Array(bytes) } }
        #expect(got == [1, 2, 3])
    }
}
