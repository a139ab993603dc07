import Testing
import ZoneCore
@testable import RecordStore

/// Change tags are the save counter in lowercase hexadecimal, as `String(_:radix:)` wrote them:
/// the journal and clients hold tags written before, and recovery parses the highest back.
@Suite struct ChangeTagTests {
    @Test func writtenAsTheGenericFormatterWritesThem() {
        var random = SeededRandom(seed: 9)
        var values: [UInt64] = [0, 1, 9, 10, 15, 16, 255, 256, 0xabc, .max, .max - 1, 1 << 63]
        for shift in 0..<64 { values.append(1 << UInt64(shift)); values.append((1 << UInt64(shift)) - 1) }
        for _ in 0..<200 { values.append(random.next() >> (random.next() % 64)) }
        for n in values {
            let tag = StoreEngine.changeTag(n)
            #expect(tag == String(n, radix: 16))
            #expect(UInt64(tag, radix: 16) == n)
        }
    }
}
