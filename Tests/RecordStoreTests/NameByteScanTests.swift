import Testing
import ZoneCore
@testable import RecordStore

/// Record and zone names are scanned for a byte outside their range eight bytes at a time: the
/// scan must find exactly the byte a byte-by-byte search finds, wherever it sits in a word and
/// whatever its value (each edge of the range, control bytes, 0x7F, non-ASCII).
@Suite struct NameByteScanTests {
    private func scanned(_ bytes: [UInt8], _ allowed: ClosedRange<UInt8>) -> UInt8? {
        bytes.withUnsafeBytes { NameRules.firstByte(of: $0, outside: allowed) }
    }

    @Test func findsTheFirstByteOutsideAsASearchByteByByteDoes() {
        var random = SeededRandom(seed: 13)
        let awkward: [UInt8] = [0x00, 0x01, 0x1F, 0x20, 0x21, 0x7E, 0x7F, 0x80, 0x81, 0xFE, 0xFF, 0x41]
        for allowed: ClosedRange<UInt8> in [0x20...0x7E, 0x21...0x7E] {
            for _ in 0..<20_000 {
                let count = Int(random.next() % 40)
                var bytes = (0..<count).map { _ in UInt8(0x21 + random.next() % 0x5D) }
                // Mostly valid names, with a few bytes from the edges and beyond at random places.
                for _ in 0..<Int(random.next() % 3) where count > 0 {
                    bytes[Int(random.next() % UInt64(count))] = awkward[Int(random.next() % UInt64(awkward.count))]
                }
                #expect(scanned(bytes, allowed) == bytes.first { !allowed.contains($0) }, "\(bytes)")
            }
        }
    }

    @Test func namesKeepTheirRefusals() {
        let long = String(repeating: "a", count: 40)
        #expect(NameRules.recordNameProblem(long + "\u{7F}")
                == "record name contains a non-printable or non-ASCII byte 0x7f")
        #expect(NameRules.recordNameProblem(long + " x") == nil)
        #expect(NameRules.zoneNameProblem(long + " x")
                == "zone name contains a space, non-printable or non-ASCII byte 0x20")
        #expect(NameRules.recordNameProblem(long + "é")
                == "record name contains a non-printable or non-ASCII byte 0xc3")
    }
}
