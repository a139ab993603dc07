import Glibc
import Testing
import Net
import ZoneCore

/// UDP segmentation offload on real loopback sockets: trains sent as UDP_SEGMENT messages arrive as
/// the same datagrams in the same order, whether the receiver takes them coalesced (UDP_GRO) or not.
@Suite("UDP segmentation and coalescing")
struct SegmentOffloadTests {
    /// Frames as the media sender makes them: full-size packets and a shorter last one, several sizes.
    static func trains(seed: UInt64) -> [[UInt8]] {
        var random = SeededRandom(seed: seed)
        var datagrams: [[UInt8]] = []
        for (size, count, last) in [(1200, 10, 517), (100, 5, 37), (1, 3, 1), (1200, 64, 1200), (900, 2, 0),
                                    (1400, 70, 3), (64, 1, 9)] {
            for _ in 0..<count { datagrams.append((0..<size).map { _ in UInt8.random(in: 0...255, using: &random) }) }
            if last > 0 { datagrams.append((0..<last).map { _ in UInt8.random(in: 0...255, using: &random) }) }
        }
        return datagrams
    }

    /// Reads until `count` datagrams are in, or until 100 polls of 100 ms found nothing (bounded).
    static func collect(_ socket: UDPSocket, count: Int) -> ([[UInt8]], Set<Endpoint>) {
        var received: [[UInt8]] = []
        var sources = Set<Endpoint>()
        var idle = 0
        while received.count < count, idle < 100 {
            guard socket.waitReadable(milliseconds: 100) else {
                idle += 1
                continue
            }
            socket.receiveAll { bytes, from in
                received.append(Array(bytes))
                sources.insert(from)
            }
        }
        return (received, sources)
    }

    @Test("a GSO train sent to a GRO socket arrives as the right datagrams, in order, short last segments kept")
    func segmentedToCoalesced() throws {
        let a = try UDPSocket(bind: try Endpoint(parsing: "127.0.0.1:0"))
        let b = try UDPSocket(bind: try Endpoint(parsing: "127.0.0.1:0"), coalescedReceive: true)
        #expect(b.coalescedReceive, "this kernel refused UDP_GRO (Linux 5.0 has it)")
        let datagrams = SegmentOffloadTests.trains(seed: 12)
        #expect(a.send(datagrams.map { ($0, b.localEndpoint) }) == datagrams.count)
        #expect(a.segmentOffload, "the kernel refused UDP_SEGMENT")
        let (received, sources) = SegmentOffloadTests.collect(b, count: datagrams.count)
        #expect(received.count == datagrams.count)
        #expect(received == datagrams)
        #expect(sources == [a.localEndpoint])
        // The trains crossed loopback whole: fewer messages than datagrams were read.
        #expect(b.coalescedMessages > 0)
        #expect(b.unsplittableMessages == 0)
    }

    @Test("the same trains reach a socket without GRO as single datagrams, and without GSO too")
    func segmentedToPlain() throws {
        let datagrams = SegmentOffloadTests.trains(seed: 13)
        for offload in [true, false] {
            let a = try UDPSocket(bind: try Endpoint(parsing: "127.0.0.1:0"), segmentOffload: offload)
            let b = try UDPSocket(bind: try Endpoint(parsing: "127.0.0.1:0"))
            #expect(a.send(datagrams.map { ($0, b.localEndpoint) }) == datagrams.count)
            let (received, _) = SegmentOffloadTests.collect(b, count: datagrams.count)
            #expect(received == datagrams)
            #expect(b.coalescedMessages == 0)
        }
    }

    @Test("a GRO socket still takes single datagrams and empty ones from a plain sender")
    func plainToCoalesced() throws {
        let a = try UDPSocket(bind: try Endpoint(parsing: "127.0.0.1:0"), segmentOffload: false)
        let b = try UDPSocket(bind: try Endpoint(parsing: "127.0.0.1:0"), coalescedReceive: true)
        let datagrams: [[UInt8]] = [[1, 2, 3], [], [UInt8](repeating: 7, count: 1500), [4]]
        #expect(a.send(datagrams.map { ($0, b.localEndpoint) }) == datagrams.count)
        let (received, _) = SegmentOffloadTests.collect(b, count: datagrams.count)
        #expect(received == datagrams)
    }

