// The trace's binary records: their layout, and that they stay whole and in order as the trace
// grows past its first storage.
import Simulation
import Testing
import ZoneCore

@Suite("Event trace")
struct EventTraceTests {
    let origin = Instant.seconds(1_700_000_000)

    @Test("a record is the time, kind, actor and three numbers, big-endian, 34 bytes")
    func recordLayout() {
        var trace = EventTrace(origin: origin, capturesText: false)
        trace.record(.datagramSent, at: origin + .nanoseconds(0x0102), actor: 2, 3, 0x0A0B, 5)
        #expect(trace.bytes == [0, 0, 0, 0, 0, 0, 1, 2, TraceKind.datagramSent.rawValue, 2,
                                0, 0, 0, 0, 0, 0, 0, 3,
                                0, 0, 0, 0, 0, 0, 0x0A, 0x0B,
                                0, 0, 0, 0, 0, 0, 0, 5])
    }

    @Test("records past the first storage keep their bytes and order; read in place or copied alike")
    func growsWhole() {
        var trace = EventTrace(origin: origin, capturesText: false)
        var expected: [UInt8] = []
        for n in 0..<1000 {
            trace.record(.storeRequest, at: origin + .nanoseconds(Int64(n)), actor: 1, UInt64(n), UInt64(n * 7), 9)
            var one: [UInt8] = []
            for value in [UInt64(n)] { withUnsafeBytes(of: value.bigEndian) { one += $0 } }
            one += [TraceKind.storeRequest.rawValue, 1]
            for value in [UInt64(n), UInt64(n * 7), 9] { withUnsafeBytes(of: value.bigEndian) { one += $0 } }
            expected += one
        }
        #expect(trace.bytes == expected)
        #expect(trace.withUnsafeBytes { Array($0) } == expected)
        let copy = trace
        trace.record(.deadline, at: origin, actor: 0)
        #expect(copy.bytes == expected, "a copy keeps the records it had")
        #expect(trace.bytes.count == expected.count + 34)
    }
}

@Suite("Datagram fingerprint")
struct FingerprintTests {
    /// FNV-1a, one byte at a time, as the trace format defines it.
    static func reference(_ bytes: [UInt8]) -> UInt64 {
        var h: UInt32 = 0x811C_9DC5
        for byte in bytes { h = (h ^ UInt32(byte)) &* 0x0100_0193 }
        return UInt64(h)
    }

    @Test("the fingerprint is FNV-1a of the bytes at every length, whole turns and remainder alike")
    func matchesByteByByte() {
        var random = SeededRandom(seed: 7)
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            #expect(EventTrace.fingerprint(bytes) == Self.reference(bytes), "length \(length)")
        }
        #expect(EventTrace.fingerprint([]) == 0x811C_9DC5)
        #expect(EventTrace.fingerprint(Array("a".utf8)) == 0xE40C_292C)
    }
}
