@testable import Relay
import Testing
import ZoneCore

/// The grouping of a receive batch's peer-bound datagrams: one turn per relayed socket, peer by
/// peer within it, arrival order within each (socket, peer) flow.
@Suite("PeerBoundBatch: client datagrams grouped by socket and peer")
struct PeerBoundBatchTests {
    @Test("interleaved allocations and peers come out as flows, each in arrival order")
    func groupsByFlow() throws {
        let a = try Endpoint(parsing: "127.0.0.1:5000")
        let b = try Endpoint(parsing: "127.0.0.1:5001")
        // Arrival: (socket, peer) per datagram; the datagram's length is its arrival index.
        let arrivals: [(Int, Endpoint)] = [(7, a), (3, a), (7, b), (7, a), (3, a), (7, b), (3, b), (7, a)]
        let bytes = [UInt8](repeating: 0, count: 16)
        var batch = PeerBoundBatch(capacity: 8)
        var order: [(socket: Int, index: Int, peer: Endpoint)] = []
        var socketsEnded: [Int] = []
        bytes.withUnsafeBytes { raw in
            for (i, (handle, peer)) in arrivals.enumerated() {
                batch.append(.init(handle: handle, start: raw.baseAddress!, length: i, peer: peer))
            }
            batch.drain({ order.append(($0.handle, $0.length, $0.peer)) }, endOfSocket: { socketsEnded.append($0) })
        }
        #expect(order.map(\.index) == [0, 3, 7, 2, 5, 1, 4, 6])
        #expect(order.map(\.socket) == [7, 7, 7, 7, 7, 3, 3, 3])
        #expect(order.map(\.peer) == [a, a, a, b, b, a, a, b])
        #expect(socketsEnded == [7, 3])
        #expect(batch.isEmpty)
        // Drained means empty: a second drain hands out nothing.
        var again = 0
        batch.drain({ _ in again += 1 }, endOfSocket: { _ in again += 1 })
        #expect(again == 0)
    }
}