    @Test("a coalesced buffer is split at the segment size, the last piece shorter")
    func split() {
        #expect(Array(CoalescedDatagrams(length: 3700, segmentSize: 1200))
                == [0..<1200, 1200..<2400, 2400..<3600, 3600..<3700])
        #expect(Array(CoalescedDatagrams(length: 3600, segmentSize: 1200)) == [0..<1200, 1200..<2400, 2400..<3600])
        #expect(Array(CoalescedDatagrams(length: 5, segmentSize: 1)) == [0..<1, 1..<2, 2..<3, 3..<4, 4..<5])
    }

    @Test("no, a too large or an unknown segment size never reads past the message nor guesses")
    func splitEdges() {
        // No UDP_GRO message: one datagram, even an empty one.
        #expect(Array(CoalescedDatagrams(length: 1200, segmentSize: 0)) == [0..<1200])
        #expect(Array(CoalescedDatagrams(length: 0, segmentSize: 0)) == [0..<0])
        // A size at or past the length: one datagram.
        #expect(Array(CoalescedDatagrams(length: 1200, segmentSize: 1200)) == [0..<1200])
        #expect(Array(CoalescedDatagrams(length: 1200, segmentSize: .max)) == [0..<1200])
        // Unknown: nothing, the message is dropped.
        #expect(Array(CoalescedDatagrams(length: 1200, segmentSize: CoalescedDatagrams.unknownSegmentSize)).isEmpty)
        #expect(Array(CoalescedDatagrams(length: 1200, segmentSize: .min)).isEmpty)
        // A negative length (never from the kernel) is treated as empty.
        #expect(Array(CoalescedDatagrams(length: -5, segmentSize: 0)) == [0..<0])
    }

    /// Control data as recvmsg lays it out: one cmsghdr, then `data`, padded to the alignment.
    static func controlMessage(length: Int, level: Int32, type: Int32, data: [UInt8]) -> [UInt8] {
        var header = cmsghdr()
        header.cmsg_len = length
        header.cmsg_level = level
        header.cmsg_type = type
        var bytes = withUnsafeBytes(of: &header) { Array($0) }
        bytes += data
        while bytes.count % MemoryLayout<Int>.size != 0 { bytes.append(0) }
        return bytes
    }

    @Test("the segment size is read from well-formed control data only; malformed or short data is unknown")
    func controlData() {
        let header = MemoryLayout<cmsghdr>.size
        let solUDP = Int32(IPPROTO_UDP)
        let udpGRO: Int32 = 104
        func size(_ bytes: [UInt8]) -> Int32 {
            bytes.withUnsafeBytes { CoalescedDatagrams.segmentSize(control: $0) }
        }
        let gro1200 = SegmentOffloadTests.controlMessage(length: header + 4, level: solUDP, type: udpGRO,
                                                         data: withUnsafeBytes(of: Int32(1200)) { Array($0) })
        #expect(size(gro1200) == 1200)
        // None at all, or too few bytes for a header: no UDP_GRO message, one datagram.
        #expect(size([]) == 0)
        #expect(size(Array(gro1200.prefix(header - 1))) == 0)
        // Another message first (a timestamp, say), then UDP_GRO.
        let other = SegmentOffloadTests.controlMessage(length: header + 8, level: Int32(SOL_SOCKET), type: 29,
                                                       data: [UInt8](repeating: 0xEE, count: 8))
        #expect(size(other + gro1200) == 1200)
        #expect(size(other) == 0)
        // A UDP_GRO message too short to hold its int.
        #expect(size(SegmentOffloadTests.controlMessage(length: header + 2, level: solUDP, type: udpGRO,
                                                        data: [1, 2])) == -1)
        // A length shorter than the header, or running past the buffer.
        #expect(size(SegmentOffloadTests.controlMessage(length: 3, level: solUDP, type: udpGRO, data: [0, 0, 0, 0]))
                == -1)
        #expect(size(SegmentOffloadTests.controlMessage(length: 4096, level: solUDP, type: udpGRO,
                                                        data: [0xB0, 4, 0, 0])) == -1)
        #expect(size(Array(gro1200.prefix(header + 2))) == -1)
        // A size not above 0.
        #expect(size(SegmentOffloadTests.controlMessage(length: header + 4, level: solUDP, type: udpGRO,
                                                        data: withUnsafeBytes(of: Int32(-7)) { Array($0) })) == -1)
        #expect(size(SegmentOffloadTests.controlMessage(length: header + 4, level: solUDP, type: udpGRO,
                                                        data: [0, 0, 0, 0])) == -1)
    }
}
